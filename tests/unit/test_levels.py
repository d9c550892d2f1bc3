"""Verdicts at every level (issue 30) on a SummEval-style set built here: documents x systems with human scores,
made so that each level names another winner. The summary level equals per-document scipy correlations averaged by
a plain loop, its interval a plain-loop bootstrap over the documents; the headline names the level and the winner
at each level and says that the levels disagree."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from bertscore_viz.evaluation.correlation import agreement
from bertscore_viz.evaluation.levels import (
    MIN_DOCUMENT_OUTPUTS,
    document_correlations,
    document_keys,
    levels_disagree,
    resampled_document_means,
    winners,
)

DOCS, SYSTEMS = 40, 8


def summeval_like(seed: int = 0):
    """Human score = document effect (large) + system effect + noise. "BERTScore-R" follows the documents (best
    over all outputs), "BLEU" the systems under heavy noise (best over system means), "chrF" the noise within
    each document with the systems' order reversed (best per document, worst over systems)."""
    rng = np.random.default_rng(seed)
    doc = np.repeat(rng.normal(scale=5.0, size=DOCS), SYSTEMS)
    system = np.tile(np.linspace(-1.5, 1.5, SYSTEMS), DOCS)
    noise = rng.normal(scale=2.0, size=DOCS * SYSTEMS)
    human = doc + system + noise
    metrics = {"BERTScore-R": doc + rng.normal(scale=0.5, size=DOCS * SYSTEMS),
               "BLEU": system + rng.normal(scale=3.0, size=DOCS * SYSTEMS),
               "chrF": noise - system + rng.normal(scale=0.3, size=DOCS * SYSTEMS)}
    systems = np.tile([f"sys{s}" for s in range(SYSTEMS)], DOCS)
    documents = np.repeat([f"d{d}" for d in range(DOCS)], SYSTEMS)
    return metrics, human, systems, documents


@pytest.fixture(scope="module")
def data():
    return summeval_like()


@pytest.fixture(scope="module")
def report(data):
    metrics, human, systems, documents = data
    return agreement(metrics, human, systems, n_samples=300, seed=5, documents=documents)


def test_each_level_has_its_own_winner(report):
    assert winners(report) == {"segment": "BERTScore-R", "system": "BLEU", "summary": "chrF"}
    assert levels_disagree(report)
    assert report.n_documents == DOCS and report.n_systems == SYSTEMS and report.n_pairs == DOCS * SYSTEMS


def test_the_headline_names_each_level_its_winner_and_the_disagreement(report):
    lines = report.headline()
    assert lines[0].startswith(f"Segment level ({DOCS * SYSTEMS} outputs): BERTScore-R leads ")
    assert "on segment-level Pearson" in lines[0] and "paired bootstrap resampling the outputs" in lines[0]
    assert lines[1].startswith(f"System level ({SYSTEMS} systems): BLEU leads ")
    assert "resampling the outputs and re-averaging each system" in lines[1]
    assert lines[2].startswith(f"Summary level (mean over {DOCS} documents): chrF leads ")
    assert "paired bootstrap resampling the documents" in lines[2]
    assert lines[3] == ("The levels disagree: the best metric is BERTScore-R at segment level, BLEU at system level, "
                        "chrF at summary level.")
    for level, line in zip(("segment", "system", "summary"), lines):
        lead = report.leads[level]
        assert f"by {lead.difference:+.4f}" in line and f"p = {lead.p_value:.3f}" in line


def test_one_winner_everywhere_is_said_so():
    rng = np.random.default_rng(1)
    human = rng.normal(size=120)
    metrics = {"good": human + rng.normal(scale=0.1, size=120), "bad": rng.normal(size=120)}
    agr = agreement(metrics, human, np.tile(["a", "b", "c", "d"], 30), n_samples=50,
                    documents=np.repeat(np.arange(30), 4))
    assert winners(agr) == {"segment": "good", "system": "good", "summary": "good"}
    assert agr.headline()[-1] == "Every level names the same winner: good."


def test_the_summary_level_is_the_mean_of_per_document_scipy_correlations(data, report):
    metrics, human, _, documents = data
    for name, values in metrics.items():
        for stat, fn in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
            per_doc = [fn(values[documents == d], human[documents == d])[0] for d in dict.fromkeys(documents)]
            assert report.summary[name].values[stat] == pytest.approx(float(np.mean(per_doc)), abs=1e-12)
            assert report.summary[name].n == DOCS


def test_the_summary_interval_resamples_the_documents(data, report):
    metrics, human, _, documents = data
    order = list(dict.fromkeys(documents))
    per_doc = np.array([stats.pearsonr(metrics["chrF"][documents == d], human[documents == d])[0] for d in order])
    draws = np.random.default_rng(5).choice(DOCS, size=(300, DOCS), replace=True)
    means = [per_doc[row].mean() for row in draws]
    assert report.summary["chrF"].ci95["pearson"] == pytest.approx(tuple(np.percentile(means, [2.5, 97.5])))


def test_system_level_against_given_human_system_scores(data):
    metrics, human, systems, _ = data
    gold = {f"sys{s}": float(s) for s in range(SYSTEMS - 1)}  # the last system has none
    agr = agreement(metrics, human, systems, n_samples=100, seed=2, system_scores=gold)
    means = [metrics["BLEU"][systems == s].mean() for s in sorted(gold)]
    assert agr.n_gold_systems == SYSTEMS - 1
    assert agr.system_gold["BLEU"].values["pearson"] == pytest.approx(stats.pearsonr(means, sorted_gold(gold))[0])
    assert agr.system_gold["BLEU"].values["kendall"] == pytest.approx(stats.kendalltau(means, sorted_gold(gold))[0])
    assert "system_gold" in agr.levels() and "system level against the human system scores" in " ".join(
        agr.headline())


def sorted_gold(gold: dict) -> list[float]:
    return [gold[s] for s in sorted(gold)]


def test_documents_with_too_few_outputs_are_left_out_and_a_missing_level_is_explained():
    x = np.array([[1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 9.0]])
    h = np.array([1.0, 3.0, 2.0, 4.0, 5.0, 5.0, 1.0])
    docs = document_correlations(x, h, ["a", "a", "a", "a", "b", "b", "c"])
    assert docs.names == ("a",) and docs.sizes.tolist() == [4]  # b has 2 outputs, c one
    assert docs.values["pearson"][0, 0] == pytest.approx(0.8) and MIN_DOCUMENT_OUTPUTS == 3
    rng = np.random.default_rng(0)
    human = rng.normal(size=40)
    two_each = agreement({"m": human + rng.normal(size=40)}, human, n_samples=20, documents=np.repeat(range(20), 2))
    assert two_each.summary == {} and any("No summary level" in line for line in two_each.headline())
    singletons = agreement({"m": human}, human, n_samples=20, documents=range(40))
    assert singletons.summary == {} and singletons.notes == ()  # no documents named: nothing to explain
    two_systems = agreement({"m": human}, human, np.tile(["a", "b"], 20), n_samples=20)
    assert two_systems.system == {} and "needs at least 3" in two_systems.notes[0]


def test_a_document_whose_statistic_is_undefined_does_not_count():
    x = np.array([[1.0, 2.0, 3.0, 5.0, 5.0, 5.0]])  # document b: the metric is constant
    h = np.array([1.0, 2.0, 4.0, 1.0, 2.0, 3.0])
    docs = document_correlations(x, h, ["a"] * 3 + ["b"] * 3)
    assert math.isnan(docs.values["pearson"][0, 1])
    assert docs.means()["pearson"][0] == pytest.approx(stats.pearsonr([1, 2, 3], [1, 2, 4])[0])
    resampled = resampled_document_means(docs, 40, seed=1)["pearson"][0]
    draws = np.random.default_rng(1).choice(2, size=(40, 2))
    want = [docs.values["pearson"][0, 0] if (row == 0).any() else math.nan for row in draws]
    np.testing.assert_allclose(resampled, want)


def test_documents_are_named_within_their_group():
    assert document_keys(["1", "2"], ["cs-en", "de-en"]) == ["cs-en / 1", "de-en / 2"]
    assert document_keys([7, 8]) == ["7", "8"]
