"""What the scores say: comparisons of systems on one test set (compare; significance and ranking: paired bootstrap
as sacrebleu, clusters, Holm; randomization: approximate randomization; sacrebleu_metrics: chrF, BLEU, TER beside
BERTScore; power), agreement with human judgments at every level (correlation, resampled, levels, human_agreement,
disagreements; layer_tuning), what a score means (calibration) and when the metric is fooled (perturb, audit), a
Ray run's results file as a comparison (precomputed; the file itself: files/results), and paper-ready tables (latex).
The Compare page's tables of these numbers are :mod:`bertscore_viz.figures.tables`'s."""

#: The bootstrap of agreement with humans (``correlate --resamples``, the Agreement page): 0 resamples (no
#: intervals, no test of the lead) or from MIN_RESAMPLES to MAX_RESAMPLES. Here, with no import, so that the command
#: line's parser states them without loading scipy.
MIN_RESAMPLES = 100
MAX_RESAMPLES = 100_000
