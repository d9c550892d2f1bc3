"""``bertscore-viz compare``: the Compare page's numbers from the command line, checked against the page's own flow,
an independent numpy computation of the bootstrap intervals and p values, a hand computation of approximate
randomization in exact arithmetic and sacrebleu's own ``_paired_ar_test``; text, --json, --latex, --html; inputs
(text files, CSV, mt-metrics-eval folder, results Parquet) and errors.

The data is made here, not read from the repository: systems derived from hand-written references with a seeded
generator (word swaps, dropped words, shuffled words), scored by the real bundled model.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sacrebleu import significance as sb
from streamlit.testing.v1 import AppTest

from bertscore_viz import Scorer
from bertscore_viz.cli.entry import main
from bertscore_viz.evaluation import compare, precomputed
from bertscore_viz.evaluation.latex import latex_table
from bertscore_viz.evaluation.significance import holm, resamples_for
from bertscore_viz.figures import tables
from bertscore_viz.files import upload
from bertscore_viz.files.export import to_json
from bertscore_viz.files.results import format as results_format
from bertscore_viz.files.results import table as results_table
from bertscore_viz.stats.randomization import (
    ar_p_value,
    ar_statistics,
    paired_randomization,
)

REFERENCES = [
    "The committee approved the new budget after a long debate on Tuesday.",
    "Heavy rain caused flooding in several villages near the river.",
    "She finished the marathon in under four hours despite the heat.",
    "The museum will reopen next spring with a larger collection of modern art.",
    "Researchers found that the drug reduced symptoms in most patients.",
    "The train was delayed because of a signal failure outside the station.",
    "He bought a second-hand bicycle to ride to work every morning.",
    "The company plans to hire two hundred engineers over the next year.",
    "Local farmers are worried about the dry summer and low prices.",
    "The children built a small boat out of wood and old sails.",
    "Tourists crowded the old town square to watch the fireworks.",
    "The minister promised to lower taxes for small businesses.",
    "A rare bird was spotted in the park for the first time in decades.",
    "The library extended its opening hours during the exam period.",
    "Negotiations between the two sides ended without an agreement.",
    "The chef prepared a three-course dinner using only local produce.",
    "Snow closed the mountain pass for most of the weekend.",
    "The new software update fixed several security problems.",
    "Volunteers cleaned the beach and collected hundreds of plastic bottles.",
    "The orchestra played a piece that had not been performed in a century.",
    "Prices at the market rose sharply after the harvest failed.",
    "The old bridge will be replaced by a wider one next year.",
]
N = len(REFERENCES)
SEED = 20240611
SYSTEMS = ("drops", "swaps", "shuffled", "mixed")  # file order: "drops" is the first system, the CLI's baseline


def _make_systems(seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)

    def drop(s: str, k: int) -> str:
        words = s.split()
        for _ in range(k):
            words.pop(rng.randrange(len(words)))
        return " ".join(words)

    def swap(s: str) -> str:
        words = s.split()
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
        return " ".join(words)

    def shuffle(s: str) -> str:
        words = s.split()
        rng.shuffle(words)
        return " ".join(words)

    return {"drops": [drop(s, 2) for s in REFERENCES],
            "swaps": [swap(s) if rng.random() < 0.5 else s for s in REFERENCES],
            "shuffled": [shuffle(s) for s in REFERENCES],
            "mixed": [drop(s, 1) if i % 2 else shuffle(s) for i, s in enumerate(REFERENCES)]}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    outputs = _make_systems(SEED)
    sources = [f"source {i}: " + s[::-1] for i, s in enumerate(REFERENCES)]

    def write(name: str, lines: list[str]) -> str:
        path = root / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return str(path)

    files = {name: write(f"{name}.txt", outputs[name]) for name in SYSTEMS}
    table = root / "outputs.csv"
    with open(table, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["segment_id", "source", "reference", *SYSTEMS])
        for i in range(N):
            w.writerow([f"s{i + 1}", sources[i], REFERENCES[i], *(outputs[s][i] for s in SYSTEMS)])
    return {"root": root, "outputs": outputs, "files": files, "refs": write("refs.txt", REFERENCES),
            "source": write("source.txt", sources), "csv": str(table), "write": write}


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["compare", *argv, "-q"])
    return code, out.getvalue(), err.getvalue()


def cli_json(*argv: str) -> dict:
    code, out, err = cli(*argv, "--json")
    assert code == 0, err
    return json.loads(out)


def text_args(data) -> list[str]:
    return ["-r", data["refs"], "-s", *(data["files"][s] for s in SYSTEMS)]


@pytest.fixture(scope="module")
def page(data):
    """The Compare page's flow on the CSV, as app_pages/compare/inputs.py and scoring.py run it with
    the sidebar's defaults: the table read, the columns detected from their names, the dataset built (empty
    cells scored), one model pass, the scores at the default layer without idf or rescaling, and the bootstrap of
    F1 with the top-ranked system as baseline and resamples_for's number."""
    raw = Path(data["csv"]).read_bytes()
    table, problems = upload.read_table(raw, "outputs.csv")
    mapping, _ = upload.detect_mapping([c for c in dict.fromkeys(table.columns) if c])
    ds = upload.build_dataset(table, mapping, upload.EMPTY_SCORE, problems=problems)
    sc = Scorer(rescale_with_baseline=False)
    cstats = compare.score_dataset(sc, ds)
    comparison = compare.results_for(sc, cstats, sc.layer, False, False, labels=compare.segment_labels(ds))
    n_samples = resamples_for(len(comparison.results), ds.n_segments, None)
    sig = compare.significance(comparison, None, "F1", n_samples=n_samples, correction=None)
    return ds, comparison, sig


@pytest.fixture(scope="module")
def from_csv(data, page):
    return cli_json("--input", data["csv"], "--paired-ar")


def _f1(out: dict) -> dict[str, np.ndarray]:
    return {s: np.array([seg["systems"][s]["f1"] for seg in out["segments"]]) for s in out["segments"][0]["systems"]}


# --- the page's numbers ----------------------------------------------------------------------------------------------
def test_json_is_the_compare_pages_json(data, page):
    ds, comparison, sig = page
    expected = json.loads(to_json(tables.to_jsonable(ds, comparison, sig)))
    out = cli_json("--input", data["csv"], "--baseline", sig.baseline)
    assert set(expected) <= set(out)
    for key, value in expected.items():
        assert out[key] == value, key
    assert out["significance"]["n_samples"] == 1000 and out["significance"]["seed"] == 12345
    assert out["paired_ar"] is None and out["input"]["systems"] == list(SYSTEMS)


def test_the_default_baseline_is_the_first_system_given(from_csv, page):
    _, _, sig = page
    assert sig.baseline != "drops"  # the page's default (top-ranked) differs: the rebase is exercised
    rebased = json.loads(to_json(sig.rebase("drops").as_dict()))
    assert from_csv["significance"] == rebased
    assert [r["system"] for r in from_csv["significance"]["versus_baseline"]] == [s for s in sig.systems
                                                                                  if s != "drops"]


def test_segment_scores_are_scorer_score_of_each_system(from_csv, data):
    f1 = _f1(from_csv)
    for name in SYSTEMS:
        res = Scorer().score(data["outputs"][name], REFERENCES)
        np.testing.assert_allclose(f1[name], res.f1, rtol=0, atol=1e-6)
        row = next(r for r in from_csv["systems"] if r["system"] == name)
        assert row["f1"] == pytest.approx(float(res.f1.mean()), abs=1e-6)


def test_intervals_and_p_values_equal_an_independent_numpy_computation(from_csv):
    f1 = _f1(from_csv)
    idx = np.random.default_rng(12345).choice(N, size=(1000, N), replace=True)
    means = {s: v[idx].mean(axis=1) for s, v in f1.items()}
    for iv in from_csv["significance"]["intervals"]:
        ranked = np.sort(means[iv["system"]])
        assert (iv["ci_low"], iv["ci_high"]) == pytest.approx((ranked[25], ranked[974]), abs=1e-12)
    pairwise = from_csv["significance"]["pairwise_p"]
    for a in f1:
        for b in f1:
            if a == b:
                continue
            observed = abs(f1[a].mean() - f1[b].mean())
            diffs = np.abs(means[a] - means[b])
            c = int(np.sum(diffs - diffs.mean() > observed))
            assert pairwise[a][b] == pytest.approx((c + 1) / 1001, abs=1e-12), (a, b)


def test_holm_resamples_and_adjusted_p_values(data):
    out = cli_json("--input", data["csv"], "--holm")
    k = len(SYSTEMS)
    n_samples = resamples_for(k, N, "holm")
    assert out["significance"]["n_samples"] == n_samples == 2000 and out["significance"]["correction"] == "holm"
    f1 = _f1(out)
    idx = np.random.default_rng(12345).choice(N, size=(n_samples, N), replace=True)
    means = {s: v[idx].mean(axis=1) for s, v in f1.items()}
    pairs = [(a, b) for i, a in enumerate(SYSTEMS) for b in SYSTEMS[i + 1:]]
    raw = []
    for a, b in pairs:
        diffs = np.abs(means[a] - means[b])
        raw.append((int(np.sum(diffs - diffs.mean() > abs(f1[a].mean() - f1[b].mean()))) + 1) / (n_samples + 1))
    for (a, b), p in zip(pairs, holm(raw)):
        assert out["significance"]["pairwise_p"][a][b] == pytest.approx(p, abs=1e-12), (a, b)
    lean = cli_json("--input", data["csv"], "--holm", "--no-segments")
    assert "segments" not in lean and lean["significance"] == out["significance"]


# --- approximate randomization ---------------------------------------------------------------------------------------
def _exact_ar_p(system: np.ndarray, baseline: np.ndarray, n_trials: int = 10_000, seed: int = 12345) -> float:
    """sacrebleu's AR written out by hand in exact arithmetic: the same masks, each trial's difference of sums as an
    exact integer multiple of the scores' common binary denominator (float64 scores are exact fractions)."""
    diffs = [Fraction(float(b)) - Fraction(float(s)) for b, s in zip(baseline, system)]
    scale = max(d.denominator for d in diffs)
    ints = [int(d * scale) for d in diffs]
    observed = abs(sum(ints))
    masks = np.random.default_rng(seed).integers(2, size=(n_trials, len(ints)), dtype=bool)
    count = 0
    for row in masks.tolist():
        # mask True: pseudo A takes the baseline's score, B the system's: A - B gains b - s, else s - b
        if abs(sum(d if keep else -d for d, keep in zip(ints, row))) > observed:
            count += 1
    return (count + 1) / (n_trials + 1)


def test_paired_ar_equals_a_hand_computation(from_csv):
    f1 = _f1(from_csv)
    ar = from_csv["paired_ar"]
    assert ar["n_trials"] == 10_000 and ar["seed"] == 12345 and ar["baseline"] == "drops"
    assert ar["family"] == len(SYSTEMS) - 1 and ar["correction"] is None
    for r in ar["versus_baseline"]:
        assert r["p"] == r["p_raw"] == _exact_ar_p(f1[r["system"]], f1["drops"]), r["system"]


class _MeanMetric:
    """A sacrebleu metric whose corpus score is the mean of given segment scores (BERTScore's system score)."""

    def __init__(self, scores):
        self.scores = scores

    def _extract_corpus_statistics(self, hypotheses, references):
        return [[self.scores[h], 1.0] for h in hypotheses]

    def _compute_score_from_stats(self, stats):
        return sb.Result(float(stats[0] / stats[1]))

    def _aggregate_and_compute(self, stats):
        return self._compute_score_from_stats(np.asarray(stats, dtype=np.float64).sum(0))


def _sacrebleu_ar(system: np.ndarray, baseline: np.ndarray) -> float:
    n = len(system)
    metric = _MeanMetric({f"bl{i}": baseline[i] for i in range(n)} | {f"sy{i}": system[i] for i in range(n)})
    stats = metric._extract_corpus_statistics([f"bl{i}" for i in range(n)], None)
    _, res = sb._paired_ar_test({"M": (stats, metric._aggregate_and_compute(stats))}, "sys",
                                [f"sy{i}" for i in range(n)], None, {"M": metric}, n_samples=10_000, seed=12345)
    return res["M"].p_value


def test_paired_ar_equals_sacrebleus_own_code(from_csv):
    f1 = _f1(from_csv)
    for r in from_csv["paired_ar"]["versus_baseline"]:
        assert r["p"] == _sacrebleu_ar(f1[r["system"]], f1["drops"]), r["system"]


def test_ar_on_constructed_scores_against_sacrebleu_and_by_hand():
    rng = np.random.default_rng(3)
    base = rng.uniform(0.6, 0.9, 120)
    for other in (base + rng.normal(0.004, 0.03, 120), base + 0.05 + rng.normal(0, 0.01, 120)):
        assert ar_p_value(other, base) == _sacrebleu_ar(other, base) == _exact_ar_p(other, base)


def test_ar_ties_count_as_ties_as_in_exact_arithmetic():
    """Systems that agree on most segments: swapping those changes nothing, so many trials reproduce the observed
    difference exactly (1/2^5 of them here); none of them is larger, whatever the order of a float sum."""
    rng = np.random.default_rng(5)
    base = rng.uniform(0.1, 0.9, 40)
    other = base.copy()
    other[[3, 11, 17, 25, 31, 38]] += np.array([0.1, 0.2, -0.05, 0.3, 0.15, 0.1])
    masks = np.random.default_rng(12345).integers(2, size=(10_000, 40), dtype=bool)
    changed = [3, 11, 17, 25, 31, 38]
    assert masks[:, changed].all(axis=1).sum() + (~masks[:, changed]).all(axis=1).sum() > 200  # many exact ties
    assert ar_p_value(other, base) == _exact_ar_p(other, base)


def test_ar_masks_drawn_in_blocks_are_one_draw():
    rng = np.random.default_rng(0)
    base, others = rng.uniform(size=37), rng.uniform(size=(37, 2))
    whole = ar_statistics(base, others, 1000, 7, block_rows=1000)
    assert np.array_equal(ar_statistics(base, others, 1000, 7, block_rows=64), whole)
    assert np.array_equal(ar_statistics(base, others, 1000, 7), whole)
    with pytest.raises(ValueError, match="multiple of 32"):
        ar_statistics(base, others, 1000, 7, block_rows=100)


def test_ar_identical_systems_one_segment_and_holm():
    base = np.array([0.5, 0.6, 0.7, 0.8])
    assert ar_p_value(base.copy(), base) == 1.0
    assert ar_p_value(np.array([0.9]), np.array([0.1])) == 1.0
    rng = np.random.default_rng(1)
    scores = {"A": rng.uniform(size=50), "B": rng.uniform(size=50), "C": rng.uniform(size=50) + 0.3}
    raw = paired_randomization(scores, "A", n_trials=2000)
    adj = paired_randomization(scores, "A", n_trials=2000, correction="holm")
    assert [r.p for r in adj.results] == pytest.approx(list(holm([r.p for r in raw.results])))
    assert [r.p_raw for r in adj.results] == [r.p for r in raw.results]
    assert raw.result("C").sentence() == ("C is better than A on F1: C − A = "
                                          f"+{scores['C'].mean() - scores['A'].mean():.4f} (approximate "
                                          f"randomization p = {raw.result('C').p:.4f}, uncorrected, one of 2 tests)")
    with pytest.raises(ValueError, match="Unknown baseline"):
        paired_randomization(scores, "Z")


# --- outputs ---------------------------------------------------------------------------------------------------------
def test_text_output_reads_like_sacrebleus(data, from_csv):
    code, out, _ = cli(*text_args(data), "--paired-ar")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("4 system files against 1 reference file(s): 4 systems x 22 segments; F1, raw")
    assert "Paired bootstrap resampling test with 1000 resampling trials, and approximate randomization test with " \
           "10000 trials" in out
    base_line = next(line for line in lines if "Baseline: drops " in line)
    drops = next(r for r in from_csv["systems"] if r["system"] == "drops")
    assert f"{drops['f1']:.4f} (" in base_line
    for r, a in zip(from_csv["significance"]["versus_baseline"], from_csv["paired_ar"]["versus_baseline"]):
        line = next(x for x in lines if x.strip().startswith(f"{r['system']} ") and "(p = " in x)
        star = lambda p: "*" if p < 0.05 else ""  # noqa: E731
        assert f"(p = {r['p']:.4f}){star(r['p'])}" in line and f"(p = {a['p']:.4f}){star(a['p'])}" in line
    assert " - Null hypothesis: the system and the baseline translations are essentially" in out
    assert "Clusters by F1 (WMT style; pairwise wins in brackets): 1. " in out
    for r in from_csv["significance"]["versus_baseline"]:  # the same sentences: files named without ".txt"
        assert r["sentence"] in out


def test_text_files_give_the_numbers_of_the_csv(data, from_csv):
    out = cli_json(*text_args(data), "--paired-ar")
    assert out["input"]["systems"] == list(SYSTEMS)  # drops.txt is the system "drops", as the CSV's column
    f1, expected = _f1(out), _f1(from_csv)
    for s in SYSTEMS:
        assert np.array_equal(f1[s], expected[s])
    p = {(a, b): v for a, row in from_csv["significance"]["pairwise_p"].items() for b, v in row.items()}
    assert all(out["significance"]["pairwise_p"][a][b] == v for (a, b), v in p.items())
    assert [r["p"] for r in out["paired_ar"]["versus_baseline"]] == \
        [r["p"] for r in from_csv["paired_ar"]["versus_baseline"]]


def test_latex_is_the_booktabs_table_of_the_page(data, page):
    ds, comparison, sig = page
    code, out, _ = cli("--input", data["csv"], "--latex", "--baseline", "swaps")
    assert code == 0
    assert out == latex_table(comparison, sig.rebase("swaps"))
    assert out.startswith(r"\begin{table}") and r"\toprule" in out


def test_html_report_is_written_atomically_with_its_drill_downs(data, tmp_path):
    target = tmp_path / "out" / "report.html"
    out = cli_json(*text_args(data), "--source", data["source"], "--html", str(target), "--report-segments", "2",
                   "--pair", "swaps", "drops")
    text = target.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in text
    assert out["report"]["path"] == str(target) and out["report"]["bytes"] == len(text.encode("utf-8"))
    f1 = _f1(out)
    diff = np.abs(f1["swaps"] - f1["drops"])
    top = [str(i + 1) for i in np.argsort(-diff, kind="stable")[:2]]
    assert out["report"]["pair"] == ["swaps", "drops"] and out["report"]["segments"] == top
    assert text.count('class="seg"') == 2 and f"source {int(top[0]) - 1}: " in text
    assert not list(tmp_path.glob("out/.tmp-*"))


def test_mt_metrics_eval_folder(data, tmp_path, from_csv):
    root = tmp_path / "wmtx"
    for folder in ("sources", "references", "system-outputs/en-de"):
        (root / folder).mkdir(parents=True)
    (root / "sources" / "en-de.txt").write_text("\n".join(f"src {i}" for i in range(N)) + "\n", encoding="utf-8")
    (root / "references" / "en-de.refA.txt").write_text("\n".join(REFERENCES) + "\n", encoding="utf-8")
    for s in SYSTEMS:
        (root / "system-outputs" / "en-de" / f"{s}.txt").write_text("\n".join(data["outputs"][s]) + "\n",
                                                                    encoding="utf-8")
    out = cli_json("--mt-metrics-eval", str(root), "--lp", "en-de", "--baseline", "drops")
    assert out["input"]["description"] == "wmtx en-de against refA (mt-metrics-eval)"
    assert out["input"]["systems"] == sorted(SYSTEMS)  # mt-metrics-eval's order: by name
    f1, expected = _f1(out), _f1(from_csv)
    for s in SYSTEMS:  # other batches (systems in another order): the same scores up to float noise
        np.testing.assert_allclose(f1[s], expected[s], rtol=0, atol=1e-6)
    for a, row in from_csv["significance"]["pairwise_p"].items():
        for b, p in row.items():
            assert out["significance"]["pairwise_p"][a][b] == pytest.approx(p, abs=1.5 / 1001)


def test_results_parquet_of_score_ray_is_read_without_a_model_pass(page, tmp_path):
    ds, comparison, _ = page
    names = list(ds.systems)
    n = ds.n_segments
    cols = {"segment_index": np.tile(np.arange(n), len(names)), "segment_id": [s for _ in names for s in
                                                                               ds.segment_ids],
            "row": np.tile(np.asarray(ds.rows, dtype=np.int64), len(names)),
            "system": [s for s in names for _ in range(n)],
            "candidate": [c for s in names for c in ds.systems[s]],
            "references": pa.array([r for _ in names for r in ds.references], type=pa.list_(pa.string())),
            "source": [x for _ in names for x in ds.sources]}
    for c in results_format.SCORE_COLUMNS:
        attr = c.removeprefix("raw_").removeprefix("rescaled_")
        values = np.concatenate([getattr(comparison.results[s], attr) for s in names])
        cols[c] = pa.nulls(len(values), pa.float64()) if c.startswith("rescaled_") else values
    cols["best_reference"] = np.zeros(n * len(names), dtype=np.int64)
    cols["notes"] = [""] * (n * len(names))
    sig_ = next(iter(comparison.results.values())).signature
    table = pa.table(cols).replace_schema_metadata(results_format.metadata(sig_, None, names, n))
    path = tmp_path / "scores.parquet"
    pq.write_table(table, path)
    out = cli_json("--input", str(path), "--baseline", "drops", "--html", str(tmp_path / "r.html"),
                   "--report-segments", "1")
    loaded = precomputed.results_at(results_table.read_results(path.read_bytes()))
    expected = compare.significance(loaded.comparison, None, "F1").rebase("drops")
    assert out["significance"] == json.loads(to_json(expected.as_dict()))
    assert out["input"]["description"] == "scores.parquet (precomputed scores)"
    f1 = _f1(out)
    assert all(np.array_equal(f1[s], comparison.results[s].f1) for s in names)
    assert len(out["report"]["segments"]) == 1 and "could not be explained" not in (tmp_path / "r.html").read_text()


def test_help_lists_the_command_and_its_flags():
    for argv, expected in ((["--help"], "compare systems on one test set: 95% CIs"),
                           (["compare", "--help"], "--paired-ar")):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 0 and expected in out.getvalue()


# --- errors ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["unequal", "baseline", "one", "none", "two", "segments", "pair", "scale", "trials",
                                  "lp"])
def test_errors_say_what_is_wrong(data, case):
    short = data["write"]("short.txt", data["outputs"]["swaps"][:-1])
    argv = {"unequal": ["-r", data["refs"], "-s", data["files"]["drops"], short],
            "baseline": [*text_args(data), "--baseline", "nope"],
            "one": ["-r", data["refs"], "-s", data["files"]["drops"]],
            "none": [],
            "two": [*text_args(data), "--input", data["csv"]],
            "segments": [*text_args(data), "--report-segments", "51", "--html", str(data["root"] / "x.html")],
            "pair": [*text_args(data), "--html", str(data["root"] / "y.html"), "--pair", "drops", "nope"],
            "scale": ["--input", data["csv"], "--scale", "raw"],
            "trials": [*text_args(data), "--paired-ar", "--paired-ar-n", "0"],
            "lp": ["--mt-metrics-eval", str(data["root"])]}[case]
    code, out, err = cli(*argv)
    assert code == 2 and out == ""
    expected = {"unequal": f"reference {data['refs']}: 22 lines; system {data['files']['drops']}: 22 lines; "
                           f"system {short}: 21 lines",
                "baseline": "Unknown --baseline 'nope'; the systems are 'drops', 'swaps', 'shuffled', 'mixed'",
                "one": "compare needs at least two systems; got 1 (drops)",
                "none": "compare needs ONE input", "two": "got -s/-r, --input",
                "segments": "--report-segments takes a number of segments: 0 to 50, got 51.",
                "pair": "Unknown --pair 'nope'; the systems are 'drops', 'swaps'",
                "scale": "--scale chooses between a results file's raw and rescaled numbers",
                "trials": "--paired-ar-n takes a number of trials: 100 to 100,000, got 0.",
                "lp": "--mt-metrics-eval needs --lp LP"}[case]
    assert expected in err, err
    assert not (data["root"] / "y.html").exists()


@pytest.mark.slow
def test_json_equals_the_compare_page_run_in_streamlit(data):
    """The real Compare page (Streamlit's AppTest, the app's navigation, default sidebar) on the same CSV: its
    kept comparison and F1 analysis are the command's numbers."""
    root = Path(__file__).resolve().parents[2]
    at = AppTest.from_file(str(root / "app.py"), default_timeout=300)
    at.run()
    at.switch_page(str(root / "bertscore_viz" / "app" / "app_pages" / "compare" / "page.py"))
    at.run()
    at.session_state["compare_input"] = {"name": "outputs.csv", "data": Path(data["csv"]).read_bytes()}
    at.run()
    assert not at.exception, at.exception
    state = at.session_state["compare_state"]
    comparison, sig = next(v for k, v in state.significance.items() if k[1] == "F1" and k[2] is None)
    ds = state.dataset.value
    expected = json.loads(to_json(tables.to_jsonable(ds, comparison, sig)))
    out = cli_json("--input", data["csv"], "--baseline", sig.baseline)
    for key, value in expected.items():
        assert out[key] == value, key
