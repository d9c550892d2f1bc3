"""The Compare page's second pass (issues 30, 32, 33) in Streamlit's AppTest, the whole app with its navigation, the
real model, every number checked against an independent computation:

- chrF, BLEU and TER beside BERTScore: sacrebleu called directly (``corpus_*``, ``sentence_*``, ``PairedTest``);
- empty references: one warning for the dataset, left out on request (scores equal ``Scorer.score`` of the rest);
- the example's explanation, the problems table that wraps long messages;
- power: ``power_analysis`` called directly; the calibration line: ``Calibration.reading``;
- WMT's mt-metrics-eval zip: the dataset ``open_mtme`` reads from the same zip; the LaTeX table and the HTML report;
- the estimate of a model pass that suggests bf16: ``hardware.estimate_seconds`` of the distinct texts' tokens.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
import sacrebleu
from sacrebleu.metrics import CHRF
from sacrebleu.significance import PairedTest

from bertscore_viz import Scorer
from bertscore_viz.app.app_pages.compare import exports as compare_exports
from bertscore_viz.app.app_pages.compare import scoring as compare_scoring
from bertscore_viz.app.shared.settings import Settings
from bertscore_viz.evaluation import calibration as calibration_module
from bertscore_viz.evaluation.calibration import find_calibration, random_pair_calibration, register_calibration
from bertscore_viz.evaluation.latex import latex_table
from bertscore_viz.files import mtme
from bertscore_viz.files.upload import content_key, parse_upload
from bertscore_viz.serving import hardware
from bertscore_viz.stats.power import paired_differences, power_analysis

from .navigation import ROOT, app, texts, use_settings

pytestmark = pytest.mark.app

EXAMPLE = (ROOT / "bertscore_viz" / "examples" / "systems_example.csv").read_bytes()
EX = content_key(EXAMPLE)
DATA = ROOT / "data" / "wmt16-da-to-english"


def _tab(at, name: str):
    at.session_state["cmp_tab"] = name
    at.run()
    assert not at.exception, at.exception
    return at


def _frame_with(at, column: str):
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no table with a {column!r} column")


def _plain(at) -> str:
    return texts(at).replace("\\", "")


@pytest.fixture(scope="module")
def example():
    at = app("compare.py", compare_input={"name": "systems_example.csv", "data": EXAMPLE, "origin": "example"})
    assert at.success and "Best: literal" in at.success[0].value
    return at


@pytest.fixture(scope="module")
def reference_scores():
    """Each system's F1 of the example, scored here pair by pair with the engine's public API."""
    ds = parse_upload(EXAMPLE, "systems_example.csv")
    sc = Scorer()
    return ds, {name: sc.score(outputs, ds.references).f1 for name, outputs in ds.systems.items()}


# --- chrF, BLEU, TER -----------------------------------------------------------------------------------------------
def test_the_system_table_has_sacrebleus_corpus_scores_and_signatures_once(example, reference_scores):
    ds, _ = reference_scores
    refs = [r[0] for r in ds.references]
    table = _frame_with(example, "chrF")
    for row in table.to_dict(orient="records"):
        hyps = ds.systems[row["System"]]
        assert row["chrF"] == sacrebleu.corpus_chrf(hyps, [refs]).score
        assert row["BLEU"] == sacrebleu.corpus_bleu(hyps, [refs]).score
        assert row["TER"] == sacrebleu.corpus_ter(hyps, [refs]).score
    codes = [c.value for c in example.code if "nrefs:1" in c.value]
    assert len(codes) == 1 and codes[0].splitlines()[0].startswith("chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0")
    assert [line.split("|")[0] for line in codes[0].splitlines()] == ["chrF2", "BLEU", "TER"]


def test_the_segment_table_has_sentence_scores_and_one_switch_hides_them(example, reference_scores):
    ds, f1 = reference_scores
    at = _tab(example, "Segments")
    segments = _frame_with(at, "chrF · paraphrase").sort_index()
    refs = [r[0] for r in ds.references]
    assert segments["chrF · paraphrase"].tolist() == [sacrebleu.sentence_chrf(h, [r]).score
                                                      for h, r in zip(ds.systems["paraphrase"], refs)]
    assert segments["TER · errors"].tolist() == [sacrebleu.sentence_ter(h, [r]).score
                                                 for h, r in zip(ds.systems["errors"], refs)]
    np.testing.assert_allclose(segments["F1 · literal"], f1["literal"], atol=1e-6)
    at.toggle(key=f"cmp_surface_{EX}").set_value(False).run()
    assert not at.exception, at.exception
    assert "chrF" not in _frame_with(at, "Rank").columns
    assert not any(c.startswith("chrF") for c in _frame_with(at, "F1 · literal").columns)
    assert not [c for c in at.code if "nrefs:1" in c.value]
    at.toggle(key=f"cmp_surface_{EX}").set_value(True).run()
    assert "chrF" in _frame_with(at, "Rank").columns


def test_the_significance_of_chrf_is_sacrebleus_paired_bootstrap(example, reference_scores):
    ds, _ = reference_scores
    at = _tab(example, "Significance")
    at.selectbox(key=f"cmp_metric_{EX}").set_value("chrF").run()
    assert not at.exception, at.exception
    assert at.selectbox(key=f"cmp_baseline_{EX}").value == "literal"  # the chrF leader
    order = ["literal", "errors", "drops_content", "paraphrase"]
    _, results = PairedTest([(s, ds.systems[s]) for s in order], {"chrF": CHRF()},
                            [[r[0] for r in ds.references]], test_type="bs", n_samples=1000)()
    sentences = next(m.value for m in at.markdown if m.value.startswith("- ")).replace("\\", "")
    for name, res in zip(results["System"][1:], results["chrF2"][1:]):
        assert f"(p = {res.p_value:.3f}, uncorrected, one of 6 comparisons)" in sentences
        assert f"literal is better than {name} on chrF: literal − {name} = +" in sentences
    caption = _plain(at)
    assert "sacrebleu's paired bootstrap (`--paired-bs`) of the corpus chrF" in caption
    assert "chrF2|nrefs:1|bs:1000|seed:12345|" in caption
    together = _frame_with(at, "chrF p")
    row = together[together["System"] == "errors"].iloc[0]
    assert row["chrF p"] == results["chrF2"][1].p_value
    assert row["TER Δ"] == pytest.approx(sacrebleu.corpus_ter(ds.systems["errors"], [[r[0] for r in ds.references]])
                                         .score - sacrebleu.corpus_ter(ds.systems["literal"],
                                                                       [[r[0] for r in ds.references]]).score)
    at.selectbox(key=f"cmp_metric_{EX}").set_value("F1").run()


def test_the_rank_chart_says_where_bertscore_and_chrf_agree(example):
    at = _tab(example, "Charts")
    assert "BERTScore-F1 and chrF rank every system the same." in _plain(at)
    at.selectbox(key=f"cmp_rank_metric_{EX}").set_value("BLEU").run()
    assert not at.exception, at.exception
    text = _plain(at)
    assert "Ranked differently (2 of 4): errors: 2 by F1, 3 by BLEU; drops_content: 3 by F1, 2 by BLEU." in text
    ranks = _frame_with(at, "BLEU rank")
    assert ranks["Shift"].tolist() == [0, -1, 1, 0]


# --- reading the numbers -------------------------------------------------------------------------------------------
def test_the_example_says_why_paraphrase_is_last_and_links_the_stress_test(example):
    note = next(i.value for i in example.info if "Why is “paraphrase” last" in i.value)
    assert "real property of the metric" in note and "the stress test, below" in note
    (link,) = [e.proto for e in example.get("page_link") if "stress test" in e.proto.label]
    assert link.page == "audit" and link.page_script_hash  # the app's own page: this session, its work kept
    assert list(_frame_with(example, "Rank")["System"])[-1] == "paraphrase"


def test_power_is_power_analysis_of_the_pair(example, reference_scores):
    _, f1 = reference_scores
    at = _tab(example, "Significance")
    expected = power_analysis(paired_differences(f1["literal"], f1["errors"]))
    text = _plain(at)
    assert expected.sentence("F1") in text
    assert f"{expected.mde:.4f}" in text and "With 30 segments" in text
    at.number_input(key=f"cmp_power_delta_{EX}").set_value(0.02).run()
    assert not at.exception, at.exception
    assert expected.segments_needed(0.02).sentence("F1") in _plain(at)
    at.toggle(key=f"cmp_holm_{EX}").set_value(True).run()  # Holm: alpha / 6 and Holm's 2,000 resamples
    holm = power_analysis(paired_differences(f1["literal"], f1["errors"]), alpha=0.05 / 6, n_samples=2000)
    assert holm.sentence("F1") in _plain(at) and holm.mde > expected.mde
    at.toggle(key=f"cmp_holm_{EX}").set_value(False).run()


def test_the_calibration_line_is_the_calibrations_reading(monkeypatch, reference_scores):
    _, f1 = reference_scores
    monkeypatch.setattr(calibration_module, "_REGISTERED", {})  # this test's calibration only, not the process's
    values = np.random.default_rng(0).uniform(0.3, 0.97, size=(500, 7, 3))
    cal = random_pair_calibration(values, "all-MiniLM-L6-v2", "fr", layers=range(7))
    register_calibration(cal)
    at = app("compare.py")
    use_settings(at, Settings(lang="fr"))
    at.session_state["compare_input"] = {"name": "x.csv", "data": EXAMPLE}
    at.run()
    assert not at.exception, at.exception
    line = next(m.value for m in at.markdown if m.value.startswith("**On the calibration ladder:**"))
    reading = cal.reading(float(np.mean(f1["literal"])), 4, "f1")
    assert f"literal's mean F1 {reading.value:.4f} is {reading.sentence()}" in line.replace("\\", "")
    table = _frame_with(at, "Above random pairs (%)")
    assert table.loc[table["System"] == "literal", "Above random pairs (%)"].item() == \
        pytest.approx(reading.percentile_random)
    use_settings(at, Settings(lang="fr", idf=True))  # no calibration places idf-weighted scores: say so
    at.run()
    assert "Calibrations place scores without idf" in _plain(at)


def test_the_shipped_calibration_places_every_mean_and_a_language_without_one_says_how(example, reference_scores):
    """The bundled model's English calibration (shipped: random pairs and WMT16 DA human bands) places each
    system's mean; for a language without one the page says where the file would be and how to compute it."""
    _, f1 = reference_scores
    shipped = find_calibration("all-MiniLM-L6-v2", "en")
    assert shipped is not None
    table = _frame_with(example, "Typical of")
    for name in ("literal", "errors", "paraphrase"):
        reading = shipped.reading(float(np.mean(f1[name])), 4, "f1")
        row = table[table["System"] == name].iloc[0]
        assert row["Above random pairs (%)"] == pytest.approx(reading.percentile_random)
        assert row["Typical of"] == reading.typical_band
        in_line = f"{name}'s mean F1 {reading.value:.4f} is {reading.sentence()}." in _plain(example)
        assert in_line == (name == "literal")  # the line names the best; the table has every system
    use_settings(example, Settings(lang="de"))  # rescaling off: the same scores, another language
    example.run()
    text = _plain(example)
    assert "No calibration for model 'all-MiniLM-L6-v2' and language 'de'" in text
    assert "baselines/de/all-MiniLM-L6-v2.calibration.json does not exist" in text and "OUT.calibration.json" in text
    use_settings(example, Settings(lang="en"))
    example.run()
    assert not example.exception, example.exception


# --- empty references, problems ------------------------------------------------------------------------------------
EMPTY_REF = (b"reference,sysA,sysB\nThe cat sat on the mat.,A cat sat on the mat.,The cat sat.\n"
             b",It is cold.,Cold today.\nHe went home.,He left.,He went home early.\n"
             b"  ,Rain.,It rained.\nShe sings well.,She sings.,She is a good singer.\n")


def test_empty_references_are_one_warning_and_can_be_left_out_for_every_system():
    fkey = content_key(EMPTY_REF)
    at = app("compare.py", compare_input={"name": "empty.csv", "data": EMPTY_REF})
    warnings = [w.value for w in at.warning if "empty reference" in w.value]
    assert len(warnings) == 1 and warnings[0].replace("\\", "").startswith(
        "2 of 5 segments have an empty reference (row 3, row 5): every system scores 0")
    scoring = [t.value for t in at.text if "empty reference" in t.value]
    assert scoring == ["every system (2): 2 empty reference(s), scored 0: row 3, row 5."]
    at.toggle(key=f"cmp_drop_empty_{fkey}").set_value(True).run()
    assert not at.exception, at.exception
    assert "they are left out for every system, so every mean, interval and test is over the other 3 segments" in \
        _plain(at)
    assert not [t for t in at.text if "empty reference" in t.value]
    table = _frame_with(at, "Rank")
    assert set(table["Segments"]) == {3}
    kept_refs = [["The cat sat on the mat."], ["He went home."], ["She sings well."]]
    alone = Scorer().score(["A cat sat on the mat.", "He left.", "She sings."], kept_refs)
    assert table.loc[table["System"] == "sysA", "F1"].item() == pytest.approx(float(alone.f1.mean()), abs=1e-6)
    _tab(at, "Segments")
    assert sorted(_frame_with(at, "F1 · sysA")["Row"]) == [2, 4, 6]


def test_long_problems_are_wrapped_not_cut():
    data = b"reference,A,B\nThe cat sat.,A cat sat.,The cat sits.\nToo,many,cells,here,and,more\n"
    at = app("compare.py", compare_input={"name": "bad.csv", "data": data})
    problems = next(df for df in at.dataframe if "Problem" in df.value.columns)
    assert max(len(p) for p in problems.value["Problem"]) > 90 and problems.proto.row_height == 72


def test_thousands_of_bad_rows_are_listed_in_part_and_downloaded_whole():
    """A file with 1,200 bad rows: the good rows are scored, the table lists the first 500 problems (a table of
    200,000 held the server and the browser for seconds) and says so, and the CSV download holds every one."""
    import csv as _csv

    from bertscore_viz.app.shared.problems import MAX_SHOWN, problems_frame
    from bertscore_viz.files.export import safe_csv
    from bertscore_viz.files.upload import parse_upload

    good = "".join(f"The cat sat {i}.,A cat sat {i}.,The cat sits {i}.\n" for i in range(3))
    bad = "".join(f"Too,many,cells,{i}\n" for i in range(1200))
    at = app("compare.py", compare_input={"name": "bad.csv", "data": ("reference,A,B\n" + good + bad).encode()})
    assert not at.exception
    problems = next(df for df in at.dataframe if "Problem" in df.value.columns)
    assert len(problems.value) == MAX_SHOWN == 500 and list(problems.value["Row"][:2]) == [5, 6]
    assert any("The first 500 of 1,200 are listed here" in c.value for c in at.caption)
    button = next(b for b in at.get("download_button") if b.proto.label == "All 1,200 as CSV")
    assert button.proto.label
    ds = parse_upload(("reference,A,B\n" + good + bad).encode(), "bad.csv")
    rows = list(_csv.reader(io.StringIO(safe_csv(problems_frame(ds.problems)).decode("utf-8-sig"))))
    assert len(rows) == 1 + 1200 and rows[1][0] == "5" and "Row 5 has 4 cells" in rows[1][3]


# --- mt-metrics-eval, LaTeX, the report ----------------------------------------------------------------------------
def _lines(kind: str, lp: str, start: int = 0, n: int = 10) -> list[str]:
    return (DATA / f"DAseg-newstest2016.{kind}.{lp}").read_text(encoding="utf-8").splitlines()[start:start + n]


def mtme_zip() -> bytes:
    """A test set in the mt-metrics-eval layout from real WMT16 lines: de-en with two references (refB also a
    human system) and two MT systems, tr-en with one of each."""
    files = {}
    for lp in ("de-en", "tr-en"):
        files[f"wmt16/sources/{lp}.txt"] = _lines("source", lp)
        files[f"wmt16/references/{lp}.refA.txt"] = _lines("reference", lp)
        files[f"wmt16/system-outputs/{lp}/sysA.txt"] = _lines("mt-system", lp)
    files["wmt16/references/de-en.refB.txt"] = _lines("reference", "de-en", 50)
    files["wmt16/system-outputs/de-en/refB.txt"] = _lines("reference", "de-en", 50)
    files["wmt16/system-outputs/de-en/sysC.txt"] = _lines("mt-system", "de-en", 80)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for path, lines in files.items():
            zf.writestr(path, "".join(f"{x}\n" for x in lines))
    return buffer.getvalue()


def test_an_mt_metrics_eval_zip_is_read_as_open_mtme_reads_it():
    data = mtme_zip()
    fkey = content_key(data)
    at = app("compare.py", compare_input={"name": "wmt16.zip", "data": data})
    assert at.selectbox(key=f"cmp_mtme_lp_{fkey}").options == ["de-en", "tr-en"]
    at.selectbox(key=f"cmp_mtme_lp_{fkey}").set_value("de-en").run()
    assert not at.exception, at.exception
    assert at.selectbox(key=f"cmp_mtme_ref_{fkey}").value == "refA"
    expected = mtme.open_mtme(data, "wmt16.zip").read("de-en", "wmt16").dataset("refA")
    page = at.session_state["compare_state"].dataset.value
    assert page.systems == expected.systems and page.references == expected.references
    assert set(_frame_with(at, "Rank")["System"]) == {"sysA", "sysC", "refB"}
    table = _frame_with(at, "Rank")
    alone = Scorer().score(expected.systems["sysC"], expected.references)
    assert table.loc[table["System"] == "sysC", "F1"].item() == pytest.approx(float(alone.f1.mean()), abs=1e-6)
    assert "human translations among them: refB" in _plain(at)
    _tab(at, "Downloads")
    assert "Scores as mt-metrics-eval files (zip)" in {b.label for b in at.get("download_button")}
    at.selectbox(key=f"cmp_mtme_ref_{fkey}").set_value("refB").run()  # the other reference: refB is no system now
    assert not at.exception, at.exception
    assert set(_frame_with(at, "Rank")["System"]) == {"sysA", "sysC"}
    assert at.session_state["compare_state"].dataset.value.references == \
        mtme.open_mtme(data, "wmt16.zip").read("de-en", "wmt16").dataset("refB").references


def test_a_zip_that_is_not_the_layout_says_so():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("notes/readme.txt", "hello\n")
    at = app("compare.py", compare_input={"name": "other.zip", "data": buffer.getvalue()})
    assert any("not in the mt-metrics-eval layout" in e.value.replace("\\", "") for e in at.error)
    assert not at.success


def test_latex_and_the_html_report_from_the_downloads_tab(example):
    at = _tab(example, "Downloads")
    labels = {b.label for b in at.get("download_button")}
    assert {"LaTeX table (booktabs)", "System table (CSV)", "Everything (JSON)"} <= labels
    state = at.session_state["compare_state"]
    comparison = next(iter(state.results.values()))
    sig = next(hit[1] for hit in state.significance.values() if hit[1].metric == "F1" and hit[1].correction is None)
    assert compare_exports.latex_bytes(comparison, sig).decode() == latex_table(comparison, sig)
    at.button(key="cmp_make_report").click().run()
    assert not at.exception, at.exception
    assert "Download report (HTML)" in {b.label for b in at.get("download_button")}
    made = at.session_state["compare_state"].report.report
    assert made.html.startswith("<!DOCTYPE html") and "paraphrase" in made.html and made.pair == ("literal", "errors")
    assert len(made.segments) == compare_exports.REPORT_SEGMENTS and made.n_bytes <= 16 * 2**20


# --- a long exact pass suggests bf16 where this machine runs it fast -------------------------------------------------
def test_the_pass_estimate_counts_the_distinct_texts_tokens_and_asks_the_hardware_probe(monkeypatch):
    """Every distinct text (outputs and references, each once: 150 in the example) tokenized by the model; the
    seconds are ``hardware.estimate_seconds`` of those tokens; bf16's estimate and the suggestion only above the
    threshold, and only where the probe finds bf16 fast."""
    ds = parse_upload(EXAMPLE, "systems_example.csv")
    sc = Scorer()
    texts = set(t for outs in ds.systems.values() for t in outs) | {r for refs in ds.references for r in refs}
    tokens = sum(len(t.ids) for t in sc.encode(sorted(texts)))
    short = compare_scoring.pass_estimate(sc, ds)
    assert (short.texts, short.tokens) == (len(texts), tokens) == (150, tokens)
    assert short.fp32 == hardware.estimate_seconds(tokens, 4, "fp32", sc.encoder, n_texts=150)
    assert short.bf16 is None and compare_scoring.speed_note(short) is None  # under the threshold: nothing to say
    monkeypatch.setattr(compare_scoring, "SUGGEST_BF16_SECONDS", 0.0)  # as if the file were large
    long = compare_scoring.pass_estimate(sc, ds)
    status = hardware.bf16_status(sc.encoder.device)
    note = compare_scoring.speed_note(long)
    if status.fast:
        assert long.bf16 == hardware.estimate_seconds(tokens, 4, "bf16", sc.encoder, n_texts=150)
        assert "in exact fp32 and" in note and "in bf16 on this machine" in note and status.help in note
    else:
        assert note is None
    assert compare_scoring.precision_of(Settings()) == "fp32"  # exact unless bf16 is chosen in the sidebar
