"""Serving the app: the operator's settings, the model allow-list, the model pool and the job queue (deploy).
``python -m bertscore_viz.serving.deploy`` checks a deployment's settings."""
