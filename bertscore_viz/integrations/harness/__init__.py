"""BERTScore in the evaluation harnesses, computed by this package's engine (docs/HARNESSES.md).

* lm-evaluation-harness: :mod:`bertscore_viz.integrations.harness.lm_eval_metric`, a per-sample metric and its
  aggregation that a task's YAML names with ``!function`` (or ``metric: bertscore`` after ``register()``).
* lighteval: :mod:`bertscore_viz.integrations.harness.lighteval_metric`, sample-level metrics that a custom task's
  ``LightevalTaskConfig(metrics=...)`` lists.

Both score every pair of a task in one batched call (:mod:`bertscore_viz.integrations.harness.pairs`), so their
numbers are ``bertscore_viz.score(...)``'s on the same pairs, idf included. Each framework is optional: only its
module imports it, and a missing one is a ``MissingIntegrationError`` naming the package to install.
"""
