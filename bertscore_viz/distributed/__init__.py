"""Scoring and baselines on a Ray cluster with the numbers of one process (optional: ``pip install -r
requirements-ray.txt``). Ray is imported only when a job runs."""
