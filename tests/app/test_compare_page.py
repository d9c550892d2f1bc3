"""The Compare page in Streamlit's AppTest, with the real model: the example, settings toggles, bad files.

Most files go in the way the page reads every input: as ``{"name", "data"}`` in
``st.session_state["compare_input"]`` (the uploader and "Load example" put them there); the uploader itself is
tested with AppTest's ``file_uploader.set_value``. Tests of choices that must survive reruns (defaults that follow
the ranking, the upload against "Load example") run the whole app with its real navigation
(``tests/app/navigation.py``): ``keep_widget_values`` and the sidebar run on every run, as in a server.
"""

from dataclasses import replace
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from bertscore_viz.app.shared.settings import Settings
from bertscore_viz.files.upload import content_key

from .navigation import use_settings

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
    at.switch_page(str(ROOT / "bertscore_viz" / "app" / "app_pages" / "compare" / "page.py"))
    if settings is not None:
        use_settings(at, settings)
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
    assert "Tests made: 3 against the baseline, among the 6 pairwise" in text.replace("\\", "")
    assert "literal is better than errors on F1: literal − errors = +" in text.replace("\\", "")
    assert "significant, p = 0.001, uncorrected, one of 6 comparisons." in head
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


def test_toggling_idf_reuses_the_model_pass_and_a_new_layer_adds_one(example):
    """idf and rescaling change no model pass; a layer not computed yet is one more pass, added to the kept one,
    and going back costs nothing."""
    at = example
    first = at.session_state["compare_state"].stats
    use_settings(at, replace(at.session_state["settings"], idf=True))
    at.run()
    assert not at.exception
    assert any("all-MiniLM-L6-v2_L4_idf" in c.value for c in at.code)
    assert at.session_state["compare_state"].stats is first
    use_settings(at, replace(at.session_state["settings"], layer=6))
    at.run()
    assert not at.exception
    assert any("all-MiniLM-L6-v2_L6_idf" in c.value for c in at.code)
    both = at.session_state["compare_state"].stats
    assert both.key == first.key and both.value.layers == (4, 6) and "Model pass:" in _texts(at)
    use_settings(at, replace(at.session_state["settings"], layer=4, idf=False))
    at.run()
    assert at.session_state["compare_state"].stats is both and "no model pass" in _texts(at)


def test_rescaling_without_baseline_shows_the_message_and_raw_numbers():
    """The page's answer when the settings ask for rescaling and no baseline exists (a model or layer without one:
    the sidebar offers only languages with a baseline, so the page is run on its own with such settings)."""
    at = AppTest.from_file(str(ROOT / "bertscore_viz" / "app" / "app_pages" / "compare" / "page.py"),
                           default_timeout=240)
    at.session_state["settings"] = Settings(rescale=True, lang="xx")  # a language without a baseline
    example = ROOT / "bertscore_viz" / "examples" / "systems_example.csv"
    at.session_state["compare_input"] = {"name": "example.csv", "data": example.read_bytes()}
    at.run()
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "No rescaling baseline" in warning and "Showing raw numbers" in warning
    assert "(raw;" in at.success[0].value


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

    from bertscore_viz.engine.baseline import BaselineTable

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.run()
    at.switch_page(str(ROOT / "bertscore_viz" / "app" / "app_pages" / "compare" / "page.py"))
    use_settings(at, Settings(rescale=True))
    at.session_state["custom_baselines"] = {("en", "all-MiniLM-L6-v2"): BaselineTable(np.full((7, 3), 0.5), "t")}
    at.session_state["compare_input"] = {"name": "example.csv", "data": (ROOT / "bertscore_viz" / "examples" /
                                                                         "systems_example.csv").read_bytes()}
    at.run()
    assert not at.exception
    assert "(rescaled;" in at.success[0].value and not at.warning
    table = _frame_with(at, "Rank")
    assert abs(table.loc[0, "F1"] - (0.9551 - 0.5) / 0.5) < 1e-3
    assert any(c.value.endswith("-custom-rescaled") for c in at.code)


# --- one p per pair, named with its family ---------------------------------------------------------------------------
def test_holm_gives_a_pair_one_p_everywhere_and_names_its_family(example):
    """With Holm on, the resamples follow the 6 pairs (2,000: the smallest adjusted p, 6 / 2001, is ten times below
    0.05); best vs 2nd (literal, errors; raw p 1/2001) is adjusted over the 6 pairs: 0.003 in the answer, its
    metric, the Significance sentence and the matrix, and the page says what the resamples allow."""
    at = _tab(example, "Significance")
    at.toggle(key=f"cmp_holm_{EXAMPLE_KEY}").set_value(True).run()
    assert not at.exception, at.exception
    head = at.success[0].value
    assert "significant, p = 0.003, Holm-adjusted over 6 comparisons." in head
    metric = next(m for m in at.metric if m.label == "p, best vs 2nd")
    assert metric.value == "0.003" and "Holm-adjusted over 6 comparisons" in metric.help
    text = _texts(at).replace("\\", "")
    assert "literal is better than errors on F1: literal − errors = +0.1237 (p = 0.003, Holm-adjusted over 6 " \
           "comparisons)" in text
    matrix = _frame_with(at, "literal")
    assert matrix.loc["literal", "errors"] == pytest.approx(6 / 2001)
    assert "with Holm's correction over all 6 pairs as one family" in text
    assert "2,000 resamples" in text and "smallest attainable adjusted p is 0.003" in text
    at.toggle(key=f"cmp_holm_{EXAMPLE_KEY}").set_value(False).run()
    assert "literal − errors = +0.1237 (p = 0.001, uncorrected, one of 6 comparisons)" in _texts(at).replace("\\", "")


# --- defaults that follow the ranking ------------------------------------------------------------------------------
#: 8 segments, 3 systems: "para" (a paraphrase), "short" (the first five words of the reference) and "longer" (the
#: reference plus an unrelated sentence). By F1, "para" leads at layer 4 and "short" at layer 1; by R, "longer".
REFS = ["The cat sat on the mat near the door.", "It rained all day in the old city.",
        "The committee approved the new budget today.", "She plays the violin every evening at home.",
        "Prices rose sharply across the country last month.", "The train left the station on time.",
        "He painted the garden fence white last summer.", "The museum opens at nine on weekdays."]
PARA = ["A cat was sitting on the mat by the door.", "Rain fell the whole day in the old town.",
        "Today the committee passed the new budget.", "Every evening she plays violin at home.",
        "Last month prices went up sharply nationwide.", "The train departed from the station on schedule.",
        "Last summer he painted the garden fence white.", "On weekdays the museum opens at nine."]
RANKED = {"short": [" ".join(r.split()[:5]) + "." for r in REFS],
          "longer": [r + " Meanwhile, many unrelated things happened elsewhere in the world." for r in REFS],
          "para": PARA}


def _ranking_csv() -> bytes:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["reference"] + list(RANKED))
    w.writerows(zip(REFS, *RANKED.values()))
    return buf.getvalue().encode()


def test_system_choices_follow_the_ranking_until_the_user_picks_one():
    import numpy as np

    from bertscore_viz import Scorer
    from bertscore_viz.models.spec import resolve_model

    from .navigation import app

    data = _ranking_csv()
    fkey = content_key(data)
    layer_key = f"layer::{resolve_model(None).name}"
    # the premise, from the engine: the ranking by F1 changes with the layer; R has another leader than F1
    ranking, r_means = {}, {}
    for layer in (4, 1):
        res = {name: Scorer(layer=layer).score(outputs, REFS) for name, outputs in RANKED.items()}
        ranking[layer] = sorted(res, key=lambda s: -float(np.mean(res[s].f1)))
        r_means[layer] = {s: float(np.mean(res[s].recall)) for s in res}
    assert ranking[4][:2] == ["para", "short"] and ranking[1][:2] == ["short", "para"]
    assert max(r_means[4], key=r_means[4].get) == "longer"

    at = app("compare.py", compare_input={"name": "ranking.csv", "data": data}, cmp_tab="Segments")

    def ab():
        return at.selectbox(key=f"cmp_a_{fkey}").value, at.selectbox(key=f"cmp_b_{fkey}").value

    assert ab() == ("para", "short")
    at.sidebar.slider(key=layer_key).set_value(1).run()  # the ranking changes: A and B follow it
    assert not at.exception, at.exception
    assert ab() == ("short", "para")
    at.selectbox(key=f"cmp_b_{fkey}").set_value("longer").run()  # the user's choice ...
    at.sidebar.slider(key=layer_key).set_value(4).run()
    assert ab() == ("para", "longer")  # ... stays; A, not chosen, follows
    at.session_state["cmp_tab"] = "Significance"
    at.run()
    assert at.selectbox(key=f"cmp_baseline_{fkey}").value == "para"  # the F1 leader
    at.selectbox(key=f"cmp_metric_{fkey}").set_value("R").run()
    assert not at.exception, at.exception
    base = at.selectbox(key=f"cmp_baseline_{fkey}")
    assert base.value == "longer" and base.options[0] == "longer"  # the R leader; options ranked by R
    sentences = [m.value.replace("\\", "") for m in at.markdown if m.value.startswith("- ")]
    assert sentences and all(" on R: " in s and "longer" in s for s in sentences[0].splitlines())


# --- the upload, "Load example" and "Forget" -----------------------------------------------------------------------
def test_load_example_is_not_undone_by_the_file_still_in_the_uploader_and_forget_forgets():
    from .navigation import app

    mine = b"reference,A,B\nThe cat sat.,A cat sat.,The cat sits.\nIt rained.,Rain fell.,It rained.\n"
    at = app("compare.py")
    at.file_uploader(key="cmp_file").set_value(("mine.csv", mine, "text/csv")).run()
    assert not at.exception, at.exception
    assert any("mine.csv" in c.value.replace("\\", "") for c in at.caption) and "**Best: B**" in _texts(at)
    at.button(key="cmp_load_example").click().run()  # the uploader still holds mine.csv
    assert any("systems_example.csv" in c.value.replace("\\", "") for c in at.caption)
    assert "Best: literal" in at.success[0].value
    at.run()
    assert "Best: literal" in at.success[0].value  # and on the next run too
    at.button(key="cmp_forget").click().run()
    assert not at.exception, at.exception
    assert "Best:" not in _texts(at) and any("Load example" in i.value for i in at.info)
    state = at.session_state["compare_state"]
    assert state.stats is None and state.dataset is None and state.table is None
    at.file_uploader(key="cmp_file").set_value(("again.csv", mine, "text/csv")).run()  # a new upload
    assert any("again.csv" in c.value.replace("\\", "") for c in at.caption) and "**Best: B**" in _texts(at)


def test_a_file_name_with_markup_is_shown_as_text():
    at = _page(b"reference,A,B\nThe cat sat.,A cat sat.,The cat sits.\n", name="**x**<b>y</b>[l](http://e).csv")
    caption = next(c.value for c in at.caption if "kept in this session" in c.value)
    assert caption.startswith("File: \\*\\*x\\*\\*\\<b\\>y\\</b\\>\\[l\\]\\(http")


# --- text outside the model's languages ----------------------------------------------------------------------------
def _wmt(lp: str, first: int, n: int = 10) -> list[str]:
    path = ROOT / "data" / "wmt16-da-to-english" / f"DAseg-newstest2016.source.{lp}-en"
    return path.read_text(encoding="utf-8").splitlines()[first:first + n]


def _wmt_csv(columns: dict[str, list[str]]) -> bytes:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(list(columns))
    w.writerows(zip(*columns.values()))
    return buf.getvalue().encode()


def test_text_outside_the_models_languages_is_summarised_once_per_dataset():
    refs = (ROOT / "data" / "wmt16-da-to-english" / "DAseg-newstest2016.reference.de-en").read_text(
        encoding="utf-8").splitlines()[:10]
    data = _wmt_csv({"reference": _wmt("ru", 0), "ru_sys": _wmt("ru", 10), "de_sys": _wmt("de", 0),
                     "en_sys": refs})
    at = _page(data)
    notes = [w.value for w in at.warning if "outside the languages" in w.value]
    assert len(notes) == 1, notes
    note = notes[0].replace("\\", "")
    assert note.startswith("Text outside the languages of all-MiniLM-L6-v2 (English only): references: Cyrillic "
                           "script in 10 of 10 segments; outputs: ru_sys: Cyrillic script in 10; de_sys: German (de)")
    assert "en_sys" not in note and "multilingual-e5-small" in note
    english = _page((ROOT / "bertscore_viz" / "examples" / "systems_example.csv").read_bytes())
    assert not [w for w in english.warning if "outside the languages" in w.value]


# --- the deployment's allow-list -----------------------------------------------------------------------------------
def test_a_model_listed_under_a_label_is_the_model_it_names(monkeypatch):
    """An operator's ``label=path`` entry resolves through the allow-list (``gateway.resolve_model``), as on the
    other pages: the numbers name the real model, and the label and the model's own name share one model pass
    (the engine's ``resolve_model`` took the label for a hub name, so the same model was scored again)."""
    from bertscore_viz.models.spec import BUNDLED_MODEL_NAME, bundled_model_path
    from bertscore_viz.serving import config

    from .navigation import app, texts

    monkeypatch.setattr(config, "_POLICY",
                        config.Policy(models=(f"house-model={bundled_model_path()}", BUNDLED_MODEL_NAME)))
    at = app("compare.py", model_choice="house-model")
    at.button(key="cmp_load_example").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.success[0].value.startswith("**Best: literal**")
    assert any(c.value.startswith("signature: ") and BUNDLED_MODEL_NAME in c.value for c in at.code)
    first_pass = at.session_state["compare_state"].last_pass
    at.sidebar.selectbox(key="model_choice").set_value(BUNDLED_MODEL_NAME).run()
    assert not at.exception, at.exception
    assert at.session_state["compare_state"].last_pass is first_pass and "no model pass" in texts(at)


def test_scoring_warnings_name_the_files_rows_as_the_problems_table_does():
    """Issue 23, item 8: a warning said "candidate index 2" for the segment the problems table calls row 5."""
    data = (b"reference,sysA,sysB\n"
            b"The cat sat on the mat.,A cat sat on the mat.,The cat sat.\n"
            b",,\n"  # a blank row: skipped, but it still counts as a line of the file
            b"It is cold today.,It is freezing.,Cold today.\n"
            b"He went home.,,He left for home.\n")
    at = _page(data, "rows.csv")
    assert not at.exception, at.exception
    warns = [t.value for t in at.text if "empty candidate" in t.value]
    assert warns == ["sysA: 1 empty candidate(s), scored 0: row 5."], warns
    problems = _frame_with(at, "Problem")
    assert problems["Row"].dropna().astype(int).tolist() == [5]  # the same row, the same number


def test_rescaling_text_in_another_language_than_the_baseline_says_so():
    """Issue 23, item 4: Japanese references rescaled with the English baseline (the default language)."""
    data = ("reference,sysA,sysB\n"
            "マットの上に猫が座っている。,猫がマットの上に座った。,猫がいる。\n"
            "今日はとても寒いです。,今日は寒い。,寒い日です。\n"
            "彼は早く家に帰った。,彼は家に帰った。,早く帰った。\n").encode()
    at = _page(data, "ja.csv", settings=Settings(rescale=True, lang="en"))
    assert not at.exception, at.exception
    assert any(w.value.replace("\\", "").startswith("Rescaling uses the English (en) baseline, but 3 of 3 "
                                                    "references are in") for w in at.warning)
    raw = _page(data, "ja.csv", settings=Settings(rescale=False))
    assert not any("Rescaling uses" in w.value for w in raw.warning)


def test_a_human_column_is_not_a_system_and_points_to_the_agreement_page():
    """Issue 22: a wide file with human scores scored the column 'human' as a system."""
    data = (b"reference,sysA,sysB,human\n"
            b"The cat sat on the mat.,A cat sat on the mat.,The cat sat.,0.8\n"
            b"It is cold today.,It is freezing.,Cold today.,0.3\n")
    at = _page(data, "rated.csv")
    assert not at.exception, at.exception
    assert set(_frame_with(at, "System")["System"]) == {"sysA", "sysB"}
    assert any("This file has human scores (human)" in i.value and "Agreement with humans" in i.value
               for i in at.info)
