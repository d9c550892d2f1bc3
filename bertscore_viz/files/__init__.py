"""Input and output: tabular uploads and files (upload), downloads safe to open in a spreadsheet (export), atomic
writes (fileio). (Results Parquet files hold comparisons: :mod:`bertscore_viz.evaluation.results_file`.)"""
