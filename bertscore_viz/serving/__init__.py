"""Serving the app to a team, with no Streamlit here: the operator's settings (``config``), the models a user may
choose (``model_access``), the models held in memory (``model_pool``), the queue of heavy jobs (``job_queue``), the
baselines kept for later sessions (``baseline_store``) and the deployment check (``check``:
``bertscore-viz check-deploy``)."""
