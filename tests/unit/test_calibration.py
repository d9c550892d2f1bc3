"""Calibration: percentiles against hand-computed quantiles, the file round trip and lookup, the computation
(equal to the baseline and to a direct engine computation of the same pairs), and the shipped ladder of the bundled
model: random pairs of sentences written for this test (in no file of the repository) land near the 50th
percentile, identical pairs at 100."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.engine.baseline import read_baseline, shipped_baseline_path
from bertscore_viz.errors import BaselineError, InputError
from bertscore_viz.evaluation import calibration as cb
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME
from bertscore_viz.rescaling import baseline_compute as bc

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("BERTSCORE_VIZ_DATA", ROOT / "data"))

#: Written for this test, in no file of the repository: news English as mixed as the calibration corpus
#: (newstest2017): headlines, quotes, names, numbers, 3 to 20 words. (Forty sentences in one plain register,
#: "The council approved a plan ..." and the like, put their random pairs near the 90th percentile instead:
#: docs/CALIBRATION.md.)
OWN_SENTENCES = (
    'Shares of Nordvik Energy rose 4.2 percent on Tuesday after the Oslo-based company raised its forecast for 2025.',
    'Flooding in Lower Saxony',
    '"We have never seen anything like this," said Maria Kowalczyk, who has run the animal shelter since 1998.',
    'The 34-year-old striker scored twice in the second half.',
    'Prime Minister Anders Halvorsen dismissed the accusations as "pure fantasy" at a press conference in Bergen.',
    'Why do so many young people leave the countryside?',
    'According to the statistics office, exports to China fell by 11 percent in the first quarter, the '
    'steepest drop since 2009.',
    'Tickets cost 45 euros and can be bought online.',
    'Rescue teams pulled three survivors from the rubble late on Thursday, local media reported.',
    '"I think people are simply tired of promises," she says.',
    'The verdict is expected in March.',
    'With a turnout of 61.3 percent, the referendum on the new constitution was valid, the electoral '
    'commission in Tbilisi announced.',
    'Her husband, a retired teacher, died of a heart attack at the age of 72.',
    'New rules for e-scooters',
    'The club has not yet commented on reports that its coach is in talks with Benfica.',
    'In the village of Hohenlohe, about 20 kilometres north of Stuttgart, there is only one bus a day.',
    'What happens to the data once the app is deleted remains unclear.',
    'The investigation was opened in 2016 after a whistleblower contacted prosecutors in Vilnius.',
    'A man has been arrested on suspicion of attempted murder after a woman was stabbed in Leeds city centre.',
    'The minimum wage will rise to 12.41 euros per hour from January.',
    '"It\'s a shame," Petrov told reporters.',
    'Both sides blame each other for the collapse of the ceasefire, which lasted less than a week.',
    'Around 300 people attended the funeral.',
    'The Czech national bank unexpectedly cut its key interest rate by a quarter of a percentage point to 2.5 percent.',
    'Astronomers at the University of Helsinki have discovered a planet that orbits its star every 19 hours.',
    'He wants to spend more time with his family.',
    'Lawmakers in Ankara voted 312 to 140 to extend the state of emergency for another three months.',
    'The festival, which takes place every two years, attracted more than 80,000 visitors.',
    'Despite the rain, the atmosphere in the stadium was fantastic.',
    'This is not the first time the company has been criticised for its working conditions.',
    'Police said the driver, a 27-year-old man from Riga, had more than twice the legal limit of alcohol in his blood.',
    'Read more: Why housing prices keep climbing',
    'Experts estimate the damage at several million dollars.',
    'On Saturday evening, a fire broke out in a warehouse in the industrial zone of Tampere, injuring two workers.',
    'The report will be presented to parliament next week.',
    'My grandmother still bakes bread every Sunday, just as she did sixty years ago.',
    'Beijing has repeatedly denied the allegations.',
    'The company plans to cut 1,200 jobs worldwide by the end of 2026, including 450 in Germany.',
    'Nobody was injured.',
    'According to the UN, more than 2 million people have fled the fighting since the beginning of the year.',
)


# --- percentiles by hand ----------------------------------------------------------------------------------------
def test_interpolate_percentile_by_hand():
    q, lv = [0.1, 0.2, 0.4, 0.8], [0.0, 0.25, 0.5, 1.0]
    got = cb.interpolate_percentile([0.05, 0.1, 0.15, 0.3, 0.6, 0.8, 0.9, np.nan], q, lv)
    # 0.15: halfway 0.1 -> 0.2 = level 0.125; 0.3: halfway 0.2 -> 0.4 = 0.375; 0.6: halfway 0.4 -> 0.8 = 0.75
    assert got[:7].tolist() == pytest.approx([0.0, 0.0, 12.5, 37.5, 75.0, 100.0, 100.0])
    assert np.isnan(got[7])


def test_a_plateau_takes_its_middle_level():
    q, lv = [0.1, 0.2, 0.2, 0.5], [0.0, 0.3, 0.6, 1.0]
    got = cb.interpolate_percentile([0.2, 0.35, 0.15], q, lv)
    # 0.2 -> (0.3 + 0.6) / 2 = 0.45; 0.35: halfway 0.2 -> 0.5 = 0.45 + 0.55 / 2; 0.15: halfway 0 -> 0.45
    assert got.tolist() == pytest.approx([45.0, 72.5, 22.5])


def test_quantile_grid_by_hand():
    values = np.zeros((5, 1, 3))
    values[:, 0, 0] = [5, 1, 4, 2, 3]
    values[:, 0, 1] = [0.5, 0.5, 0.5, 0.5, 0.5]
    values[:, 0, 2] = [0.1, 0.2, 0.3, 0.4, 1.0]
    grid = cb.quantile_grid(values, [0.0, 0.25, 0.5, 0.875, 1.0])
    assert grid[0, 0].tolist() == [1, 2, 3, 4.5, 5]  # positions 0, 1, 2, 3.5, 4 of the sorted values
    assert grid[0, 1].tolist() == [0.5] * 5
    assert grid[0, 2].tolist() == pytest.approx([0.1, 0.2, 0.3, 0.7, 1.0])
    with pytest.raises(InputError, match="finite"):
        cb.quantile_grid(np.full((2, 1, 3), np.nan), [0, 1])


@pytest.fixture(scope="module")
def synthetic():
    """A calibration of 20,000 'pairs' (normal scores per layer and P/R/F), and those scores."""
    rng = np.random.default_rng(0)
    values = 0.4 + 0.05 * rng.standard_normal((20_000, 2, 3))
    return cb.random_pair_calibration(values, "toy", "en", layers=(3, 5), provenance={"seed": 0}), values


def test_percentile_matches_the_empirical_distribution(synthetic):
    """Within the grid spacing of the fraction of pairs below the value: 1 point in the middle, 0.1 in the tails."""
    cal, values = synthetic
    f = values[:, 1, 2]  # layer 5, F
    for v in np.quantile(f, [0.0005, 0.003, 0.2, 0.5, 0.77, 0.995, 0.9993]):
        exact = 100 * np.mean(f < v)
        tolerance = 1.0 if 1 <= exact <= 99 else 0.1
        assert abs(cal.percentile(v, 5, "f1") - exact) <= tolerance
    assert cal.percentile(1.0, 5) == 100.0 and cal.percentile(f.max(), 5) == 100.0
    assert cal.percentile(f.min(), 5) == 0.0
    assert cal.quantile(50, 5) == pytest.approx(np.median(f), abs=1e-7)
    assert cal.random_means[1].tolist() == pytest.approx(values[:, 1].mean(axis=0).tolist())


def test_percentile_picks_layer_and_score(synthetic):
    cal, values = synthetic
    v = 0.41
    for layer, row in ((3, 0), (5, 1)):
        for which, k in (("precision", 0), ("R", 1), ("F1", 2)):
            expected = cb.interpolate_percentile(v, np.quantile(values[:, row, k], cb.RANDOM_LEVELS), cb.RANDOM_LEVELS)
            assert cal.percentile(v, layer, which) == pytest.approx(float(expected), abs=1e-4)
    with pytest.raises(BaselineError, match="not layer 4"):
        cal.percentile(v, 4)
    with pytest.raises(InputError, match="which"):
        cal.percentile(v, 3, "bleu")


# --- human bands ------------------------------------------------------------------------------------------------
def test_human_bands_by_hand():
    human = np.arange(9, dtype=float)  # thirds at 2.667 and 5.333: 0-2, 3-5, 6-8
    values = np.zeros((9, 1, 3))
    values[:, 0, 2] = [0.3, 0.2, 0.1, 0.5, 0.4, 0.6, 0.9, 0.7, 0.8]
    bands = cb.human_bands(values, human)
    assert [b.name for b in bands] == ["bottom third", "middle third", "top third"]
    assert [b.count for b in bands] == [3, 3, 3]
    assert bands[0].high == pytest.approx(8 / 3) and bands[1].high == pytest.approx(16 / 3)
    assert bands[2].quantiles[0, 2, [0, 50, 100]].tolist() == pytest.approx([0.7, 0.8, 0.9])
    with pytest.raises(InputError, match="empty"):
        cb.human_bands(np.zeros((4, 1, 3)), [1.0, 1.0, 1.0, 1.0])  # all equal: the bottom third is empty


def test_reading_and_typical_band(synthetic):
    cal, _ = synthetic
    rng = np.random.default_rng(1)
    rated = np.concatenate([rng.normal(m, 0.03, (300, 2, 3)) for m in (0.6, 0.7, 0.8)])
    human = np.repeat([0.0, 1.0, 2.0], 300) + rng.uniform(0, 0.5, 900)
    cal = cb.Calibration(cal.model, cal.lang, False, cal.layers, cal.levels, cal.random, cal.n_random,
                         cal.random_means, cb.human_bands(rated, human), cb.BAND_LEVELS, "toy DA", "translations")
    assert cal.typical_band(0.61, 5) == "bottom third" and cal.typical_band(0.79, 5) == "top third"
    assert cal.band_median("middle third", 5) == pytest.approx(np.median(rated[300:600, 1, 2]), abs=1e-3)
    r = cal.reading(0.7, 5)
    assert r.typical_band == "middle third" and r.percentile_random == 100.0
    assert r.sentence() == ("higher than all 20,000 random pairs of unrelated sentences; typical of translations "
                            "humans rated in the middle third (toy DA)")
    assert "higher than all 300 translations humans rated in the top third" in cal.reading(1.0, 5).sentence()
    assert cal.reading(cal.quantile(97.3, 5), 5).sentence().startswith("higher than 97.3% of random pairs")
    assert cal.reading(cal.quantile(99.997, 5), 5).sentence().startswith("higher than 99.997% of random pairs")
    assert cal.reading(cal.quantile(2.5, 5), 5).sentence().startswith("lower than 97.5% of random pairs")
    below = cal.reading(float(np.quantile(rated[:300, 1, 2], 0.02)), 5)  # the bottom band's 2nd percentile
    assert below.typical_band == "bottom third"
    assert below.sentence().endswith("; lower than 98.0% of translations humans rated in the bottom third (toy DA)")
    assert json.loads(json.dumps(r.as_dict()))["typical_band"] == "middle third"


# --- files ------------------------------------------------------------------------------------------------------
def test_file_round_trip(synthetic, tmp_path):
    cal, _ = synthetic
    rng = np.random.default_rng(2)
    cal = cb.Calibration(cal.model, cal.lang, False, cal.layers, cal.levels, cal.random, cal.n_random,
                         cal.random_means, cb.human_bands(rng.uniform(size=(60, 2, 3)), rng.normal(size=60)),
                         cb.BAND_LEVELS, "toy", "outputs", {"seed": 0, "command": "x"})
    path = cb.write_calibration(cal, tmp_path / "toy.calibration.json")
    back = cb.read_calibration(path)
    for name in ("levels", "random", "random_means", "band_levels"):
        assert np.array_equal(getattr(back, name), getattr(cal, name))
    for a, b in zip(back.bands, cal.bands):
        assert (a.name, a.low, a.high, a.count) == (b.name, b.low, b.high, b.count)
        assert np.array_equal(a.quantiles, b.quantiles)
    assert (back.model, back.lang, back.idf, back.layers, back.n_random) == ("toy", "en", False, (3, 5), 20_000)
    assert back.provenance == {"seed": 0, "command": "x"} and back.human_source == "toy"
    assert back.reading(0.45, 5).as_dict() == cal.reading(0.45, 5).as_dict()
    assert not back.random.flags.writeable


def test_damaged_files_are_refused(synthetic, tmp_path):
    cal, _ = synthetic
    data = cal.as_dict()
    data["random"]["quantiles"]["F"][0] = data["random"]["quantiles"]["F"][0][::-1]  # falling quantiles
    bad = tmp_path / "bad.calibration.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BaselineError, match="never fall"):
        cb.read_calibration(bad)
    bad.write_text('{"format": "something else"}', encoding="utf-8")
    with pytest.raises(BaselineError, match="format"):
        cb.read_calibration(bad)
    bad.write_text("not json", encoding="utf-8")
    with pytest.raises(BaselineError, match="JSON"):
        cb.read_calibration(bad)
    with pytest.raises(BaselineError, match="does not exist"):
        cb.read_calibration(tmp_path / "missing.json")
    assert cb.calibration_path_for("out/base.tsv") == Path("out/base.calibration.json")


def test_lookup_and_missing_message(synthetic):
    cal, _ = synthetic
    assert cb.find_calibration("no-such-model", "en") is None
    assert cb.find_calibration("../../../etc/passwd", "en") is None
    msg = cb.missing_calibration_message("no-such-model", "de")
    assert "baselines/de/no-such-model.calibration.json does not exist" in msg
    assert "python -m bertscore_viz baseline --corpus FILE -m no-such-model --lang de -o OUT.tsv" in msg
    with pytest.raises(BaselineError, match="No calibration"):
        cb.require_calibration("no-such-model", "en")
    assert cb.find_calibration(BUNDLED_MODEL_NAME, "en", idf=True) is None
    assert "without idf" in cb.missing_calibration_message(BUNDLED_MODEL_NAME, "en", idf=True)
    cb.register_calibration(cal)
    assert cb.find_calibration("toy", "en") is cal


# --- computing: the same pairs and numbers as the baseline ------------------------------------------------------
@pytest.fixture(scope="module")
def scorer():
    return Scorer(layer=4)


@pytest.fixture(scope="module")
def small_run(scorer):
    lines = (DATA / "newstest2017-english" / "newstest2017-deen-ref.en").read_text(encoding="utf-8").splitlines()
    corpus = bc.corpus_from_lines(lines[:80], "newstest head")
    result, cal = cb.compute_baseline_and_calibration(corpus, n_pairs=60, seed=7, scorer=scorer, command="test")
    assert cal.model == BUNDLED_MODEL_NAME
    return corpus, result, cal


@pytest.mark.slow
def test_computation_equals_baseline_and_direct_engine_scores(scorer, small_run):
    corpus, result, cal = small_run
    assert result.tsv() == bc.compute_baseline(corpus, n_pairs=60, seed=7, scorer=scorer).tsv()
    assert np.allclose(cal.random_means, result.means, atol=1e-12)
    assert cal.n_random == 60 and cal.layers == tuple(range(7)) and cal.provenance["command"] == "test"
    assert cal.provenance["baseline_sha256"] == hashlib.sha256(result.tsv().encode()).hexdigest()
    pairs = np.concatenate(bc.plan_pairs(len(corpus.sentences), 60, 7))
    cands = [corpus.sentences[i] for i in pairs[:, 0]]
    refs = [corpus.sentences[j] for j in pairs[:, 1]]
    for layer in (0, 4, 6):
        f1 = Scorer(layer=layer).score(cands, refs).f1
        expected = np.quantile(f1, cb.RANDOM_LEVELS)
        assert np.allclose(cal.random[layer, 2], expected, atol=2e-6)


def test_human_bands_need_the_same_model(scorer):
    other = cb.random_pair_calibration(np.zeros((2, 7, 3)) + [[[0.1, 0.2, 0.3]]], "other-model", "en")
    with pytest.raises(InputError, match="same model"):
        cb.add_human_bands(other, scorer, ["a"], ["b"], [1.0], "x")


# --- the shipped calibration of the bundled model ---------------------------------------------------------------
@pytest.fixture(scope="module")
def shipped():
    cal = cb.find_calibration(BUNDLED_MODEL_NAME, "en")
    assert cal is not None, cb.missing_calibration_message(BUNDLED_MODEL_NAME, "en")
    return cal


def test_shipped_calibration_comes_from_the_baselines_pairs(shipped):
    base_path = shipped_baseline_path("en", BUNDLED_MODEL_NAME)
    prov = json.loads(bc.provenance_path(base_path).read_text(encoding="utf-8"))
    assert shipped.provenance["baseline_sha256"] == hashlib.sha256(base_path.read_bytes()).hexdigest()
    assert shipped.provenance["corpus"]["sha256"] == prov["corpus"]["sha256"]
    assert (shipped.provenance["seed"], shipped.provenance["pairs"]) == (prov["seed"], prov["pairs"]) == (0, 100_000)
    assert shipped.n_random == 100_000 and shipped.layers == tuple(range(7)) and not shipped.idf
    # its means are the shipped baseline (written as float32)
    assert np.allclose(shipped.random_means, read_baseline(base_path).values, atol=1e-7)
    assert shipped.provenance["command"]


def test_shipped_human_bands_cover_every_layer_and_rise(shipped):
    assert [b.name for b in shipped.bands] == list(cb.BAND_NAMES)
    assert sum(b.count for b in shipped.bands) == 3360 and shipped.human_source.startswith("WMT16")
    for layer in shipped.layers:
        medians = [shipped.band_median(b.name, layer) for b in shipped.bands]
        assert medians == sorted(medians)  # humans and BERTScore agree on average at every layer
        assert shipped.percentile(medians[0], layer) > 99  # even poor translations beat random pairs


def own_pairs() -> tuple[list[str], list[str]]:
    """Every pair of two different sentences of :data:`OWN_SENTENCES`, each order once: 780 unrelated pairs."""
    pairs = list(itertools.combinations(OWN_SENTENCES, 2))
    return [a for a, _ in pairs], [b for _, b in pairs]


@pytest.fixture(scope="module")
def own_stats(scorer):
    """One model pass over the 780 pairs: raw P, R, F1 at every layer."""
    return scorer.match(*own_pairs(), layers="all", keep="scores")


def test_random_pairs_of_new_sentences_land_near_the_median(shipped, scorer, own_stats):
    result = scorer.result(own_stats, layer=4, baseline=None)
    pct = cb.percentile_random(result, shipped)
    assert pct.shape == (780,)
    assert 40 <= float(np.median(pct)) <= 60, np.median(pct)  # measured: 49.5
    assert np.array_equal(pct, shipped.percentile(result.raw_f1, 4))
    assert pct.min() >= 0.0 and pct.max() <= 100.0


def test_every_layer_puts_new_random_pairs_near_the_median(shipped, scorer, own_stats):
    for layer in shipped.layers:
        f1 = scorer.result(own_stats, layer=layer, baseline=None).raw_f1
        median = float(np.median(shipped.percentile(f1, layer)))
        assert 30 <= median <= 70, (layer, median)  # measured: 38.9 (layer 5) to 59.0 (layer 2)


def test_identical_pairs_are_at_100(shipped, scorer):
    sentences = list(OWN_SENTENCES[:10])
    result = scorer.score(sentences, sentences)
    assert cb.percentile_random(result, shipped).tolist() == [100.0] * 10
    assert shipped.reading(float(result.raw_f1[0]), 4).sentence().startswith(
        "higher than all 100,000 random pairs of unrelated sentences")


def test_rescaled_scores_get_the_percentile_of_their_raw_score(shipped):
    rescaled = Scorer(rescale_with_baseline=True).score(list(OWN_SENTENCES[:6]), list(OWN_SENTENCES[6:12]))
    raw = Scorer().score(list(OWN_SENTENCES[:6]), list(OWN_SENTENCES[6:12]))
    assert np.array_equal(cb.percentile_random(rescaled, shipped), cb.percentile_random(raw, shipped))


def test_scores_of_another_model_are_refused(shipped):
    other = cb.Calibration("other", "en", False, shipped.layers, shipped.levels, shipped.random, 1,
                           shipped.random_means)
    result = Scorer().score(["a cat"], ["a dog"])
    with pytest.raises(BaselineError, match="same"):
        cb.percentile_random(result, other)
