"""Long texts in the app (issue 21), in AppTest with the real model and navigation: the switch next to the
truncation warning says how many texts and tokens were cut, turns window mode on for every page (the sidebar's
signature, Inspect's numbers and window boundaries, Compare's model pass, the walkthrough), and back off."""

from __future__ import annotations

import csv
import io
import json

import pytest

from bertscore_viz import Scorer
from tests.conftest import DATA

from .navigation import app, go, texts

KEY = "long_texts_window"


def _lines(n: int, start: int) -> list[str]:
    path = DATA / "newstest2017-english" / "newstest2017-deen-ref.en"
    return path.read_text(encoding="utf-8").splitlines()[start:start + n]


#: A newstest passage of about 1,150 tokens and the same passage with its last 12 sentences garbled.
REF = " ".join(_lines(48, 1000))
CAND = " ".join(_lines(36, 1000) + _lines(12, 2500))


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _heatmap_meta(at) -> dict:
    chart = next(el for el in at.get("plotly_chart") if el.key == "inspect_heatmap")
    return json.loads(chart.proto.spec)["layout"]["meta"]


@pytest.fixture(scope="module")
def engines():
    return Scorer(), Scorer(long_texts="window")


def test_inspect_switches_between_truncation_and_windows(engines):
    truncate, window = engines
    at = app(None, inspect_candidate=CAND, inspect_reference_0=REF)
    cut = truncate.explain(CAND, REF)
    assert _metrics(at)["F1"] == f"{cut.f1:.4f}"
    shown = texts(at)
    assert "were truncated" in shown or "was truncated" in shown
    enc = truncate.encoder
    dropped = cut.cand.dropped + cut.ref.dropped
    assert f"2 texts longer than the model's maximum of {enc.max_length} tokens were truncated: {dropped:,} tokens" \
        in shown
    assert at.toggle(key=KEY).value is False
    at.toggle(key=KEY).set_value(True).run()
    assert not at.exception, at.exception
    whole = window.explain(CAND, REF)
    assert _metrics(at)["F1"] == f"{whole.f1:.4f}" and whole.f1 < cut.f1 - 0.02  # the damaged tail now counts
    assert "are scored whole, in overlapping windows" in texts(at)
    assert not any("truncated" in w.value for w in at.warning)
    assert any(c.value.endswith("_window") for c in at.sidebar.code)  # the signature says so
    meta = _heatmap_meta(at)
    assert meta["window_cuts"]["cols"] and meta["window_cuts"]["rows"]  # boundaries marked on both axes
    # and said in words, above the overview of the whole matrix (every boundary in view)
    first_row = int(meta["window_cuts"]["rows"][0] + 0.5) + 1
    said = [c.value for c in at.caption if c.value.startswith("Dashed lines mark window boundaries")]
    assert len(said) == 1 and f"before candidate rows {first_row:,}" in said[0]
    assert meta["overview"]
    # off again: bert-score's numbers
    at.toggle(key=KEY).set_value(False).run()
    assert _metrics(at)["F1"] == f"{cut.f1:.4f}"
    assert not any(c.value.endswith("_window") for c in at.sidebar.code)


def test_short_pair_shows_no_switch_until_window_mode_is_on():
    at = app(None)
    assert not at.exception
    assert not [t for t in at.toggle if t.key == KEY]
    at.session_state[KEY] = True
    at.run()
    assert [t for t in at.toggle if t.key == KEY]  # kept in view to turn it off
    assert "window mode changes nothing for them" in texts(at)


def test_compare_and_walkthrough_follow_the_switch(engines):
    truncate, window = engines
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["reference", "garbled", "clean"])
    w.writerow([REF, CAND, REF])
    short = _lines(3, 200)
    for s in short:
        w.writerow([s, s.upper(), s])
    at = app("compare.py", compare_input={"name": "long.csv", "data": buf.getvalue().encode()})
    shown = texts(at)
    assert "texts longer than the model's maximum" in shown and "were truncated" in shown
    at.toggle(key=KEY).set_value(True).run()
    assert not at.exception, at.exception
    assert "are scored whole, in overlapping windows" in texts(at)
    assert any("_window" in c.value for c in at.code)
    go(at, "walkthrough.py")
    at.button(key="walk_compare").click().run()
    assert not at.exception, at.exception
    assert "are scored whole, in overlapping windows" in texts(at)
    sims = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    assert any(s["layout"].get("meta", {}).get("window_cuts", {}).get("cols") for s in sims)
    assert any(c.value.startswith("Dashed lines mark window boundaries") for c in at.caption)
