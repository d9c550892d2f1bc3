"""What rescaling rests on: baselines computed from random pairs of a monolingual corpus (baseline_compute)."""
