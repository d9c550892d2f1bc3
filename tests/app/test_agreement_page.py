"""The "Agreement with humans" page (issue 22) in Streamlit's AppTest with the real model and navigation: its
numbers are the API's (and so the CLI's), the one-click layer choice changes the sidebar (and every page), bad rows
are listed while the good ones are used, and a Compare upload with a human column is offered."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from bertscore_viz.cli.entry import main as cli
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.evaluation.human_agreement import run_agreement
from bertscore_viz.evaluation.layer_tuning import read_da
from bertscore_viz.files.human_scores import parse_human_scores
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME

from .navigation import ROOT, app, texts

CS_EN = read_da(ROOT / "data" / "wmt16-da-to-english", ["cs-en"])[0]
N = 60


def _rated(human: np.ndarray, extra: str = "") -> bytes:
    frame = pd.DataFrame({"system": [f"sys{i % 4}" for i in range(N)], "candidate": CS_EN.candidates[:N],
                          "reference": CS_EN.references[:N], "human": human, "lp": ["cs-en"] * N})
    return frame.to_csv(index=False).encode() + extra.encode()


@pytest.fixture(scope="module")
def layer1_f1() -> np.ndarray:
    """Human scores that are exactly BERTScore-F1 at layer 1: layer 1 must come out best (Pearson 1)."""
    return Scorer(layer=1).score(list(CS_EN.candidates[:N]), list(CS_EN.references[:N])).f1


def _page(data: bytes):
    return app("agreement.py", agreement_input={"name": "rated.csv", "data": data, "origin": "upload"})


def _table(at) -> pd.DataFrame:
    return at.dataframe[0].value


def test_the_table_is_the_api_and_cli_report(layer1_f1, tmp_path, capsys):
    data = _rated(CS_EN.human[:N])
    at = _page(data)
    shown = _table(at).set_index("metric")
    rated = parse_human_scores(data, "rated.csv")
    api = run_agreement(Scorer(), rated.candidates, rated.references, rated.human, rated.systems, rated.groups)
    for metric, seg in api.overall.segment.items():
        assert shown.loc[metric, "Pearson [95% CI]"].startswith(f"{seg.values['pearson']:+.4f} [")
        lo, hi = seg.ci95["kendall"]
        assert shown.loc[metric, "Kendall [95% CI]"] == f"{seg.values['kendall']:+.4f} [{lo:+.3f}, {hi:+.3f}]"
        sys_p = api.overall.system[metric].values["pearson"]
        assert shown.loc[metric, "system Pearson [95% CI]"].startswith(f"{sys_p:+.4f}")
    (tmp_path / "rated.csv").write_bytes(data)
    assert cli(["correlate", "--input", str(tmp_path / "rated.csv"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"]["BERTScore-F1"]["segment"]["pearson"] == round(
        api.overall.segment["BERTScore-F1"].values["pearson"], 6)
    assert "By group" in [h.value for h in at.subheader] and "By system" in [h.value for h in at.subheader]


def test_one_click_sets_the_sidebar_layer_for_every_page(layer1_f1):
    at = _page(_rated(layer1_f1))
    (button,) = [b for b in at.button if b.key == "agr_use_best"]
    assert button.label.startswith("Use layer 1 (F1 Pearson +1.0000 here")
    button.click().run()
    assert not at.exception, at.exception
    assert at.sidebar.slider(key=f"layer::{BUNDLED_MODEL_NAME}").value == 1
    assert at.session_state["settings"].layer == 1  # what every page reads
    assert "Layer 1, the sidebar's, is the best layer" in texts(at)
    assert "_L1_" in texts(at)


def test_bad_rows_are_listed_and_the_good_ones_used(layer1_f1):
    human = [str(x) for x in CS_EN.human[:N]]
    human[5], human[9] = "", "very good"
    at = _page(_rated(np.array(human, dtype=object), extra="sysX,orphan output,,0.3,cs-en\n"))
    assert not at.exception, at.exception
    listed = at.expander[0]
    assert listed.label == "3 row(s) left out"
    problems = at.dataframe[0].value
    assert sorted(problems["row"].tolist()) == [7, 11, 62]
    assert "58 rated outputs" in texts(at)


def test_a_compare_upload_with_human_scores_is_offered_here():
    data = _rated(CS_EN.human[:N])
    at = app("compare.py", compare_input={"name": "rated.csv", "data": data, "origin": "upload"})
    from .navigation import go

    go(at, "agreement.py")
    (button,) = [b for b in at.button if b.key == "agr_from_compare"]
    button.click().run()
    assert not at.exception, at.exception
    assert at.session_state["agreement_input"]["data"] == data
    assert "60 rated outputs" in texts(at)


def test_downloads_are_safe_csv_and_json_with_the_signature(layer1_f1):
    at = _page(_rated(CS_EN.human[:N]).replace(b"sys1,", b"=HYPERLINK(1),"))
    from bertscore_viz.app.ui import agreement_view as view

    work = at.session_state[view.WORK_KEY]
    report = next(iter(work["reports"].values()))
    rated = parse_human_scores(at.session_state["agreement_input"]["data"], "rated.csv")
    from bertscore_viz.files.export import safe_csv

    csv = safe_csv(view.outputs_frame(report, rated), report.signature).decode("utf-8-sig")
    frame = pd.read_csv(io.StringIO(csv))
    assert frame["system"].str.startswith("=").sum() == 0 and (frame["system"] == "'=HYPERLINK(1)").any()
    assert frame["signature"].iloc[0] == report.signature
    assert json.loads(json.dumps(report.as_dict()))["signature"] == report.signature
