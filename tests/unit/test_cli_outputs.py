"""What three commands write, checked against independent computations with the real bundled model on CPU:
``score --json --calibrate`` (each pair's ``percentile_random``, recomputed here from the shipped calibration's stored
quantiles by the rule of docs/CALIBRATION.md, and its one-line errors), ``baseline`` (the baseline, its provenance and
the calibration written beside it, and the relations that tie them together) and ``mtme`` (metric-score files in the
mt-metrics-eval layout, parsed here as mt-metrics-eval parses them).

The texts are written here, not read from data/: news-like English sentences of varied length, with names and
numbers (docs/CALIBRATION.md: the shipped ladder is that of news English, so random pairs of such sentences land
near its middle; sentences of one plain register would not).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bertscore_viz
from bertscore_viz.cli.entry import main
from bertscore_viz.evaluation.calibration import RANDOM_LEVELS
from bertscore_viz.files.mtme import read_evalset
from bertscore_viz.locations import BASELINE_DIR

MODEL = "all-MiniLM-L6-v2"
SHIPPED_CALIBRATION = BASELINE_DIR / "en" / f"{MODEL}.calibration.json"

SENTENCES = [
    "The central bank raised interest rates by a quarter of a percentage point on Wednesday.",
    "Rain stopped play.",
    "Maria Lopez, 34, won the Boston marathon in two hours and twenty-one minutes.",
    "Police say the suspect fled on foot towards the railway station.",
    "Shares in the carmaker fell 7% after it cut its profit forecast.",
    "\"We are not going anywhere,\" the coach told reporters after the defeat.",
    "A magnitude 5.8 earthquake shook the coast of southern Peru early on Sunday.",
    "Parliament will vote on the bill next month.",
    "The museum's new wing houses more than 300 paintings from the Dutch Golden Age.",
    "Doctors warn that the flu season could peak earlier than usual this winter.",
    "Ticket prices for the final have doubled since March.",
    "Two climbers were rescued from Mont Blanc after spending a night in a snow cave.",
    "The company said it would close three factories and cut 1,200 jobs.",
    "Wildfires forced thousands of residents to leave their homes in California.",
    "She is the first woman to lead the orchestra in its 150-year history.",
    "Oil prices rose sharply.",
    "The president met the prime minister of Japan in Tokyo on Friday to discuss trade.",
    "A small dog was found alive under the rubble three days after the collapse.",
    "Local elections will be held in May, the electoral commission confirmed.",
    "Scientists have discovered a new species of frog in the Amazon rainforest.",
    "The striker scored twice in the second half to secure a 3-1 victory.",
    "Fuel shortages have left long queues at petrol stations across the country.",
    "His memoir, published last year, has sold over a million copies.",
    "The airline cancelled 40 flights because of a strike by air traffic controllers.",
    "Farmers protested in the capital against cuts to agricultural subsidies.",
    "What happens next is unclear.",
    "A new bridge over the Danube is expected to open in 2026.",
    "The judge adjourned the trial until the end of January.",
]
SHIFT = 7  # unrelated pairs: sentence i against sentence i + 7
UNRELATED = [(SENTENCES[i], SENTENCES[i + SHIFT]) for i in range(20)]
IDENTICAL = [SENTENCES[1], SENTENCES[4], SENTENCES[16], SENTENCES[25]]


def write_lines(path: Path, lines) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    return path


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bertscore_viz", *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


# --- an independent reading of a stored calibration ----------------------------------------------------------------
def percentile_from_quantiles(value: float, quantiles: list[float], levels: list[float]) -> float:
    """docs/CALIBRATION.md's rule, written with plain Python: 0 at or below the lowest stored quantile, 100 at or
    above the highest; in between, linear interpolation between neighbouring stored quantiles, where a value stored
    at several levels stands at the middle of those levels."""
    xs: list[float] = []
    mids: list[float] = []
    k = 0
    while k < len(quantiles):  # group runs of equal quantiles (a plateau) into one point at their middle level
        j = k
        while j + 1 < len(quantiles) and quantiles[j + 1] == quantiles[k]:
            j += 1
        xs.append(quantiles[k])
        mids.append(sum(levels[k:j + 1]) / (j + 1 - k))
        k = j + 1
    if value <= xs[0]:
        return 0.0
    if value >= xs[-1]:
        return 100.0
    hi = bisect.bisect_right(xs, value)  # xs[hi - 1] <= value < xs[hi]
    x0, x1, m0, m1 = xs[hi - 1], xs[hi], mids[hi - 1], mids[hi]
    return 100.0 * (m0 + (m1 - m0) * (value - x0) / (x1 - x0))


def shipped_f1_ladder(layer: int) -> tuple[list[float], list[float]]:
    """The shipped calibration's F1 quantiles at ``layer`` and their levels, read from the JSON file itself."""
    data = json.loads(SHIPPED_CALIBRATION.read_text(encoding="utf-8"))
    assert data["model"] == MODEL and data["lang"] == "en" and data["idf"] is False
    row = data["layers"].index(layer)
    return [float(x) for x in data["random"]["quantiles"]["F"][row]], [float(x) for x in data["levels"]]


# --- 1. score --json --calibrate -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def calibrated_run(tmp_path_factory):
    """``score -c CANDS -r REFS --json --calibrate`` on 20 unrelated pairs and 4 identical ones, and the same pairs
    scored by ``bertscore_viz.score``."""
    folder = tmp_path_factory.mktemp("calibrate")
    cands = [c for c, _ in UNRELATED] + IDENTICAL
    refs = [r for _, r in UNRELATED] + IDENTICAL
    cand_file, ref_file = write_lines(folder / "cands.txt", cands), write_lines(folder / "refs.txt", refs)
    return {"cands": cands, "refs": refs, "files": (cand_file, ref_file),
            "library": bertscore_viz.score(cands, refs)}


def test_score_calibrate_percentiles_match_the_shipped_quantiles(calibrated_run, capsys):
    cand_file, ref_file = calibrated_run["files"]
    assert main(["score", "-c", str(cand_file), "-r", str(ref_file), "--json", "--calibrate"]) == 0
    out = json.loads(capsys.readouterr().out)
    res = calibrated_run["library"]
    layer = res.signature.layer
    assert layer == 4  # the bundled model's tuned layer (docs/CALIBRATION.md), which the shipped ladder covers
    quantiles, levels = shipped_f1_ladder(layer)
    printed = out["percentile_random"]
    assert len(printed) == len(calibrated_run["cands"])
    # the CLI and the library run the same model on the same batch on CPU: F1 agrees to float32 noise
    np.testing.assert_allclose(out["raw_f1"], res.raw_f1, rtol=0, atol=1e-6)
    np.testing.assert_allclose(out["f1"], res.f1, rtol=0, atol=1e-6)
    for k, f1 in enumerate(np.asarray(res.raw_f1, dtype=np.float64)):
        expected = percentile_from_quantiles(float(f1), quantiles, levels)
        # the CLI rounds to 4 decimals (half a unit: 5e-5); the allowance for an F1 that differs by up to 1e-6 is
        # the local slope of the ladder times 1e-6
        slope_room = abs(percentile_from_quantiles(float(f1) + 1e-6, quantiles, levels)
                         - percentile_from_quantiles(float(f1) - 1e-6, quantiles, levels))
        assert abs(printed[k] - expected) <= 5e-5 + slope_room + 1e-12, (k, f1, printed[k], expected)
    unrelated = np.asarray(printed[:len(UNRELATED)])
    # the interpolation itself is exercised: unrelated pairs fall strictly inside the ladder, not on its ends
    assert ((unrelated > 0) & (unrelated < 100)).sum() >= len(UNRELATED) // 2, unrelated
    assert 20.0 <= float(unrelated.mean()) <= 80.0, unrelated
    assert printed[len(UNRELATED):] == [100.0] * len(IDENTICAL)


def test_score_calibrate_identical_pairs_are_at_100_and_unrelated_pairs_mid_ladder(calibrated_run, capsys):
    """The same properties through the text output: the median printed for the unrelated pairs alone."""
    unrelated = calibrated_run["library"].raw_f1[:len(UNRELATED)]
    quantiles, levels = shipped_f1_ladder(4)
    median = float(np.median([percentile_from_quantiles(float(f), quantiles, levels) for f in unrelated]))
    folder = calibrated_run["files"][0].parent
    cand_file = write_lines(folder / "u_cands.txt", [c for c, _ in UNRELATED])
    ref_file = write_lines(folder / "u_refs.txt", [r for _, r in UNRELATED])
    assert main(["score", "-c", str(cand_file), "-r", str(ref_file), "--calibrate"]) == 0
    lines = capsys.readouterr().out.splitlines()
    line = next(x for x in lines if x.startswith("F1 among random pairs"))
    # printed with one decimal
    assert f"median percentile {median:.1f} " in line, (line, median)
    assert 20.0 <= median <= 80.0
    cand_file = write_lines(folder / "i_cands.txt", IDENTICAL)
    assert main(["score", "-c", str(cand_file), "-r", str(cand_file), "--json", "--calibrate"]) == 0
    assert json.loads(capsys.readouterr().out)["percentile_random"] == [100.0] * len(IDENTICAL)


@pytest.mark.slow
@pytest.mark.parametrize(("extra", "says"), [
    (["--idf"], "Calibrations place scores without idf"),
    (["--lang", "de"], f"No calibration for model '{MODEL}' and language 'de'"),
], ids=["idf", "no-calibration-for-language"])
def test_score_calibrate_impossible_is_a_one_line_error(calibrated_run, extra, says):
    cand_file, ref_file = calibrated_run["files"]
    proc = run_cli("score", "-c", cand_file, "-r", ref_file, "--json", "--calibrate", *extra)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert says in lines[0]


# --- 2. baseline writes the calibration beside the baseline --------------------------------------------------------
CORPUS = SENTENCES + [
    "The mayor opened a new public library in the north of the city.",
    "Unemployment fell to 4.1% in the three months to June.",
    "A cargo ship ran aground in the Suez Canal, blocking traffic for hours.",
    "The festival attracted 80,000 visitors over four days.",
    "Health officials confirmed two new cases of measles at a primary school.",
    "The band announced a world tour starting in Lisbon in April.",
    "Engineers are still inspecting the damaged dam.",
    "The minister resigned after a report criticised his handling of the crisis.",
    "Heavy snow closed schools across the region on Thursday.",
    "A rare copy of Shakespeare's First Folio sold for $10 million at auction.",
    "The tennis champion pulled out of the tournament with a back injury.",
    "House prices in the capital have risen for the eighth month in a row.",
    "Hundreds of volunteers helped clean the beach after the oil spill.",
    "The court ruled that the merger could go ahead.",
    "Astronomers spotted a comet that will be visible to the naked eye in October.",
    "The new law bans smoking in cars carrying children.",
    "Talks between the union and management broke down late last night.",
    "The film won three awards, including best director.",
    "An elderly man was injured when a tree fell on his car.",
    "Exports to China rose by 12% last quarter.",
    "The city plans to plant 10,000 trees by the end of the decade.",
    "Her lawyers said she would appeal the verdict.",
    "The hospital has hired 200 more nurses to cope with demand.",
    "A power cut left 50,000 homes without electricity for most of the evening.",
    "Researchers say the vaccine is safe for children over five.",
    "The river burst its banks after a week of heavy rain.",
    "Voters will choose a new governor in November.",
    "The team's captain has signed a new three-year contract.",
    "Traffic on the motorway was diverted after a lorry overturned.",
    "The bakery on Main Street has been run by the same family since 1921.",
    "Inflation is expected to ease next year, economists said.",
    "A statue of the poet was unveiled in the town square.",
]
PAIRS = 24
SEED = 5
BLOCK_PAIRS = 8  # several blocks: the baseline is merged block by block, the calibration's mean taken at once


@pytest.mark.slow
def test_baseline_writes_a_calibration_consistent_with_the_baseline(tmp_path):
    assert len(set(CORPUS)) == len(CORPUS) == 60
    corpus = write_lines(tmp_path / "corpus.txt", CORPUS)
    out = tmp_path / "out" / "mini.tsv"
    out.parent.mkdir()
    proc = run_cli("baseline", "--corpus", corpus, "-m", MODEL, "--lang", "en", "--pairs", PAIRS, "--seed", SEED,
                   "--block-pairs", BLOCK_PAIRS, "-o", out)
    assert proc.returncode == 0, proc.stderr
    prov_path, cal_path = out.with_name("mini.provenance.json"), out.with_name("mini.calibration.json")
    assert out.is_file() and prov_path.is_file() and cal_path.is_file(), sorted(p.name for p in out.parent.iterdir())
    assert f"wrote {cal_path}" in proc.stderr

    tsv = out.read_text(encoding="utf-8")
    assert proc.stdout == tsv  # the baseline is also printed
    rows = tsv.splitlines()
    assert rows[0] == "LAYER,P,R,F"
    baseline = np.array([[float(x) for x in row.split(",")[1:]] for row in rows[1:]])
    assert [int(row.split(",")[0]) for row in rows[1:]] == list(range(7))  # embeddings + 6 layers
    prov = json.loads(prov_path.read_text(encoding="utf-8"))
    cal = json.loads(cal_path.read_text(encoding="utf-8"))

    # what the calibration is, and where it comes from
    assert cal["format"] == "bertscore-viz-calibration/1"
    assert (cal["model"], cal["lang"], cal["idf"], cal["layers"]) == (MODEL, "en", False, list(range(7)))
    assert cal["human"] is None
    np.testing.assert_array_equal(cal["levels"], RANDOM_LEVELS)
    cprov = cal["provenance"]
    corpus_sha = hashlib.sha256(corpus.read_bytes()).hexdigest()
    assert cprov["corpus"]["path"] == str(corpus) == prov["corpus"]["path"]
    assert cprov["corpus"]["sha256"] == corpus_sha == prov["corpus"]["sha256"]
    assert cprov["corpus"]["usable_lines"] == 60
    assert cprov["pairs"] == PAIRS == prov["pairs"] == cal["random"]["pairs"]
    assert cprov["seed"] == SEED == prov["seed"]
    assert "baseline" in cprov["command"] and str(corpus) in cprov["command"]
    assert cprov["baseline_sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert BLOCK_PAIRS < PAIRS and "3 block(s)" in prov["pairing"]

    means = np.stack([np.asarray(cal["random"]["means"][c]) for c in "PRF"], axis=1)  # (7, 3)
    prov_means = np.stack([np.asarray(prov["means"][c]) for c in "PRF"], axis=1)
    # The calibration's means are numpy's mean of the 24 pairs' scores; the baseline's are the same scores merged
    # block by block (Chan et al.): the same numbers summed in another order, a few float64 ulps apart (~1e-16 at
    # values below 1). 1e-12 leaves room for that and for nothing else.
    np.testing.assert_allclose(means, prov_means, rtol=0, atol=1e-12)
    assert cprov["largest_mean_difference_to_baseline"] <= 1e-12
    # The file holds those means as float32 text: each value is the float32 nearest the mean, so it is within one
    # float32 spacing (2**-24 relative, ~3e-8 here) of the calibration's mean.
    assert baseline.shape == (7, 3)
    np.testing.assert_array_less(np.abs(baseline - means), np.spacing(np.float32(means)).astype(np.float64) + 1e-15)

    quantiles = np.stack([np.asarray(cal["random"]["quantiles"][c]) for c in "PRF"], axis=1)  # (7, 3, 123)
    assert quantiles.shape == (7, 3, len(RANDOM_LEVELS))
    assert np.all(np.diff(quantiles, axis=-1) >= 0)
    lo, hi = quantiles[..., 0], quantiles[..., -1]  # the lowest and the highest pair
    assert np.all(lo < means) and np.all(means < hi)
    # The mean the quantiles imply, the integral of the quantile function over the levels, against the baseline.
    # numpy's linear quantiles of n values join the sorted values at levels k/(n-1), whose exact integral T differs
    # from the mean by (mean - (min + max)/2)/(n-1), at most (max - min)/(2(n-1)). The trapezoid over the stored
    # levels misses the joints between them by at most the widest level spacing (0.01) times (max - min), and the
    # stored quantiles are rounded to 7 decimals (5e-8).
    steps = np.diff(RANDOM_LEVELS)
    implied = ((quantiles[..., 1:] + quantiles[..., :-1]) / 2 * steps).sum(axis=-1)
    bound = (hi - lo) * (1 / (2 * (PAIRS - 1)) + 0.01) + 1e-7
    np.testing.assert_array_less(np.abs(implied - baseline), bound)


# --- 3. mtme writes metric scores ----------------------------------------------------------------------------------
LP = "de-en"
MT_SOURCES = [
    "Die Regierung hat am Montag ein neues Klimagesetz vorgestellt.",
    "Der Zug nach Hamburg hatte zwei Stunden Verspätung.",
    "In der Altstadt wurde ein neues Café eröffnet.",
    "Die Mannschaft gewann das Finale mit 2:0.",
    "Viele Menschen kauften vor dem Sturm Lebensmittel ein.",
    "Das Museum bleibt wegen Renovierung bis April geschlossen.",
    "Der Bürgermeister versprach mehr Radwege.",
    "Die Preise für Strom sind im Winter stark gestiegen.",
]
MT_REFERENCES = [
    "The government presented a new climate law on Monday.",
    "The train to Hamburg was two hours late.",
    "A new café has opened in the old town.",
    "The team won the final 2-0.",
    "Many people bought food before the storm.",
    "The museum will remain closed for renovation until April.",
    "The mayor promised more cycle paths.",
    "Electricity prices rose sharply in the winter.",
]
MT_SYSTEMS = {
    "sysA": [
        "On Monday the government introduced a new climate law.",
        "The train to Hamburg was delayed by two hours.",
        "A new cafe opened in the old town.",
        "The team won the final with 2:0.",
        "Many people bought groceries before the storm.",
        "The museum remains closed until April because of renovation.",
        "The mayor promised more bike lanes.",
        "The prices for electricity have risen strongly in winter.",
    ],
    "sysB": [
        "Government law climate new Monday.",
        "The Hamburg train two hours.",
        "In the old city a new coffee was opened.",
        "The crew won the last.",
        "Lots of humans purchased food before the tempest.",
        "Museum closed.",
        "The master of the city promised more wheel ways.",
        "Current prices climbed in the winter strongly.",
    ],
}
MT_DOCS = ["news doc1"] * 3 + ["talk doc2"] * 2 + ["news doc3"] * 3


def parse_score_file(path: Path, domain: bool = False) -> dict:
    """A metric-score file read as mt-metrics-eval reads one: whitespace-separated ``SYSTEM SCORE`` (``DOMAIN SYSTEM
    SCORE``) lines, scores in file order per system (per domain and system)."""
    scores: dict = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        assert len(fields) == (3 if domain else 2), line
        key = (fields[0], fields[1]) if domain else fields[0]
        scores.setdefault(key, []).append(float(fields[-1]))
    return scores


@pytest.mark.slow
def test_mtme_writes_seg_and_sys_scores_that_match_the_library(tmp_path):
    ts = tmp_path / "wmt-mini"
    write_lines(ts / "sources" / f"{LP}.txt", MT_SOURCES)
    write_lines(ts / "references" / f"{LP}.refA.txt", MT_REFERENCES)
    for name, lines in MT_SYSTEMS.items():
        write_lines(ts / "system-outputs" / LP / f"{name}.txt", lines)
    write_lines(ts / "documents" / f"{LP}.docs", MT_DOCS)
    proc = run_cli("mtme", "--data", ts, "--lp", LP, "--ref", "refA")
    assert proc.returncode == 0, proc.stderr
    folder = ts / "metric-scores" / LP
    written = {Path(line).name for line in proc.stdout.splitlines()}
    assert written == {f"BERTScore-refA.{lv}.score" for lv in ("seg", "sys", "doc", "domain")}

    seg = parse_score_file(folder / "BERTScore-refA.seg.score")
    sys_ = parse_score_file(folder / "BERTScore-refA.sys.score")
    doc = parse_score_file(folder / "BERTScore-refA.doc.score")
    assert set(seg) == set(sys_) == set(doc) == set(MT_SYSTEMS)
    for name, outputs in MT_SYSTEMS.items():
        expected = np.asarray(bertscore_viz.score(outputs, MT_REFERENCES).f1, dtype=np.float64)
        assert len(seg[name]) == len(MT_REFERENCES)
        np.testing.assert_allclose(seg[name], expected, rtol=0, atol=1e-6)
        # docs/WMT_LAYOUT.md: a system's sys (and doc) score is the mean of its segment scores, written as repr
        assert len(sys_[name]) == 1
        assert abs(sys_[name][0] - float(np.mean(seg[name]))) <= 1e-9
        per_doc = [float(np.mean(seg[name][a:b])) for a, b in ((0, 3), (3, 5), (5, 8))]
        np.testing.assert_allclose(doc[name], per_doc, rtol=0, atol=1e-9)
    # a test that could not tell the systems apart would prove little: the garbled system scores lower
    assert sys_["sysA"][0] > sys_["sysB"][0]

    ev = read_evalset(ts, LP)
    assert ev.warnings == ()
    stored = ev.metric_scores["BERTScore-refA"]
    for name in MT_SYSTEMS:
        assert list(stored["seg"][name]) == seg[name]  # repr round-trips: the same floats, bit for bit
        assert list(stored["sys"][name]) == sys_[name]
        assert list(stored["doc"][name]) == doc[name]
