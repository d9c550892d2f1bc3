"""What a session keeps (``bertscore_viz/app/state/widgets.py``), in the whole app with its real navigation: every run
executes ``app.py`` (``keep_widget_values``, the sidebar) and then the page, as a server does (see
``tests/app/navigation.py`` for why plain AppTest does not). Real model, real Streamlit.

- the list of kept widgets against every widget the pages draw: Streamlit's own rule (``writes_allowed``, recorded
  while the pages run) decides which may be written; a kept one that may not, or a settable page widget that is not
  kept, fails;
- the crash it prevents: a button (the Baselines page's "Save for later sessions") written back on the next run;
- a round trip Inspect -> Compare -> Inspect -> Compare keeps typed text, the open views and tabs, the chosen
  systems, Holm, and the scores (no second model pass).
"""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.elements import form as st_form
from streamlit.elements.lib import policies

from bertscore_viz.app.state import widgets as state
from bertscore_viz.evaluation.perturb import PERTURBATIONS
from bertscore_viz.files.upload import content_key
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME
from bertscore_viz.serving import config

from .navigation import ROOT, app, go, texts

EXAMPLE = (ROOT / "bertscore_viz" / "examples" / "systems_example.csv").read_bytes()
EX = content_key(EXAMPLE)
BASELINE = ("LAYER,P,R,F\n" + "".join(f"{i},0.{i + 1},0.{i + 1},0.{i + 1}\n" for i in range(7))).encode()
CORPUS = "\n".join(f"Sentence number {i} is about {w} and nothing else." for i, w in
                   enumerate(["cats", "rain", "trains", "music", "bread", "rivers", "stars", "paint", "chess",
                              "tea", "boats", "snow"])).encode()
RATED = ("system,candidate,reference,human,group\n" + "".join(
    f"s{i % 3},Sentence {i} is about {w}.,A sentence about {w} and more.,{i % 5},g{i % 2}\n"
    for i, w in enumerate(["cats", "rain", "trains", "music", "bread", "rivers", "stars", "paint", "chess"]))).encode()
TYPED = "A typed candidate that must survive a visit to Compare."
#: The sidebar is drawn on every run: its widgets need no carrying over.
SIDEBAR = {"model_choice", "model_other", "idf", "rescale", "lang", "precision_choice"}
#: Settable page widgets deliberately not kept, and why.
NOT_KEPT = {"cmp_segments": "a row selection is an action (it opens the drill-down), not a setting",
            "samples_choices": "a row selection is an action (it opens that input), not a setting",
            "agr_dis_table": "a row selection is an action (it explains that pair), not a setting",
            **{f"audit_{order}_{p.name}": "a row selection is an action (it opens the example), not a setting"
               for order in ("fooled", "noticed") for p in PERTURBATIONS}}


@pytest.fixture
def nav():
    yield


@pytest.fixture
def with_policy(monkeypatch):
    def use(**kw):
        monkeypatch.setattr(config, "_POLICY", config.Policy(**kw))
    return use


@pytest.fixture
def writes(monkeypatch):
    """``{widget key: {writes_allowed, ...}}`` as Streamlit's own checks see them while the pages run."""
    seen: dict[str, set[bool]] = {}
    original = policies.check_session_state_rules

    def record(default_value, key, writes_allowed=True):
        if key is not None:
            seen.setdefault(str(key), set()).add(bool(writes_allowed))
        return original(default_value=default_value, key=key, writes_allowed=writes_allowed)

    monkeypatch.setattr(policies, "check_session_state_rules", record)
    monkeypatch.setattr(st_form, "check_session_state_rules", record)
    return seen


# --- the list ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key, kept", [
    ("inspect_candidate", True), ("inspect_reference_3", True), ("inspect_example", True),
    ("inspect_view", True), ("inspect_zoom_rows", True),
    ("compare_a_view", True), ("compare_b_merge_words", True), ("compare_a_which_ref", True),
    ("cmp_tab", True), (f"cmp_a_{EX}", True), (f"cmp_holm_{EX}", True), (f"cmp_drill_seg_{EX}", True),
    ("bl_seed", True),
    # buttons, downloads, uploaders, selections, and keys that only look alike
    ("bl_keep", False), ("bl_forget", False), ("bl_compute", False), ("bl_download_tsv", False),
    ("cmp_file", False), ("cmp_load_example", False), ("cmp_forget", False), ("cmp_segments", False),
    ("cmp_dl_json", False), ("inspect_add_ref", False), ("inspect_dl_heatmap_png", False),
    ("compare_a_dl_csv", False), (f"cmp_a_{EX}x", False), ("cmp_a_short", False), ("baseline_file", False),
    ("settings", False), (7, False), (None, False),
])
def test_the_kept_widgets_are_listed_by_name(key, kept):
    assert state.is_kept(key) is kept
    assert state.kept_keys([key, "unrelated"]) == ([key] if kept else [])


def test_every_widget_the_pages_draw_is_kept_exactly_when_it_may_be_written(nav, with_policy, tmp_path, writes):
    """Walk every page in the states that draw all its widgets, then hold the list against Streamlit's rule."""
    with_policy(baseline_dir=str(tmp_path))
    at = app()  # Inspect
    at.button(key="inspect_add_ref").click().run()
    at.sidebar.toggle(key="idf").set_value(True).run()
    at.radio(key="inspect_idf_source").set_value("A pasted corpus").run()
    for view in ("Alignment", "Token table"):
        at.session_state["inspect_view"] = view
        at.run()
    at.sidebar.toggle(key="idf").set_value(False).run()
    assert not at.exception, at.exception
    go(at, "compare.py")
    at.button(key="cmp_load_example").click().run()
    at.toggle(key=f"cmp_holm_{EX}").set_value(True).run()
    for tab in ("Segments", "Charts", "Drill-down", "Downloads", "Significance"):
        at.session_state["cmp_tab"] = tab
        at.run()
        assert not at.exception, (tab, at.exception)
    go(at, "baselines.py")
    at.session_state["baseline_corpus_input"] = {"name": "corpus.txt", "data": CORPUS}
    at.session_state["baseline_file_input"] = {"name": "mine.tsv", "data": BASELINE}
    at.run()
    at.button(key="bl_compute").click().run()
    at.run()
    assert not at.exception, at.exception
    go(at, "agreement.py")
    at.session_state["agreement_input"] = {"name": "rated.csv", "data": RATED, "origin": "upload"}
    at.run()
    assert not at.exception, at.exception
    go(at, "samples.py")
    at.button(key="samples_example").click().run()
    assert not at.exception, at.exception
    fixed = {k for k, allowed in writes.items() if False in allowed}
    assert {"bl_keep", "bl_compute", "bl_download_tsv", "cmp_file", "cmp_load_example", "cmp_forget",
            "inspect_add_ref", "inspect_dl_heatmap_png", "compare_a_dl_json"} <= fixed  # the walk saw them
    assert not [k for k in fixed if state.is_kept(k)], "a kept widget Streamlit does not let a program set"
    settable = {k for k, allowed in writes.items() if allowed == {True}}
    page_widgets = {k for k in settable if k not in SIDEBAR and not k.startswith("layer::")}
    assert {"inspect_view", "compare_b_view", "cmp_tab", f"cmp_baseline_{EX}", "bl_seed", "agr_metric",
            "agr_resamples"} <= page_widgets
    forgotten = sorted(k for k in page_widgets if not state.is_kept(k) and k not in NOT_KEPT)
    assert not forgotten, f"page widgets whose value would be lost on another page: {forgotten}"


# --- the crash -----------------------------------------------------------------------------------------------------
def test_the_baselines_page_survives_the_run_after_its_save_button(nav, with_policy, tmp_path):
    """Before the kept widgets were listed, ``bl_keep`` (a button) was written back on the next run:
    StreamlitValueAssignmentNotAllowedError on the Baselines page of any deployment with a baseline folder."""
    with_policy(baseline_dir=str(tmp_path))
    at = app("baselines.py", lang="fr", baseline_file_input={"name": "mine.tsv", "data": BASELINE})
    assert at.button(key="bl_keep").label == "Save for later sessions"
    at.run()  # any next run: a rerun, another widget, another page
    assert not at.exception, at.exception
    go(at, "inspect.py")
    go(at, "baselines.py")
    at.button(key="bl_keep").click().run()
    assert not at.exception, at.exception
    assert any("Saved on this server" in s.value for s in at.success)
    saved = tmp_path / "fr" / f"{BUNDLED_MODEL_NAME}.tsv"
    assert np.loadtxt(saved, delimiter=",", skiprows=1)[4, 3] == pytest.approx(0.5)


# --- a round trip --------------------------------------------------------------------------------------------------
def test_a_round_trip_keeps_text_views_tabs_choices_and_scores(nav):
    at = app()
    at.text_area(key="inspect_candidate").input(TYPED).run()
    at.session_state["inspect_view"] = "Token table"
    at.run()
    f1 = next(m.value for m in at.metric if m.label == "F1")
    assert any(df.value.shape[0] > 3 for df in at.dataframe)  # the token tables
    go(at, "compare.py")
    at.button(key="cmp_load_example").click().run()
    first_pass = at.session_state["compare_state"].last_pass
    assert "Model pass:" in texts(at)
    at.session_state["cmp_tab"] = "Drill-down"
    at.run()
    at.selectbox(key=f"cmp_b_{EX}").set_value("paraphrase").run()
    at.toggle(key=f"cmp_holm_{EX}").set_value(True).run()
    at.session_state["compare_a_view"] = "Alignment"
    at.run()
    assert not at.exception, at.exception

    go(at, "inspect.py")
    assert at.text_area(key="inspect_candidate").value == TYPED
    assert next(m.value for m in at.metric if m.label == "F1") == f1
    assert at.session_state["inspect_view"] == "Token table" and any(df.value.shape[0] > 3 for df in at.dataframe)

    go(at, "compare.py")
    assert "no model pass" in texts(at)
    assert at.session_state["compare_state"].last_pass is first_pass  # the same model pass, not a second one
    assert at.session_state["cmp_tab"] == "Drill-down"
    md = " ".join(m.value for m in at.markdown)
    assert "**A: literal** — P " in md and "**B: paraphrase** — P " in md  # the tab, with the chosen B
    assert at.toggle(key=f"cmp_holm_{EX}").value and "Holm-adjusted over 6 comparisons" in texts(at)
    assert at.session_state["compare_a_view"] == "Alignment"
    assert at.session_state["compare_b_view"] == "Heatmap"
    assert any("kept in this session" in c.value for c in at.caption)  # the file's name, with "Forget"
    assert at.button(key="cmp_forget").label == "Forget"
