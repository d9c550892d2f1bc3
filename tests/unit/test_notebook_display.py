"""The notebook display (bertscore_viz/integrations/notebook, docs/NOTEBOOK.md): each result's HTML view, escaping,
plotly.js embedded once and never fetched, ``to_pandas()`` equal to the engine's numbers (1e-6), IPython's real
formatter, and examples/notebook.ipynb executed by nbclient in a real ipykernel running this venv's Python."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from plotly.offline import get_plotlyjs

from bertscore_viz.consensus import consensus
from bertscore_viz.engine.scorer import BertScoreWarning, Scorer
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation import compare
from bertscore_viz.evaluation.audit import audit
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.integrations import notebook
from bertscore_viz.integrations.notebook.fragments import MAX_ROWS, NOTEBOOK

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_FILE = ROOT / "examples" / "notebook.ipynb"
#: The first characters of the plotly.js bundle: how a page's copies of it are counted.
BUNDLE_HEAD = get_plotlyjs()[:120]
CANDS = ["The cat sat on the mat.", "The meeting was moved to next week.", "Heavy snow closed the roads."]
REFS = ["A cat was sitting on the mat.", "The meeting was postponed until next week.",
        "Heavy rain caused flooding in several villages."]
EVIL = "<script>alert('x')</script> <b>bold</b> & $x$"


@pytest.fixture(scope="module")
def scorer():
    return Scorer()


def _no_cdn(page: str) -> None:
    """No script is loaded from anywhere: plotly.js is inline, never fetched from a CDN."""
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.I), "a script is loaded by URL"
    assert not re.search(r"https?://cdn\.plot\.ly/plotly", page), "plotly.js from its CDN"
    assert "requirejs.config" not in page and "require.config" not in page


def test_score_view_shows_the_reported_scores_the_signature_and_warnings(scorer):
    with pytest.warns(BertScoreWarning, match="empty candidate"):
        res = scorer.score(CANDS + [""], REFS + ["An empty candidate."])
    page = notebook.to_html(res)
    for values in (res.precision, res.recall, res.f1):
        for x in values:
            assert f"{float(x):.4f}" in page
    assert str(res.signature) in page and "(raw)" in page
    assert res.warnings and all(w.split("(")[0][:30] in page for w in res.warnings)
    assert "plotly" not in page.lower()  # a table: no figure, no bundle


def test_a_score_table_is_compact(scorer):
    n = MAX_ROWS + 5
    res = scorer.score(["a cat"] * n, ["the cat"] * n)
    page = notebook.to_html(res)
    assert page.count("<tr>") == MAX_ROWS + 1  # the header and MAX_ROWS rows
    assert "… and 5 more candidates" in page


def test_a_rescaled_score_says_so(scorer):
    res = Scorer(rescale_with_baseline=True).score(CANDS, REFS)
    page = notebook.to_html(res)
    assert "(rescaled)" in page and str(res.signature).endswith("-rescaled") and str(res.signature) in page
    assert f"{float(res.f1[0]):.4f}" in page and f"{float(res.raw_f1[0]):.4f}" not in page


def test_pair_view_draws_the_heatmap_and_the_alignment_with_plotlyjs_once(scorer):
    pair = scorer.explain(CANDS[1], REFS[1])
    page = notebook.to_html(pair)
    assert page.count("plotly-graph-div") == 2 and page.count("Plotly.newPlot") == 2
    assert page.count(BUNDLE_HEAD) == 1
    assert page.index(BUNDLE_HEAD) < page.index("Plotly.newPlot")
    assert f"{pair.f1:.4f}" in page and str(pair.signature) in page
    _no_cdn(page)


def test_every_user_text_is_escaped(scorer):
    pair = scorer.explain(EVIL, REFS[0])
    page = notebook.to_html(pair)
    assert EVIL not in page and "<b>bold</b>" not in page and "alert('x')</script>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    multi = scorer.explain(CANDS[0], [EVIL, REFS[0]])
    assert "<b>bold</b>" not in notebook.to_html(multi)
    dataset = Dataset({EVIL: CANDS, "plain": REFS[::-1]}, [[r] for r in REFS], None, ["1", "2", "3"], [2, 3, 4])
    comparison = compare.results_for(scorer, compare.score_dataset(scorer, dataset))
    page = notebook.to_html(comparison)
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page
    groups = consensus([[EVIL, "a cat sat", "the cat sat"]], ids=["<i>id</i>"], scorer=scorer)
    page = notebook.to_html(groups) + notebook.to_html(groups[0])
    assert "<b>bold</b>" not in page and "<i>id</i>" not in page and "&lt;i&gt;id&lt;/i&gt;" in page


def test_multi_reference_view_names_the_reference_of_each_maximum(scorer):
    multi = scorer.explain(CANDS[0], [REFS[1], REFS[0]])
    page = notebook.to_html(multi)
    assert [int(b) for b in multi.best_reference] == [1, 1, 1]
    assert "P R F1" in page and "The figures of reference 1" in page
    assert page.count("plotly-graph-div") == 2 and page.count(BUNDLE_HEAD) == 1


def test_pair_to_pandas_equals_the_engine(scorer):
    pair = scorer.explain(CANDS[0], REFS[0])
    res = scorer.score([CANDS[0]], [REFS[0]])
    df = pair.to_pandas()
    assert list(df["side"].unique()) == ["candidate", "reference"]
    cand, ref = df[df["side"] == "candidate"], df[df["side"] == "reference"]
    assert abs(cand["contribution"].sum() - float(res.precision[0])) < 1e-6
    assert abs(ref["contribution"].sum() - float(res.recall[0])) < 1e-6
    assert abs(df.attrs["f1"] - float(res.f1[0])) < 1e-6 and df.attrs["signature"] == str(res.signature)
    assert list(cand["token"]) == list(pair.cand.tokens)
    multi = scorer.explain(CANDS[0], [REFS[1], REFS[0]])
    mdf = multi.to_pandas()
    assert sorted(mdf["reference_index"].unique()) == [0, 1]
    assert abs(mdf.attrs["f1"] - float(scorer.score([CANDS[0]], [[REFS[1], REFS[0]]]).f1[0])) < 1e-6


def test_comparison_view_and_to_pandas_equal_the_engine(scorer):
    dataset = Dataset({"good": CANDS, "bad": REFS[::-1]}, [[r] for r in REFS], None, ["1", "2", "3"], [2, 3, 4])
    comparison = compare.results_for(scorer, compare.score_dataset(scorer, dataset))
    df = comparison.to_pandas()
    for system, outputs in dataset.systems.items():
        alone = scorer.score(outputs, REFS)
        row = df[df["system"] == system].iloc[0]
        for col in ("precision", "recall", "f1"):
            assert abs(row[col] - float(np.mean(getattr(alone, col)))) < 1e-6
        assert row["segments"] == 3
    page = notebook.to_html(comparison)
    sig = compare.significance(comparison)
    for iv in sig.intervals:
        assert f"{iv.low:.4f}" in page and f"{iv.high:.4f}" in page
    assert "Cluster" in page and "F1 CI low" in page and comparison.signature in page
    assert "plotly" not in page.lower()


def test_audit_view_and_to_pandas_equal_the_engine(scorer):
    cands, refs = CANDS + ["Two dogs ran in the park."], REFS + ["Dogs were running in a park."]
    result = audit(cands, refs, scorer=scorer, layers=[2, 4], perturbations=["shuffle", "omission"])
    df = result.to_pandas()
    assert len(df) == len(result.perturbations) * 2
    shuffled = result.perturbed("shuffle")
    at4 = Scorer(layer=4)
    original = at4.score(cands, refs).raw_f1
    perturbed = at4.score(list(shuffled.texts), [refs[i] for i in shuffled.indices]).raw_f1
    row = df[(df["perturbation"] == "shuffle") & (df["layer"] == 4)].iloc[0]
    assert abs(row["mean_drop"] - float(np.mean(original[shuffled.indices] - perturbed))) < 1e-6
    assert row["pass_rate"] == pytest.approx(float(np.mean(perturbed < original[shuffled.indices])), abs=1e-9)
    page = notebook.to_html(result)
    assert "raw F1 at layer 4" in page and f"{row['mean_drop']:.4f}" in page  # the bundled model's default layer
    assert page.count("plotly-graph-div") == 1 and page.count(BUNDLE_HEAD) == 1
    _no_cdn(page)


def test_consensus_view_and_to_pandas_equal_the_engine(scorer):
    samples = ["The meeting has been moved to next week.", "The meeting was postponed till next week.",
               "The meeting was cancelled."]
    reference = "The meeting was postponed until next week."
    result = consensus([samples], references=[reference], scorer=scorer)
    df = result.to_pandas()
    against_ref = scorer.score(samples, [reference] * 3).f1
    assert np.allclose(df["reference_score"], against_ref, atol=1e-6)
    for i in range(3):
        others = [j for j in range(3) if j != i]
        mean = float(np.mean(scorer.score([samples[i]] * 2, [samples[j] for j in others]).f1))
        assert abs(df["expected_utility"][i] - mean) < 1e-6
    assert df["chosen"].sum() == 1 and int(df.index[df["chosen"]][0]) == result[0].chosen
    page = notebook.to_html(result)
    assert page.count("plotly-graph-div") == 1 and f"{result[0].chosen_utility:.4f}" in page
    assert "oracle reached" in page


def test_an_object_without_a_view_is_refused_clearly():
    with pytest.raises(InputError, match="no notebook view of a int.*ScoreResult"):
        notebook.to_html(42)


def test_ipython_formatter_registered_by_name_embeds_plotlyjs_once(scorer):
    """IPython's own display formatter (the one a shell holds, without starting a shell in the test process):
    registered by module and class name, the first figure carries plotly.js, the next does not; register() again
    re-arms it. The kernel itself: the notebook test below."""
    from types import SimpleNamespace

    from IPython.core.formatters import DisplayFormatter

    shell = SimpleNamespace(display_formatter=DisplayFormatter())
    try:
        html_formatter = shell.display_formatter.formatters["text/html"]
        assert notebook.register(shell) is True
        assert ("bertscore_viz.engine.results", "ScoreResult") in html_formatter.deferred_printers
        pair = scorer.explain(CANDS[0], REFS[0])
        first = shell.display_formatter.format(pair)[0]["text/html"]
        second = shell.display_formatter.format(pair)[0]["text/html"]
        assert first.count(BUNDLE_HEAD) == 1 and BUNDLE_HEAD not in second
        assert second.count("plotly-graph-div") == 2
        table = shell.display_formatter.format(scorer.score(CANDS, REFS))[0]
        assert "BERTScore of 3 candidate(s)" in table["text/html"] and table["text/plain"].startswith("ScoreResult(")
        notebook.register(shell)
        assert BUNDLE_HEAD in shell.display_formatter.format(pair)[0]["text/html"]
    finally:
        NOTEBOOK.rearm()


def test_register_outside_ipython_does_nothing():
    assert notebook.register(object()) is False


def test_the_core_install_has_no_notebook_framework():
    """pyproject's core dependencies name no notebook package, and importing the display loads neither IPython nor
    plotly (they load when a kernel runs, or with the first view)."""
    import subprocess

    import tomllib

    core = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    frameworks = ("ipython", "ipykernel", "jupyter", "nbclient", "nbformat", "nbconvert", "notebook", "ipywidgets")
    assert not [d for d in core if d.lower().startswith(frameworks)], core
    code = ("import sys, bertscore_viz.integrations.notebook; "
            "print(sorted(m for m in ('IPython', 'plotly', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


# --- the example notebook in a real kernel --------------------------------------------------------------------------
def kernel_environment(folder: Path) -> str:
    """Install a kernel spec running THIS venv's Python into ``folder/kernels`` and return its name (``JUPYTER_PATH``
    must include ``folder``)."""
    spec = folder / "kernels" / "bertscore-viz-test"
    spec.mkdir(parents=True, exist_ok=True)
    env = {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "bertscore-viz test", "language": "python", "env": env}), encoding="utf-8")
    return spec.name


def execute_notebook(tmp: Path, monkeypatch):
    """examples/notebook.ipynb executed headless by nbclient in an ipykernel of this venv (the notebook's folder as
    working directory); returns the executed notebook."""
    import nbclient
    import nbformat

    monkeypatch.setenv("JUPYTER_PATH", str(tmp))
    name = kernel_environment(tmp)
    nb = nbformat.read(NOTEBOOK_FILE, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name=name, timeout=300,
                                     resources={"metadata": {"path": str(NOTEBOOK_FILE.parent)}})
    client.execute()
    return nb


def cell_html(cell) -> str:
    return "".join(out.get("data", {}).get("text/html", "") for out in cell.get("outputs", []))


@pytest.mark.slow
def test_the_example_notebook_runs_in_a_real_kernel_and_draws(tmp_path, monkeypatch, scorer):
    nb = execute_notebook(tmp_path, monkeypatch)
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    by_source = {c.source.splitlines()[-1]: cell_html(c) for c in code}
    assert by_source["scores"].startswith("<style>") and "BERTScore of 3 candidate(s)" in by_source["scores"]
    expected = scorer.score(CANDS, REFS)  # the notebook's texts: the kernel's numbers are the engine's
    for x in expected.f1:
        assert f"{float(x):.4f}" in by_source["scores"]
    assert "<table" in by_source["scores.to_pandas()"]
    pair = by_source["scorer.explain(candidates[1], references[1])"]
    assert pair.count("plotly-graph-div") == 2 and f"{scorer.explain(CANDS[1], REFS[1]).f1:.4f}" in pair
    assert "F1 CI low" in by_source["comparison"] and "Cluster" in by_source["comparison"]
    assert by_source["stress"].count("plotly-graph-div") == 1
    assert by_source["mbr"].count("plotly-graph-div") == 1
    whole = "".join(cell_html(c) for c in code)
    assert whole.count(BUNDLE_HEAD) == 1 and pair.count(BUNDLE_HEAD) == 1  # the first figure carries plotly.js
    _no_cdn(whole)
    assert "The meeting was cancelled." in by_source["mbr.to_pandas()"] and "expected_utility" in by_source[
        "mbr.to_pandas()"]
