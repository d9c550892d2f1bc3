"""The Compare page (AppTest) reads the results Parquet of a Ray run: the same system table as scoring the same
input in the page, the signature shown, no model pass for the tables; bad Parquet gets a message. A file opens with
its own signature (rescaled when written so), systems best first whatever the file order, a plain note when the
sidebar differs, the file read once per upload, and a drill-down that shows the file's numbers for the segment."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from bertscore_viz.distributed import jobs as distributed
from bertscore_viz.distributed.options import ScoreOptions
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation import precomputed
from bertscore_viz.files import upload
from bertscore_viz.files.results import format as results_format
from bertscore_viz.files.results import table as results_table
from tests.app.navigation import use_settings

from .conftest import ROOT, wide_rows


def _page(name: str, data: bytes) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page(str(ROOT / "bertscore_viz" / "app" / "app_pages" / "compare" / "page.py"))
    at.session_state["compare_input"] = {"name": name, "data": data}
    at.run()
    assert not at.exception, at.exception
    return at


def _systems_table(at) -> pd.DataFrame:
    for df in at.dataframe:
        if "Rank" in df.value.columns and "System" in df.value.columns:
            return df.value
    raise AssertionError("no system table on the page")


@pytest.fixture(scope="module")
def files(ray_session, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("page")
    rows = wide_rows(40, 2500)
    csv_path = tmp / "systems.csv"
    pd.DataFrame(rows).to_csv(csv_path, index=False)
    run = distributed.score_files(csv_path, tmp / "out", ScoreOptions(block_segments=15, workers=2))
    return csv_path, Path(run.scores)


def test_page_shows_the_same_system_table_from_the_parquet_as_from_scoring(files):
    csv_path, scores = files
    scored = _page("systems.csv", csv_path.read_bytes())
    loaded = _page("scores.parquet", scores.read_bytes())
    want, got = _systems_table(scored), _systems_table(loaded)
    assert got["System"].tolist() == want["System"].tolist() == ["sys_mt", "sys_other"]
    assert got["Rank"].tolist() == want["Rank"].tolist()
    assert got["Segments"].tolist() == [40, 40]
    for col in ("P", "R", "F1", "F1 CI low", "F1 CI high"):
        assert np.abs(got[col].to_numpy() - want[col].to_numpy()).max() < 1e-6, col
    texts = "\n".join(str(e.value) for kind in ("info", "code", "caption") for e in getattr(loaded, kind))
    assert "Precomputed scores (40 segments x 2 systems)" in texts
    meta_sig = results_format.read_metadata(scores.read_bytes())["signature"]
    assert f"signature: {meta_sig}" in texts
    assert not loaded.error
    # segment table and charts are there without a model pass (only the open tab runs: open each, as a click does)
    loaded.session_state["cmp_tab"] = "Segments"
    loaded.run()
    assert not loaded.exception, loaded.exception
    assert any("F1 · sys_mt" in df.value.columns for df in loaded.dataframe)
    loaded.session_state["cmp_tab"] = "Charts"
    loaded.run()
    assert not loaded.exception, loaded.exception
    assert len(loaded.get("plotly_chart")) >= 3
    assert not loaded.error


def test_page_rescaling_toggle_uses_the_rescaled_columns(files):
    _, scores = files
    loaded = precomputed.load_results(scores, rescale=True)
    raw = precomputed.load_results(scores, rescale=False)
    assert loaded.comparison.rescaled and not raw.comparison.rescaled
    assert loaded.signature.endswith("-rescaled") and not raw.signature.endswith("rescaled")
    frame = pd.read_parquet(scores)
    part = frame[frame.system == "sys_mt"].sort_values("segment_index")
    np.testing.assert_array_equal(loaded.comparison.results["sys_mt"].f1, part["rescaled_f1"].to_numpy())
    np.testing.assert_array_equal(raw.comparison.results["sys_mt"].f1, part["raw_f1"].to_numpy())


def test_incomplete_or_foreign_parquet_is_refused_with_a_message(files, tmp_path):
    _, scores = files
    frame = pd.read_parquet(scores)
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(scores)
    cut = tmp_path / "cut.parquet"
    pq.write_table(table.slice(0, len(frame) - 3), cut)
    with pytest.raises(InputError, match="did not finish"):
        precomputed.load_results(cut)
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"a": [1]}), foreign)
    with pytest.raises(InputError, match="no bertscore-viz signature"):
        precomputed.load_results(foreign)
    at = _page("foreign.parquet", foreign.read_bytes())
    assert any("signature in its metadata" in e.value for e in at.error)


# --- a rescaled, idf-weighted file whose first system is the worse one ----------------------------------------
@pytest.fixture(scope="module")
def rescaled_file(ray_session, tmp_path_factory):
    """30 segments written with --idf --rescale_with_baseline; in the file, the worse system comes first."""
    tmp = tmp_path_factory.mktemp("rescaled")
    rows = wide_rows(30, 2600)
    csv_path = tmp / "worse_first.csv"
    pd.DataFrame({"segment_id": rows["segment_id"], "reference": rows["reference"], "sys_other": rows["sys_other"],
                  "sys_mt": rows["sys_mt"]}).to_csv(csv_path, index=False)
    run = distributed.score_files(csv_path, tmp / "out", ScoreOptions(
        idf=True, rescale_with_baseline=True, block_segments=10, workers=2))
    return Path(run.scores)


def _means(scores: Path, column: str) -> dict[str, float]:
    frame = pd.read_parquet(scores)
    return {s: float(part[column].mean()) for s, part in frame.groupby("system")}


def test_results_are_ranked_best_first_whatever_the_file_order(rescaled_file):
    table = results_table.read_results(rescaled_file)
    assert table.info["systems"] == ["sys_other", "sys_mt"]  # file order: the worse one first
    for rescale in (True, False):
        comparison = precomputed.results_at(table, rescale).comparison
        assert comparison.systems == ["sys_mt", "sys_other"]
        means = [float(np.mean(comparison.results[s].f1)) for s in comparison.systems]
        assert means == sorted(means, reverse=True)
    at = _page("scores.parquet", rescaled_file.read_bytes())
    assert _systems_table(at)["System"].tolist() == ["sys_mt", "sys_other"]
    at.session_state["cmp_tab"] = "Significance"
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key=f"cmp_baseline_{upload.content_key(rescaled_file.read_bytes())}").value == "sys_mt"


def test_a_rescaled_file_opens_with_its_own_signature_and_says_how_the_sidebar_differs(rescaled_file):
    at = _page("scores.parquet", rescaled_file.read_bytes())  # the sidebar's defaults: no rescaling, no idf
    signature = results_format.read_metadata(rescaled_file.read_bytes())["signature"]
    assert signature.endswith("-rescaled") and "_idf_" in signature
    assert f"signature: {signature}" in "\n".join(str(c.value) for c in at.code)
    got = _systems_table(at).set_index("System")["F1"]
    for name, mean in _means(rescaled_file, "rescaled_f1").items():
        assert abs(got[name] - mean) < 1e-9, name
    warning = "\n".join(w.value for w in at.warning).replace("\\", "")  # shown markdown-escaped
    assert "idf on (sidebar: off)" in warning and "rescaled with a baseline (sidebar: rescaling off)" in warning
    assert "Shown: the file's own rescaled numbers" in warning
    # the file holds raw numbers too: one toggle away, with their own signature
    fkey = upload.content_key(rescaled_file.read_bytes())
    at.toggle(key=f"cmp_rf_other_{fkey}").set_value(True).run()
    assert not at.exception, at.exception
    got = _systems_table(at).set_index("System")["F1"]
    for name, mean in _means(rescaled_file, "raw_f1").items():
        assert abs(got[name] - mean) < 1e-9, name
    raw_signature = signature.removesuffix("-rescaled")
    assert f"signature: {raw_signature}" in "\n".join(str(c.value) for c in at.code)
    assert "Shown: the file's own raw numbers" in "\n".join(w.value for w in at.warning).replace("\\", "")


def test_no_warning_when_the_sidebar_matches_the_file(rescaled_file):
    from bertscore_viz.app.shared.settings import Settings

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page(str(ROOT / "bertscore_viz" / "app" / "app_pages" / "compare" / "page.py"))
    use_settings(at, Settings(idf=True, rescale=True))
    at.session_state["compare_input"] = {"name": "scores.parquet", "data": rescaled_file.read_bytes()}
    at.run()
    assert not at.exception, at.exception
    assert not any("other settings than the sidebar" in w.value for w in at.warning)


def test_the_drilldown_shows_the_files_numbers_for_the_segment(rescaled_file):
    data = rescaled_file.read_bytes()
    fkey = upload.content_key(data)
    at = _page("scores.parquet", data)
    at.session_state["cmp_tab"] = "Drill-down"
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    i = at.session_state[f"cmp_drill_seg_{fkey}"]
    frame = pd.read_parquet(rescaled_file)
    labels = {"Precision (rescaled)": "precision", "Recall (rescaled)": "recall", "F1 (rescaled)": "f1"}
    shown: dict[str, list[float]] = {}
    for m in at.metric:
        if m.label in labels:  # the explanation's metrics (the answer's metrics above have other labels)
            shown.setdefault(m.label, []).append(float(m.value))
    for label, column in labels.items():
        want = [frame[(frame.segment_index == i) & (frame.system == s)][column].iloc[0] for s in ("sys_mt",
                                                                                                  "sys_other")]
        assert len(shown[label]) == 2, shown
        np.testing.assert_allclose(shown[label], want, rtol=0, atol=5.1e-5)  # shown to 4 decimals
    from bertscore_viz.app.shared.messages import escape_markdown

    captions = [str(c.value) for c in at.caption]
    signature = results_format.read_metadata(data)["signature"]
    assert captions.count("Signature: " + escape_markdown(signature)) == 2  # both sides: the file's signature


def test_the_file_is_read_once_per_upload(rescaled_file, monkeypatch):
    calls = []
    real = results_table.read_results

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(results_table, "read_results", counting)
    at = _page("scores.parquet", rescaled_file.read_bytes())
    for tab in ("Segments", "Charts", "Significance"):
        at.session_state["cmp_tab"] = tab
        at.run()
        assert not at.exception, at.exception
    at.toggle(key=f"cmp_rf_other_{upload.content_key(rescaled_file.read_bytes())}").set_value(True).run()
    assert len(calls) == 1


def test_a_results_file_over_the_limit_is_refused_with_a_message(rescaled_file, monkeypatch):
    monkeypatch.setenv(results_format.UPLOAD_ENV, "0.01")
    at = _page("scores.parquet", rescaled_file.read_bytes())
    errors = "\n".join(e.value for e in at.error)
    assert "at most" in errors and "Traceback" not in errors
    assert not any("Rank" in df.value.columns for df in at.dataframe)
    monkeypatch.setenv(results_format.UPLOAD_ENV, "lots")
    with pytest.raises(InputError, match=results_format.UPLOAD_ENV):
        results_format.max_upload_bytes()
    assert results_format.max_upload_bytes({}) == results_format.MAX_UPLOAD_BYTES
    assert results_format.max_upload_bytes({results_format.UPLOAD_ENV: "300"}) == 300 * 2**20
