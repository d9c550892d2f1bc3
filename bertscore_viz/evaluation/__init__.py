"""What the scores say: comparisons of systems on one test set (compare; significance and ranking: paired bootstrap
as sacrebleu, clusters, Holm; randomization: approximate randomization; sacrebleu_metrics: chrF, BLEU, TER beside
BERTScore; power), agreement with human judgments at every level (correlation, resampled, levels, human_agreement,
disagreements; layer_tuning), what a score means (calibration) and when the metric is fooled (perturb, audit), the
results file of a Ray run (results_file), and paper-ready tables (latex)."""
