"""``streamlit run app.py`` from a clone: the same app as ``bertscore-viz app`` (bertscore_viz/app/main.py).

Only as Streamlit's script (``__main__``): a worker process that reads an upload or computes the sentence metrics
(serving/isolated.py, started from a page) imports the main script again as ``__mp_main__``, and drawing the app
there flooded the server's terminal with "missing ScriptRunContext" lines and cost every worker seconds."""

from bertscore_viz.app.main import run

if __name__ == "__main__":
    run()
