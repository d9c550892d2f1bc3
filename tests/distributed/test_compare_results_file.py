"""The Compare page (AppTest) reads the results Parquet of a Ray run: the same system table as scoring the same
input in the page, the signature shown, no model pass for the tables; bad Parquet gets a message."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from bertscore_viz import distributed, results_file
from bertscore_viz.errors import InputError

from .conftest import ROOT, wide_rows


def _page(name: str, data: bytes) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page(str(ROOT / "pages" / "compare.py"))
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
    run = distributed.score_files(csv_path, tmp / "out", block_segments=15, workers=2)
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
    meta_sig = results_file.read_metadata(scores.read_bytes())["signature"]
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
    loaded = results_file.load_results(scores, rescale=True)
    raw = results_file.load_results(scores, rescale=False)
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
        results_file.load_results(cut)
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"a": [1]}), foreign)
    with pytest.raises(InputError, match="no bertscore-viz signature"):
        results_file.load_results(foreign)
    at = _page("foreign.parquet", foreign.read_bytes())
    assert any("signature in its metadata" in e.value for e in at.error)
