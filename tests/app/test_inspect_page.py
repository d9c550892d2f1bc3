"""The Inspect page in Streamlit's AppTest: it renders, its numbers are the engine's, settings take effect.

Two ways in: the whole app (``app.py``: navigation + the real sidebar, settings given as the sidebar widgets'
state before the first run) and the page on its own (settings changed between reruns of one session).
A page run on its own (``AppTest.from_file`` of the page) has no sidebar: settings are changed through the session
state between reruns. (The whole app with its navigation: ``tests/app/navigation.py``, ``test_session_state.py``.)

The views of a pair (heatmap, alignment, token table) are tabs of which only the open one is drawn; a test opens
one by setting its key (``inspect_view``), as a click on the tab does.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from bertscore_viz import Scorer
from bertscore_viz.app.shared.settings import LANGS, Settings
from bertscore_viz.engine.baseline import BaselineTable, shipped_baseline_path
from bertscore_viz.models.spec import resolve_model

from .navigation import use_settings

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGE = str(ROOT / "bertscore_viz" / "app" / "app_pages" / "inspect" / "page.py")
MODEL = resolve_model(None).name
LAYER_KEY = f"layer::{MODEL}"
TIMEOUT = 240
#: The page's first example (pair 0 of BERTSCORE.md's hand-checkable values).
EX_CAND, EX_REF = "The cat sat on the mat.", "There is a cat sitting on the mat."
CAND, REF = "A man is playing a guitar on stage.", "Someone performs music with a guitar."
#: A made-up baseline for the bundled model (7 layers): only the arithmetic is checked against the engine.
TABLE = BaselineTable(np.array([[0.40 + 0.02 * k, 0.41 + 0.02 * k, 0.42 + 0.02 * k] for k in range(7)]),
                      "test baseline")


@pytest.fixture(scope="module")
def engine():
    return Scorer()


def run_app(**state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in state.items():
        at.session_state[k] = v
    return at.run()


def run_page(settings: Settings | None = None, **state) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    if settings is not None:
        use_settings(at, settings)
    for k, v in state.items():
        at.session_state[k] = v
    return at.run()


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def expect_metrics(at: AppTest, values, rescaled: bool = False) -> None:
    suffix = " (rescaled)" if rescaled else ""
    got = metrics(at)
    assert got == {f"Precision{suffix}": f"{values[0]:.4f}", f"Recall{suffix}": f"{values[1]:.4f}",
                   f"F1{suffix}": f"{values[2]:.4f}"}, got


def type_pair(at: AppTest, cand: str, ref: str) -> AppTest:
    at.text_area(key="inspect_candidate").input(cand)
    at.text_area(key="inspect_reference_0").input(ref)
    return at.run()


def plotly_specs(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def test_page_renders_with_sidebar_inputs_and_figures():
    at = run_app()
    assert not at.exception
    assert any("Inspect" in t.value for t in at.title)
    labels = [t.label for t in at.text_area]
    assert labels == ["Candidate", "Reference", "Sentences before the reference",
                      "Sentences before the candidate (empty: the reference's, the paper's choice)"]  # context: empty
    assert at.text_area(key="inspect_candidate").value == EX_CAND
    assert [t.label for t in at.sidebar.toggle] == ["idf weighting", "Rescale with baseline"]
    assert set(metrics(at)) == {"Precision", "Recall", "F1"}
    assert [c.key for c in at.get("plotly_chart")] == ["inspect_heatmap"]  # only the open view is drawn
    assert {t.label for t in at.tabs} == {"Heatmap", "Alignment", "Token table"}
    at.session_state["inspect_view"] = "Alignment"
    at.run()
    assert [c.key for c in at.get("plotly_chart")] == ["inspect_alignment"] and not at.dataframe
    assert {b.label for b in at.get("download_button")} >= {"Heatmap (HTML)", "Token table (CSV)",
                                                            "Explanation (JSON)"}
    assert at.toggle(key="inspect_show_special").value is False


def test_typed_pair_shows_the_engines_scores(engine):
    at = run_app(inspect_view="Token table")
    at = type_pair(at, CAND, REF)
    assert not at.exception
    ex = engine.explain(CAND, REF)
    expect_metrics(at, (ex.precision, ex.recall, ex.f1))
    # the token tables sum to the same P and R
    assert any(f"P = {ex.precision:.4f}" in m.value for m in at.markdown)
    assert any(f"R = {ex.recall:.4f}" in m.value for m in at.markdown)
    cand_table = at.dataframe[0].value
    assert cand_table["contribution"].sum() == pytest.approx(ex.precision, abs=1e-9)


def test_layer_change_takes_effect():
    at4 = run_app()
    at6 = run_app(**{LAYER_KEY: 6})
    assert not at6.exception
    assert at6.session_state["settings"].layer == 6
    # hand-checked values of BERTSCORE.md, pair 0 at layer 6 and 4
    expect_metrics(at6, (0.915798, 0.906159, 0.910953))
    expect_metrics(at4, (0.906293, 0.868974, 0.887242))
    assert any("Signature" in c.value and "L6" in c.value for c in at6.caption)


def test_layer_change_within_a_session_needs_no_new_page(engine):
    at = run_page(Settings())
    expect_metrics(at, (0.906293, 0.868974, 0.887242))
    use_settings(at, Settings(layer=6))
    at.run()
    expect_metrics(at, (0.915798, 0.906159, 0.910953))
    # idf from a single reference is degenerate: the engine's warning, and no made-up recall
    use_settings(at, Settings(layer=6, idf=True))
    at.run()
    ex = Scorer(layer=6, idf=True).explain(EX_CAND, EX_REF)
    assert np.isnan(ex.recall)
    assert metrics(at) == {"Precision": f"{ex.precision:.4f}", "Recall": "n/a", "F1": f"{ex.f1:.4f}"}
    assert any("idf is degenerate" in w.value for w in at.warning)


def test_rescale_toggle_switches_to_the_engines_rescaled_values():
    custom = {("en", MODEL): TABLE}
    raw = run_app(custom_baselines=custom)
    scaled = run_app(custom_baselines=custom, rescale=True)
    assert not scaled.exception and not scaled.error
    ex = Scorer(rescale_with_baseline=True, baseline_table=TABLE).explain(EX_CAND, EX_REF)
    expect_metrics(raw, (ex.precision, ex.recall, ex.f1))
    expect_metrics(scaled, ex.rescaled, rescaled=True)
    assert ex.rescaled[2] != pytest.approx(ex.f1)
    captions = " ".join(c.value for c in scaled.caption)
    for k in range(3):
        assert f"raw {[ex.precision, ex.recall, ex.f1][k]:.4f}" in captions
        assert f"baseline {ex.baseline[k]:.4f}" in captions
    # the heatmap is rescaled with the F baseline and says so
    heat = plotly_specs(scaled)[0]
    title = heat["data"][0]["colorbar"]["title"]["text"]
    assert "F baseline" in title and f"{TABLE.values[4][2]:.3f}" in title


def test_rescale_within_a_session(engine):
    at = run_page(Settings(), custom_baselines={("en", MODEL): TABLE})
    at = type_pair(at, CAND, REF)
    before = metrics(at)
    use_settings(at, Settings(rescale=True))
    at.run()
    ex = Scorer(rescale_with_baseline=True, baseline_table=TABLE).explain(CAND, REF)
    expect_metrics(at, ex.rescaled, rescaled=True)
    assert metrics(at) != before


def test_missing_baseline_gives_the_engines_message_and_raw_numbers(engine):
    # a language without a baseline for this model: the engine's message says how to compute one
    lang = next(x for x in LANGS if not shipped_baseline_path(x, MODEL).is_file())
    # The sidebar offers only languages with a baseline when rescaling: a language without one moves to one that
    # has it, and the numbers are rescaled.
    at = run_app(rescale=True, lang=lang)
    assert not at.exception and at.session_state["settings"].lang == "en"
    # The page alone (settings from elsewhere, e.g. a bookmarked state): the engine's message, raw numbers.
    at = run_page(Settings(rescale=True, lang=lang))
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "No rescaling baseline" in errors and "baseline" in errors and "raw" in errors
    ex = engine.explain(EX_CAND, EX_REF)
    expect_metrics(at, (ex.precision, ex.recall, ex.f1))


@pytest.mark.parametrize("cand, ref, expected", [
    ("", EX_REF, "candidate is empty"),
    (EX_CAND, "   ", "reference is empty"),
    ("", "", "Type a candidate and a reference"),
])
def test_empty_input_shows_a_message(cand, ref, expected):
    at = run_page(Settings())
    at = type_pair(at, cand, ref)
    assert not at.exception
    assert any(expected in i.value for i in at.info)
    assert not at.metric and not at.get("plotly_chart")


def test_html_like_input_is_shown_as_text():
    nasty = "<script>alert(1)</script> **bold** $x$ [link](http://x)"
    at = run_page(Settings(), inspect_view="Token table")
    at = type_pair(at, nasty, "<b>bold</b> text $y$")
    assert not at.exception
    assert at.text_area(key="inspect_candidate").value == nasty
    shown = at.dataframe[0].value["display"].tolist()
    assert "<" in shown and "script" in shown and "*" in shown and "$" in shown
    for el in list(at.markdown) + list(at.caption) + list(at.info) + list(at.warning) + list(at.error):
        assert "<script" not in el.value and "**bold**" not in el.value
    at.session_state["inspect_view"] = "Heatmap"
    at.run()
    heat = plotly_specs(at)[0]
    labels = heat["layout"]["yaxis"]["ticktext"]
    assert "&lt;" in labels and not any("<" in t for t in labels)
    config = json.loads(at.get("plotly_chart")[0].proto.config)
    assert config["typesetMath"] is False


def test_special_tokens_and_word_merging_toggles():
    at = run_page(Settings())
    at = type_pair(at, "The players were playing unbelievably.", "Players played incredibly well.")
    assert "[CLS]" not in plotly_specs(at)[0]["layout"]["yaxis"]["ticktext"]
    at.toggle(key="inspect_show_special").set_value(True).run()
    assert plotly_specs(at)[0]["layout"]["yaxis"]["ticktext"][0] == "[CLS]"
    at.toggle(key="inspect_merge_words").set_value(True).run()
    assert "unbelievably" in plotly_specs(at)[0]["layout"]["yaxis"]["ticktext"]
    at.session_state["inspect_view"] = "Token table"
    at.run()
    assert "unbelievably" in at.dataframe[0].value["word"].tolist()
    assert not at.exception


def test_several_references_say_which_gave_each_score(engine):
    at = run_page(Settings())
    at.selectbox(key="inspect_example").set_value("Paper: two references").run()
    refs = ["consumers prefer imported cars", "people like visiting places abroad"]
    pair = [t for t in at.text_area if not t.key.endswith("_context")]  # the document context's boxes: empty
    assert [t.value for t in pair] == ["people like foreign cars"] + refs
    assert [t.label for t in pair] == ["Candidate", "Reference", "Reference 2"]
    multi = engine.explain("people like foreign cars", refs)
    expect_metrics(at, (multi.precision, multi.recall, multi.f1))
    captions = [c.value for c in at.caption]
    for k in range(3):
        assert any(f"from reference {int(multi.best_reference[k]) + 1}" in c for c in captions)
    # add a third reference through the button
    at.button(key="inspect_add_ref").click().run()
    assert len([t for t in at.text_area if not t.key.endswith("_context")]) == 4  # and the two context boxes
    at.text_area(key="inspect_reference_2").input("people love cars from other countries").run()
    multi3 = engine.explain("people like foreign cars", refs + ["people love cars from other countries"])
    expect_metrics(at, (multi3.precision, multi3.recall, multi3.f1))
    assert not at.exception


def _two_drilldowns():
    from bertscore_viz.app.shared.explain_view import explain_pair, render_explanation
    from bertscore_viz.app.shared.settings import Settings as S

    s = S()
    render_explanation(explain_pair(s, "a dog runs", "a dog is running"), s, key="compare")
    render_explanation(explain_pair(s, "a dog runs", ["a dog is running", "cats sleep"]), s, key="other")


def test_render_explanation_can_appear_twice_with_prefixed_keys():
    at = AppTest.from_function(_two_drilldowns, default_timeout=TIMEOUT).run()
    assert not at.exception
    keys = [t.key for t in at.toggle]
    assert "compare_show_special" in keys and "other_show_special" in keys
    assert len(at.metric) == 6
    assert at.selectbox(key="other_which_ref").value == 0


def test_changing_layer_idf_or_rescaling_costs_no_model_pass(monkeypatch):
    from bertscore_viz.engine.encoder import Encoder

    calls = []
    real_forward = Encoder._forward

    def counting_forward(self, id_lists, depth):  # the real forward pass, counted
        calls.append(len(id_lists))
        return real_forward(self, id_lists, depth)

    monkeypatch.setattr(Encoder, "_forward", counting_forward)
    at = run_page(Settings(), custom_baselines={("en", MODEL): TABLE})
    at = type_pair(at, "A quiet evening by the sea, unlike any other.", "An evening at the seaside, calm as never.")
    assert calls, "the new pair needs one model pass"
    first = metrics(at)
    calls.clear()
    for settings in (Settings(layer=2), Settings(layer=6, idf=True), Settings(layer=5, rescale=True), Settings()):
        use_settings(at, settings)
        at.run()
        assert not at.exception
    assert calls == []
    assert metrics(at) == first


def test_a_truncated_pair_shows_one_box_without_api_advice(engine):
    """Issue 30, item 4: a truncated pair showed three boxes (two engine warnings ending in advice for the Python
    API and the command line, and the switch); now the switch's box says what was cut, for which text."""
    long_text = " ".join(["the quick brown fox jumps over the lazy dog"] * 70)  # ~630 tokens
    at = run_page(Settings())
    at = type_pair(at, long_text, "A fox jumps over a dog.")
    assert not at.exception
    assert at.metric
    assert not any("truncated" in w.value for w in at.warning)  # no separate warning box
    ex = engine.explain(long_text, "A fox jumps over a dog.")
    box = [c.value for c in at.caption if "were truncated" in c.value or "was truncated" in c.value]
    assert len(box) == 1 and f"the candidate lost {ex.cand.dropped:,} tokens" in box[0]
    assert [t.key for t in at.toggle if t.key == "long_texts_window"]
    shown = " ".join(str(e.value) for kind in ("warning", "caption", "markdown", "info") for e in getattr(at, kind))
    assert "long_texts=" not in shown and "--long_texts" not in shown and "CLI" not in shown


def test_typed_texts_are_bounded_as_uploaded_cells_are():
    """Issue 19: every request a browser can trigger has a ceiling; a pasted text had none (the browser enforces
    max_chars before anything reaches the server)."""
    from bertscore_viz.files.upload import MAX_CELL_CHARS

    at = run_page(Settings(idf=True), inspect_idf_source="A pasted corpus")  # the deployment's defaults
    assert at.text_area(key="inspect_candidate").proto.max_chars == MAX_CELL_CHARS
    assert at.text_area(key="inspect_reference_0").proto.max_chars == MAX_CELL_CHARS
    assert at.text_area(key="inspect_idf_corpus").proto.max_chars == 5 * 2**20


def test_rescaling_a_pair_in_another_language_than_the_baseline_says_so():
    """Issue 23, item 4 on Inspect: a Japanese pair rescaled with the English baseline said nothing about it."""
    at = run_page(Settings(rescale=True, lang="en"))
    at = type_pair(at, "猫がマットの上に座った。", "マットの上に猫が座っている。")
    assert not at.exception, at.exception
    assert any(w.value.replace("\\", "").startswith("Rescaling uses the English (en) baseline, but the reference is "
                                                    "in") for w in at.warning)


# --- the whole pair (issue 30) --------------------------------------------------------------------------------
MAX_WIDTH = 940  # explain_view.MAX_WIDTH: the page's width figures fit


def _spec(at: AppTest, key: str) -> dict:
    return json.loads(next(el for el in at.get("plotly_chart") if el.key == key).proto.spec)


def _styles(at: AppTest) -> str:
    return " ".join(str(el.proto.body) for el in at.get("html"))


def _long_pair(engine, n: int) -> tuple[str, str]:
    from tests.unit.test_plots import mt_pair

    return mt_pair(engine, n)


def _real(side) -> list[str]:
    return [side.display[i] for i in np.flatnonzero(~side.special)]


def _fit(ex) -> int:
    """The reference tokens a 16 px heatmap shows within the page's column (issue 40: never wider than it)."""
    from bertscore_viz.figures import plots

    return plots.fit_columns(MAX_WIDTH, plots.longest_labels(ex)[0])


def test_a_128_token_pair_opens_on_the_overview_fitted_to_the_column(engine):
    """Drawn whole at 16 px, 128 reference tokens were 2,000+ px in a 940 px column (the colour bar and half the
    reference hidden, issue 40): the pair opens on the overview, and the region below it is as wide as fits."""
    cand, ref = _long_pair(engine, 128)
    ex = engine.explain(cand, ref)
    at = type_pair(run_page(Settings()), cand, ref)
    assert not at.exception
    overview = _spec(at, "inspect_heatmap")["layout"]
    assert overview["meta"]["overview"] and overview["meta"]["shape"] == [128, 128]
    assert overview["width"] <= MAX_WIDTH
    assert any("too large to draw whole in this column" in c.value for c in at.caption)
    region = _spec(at, "inspect_region")["layout"]
    fit = _fit(ex)
    assert 20 < fit < 128 and region["meta"]["region"] == {"rows": [0, 128], "cols": [0, fit]}
    assert region["yaxis"]["ticktext"] == _real(ex.cand) and region["xaxis"]["ticktext"] == _real(ex.ref)[:fit]
    assert region["width"] <= MAX_WIDTH
    assert not any("showing the first" in c.value for c in at.caption)
    at.session_state["inspect_view"] = "Alignment"
    at.run()
    align = _spec(at, "inspect_alignment")
    nodes = {t["name"]: t for t in align["data"] if t.get("mode") == "markers+text"}
    assert nodes["P candidate"]["text"] == _real(ex.cand) and nodes["R reference"]["text"] == _real(ex.ref)
    assert align["layout"]["width"] <= MAX_WIDTH and align["layout"]["meta"]["lines"] > 1
    assert any("wrap onto" in c.value for c in at.caption)


def test_a_long_pair_opens_on_the_overview_and_any_region_is_drawn_whole(engine):
    cand, ref = _long_pair(engine, 300)
    ex = engine.explain(cand, ref)
    at = type_pair(run_page(Settings()), cand, ref)
    assert not at.exception
    overview = _spec(at, "inspect_heatmap")["layout"]
    assert overview["meta"]["overview"] and overview["meta"]["shape"] == [300, 300]
    assert any(c.value.startswith("A pair of 300 × 300 tokens is too large") for c in at.caption)
    fit = _fit(ex)
    region = _spec(at, "inspect_region")["layout"]
    assert region["meta"]["region"] == {"rows": [0, 128], "cols": [0, fit]}
    assert region["yaxis"]["ticktext"] == _real(ex.cand)[:128]
    at.slider(key="inspect_zoom_rows").set_value((151, 260)).run()
    at.slider(key="inspect_zoom_cols").set_value((1, 300)).run()  # wider than drawn at full resolution
    assert not at.exception
    region = _spec(at, "inspect_region")["layout"]
    assert region["meta"]["region"] == {"rows": [150, 260], "cols": [0, fit]}
    assert region["yaxis"]["ticktext"] == _real(ex.cand)[150:260]
    assert region["xaxis"]["ticktext"] == _real(ex.ref)[:fit]
    assert any(f"at most {fit} at full resolution" in c.value for c in at.caption)
    rect = next(sh for sh in _spec(at, "inspect_heatmap")["layout"]["shapes"] if sh["type"] == "rect")
    assert (rect["y0"], rect["y1"], rect["x0"], rect["x1"]) == (149.5, 259.5, -0.5, fit - 0.5)


def test_the_figure_settings_of_the_deployment_take_effect(engine, monkeypatch):
    """FIGURE_TOKENS and DOWNLOAD_FIGURE_TOKENS bound what a page draws and downloads: lowered, a 30-token pair
    opens on the overview with regions of at most that many tokens, and its PNG/SVG/PDF are refused naming the
    setting (the HTML figure and the token table stay)."""
    from bertscore_viz.serving import config

    monkeypatch.setattr(config, "_POLICY", config.Policy(figure_tokens=20, download_figure_tokens=25,
                                                         inspect_references=2))
    cand, ref = _long_pair(engine, 30)
    at = type_pair(run_page(Settings()), cand, ref)
    assert not at.exception
    assert _spec(at, "inspect_heatmap")["layout"]["meta"]["overview"]
    assert _spec(at, "inspect_region")["layout"]["meta"]["region"] == {"rows": [0, 20], "cols": [0, 20]}
    shown = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "draws at most 25 a side" in shown and "BERTSCORE_VIZ_DOWNLOAD_FIGURE_TOKENS" in shown
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Heatmap (HTML)" in labels and not any(label.endswith("(PNG)") for label in labels)
    at.button(key="inspect_add_ref").click().run()
    assert at.button(key="inspect_add_ref").disabled  # two references: the most this server takes


def test_idf_with_one_reference_names_the_source_used_and_writes_n_a():
    """Issue 30, item 4: the radio was preselected on "A pasted corpus" with nothing pasted, and the figure's title
    said "R nan" where the tile says "n/a"."""
    at = run_page(Settings(idf=True))
    assert not at.exception
    assert at.radio(key="inspect_idf_source").value == "The reference(s) of this pair"
    assert any(c.value == "idf from the reference(s) of this pair." for c in at.caption)
    assert metrics(at)["Recall"] == "n/a"
    title = _spec(at, "inspect_heatmap")["layout"]["title"]["text"]
    assert "R n/a" in title and "nan" not in title


def test_the_apps_warnings_carry_no_advice_for_the_api_or_the_command_line(engine):
    from bertscore_viz.app.shared.explain_view import app_warnings
    from bertscore_viz.engine.messages import WINDOW_HINT

    long_text = " ".join(["the quick brown fox jumps over the lazy dog"] * 70)
    ex = engine.explain(long_text, "A fox jumps over a dog.")
    assert any(WINDOW_HINT in w for w in ex.warnings)  # the engine's (API, CLI) advice
    shown = app_warnings(ex.warnings, folded=False)  # Compare's drill-down: the warning, without the advice
    assert len(shown) == len(ex.warnings) and not any(WINDOW_HINT in w for w in shown)
    assert any(w.startswith("The candidate was truncated") and w.endswith("are not scored.") for w in shown)
    assert app_warnings(ex.warnings, folded=True) == [w for w in ex.warnings if WINDOW_HINT not in w]  # Inspect


def test_the_pair_is_placed_on_the_calibration_ladder():
    """Issue 32: Inspect says where the pair's F1 stands among random pairs and human-rated translations (the
    calibration's own reading of the same value), and says why when there is no calibration (idf on)."""
    from bertscore_viz.evaluation.calibration import find_calibration

    at = type_pair(run_app(), CAND, REF)
    assert not at.exception, at.exception
    f1 = Scorer().explain(CAND, REF).f1
    reading = find_calibration(MODEL, "en").reading(f1, 4)
    shown = " ".join(m.value for m in at.markdown if "stands:" in m.value).replace("\\", "")
    assert f"Where F1 {f1:.4f} stands:" in shown and reading.sentence() in shown
    assert "random pairs" in reading.sentence()
    at = type_pair(run_app(idf=True), CAND, REF)
    assert "calibration" in " ".join(c.value for c in at.caption).lower()
