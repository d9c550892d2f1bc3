"""The Compare page in Streamlit's AppTest, with the real model: the example, settings toggles, bad files.

AppTest cannot upload files, so bad files go in the way the page reads every input: as
``{"name", "data"}`` in ``st.session_state["compare_input"]`` (the uploader and "Load example" put them there).
"""

from dataclasses import replace
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from bertscore_viz.upload import content_key
from bertscore_viz.ui.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SYSTEMS = ["paraphrase", "literal", "drops_content", "errors"]
EXAMPLE_KEY = content_key((ROOT / "bertscore_viz" / "examples" / "systems_example.csv").read_bytes())


def _tab(at: AppTest, name: str) -> AppTest:
    """Open a tab of the results (only the open tab runs), as a click on it does."""
    at.session_state["cmp_tab"] = name
    at.run()
    assert not at.exception, at.exception
    return at


def _page(data: bytes | None = None, name: str = "upload.csv", settings: Settings | None = None,
          tab: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.run()
    at.switch_page(str(ROOT / "pages" / "compare.py"))
    if settings is not None:
        at.session_state["settings"] = settings
    if data is not None:
        at.session_state["compare_input"] = {"name": name, "data": data}
    if tab is not None:
        at.session_state["cmp_tab"] = tab
    at.run()
    assert not at.exception, at.exception
    return at


def _texts(at) -> str:
    parts = [e.value for kind in ("success", "info", "warning", "error", "markdown", "caption", "text")
             for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def _frame_with(at, column: str):
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no table with a {column!r} column")


@pytest.fixture(scope="module")
def example():
    at = _page()
    at.button(key="cmp_load_example").click().run()
    assert not at.exception, at.exception
    return at


def test_empty_page_explains_the_formats():
    at = _page()
    assert "Compare" in at.title[0].value
    assert any("Load example" in i.value for i in at.info)
    assert any("system,segment_id,candidate,reference" in c.value for c in at.code)


def test_example_answers_first_and_lists_every_system(example):
    at = example
    head = at.success[0].value
    assert head.startswith("**Best: literal**") and "95% CI" in head and "significant, p = 0.001" in head
    ranking = next(m.value for m in at.markdown if m.value.startswith("Ranking by F1"))
    for name in SYSTEMS:
        assert name.replace("_", "\\_") in ranking
    table = _frame_with(at, "Rank")
    assert sorted(table["System"]) == sorted(SYSTEMS) and list(table["Rank"]) == [1, 2, 3, 4]
    assert "★ best" in list(table["Best"])
    assert list(table["System"]) == ["literal", "errors", "drops_content", "paraphrase"]  # by F1
    text = _texts(at)
    assert "3 comparison(s) against the baseline and 6 pairwise" in text
    assert "literal is better than errors on F1: literal − errors = +" in text.replace("\\", "")
    _tab(at, "Segments")
    segments = _frame_with(at, "F1 · literal")
    assert len(segments) == 30
    assert any("all-MiniLM-L6-v2_L4_no-idf" in c.value for c in at.code)
    assert "seed 12345" in _texts(at)


def test_example_drill_down_shows_the_pair(example):
    at = _tab(example, "Drill-down")
    assert at.selectbox(key=f"cmp_a_{EXAMPLE_KEY}").value == "literal"  # default A/B: the two best
    assert at.selectbox(key=f"cmp_b_{EXAMPLE_KEY}").value == "errors"
    md = " ".join(m.value for m in at.markdown)
    assert "**A: literal** — P " in md and "**B: errors** — P " in md
    assert [m.label for m in at.metric].count("Precision") == 2  # both pairs explained side by side
    # A/B chosen once applies to every tab that uses them; the drill-down follows.
    at.selectbox(key=f"cmp_b_{EXAMPLE_KEY}").set_value("paraphrase").run()
    assert "**B: paraphrase** — P " in " ".join(m.value for m in at.markdown)
    _tab(at, "Segments")
    assert at.selectbox(key=f"cmp_b_{EXAMPLE_KEY}").value == "paraphrase"
    assert "F1 literal − paraphrase" in _frame_with(at, "F1 · literal").columns
    at.selectbox(key=f"cmp_b_{EXAMPLE_KEY}").set_value("errors").run()


def test_toggling_idf_and_layer_reuses_the_model_pass(example):
    at = example
    stored = dict(at.session_state["_compare_stats"])
    at.session_state["settings"] = replace(at.session_state["settings"], idf=True, layer=6)
    at.run()
    assert not at.exception
    assert any("all-MiniLM-L6-v2_L6_idf" in c.value for c in at.code)
    after = at.session_state["_compare_stats"]
    assert list(after) == list(stored) and all(after[k] is stored[k] for k in stored)


def test_rescaling_without_baseline_shows_the_message_and_raw_numbers(example):
    at = example
    at.session_state["settings"] = replace(at.session_state["settings"], rescale=True, idf=False, layer=4,
                                           lang="xx")  # a language without a baseline for the model
    at.run()
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "No rescaling baseline" in warning and "Showing raw numbers" in warning
    assert "(raw;" in at.success[0].value
    at.session_state["settings"] = replace(at.session_state["settings"], rescale=False, lang="en")


def test_segment_search(example):
    at = _tab(example, "Segments")
    at.text_input(key=f"cmp_query_{EXAMPLE_KEY}").set_value("frog").run()
    assert not at.exception
    assert list(_frame_with(at, "F1 · literal")["Segment"]) == ["s07"]


def test_not_utf8_file_shows_a_message_and_no_exception():
    at = _page("reference,A\nr,caf\xe9\n".encode("latin-1"))
    assert any("not UTF-8" in e.value for e in at.error) or "not UTF-8" in _frame_with(at, "Problem").to_string()
    assert not at.success


def test_file_without_reference_column_opens_the_mapping():
    data = b"hyp_a,hyp_b,answer\nA cat.,The cat.,The cat sat.\nRain.,It rained.,It rained all day.\n"
    at = _page(data)
    assert any("Nothing can be scored" in e.value for e in at.error)
    problems = _frame_with(at, "Problem")
    assert "No reference column" in " ".join(problems["Problem"])
    # Pick the reference in the mapping: the page scores.
    at.multiselect(key=f"cmp_refs_{content_key(data)}").set_value(["answer"])
    at.multiselect(key=f"cmp_sys_{content_key(data)}").set_value(["hyp_a", "hyp_b"])
    at.run()
    assert not at.exception
    assert at.success and "Best:" in at.success[0].value


def test_partly_bad_file_scores_the_good_rows_and_lists_the_rest():
    data = (b"reference,A,B\nThe cat sat.,A cat sat.,The cat sits.\nRain fell.,,It rained.\n"
            b"Too,many,cells,here\nThe sun shone.,Sun shone.,The sun was out.\n")
    at = _page(data, tab="Segments")
    problems = _frame_with(at, "Problem")
    assert sorted(problems["Row"].dropna().astype(int)) == [3, 4]
    assert any("good rows are scored" in w.value for w in at.warning)
    assert len(_frame_with(at, "F1 · A")) == 2 + 1  # rows 2, 3 (empty output scored as 0), 5


def test_empty_and_header_only_files():
    for data in (b"", b"reference,A\n"):
        at = _page(data)
        assert at.error and not at.success


def test_user_text_is_not_rendered_as_markdown_or_html():
    data = (b"reference,**bold** <b>x</b>,[link](http://e.x)\n"
            b"The cat sat.,The cat sat.,A dog ran.\nIt rained.,It rained.,Sun.\n")
    at = _page(data)
    head = at.success[0].value
    assert "\\*\\*bold\\*\\* \\<b\\>x\\</b\\>" in head
    ranking = next(m.value for m in at.markdown if m.value.startswith("Ranking"))
    assert "\\[link\\]\\(http" in ranking


def test_large_file_pages_the_drill_down_and_samples_charts():
    """2,100 segments x 4 systems (texts repeat, so the model pass is short): number input, sampled charts."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO((ROOT / "bertscore_viz" / "examples" / "systems_example.csv")
                                       .read_text(encoding="utf-8"))))
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(rows[0])
    for i in range(2100):
        w.writerow([f"x{i}"] + rows[1 + i % 30][1:])
    at = _page(buf.getvalue().encode("utf-8"), tab="Segments")
    assert at.success and "Best: literal" in at.success[0].value
    assert len(_frame_with(at, "F1 · literal")) == 2100
    _tab(at, "Drill-down")
    assert at.number_input(key=f"cmp_drill_pos_{content_key(buf.getvalue().encode('utf-8'))}").value >= 1


@pytest.mark.parametrize("name,data", [
    ("one.csv", b"reference,only\nThe cat sat.,A cat sat.\nIt rained.,Rain.\n"),
    ("two.jsonl", b'{"system": "A", "candidate": "A cat sat.", "reference": "The cat sat.", "source": "Le chat."}\n'
                  b'{"system": "B", "candidate": "A cat sat.", "reference": "The cat sat.", "source": "Le chat."}\n'),
])
def test_one_system_and_identical_systems(name, data):
    at = _page(data, name, tab="Drill-down")
    assert at.info and ("Only one system" in at.info[0].value or "tied with B" in at.info[0].value)
    if name.endswith(".jsonl"):
        assert any(t.value == "Le chat." for t in at.text)  # the source, in the drill-down


def test_rescaled_numbers_with_a_session_baseline():
    import numpy as np

    from bertscore_viz.baseline import BaselineTable

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.run()
    at.switch_page(str(ROOT / "pages" / "compare.py"))
    at.session_state["settings"] = Settings(rescale=True)
    at.session_state["custom_baselines"] = {("en", "all-MiniLM-L6-v2"): BaselineTable(np.full((7, 3), 0.5), "t")}
    at.session_state["compare_input"] = {"name": "example.csv", "data": (ROOT / "bertscore_viz" / "examples" /
                                                                         "systems_example.csv").read_bytes()}
    at.run()
    assert not at.exception
    assert "(rescaled;" in at.success[0].value and not at.warning
    table = _frame_with(at, "Rank")
    assert abs(table.loc[0, "F1"] - (0.9551 - 0.5) / 0.5) < 1e-3
    assert any(c.value.endswith("-custom-rescaled") for c in at.code)
