"""Computing what rescaling and layer choice rest on: baselines from a corpus (baseline_compute) and the tuned
layer from human judgments (layers)."""
