"""Input and output: tabular uploads and files (upload), downloads safe to open in a spreadsheet (export), atomic
writes (fileio), the scored segments (dataset) and results Parquet files (results: format, reading and checks; their
numbers as a comparison: :mod:`bertscore_viz.evaluation.precomputed`)."""
