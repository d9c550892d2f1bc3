"""Comparing systems: scoring a dataset of several systems in one pass, tables and charts' data (compare), paired
bootstrap significance, clusters and corrections (significance), and the results Parquet file that stores a
comparison (results_file: written by ``score --ray``, read by the Compare page)."""
