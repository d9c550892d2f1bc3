"""The mt-metrics-eval layout: reading a test set (folder or zip), validation, and writing metric scores back.

The test set is built in each test from real lines of data/wmt16-da-to-english (de-en and cs-en), laid out as
mt-metrics-eval lays out WMT data. Score files are checked against a line-for-line transcription of mt-metrics-eval's
own readers (``ReadScoreFile`` / ``ReadDomainScoreFile`` in mt_metrics_eval/data.py), so "its tools read them
unchanged" is tested, not assumed.
"""

from __future__ import annotations

import collections
import io
import math
import zipfile
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.errors import InputError
from bertscore_viz.files.mtme import (
    NO_TRANSLATION,
    metric_files,
    metric_scores_zip,
    open_mtme,
    read_evalset,
    score_evalset,
    write_metric_scores,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "wmt16-da-to-english"
N = 12
DOCS = ["news doc1"] * 4 + ["speech doc2"] * 3 + ["news doc3"] * 5  # domains: news (two blocks), speech


def real(kind: str, lp: str, start: int = 0, n: int = N) -> list[str]:
    return (DATA / f"DAseg-newstest2016.{kind}.{lp}").read_text(encoding="utf-8").splitlines()[start:start + n]


def write_lines(path: Path, lines) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")


def build(root: Path, name: str = "wmt16") -> Path:
    """A test set with two language pairs; de-en has documents, two references, four systems (one of them the
    second reference as a human system) and human scores at every level."""
    ts = root / name
    human = [float(x) for x in real("human", "de-en")]
    for lp in ("de-en", "cs-en"):
        write_lines(ts / "sources" / f"{lp}.txt", real("source", lp))
        write_lines(ts / "references" / f"{lp}.refA.txt", real("reference", lp))
        write_lines(ts / "system-outputs" / lp / "sysA.txt", real("mt-system", lp))
    write_lines(ts / "references" / "de-en.refB.txt", real("reference", "de-en", 100))
    write_lines(ts / "system-outputs" / "de-en" / "refB.txt", real("reference", "de-en", 100))
    write_lines(ts / "system-outputs" / "de-en" / "sys_B.txt", real("mt-system", "de-en", 200))
    write_lines(ts / "system-outputs" / "de-en" / "refA.txt", real("reference", "de-en"))
    write_lines(ts / "documents" / "de-en.docs", DOCS)
    seg = [f"sysA {h!r}" for h in human] + [f"sys_B {'None' if i % 3 == 0 else repr(-h)}" for i, h in enumerate(human)]
    write_lines(ts / "human-scores" / "de-en.wmt-z.seg.score", seg)
    write_lines(ts / "human-scores" / "de-en.wmt-z.sys.score", ["sysA 0.25", "sys_B None"])
    write_lines(ts / "human-scores" / "de-en.wmt-z.doc.score", ["sysA 0.1", "sysA 0.2", "sysA 0.3"])
    write_lines(ts / "human-scores" / "de-en.wmt.appraise.domain.score", ["speech sysA 71.5", "news sysA 68"])
    return ts


# --- mt-metrics-eval's readers, transcribed (mt_metrics_eval/data.py) ----------------------------------------------
def mtme_read_score_file(path: Path) -> dict:
    scores = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            sysname, score = line.split()
            scores[sysname].append(float(score) if score != "None" else None)
    return scores


def mtme_read_domain_score_file(path: Path, ordered_domains) -> dict:
    scores = {}
    domain_to_index = {d: i for i, d in enumerate(ordered_domains)}
    with open(path) as f:
        for line in f:
            domain, sysname, score = line.split()
            score = float(score) if score != "None" else None
            if sysname not in scores:
                scores[sysname] = [None] * len(ordered_domains)
            scores[sysname][domain_to_index[domain]] = score
    return scores


# --- reading -------------------------------------------------------------------------------------------------------
def test_reads_every_part_of_the_layout(tmp_path):
    build(tmp_path)
    src = open_mtme(tmp_path)
    assert src.test_sets == ("wmt16",) and src.folder() == tmp_path / "wmt16"
    assert src.language_pairs() == ("cs-en", "de-en")
    ev = src.read("de-en")
    assert (ev.name, ev.lp, ev.n_segments) == ("wmt16", "de-en", N)
    assert list(ev.sources) == real("source", "de-en")
    assert list(ev.references) == ["refA", "refB"]
    assert list(ev.references["refB"]) == real("reference", "de-en", 100)
    assert list(ev.systems) == ["refA", "refB", "sysA", "sys_B"]
    assert list(ev.systems["sys_B"]) == real("mt-system", "de-en", 200)
    assert ev.human_systems == ("refA", "refB")
    assert ev.doc_names == ("doc1", "doc2", "doc3")
    assert ev.domain_names == ("news", "speech")  # sorted, as mt-metrics-eval orders domain scores
    assert ev.documents[4] == "doc2" and ev.domains[4] == "speech"
    human = [float(x) for x in real("human", "de-en")]
    seg = ev.human_scores["wmt-z"]["seg"]
    assert seg["sysA"] == tuple(human)
    assert seg["sys_B"][0] is None and seg["sys_B"][1] == -human[1]
    assert ev.human_scores["wmt-z"]["sys"] == {"sysA": (0.25,), "sys_B": (None,)}
    assert ev.human_scores["wmt-z"]["doc"] == {"sysA": (0.1, 0.2, 0.3)}
    assert ev.human_scores["wmt.appraise"]["domain"] == {"sysA": (68.0, 71.5)}  # a dotted name, news first
    assert ev.levels("wmt-z") == ("sys", "doc", "seg")
    cs = src.read("cs-en")
    assert cs.documents is None and cs.domain_names == () and list(cs.systems) == ["sysA"]


def test_zip_reads_the_same_as_the_folder_and_finds_nested_test_sets(tmp_path):
    build(tmp_path / "mt-metrics-eval-v2", "wmt16")
    build(tmp_path / "mt-metrics-eval-v2", "wmt17")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for f in sorted((tmp_path / "mt-metrics-eval-v2").rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(tmp_path).as_posix())
        zf.writestr("__MACOSX/mt-metrics-eval-v2/wmt16/sources/._de-en.txt", b"\x00\x01")
    src = open_mtme(buffer.getvalue(), "upload.zip")
    assert src.test_sets == ("mt-metrics-eval-v2/wmt16", "mt-metrics-eval-v2/wmt17")
    assert src.folder("wmt17") is None  # inside a zip: write the files elsewhere (or as a zip)
    assert open_mtme(tmp_path).folder("wmt17") == tmp_path / "mt-metrics-eval-v2" / "wmt17"
    with pytest.raises(InputError, match="holds 2 test sets.*test_set="):
        src.read("de-en")
    from_zip = src.read("de-en", test_set="wmt16")
    from_dir = read_evalset(tmp_path / "mt-metrics-eval-v2", "de-en", test_set="wmt16")
    assert from_zip == from_dir
    zpath = tmp_path / "set.zip"
    zpath.write_bytes(buffer.getvalue())
    assert read_evalset(zpath, "de-en", test_set="mt-metrics-eval-v2/wmt16") == from_dir


def test_no_translation_is_a_missing_output_scored_as_empty(tmp_path):
    ts = build(tmp_path)
    lines = real("mt-system", "de-en")
    lines[5] = NO_TRANSLATION
    write_lines(ts / "system-outputs" / "de-en" / "sysA.txt", lines)
    ev = read_evalset(ts, "de-en")
    assert ev.systems["sysA"][5] == "" and ev.missing_outputs == {"sysA": (5,)}
    data = ev.dataset("refA")
    assert [(p.row, p.column, p.severity) for p in data.problems] == [(6, "sysA", "warning")]


@pytest.mark.parametrize("change, message", [
    (lambda ts: write_lines(ts / "system-outputs/de-en/sysA.txt", real("mt-system", "de-en")[:-1]),
     r"sysA.txt has 11 lines; the source has 12"),
    (lambda ts: write_lines(ts / "references/de-en.refB.txt", real("reference", "de-en", 0, 13)),
     r"de-en.refB.txt has 13 lines"),
    (lambda ts: write_lines(ts / "human-scores/de-en.wmt-z.sys.score", ["sysA 0.25", "sysC 0.1"]),
     r"wmt-z.sys.score line 2: unknown system 'sysC'"),
    (lambda ts: write_lines(ts / "human-scores/de-en.wmt-z.sys.score", ["sysA high"]),
     r"line 1: the score 'high' is not a finite number or None"),
    (lambda ts: write_lines(ts / "human-scores/de-en.wmt-z.sys.score", ["sysA nan"]), r"'nan' is not a finite"),
    (lambda ts: write_lines(ts / "human-scores/de-en.wmt-z.sys.score", ["sysA 0.1", "sysA 0.2"]),
     r"system 'sysA' has 2 scores; expected 1"),
    (lambda ts: write_lines(ts / "human-scores/de-en.wmt-z.sys.score", ["sysA"]), r"expected 2 fields"),
    (lambda ts: write_lines(ts / "human-scores/de-en.wmt-z.domain.score", ["sports sysA 1"]),
     r"unknown domain 'sports'"),
    (lambda ts: write_lines(ts / "human-scores/de-en.wmt-z.week.score", ["sysA 1"]), r"LP.NAME.LEVEL.score"),
    (lambda ts: write_lines(ts / "metric-scores/de-en/BLEU-refA.sys.score", ["sysA None", "sys_B 1", "refB 2"]),
     r"'None' is not a finite number \(metric scores may not be None\)"),
    (lambda ts: write_lines(ts / "metric-scores/de-en/BLEU.sys.score", ["sysA 1"]), r"NAME-REF.LEVEL.score"),
    (lambda ts: write_lines(ts / "references/de-en.ref-C.txt", real("reference", "de-en")),
     r"may not contain '.' or '-'"),
    (lambda ts: write_lines(ts / "documents/de-en.docs", DOCS[:4] + ["news doc3"] * 3 + ["news doc1"] * 5),
     r"document 'doc1' starts again"),
    (lambda ts: write_lines(ts / "documents/de-en.docs", DOCS[:-1]), r"de-en.docs has 11 lines"),
])
def test_what_mt_metrics_eval_refuses_is_an_error_naming_file_and_line(tmp_path, change, message):
    ts = build(tmp_path)
    read_evalset(ts, "de-en")  # valid before the change
    change(ts)
    with pytest.raises(InputError, match=message):
        read_evalset(ts, "de-en")


def test_every_problem_is_listed_in_one_error(tmp_path):
    ts = build(tmp_path)
    write_lines(ts / "system-outputs/de-en/sysA.txt", ["x"])
    write_lines(ts / "human-scores/de-en.wmt-z.sys.score", ["nobody 1", "sysA x"])
    with pytest.raises(InputError) as err:
        read_evalset(ts, "de-en")
    text = str(err.value)
    assert text.startswith("3 problem(s) in de-en of the folder")
    assert "sysA.txt has 1 lines" in text and "'nobody'" in text and "'x'" in text


def test_missing_language_pair_layout_and_paths(tmp_path):
    ts = build(tmp_path)
    with pytest.raises(InputError, match=r"No language pair 'fr-en'.*cs-en, de-en"):
        read_evalset(ts, "fr-en")
    with pytest.raises(InputError, match="not in the mt-metrics-eval layout"):
        open_mtme(ts / "references")
    with pytest.raises(InputError, match="does not exist"):
        open_mtme(tmp_path / "nowhere")
    with pytest.raises(InputError, match="not a zip file"):
        open_mtme(b"not a zip", "x.zip")
    with pytest.raises(InputError, match="No test set 'wmt99'"):
        open_mtme(tmp_path).read("de-en", test_set="wmt99")


def test_dataset_and_human_scored_for_compare_and_agreement(tmp_path):
    ev = read_evalset(build(tmp_path), "de-en")
    data = ev.dataset("refA")
    assert list(data.systems) == ["refB", "sysA", "sys_B"]  # the reference used is not scored against itself
    assert data.references == [[r] for r in real("reference", "de-en")]
    assert data.sources == real("source", "de-en") and data.rows == list(range(1, N + 1))
    assert list(ev.dataset("refA", include_human=False).systems) == ["sysA", "sys_B"]
    multi = ev.dataset(["refA", "refB"])
    assert list(multi.systems) == ["sysA", "sys_B"] and multi.references[3] == [ev.references["refA"][3],
                                                                                  ev.references["refB"][3]]
    rated = ev.human_scored("refA", "wmt-z")
    human = [float(x) for x in real("human", "de-en")]
    kept_b = [i for i in range(N) if i % 3]
    assert rated.systems == ["sysA"] * N + ["sys_B"] * len(kept_b)
    assert rated.human == human + [-human[i] for i in kept_b]
    assert rated.candidates[N:] == [ev.systems["sys_B"][i] for i in kept_b]
    assert rated.groups[:N] == [d.split()[0] for d in DOCS]
    # documents for context (issue 45): each rated output's document, from documents/de-en.docs
    assert rated.doc_ids[:N] == [d.split()[1] for d in DOCS] and rated.doc_ids[N:] == [DOCS[i].split()[1]
                                                                                     for i in kept_b]
    assert rated.document_column == "documents/de-en.docs"
    assert rated.rows[N:] == [i + 1 for i in kept_b]
    assert "4 (system, segment) pairs have no wmt-z score" in rated.problems[0].problem
    with pytest.raises(InputError, match="No segment-level human scores 'mqm'.*wmt-z \\(sys, doc, seg\\)"):
        ev.human_scored("refA", "mqm")
    with pytest.raises(InputError, match="Unknown reference 'refC'.*'refA', 'refB'"):
        ev.dataset("refC")
    with pytest.raises(InputError, match="Unknown system"):
        ev.dataset("refA", systems=["sysZ"])


# --- writing and the round trip -------------------------------------------------------------------------------------
def test_round_trip_preserves_every_number(tmp_path):
    ts = build(tmp_path)
    ev = read_evalset(ts, "de-en")
    rng = np.random.default_rng(7)
    scores = {s: rng.random(N) * 2 - 0.5 for s in ev.scored_systems("refA")}
    scores["sysA"][3] = 1 / 3  # a float whose short decimal forms would not round-trip
    paths = write_metric_scores(ts, ev, scores, "refA")
    assert sorted(p.name for p in paths) == ["BERTScore-refA.doc.score", "BERTScore-refA.domain.score",
                                             "BERTScore-refA.seg.score", "BERTScore-refA.sys.score"]
    back = read_evalset(ts, "de-en").metric_scores["BERTScore-refA"]
    for s, v in scores.items():
        assert back["seg"][s] == tuple(float(x) for x in v)  # bit for bit
        assert back["sys"][s] == (float(np.mean(v)),)
        assert back["doc"][s] == tuple(float(np.mean(v[a:b])) for a, b in ((0, 4), (4, 7), (7, 12)))
        assert back["domain"][s] == (float(np.mean(np.r_[v[0:4], v[7:12]])), float(np.mean(v[4:7])))
        # an independent computation of the means (plain Python), to rounding
        assert math.isclose(back["sys"][s][0], math.fsum(v) / N, rel_tol=0, abs_tol=1e-15)
    # mt-metrics-eval's own readers read the files to the same numbers
    folder = ts / "metric-scores" / "de-en"
    assert dict(mtme_read_score_file(folder / "BERTScore-refA.seg.score")) == back["seg"] | {
        s: list(v) for s, v in back["seg"].items()}
    theirs = mtme_read_domain_score_file(folder / "BERTScore-refA.domain.score", ev.domain_names)
    assert {s: tuple(v) for s, v in theirs.items()} == back["domain"]
    assert {s: tuple(v) for s, v in mtme_read_score_file(folder / "BERTScore-refA.sys.score").items()} == back["sys"]
    text = (folder / "BERTScore-refA.seg.score").read_text()
    assert text.splitlines()[0] == f"refB {float(scores['refB'][0])!r}" and len(text.splitlines()) == 3 * N


def test_write_without_documents_several_references_and_levels(tmp_path):
    ts = build(tmp_path)
    cs = read_evalset(ts, "cs-en")
    files = metric_files(cs, {"sysA": np.linspace(0, 1, N)}, "refA", metric="BERTScore-P")
    assert list(files) == ["BERTScore-P-refA.seg.score", "BERTScore-P-refA.sys.score"]
    assert files["BERTScore-P-refA.sys.score"] == "sysA 0.5\n"
    with pytest.raises(InputError, match="doc and domain need documents/cs-en.docs"):
        metric_files(cs, {"sysA": np.zeros(N)}, "refA", levels=["domain"])
    de = read_evalset(ts, "de-en")
    two = metric_files(de, {"sysA": np.zeros(N), "sys_B": np.ones(N)}, ["refB", "refA"], levels=["sys"])
    assert two == {"BERTScore-refA.refB.sys.score": "sysA 0.0\nsys_B 1.0\n"}
    blob = metric_scores_zip(de, {"sysA": np.zeros(N), "sys_B": np.ones(N)}, ["refA", "refB"], levels=["sys"])
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        assert zf.namelist() == ["wmt16/metric-scores/de-en/BERTScore-refA.refB.sys.score"]


def test_write_refuses_what_mt_metrics_eval_would_refuse(tmp_path):
    ts = build(tmp_path)
    ev = read_evalset(ts, "de-en")
    ok = {s: np.full(N, 0.5) for s in ev.scored_systems("refA")}
    with pytest.raises(InputError, match="no scores for 'sys_B'"):
        metric_files(ev, {k: v for k, v in ok.items() if k != "sys_B"}, "refA")
    with pytest.raises(InputError, match="unknown system.*'ghost'"):
        metric_files(ev, ok | {"ghost": np.zeros(N)}, "refA")
    with pytest.raises(InputError, match=r"expected \(12,\) segment scores.*sysA \(\(11,\)\)"):
        metric_files(ev, ok | {"sysA": np.zeros(N - 1)}, "refA")
    nan = ok | {"sysA": np.r_[np.nan, np.zeros(N - 1)]}
    with pytest.raises(InputError, match="NaN or infinite scores for 'sysA'"):
        metric_files(ev, nan, "refA")
    with pytest.raises(InputError, match="cannot be a file name"):
        metric_files(ev, ok, "refA", metric="BERT Score")
    write_metric_scores(ts, ev, ok, "refA", levels=["sys"])
    with pytest.raises(InputError, match="already holds BERTScore-refA.sys.score"):
        write_metric_scores(ts, ev, ok, "refA", levels=["sys"])
    write_metric_scores(ts, ev, ok, "refA", levels=["sys"], overwrite=True)


def test_metric_file_missing_a_system_reads_with_a_warning(tmp_path):
    ts = build(tmp_path)
    write_lines(ts / "metric-scores/de-en/BLEU-refA.sys.score", ["sysA 30.5", "refB 40"])
    ev = read_evalset(ts, "de-en")
    assert ev.metric_scores["BLEU-refA"]["sys"] == {"sysA": (30.5,), "refB": (40.0,)}
    assert any("no scores for 1 system(s): 'sys_B'" in w for w in ev.warnings)
    assert read_evalset(ts, "de-en", read_metric_scores=False).metric_scores == {}


def test_scored_with_the_model_and_written_back_equal_scorer_on_explicit_pairs(tmp_path):
    ts = build(tmp_path)
    ev = read_evalset(ts, "de-en")
    scorer = Scorer(layer=4, idf=True)
    assert list(score_evalset(scorer, ev, "refA", include_human=False)) == ["sysA", "sys_B"]
    results = score_evalset(scorer, ev, "refA")
    assert list(results) == ["refB", "sysA", "sys_B"]
    for name, res in results.items():
        direct = Scorer(layer=4, idf=True).score(list(ev.systems[name]), list(ev.references["refA"]))
        np.testing.assert_array_equal(res.f1, direct.f1)
    write_metric_scores(ts, ev, {s: r.f1 for s, r in results.items()}, "refA", levels=["seg", "sys"])
    back = read_evalset(ts, "de-en").metric_scores["BERTScore-refA"]
    assert back["seg"]["sys_B"] == tuple(float(x) for x in results["sys_B"].f1)
    assert back["sys"]["sysA"] == (float(results["sysA"].f1.mean()),)


def test_an_uploaded_zip_is_listed_and_read_in_a_worker_as_in_process(tmp_path):
    """The app reads an uploaded zip in a worker process (serving/isolated.py) within the deployment's limits: the
    same catalogue and language pair as open_mtme gives in process; a zip that inflates past the memory limit is
    stopped with the limit named, the server untouched."""
    from bertscore_viz.files.limits import LimitExceeded
    from bertscore_viz.serving import isolated

    build(tmp_path, "wmt16")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for f in sorted(tmp_path.rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(tmp_path).as_posix())
    data = buffer.getvalue()
    src = open_mtme(data, "up.zip")
    assert isolated.mtme_catalogue(data, "up.zip") == (src.name, {ts: src.language_pairs(ts) for ts in src.test_sets})
    assert isolated.read_mtme(data, "up.zip", "de-en", "wmt16") == src.read("de-en", "wmt16", read_metric_scores=False)
    with pytest.raises(InputError, match="No language pair .xx-yy. in the zip up.zip"):
        isolated.read_mtme(data, "up.zip", "xx-yy", "wmt16")
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("wmt16/sources/de-en.txt", b"a\n" * (150 * 2**20))  # 300 MB of text in a zip of about 300 KB
        for name in ("references/de-en.refA.txt", "system-outputs/de-en/sysA.txt"):
            zf.writestr(f"wmt16/{name}", b"b\n")
    with pytest.raises(LimitExceeded, match="BERTSCORE_VIZ_UPLOAD_MEMORY_MB"):
        isolated.read_mtme(bomb.getvalue(), "bomb.zip", "de-en", "wmt16", max_memory_bytes=200 * 2**20)
