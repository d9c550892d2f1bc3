"""The results file of a batch scoring run (``scores.parquet`` of ``score --ray``), in one place: its format and
metadata (format), reading it back (table), every value checked at load (values) and the names in its directory
(layout). The numbers as a comparison, and a Scorer that reproduces them:
:mod:`bertscore_viz.evaluation.precomputed`."""
