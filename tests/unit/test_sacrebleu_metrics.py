"""chrF, BLEU and TER beside BERTScore: every number against sacrebleu called directly.

Scores: ``sacrebleu.corpus_chrf`` / ``corpus_bleu`` / ``corpus_ter`` and ``sentence_chrf`` / ``sentence_bleu`` /
``sentence_ter`` with their defaults, on real WMT16 lines and the shipped example, with one reference, several, a
variable number (``None`` in a stream) and empty ones. Significance: sacrebleu's own ``PairedTest(test_type="bs")``
(its public class behind ``sacrebleu --paired-bs``), for every pair of systems taken as (baseline, system).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.significance import PairedTest

from bertscore_viz.evaluation import sacrebleu_metrics as sm
from bertscore_viz.evaluation import significance as sig
from bertscore_viz.files import upload
from bertscore_viz.locations import EXAMPLES_DIR
from bertscore_viz.stats import resampling

DATA = Path(__file__).resolve().parents[2] / "data" / "wmt16-da-to-english"
CORPUS = {"chrF": sacrebleu.corpus_chrf, "BLEU": sacrebleu.corpus_bleu, "TER": sacrebleu.corpus_ter}
SENTENCE = {"chrF": sacrebleu.sentence_chrf, "BLEU": sacrebleu.sentence_bleu, "TER": sacrebleu.sentence_ter}
CLASS = {"chrF": CHRF, "BLEU": BLEU, "TER": TER}


def real(kind: str, lp: str, start: int, n: int) -> list[str]:
    return (DATA / f"DAseg-newstest2016.{kind}.{lp}").read_text(encoding="utf-8").splitlines()[start:start + n]


@pytest.fixture(scope="module")
def wmt():
    """40 segments of WMT16 ro-en (lines 300-339: not used by other tests), three systems: the MT output, the
    output of other segments' MT shifted by one (a weak system) and a second reference (a strong one)."""
    refs = real("reference", "ro-en", 300, 40)
    mt = real("mt-system", "ro-en", 300, 40)
    shifted = mt[1:] + mt[:1]
    strong = real("reference", "ro-en", 300, 40)
    strong = [s.replace(" the ", " a ", 1) for s in strong]
    return {"mt": mt, "shifted": shifted, "near_ref": strong}, [[r] for r in refs]


@pytest.fixture(scope="module")
def scored(wmt):
    systems, refs = wmt
    return sm.surface_scores(systems, refs)


@pytest.mark.parametrize("metric", sm.METRICS)
def test_corpus_and_sentence_scores_are_sacrebleus(scored, wmt, metric):
    systems, refs = wmt
    stream = [r[0] for r in refs]
    for name, hyps in systems.items():
        assert scored.metrics[metric].corpus[name] == CORPUS[metric](hyps, [stream]).score
        expected = [SENTENCE[metric](h, [r]).score for h, r in zip(hyps, stream)]
        assert scored.metrics[metric].sentence[name].tolist() == expected


def test_several_and_a_variable_number_of_references_and_empty_ones():
    """Two reference columns where some segments have one reference only (``None`` in the second stream), and a
    segment whose reference is empty (scored 0 by chrF and BLEU, 100 by TER; sacrebleu's corpus chrF adds nothing
    for it)."""
    refs_a = real("reference", "cs-en", 40, 12)
    refs_b = real("mt-system", "cs-en", 60, 12)
    hyps = real("mt-system", "cs-en", 40, 12)
    references = [[a, b] if i % 3 else [a] for i, (a, b) in enumerate(zip(refs_a, refs_b))]
    references[5] = [""]
    streams = sm.reference_streams(references)
    assert streams[1][0] is None and streams[1][1] == refs_b[1] and streams[0][5] == ""
    scored = sm.surface_scores({"s": hyps}, references)
    for metric in sm.METRICS:
        ms = scored.metrics[metric]
        assert ms.corpus["s"] == CORPUS[metric](hyps, streams).score
        assert ms.sentence["s"].tolist() == [SENTENCE[metric](h, refs).score for h, refs in zip(hyps, references)]
        assert "nrefs:var" in ms.corpus_signature and ms.num_refs == -1
    assert scored.metrics["chrF"].sentence["s"][5] == 0.0 and scored.metrics["TER"].sentence["s"][5] == 100.0


@pytest.mark.parametrize("metric", sm.METRICS)
def test_signatures_are_sacrebleus(scored, wmt, metric):
    systems, refs = wmt
    corpus = CLASS[metric]()
    score = corpus.corpus_score(systems["mt"], [[r[0] for r in refs]])
    ms = scored.metrics[metric]
    assert ms.corpus_signature == f"{score.name}|{corpus.get_signature().format()}"
    sentence = BLEU(effective_order=True) if metric == "BLEU" else CLASS[metric]()
    sentence.sentence_score(systems["mt"][0], [refs[0][0]])
    assert ms.sentence_signature == f"{score.name}|{sentence.get_signature().format()}"
    assert ("eff:yes" in ms.sentence_signature) == (metric != "TER")  # BLEU's sentence level: effective order
    assert ms.score_name == score.name


@pytest.fixture(scope="module")
def resampled(scored):
    return {m: sm.resampled_scores(scored.metrics[m]) for m in sm.METRICS}


@pytest.mark.parametrize("metric", sm.METRICS)
@pytest.mark.parametrize("baseline", ["mt", "shifted", "near_ref"])
def test_every_pair_is_sacrebleus_paired_bootstrap(scored, resampled, wmt, metric, baseline):
    """For each baseline, sacrebleu's PairedTest gives the p of every other system against it, and the mean and
    half-width of each system's bootstrap interval: ours read the same resamples."""
    systems, refs = wmt
    order = [baseline] + [s for s in systems if s != baseline]
    test = PairedTest([(s, systems[s]) for s in order], {metric: CLASS[metric]()}, [[r[0] for r in refs]],
                      test_type="bs", n_samples=1000)
    signatures, results = test()
    (key,) = [k for k in results if k != "System"]
    ours = sm.metric_significance(scored, metric, resampled[metric], baseline=baseline)
    assert ours.baseline == baseline and ours.n_samples == 1000 and ours.seed == 12345
    for name, theirs in zip(results["System"], results[key]):
        assert ours.interval(name).mean == theirs.score
        low, high = ours.interval(name).low, ours.interval(name).high
        assert 0.5 * (high - low) == pytest.approx(theirs.ci, abs=1e-4)
        assert float(np.mean(resampled[metric][name])) == pytest.approx(theirs.mean, abs=1e-4)
        if name != baseline:
            paired = next(r for r in ours.versus_baseline if r.system == name)
            assert paired.p == theirs.p_value
    assert scored.metrics[metric].bootstrap_signature() == f"{scored.metrics[metric].score_name}|" \
                                                           f"{signatures[key].format()}"


def test_ter_is_ranked_lowest_first_and_its_sentences_name_the_lower_as_better(scored, resampled):
    result = sm.metric_significance(scored, "TER", resampled["TER"])
    ter = scored.metrics["TER"].corpus
    assert list(result.systems) == sorted(ter, key=ter.get) and result.systems[0] == "near_ref"
    assert result.higher_is_better is False and scored.metrics["TER"].ranks()["near_ref"] == 1
    worst = result.systems[-1]
    paired = next(r for r in result.versus_baseline if r.system == worst)
    assert paired.p < 0.05 and paired.sentence("TER").startswith(f"near_ref is better than {worst} on TER: "
                                                                  f"near_ref − {worst} = -")
    assert paired.p_one_sided > 0.5  # the baseline is better: "the system is better" is not supported
    assert [c.systems[0] for c in result.clusters][0] == "near_ref"


def test_identical_outputs_give_p_one_and_holm_adjusts_over_the_pairs(wmt):
    systems, refs = wmt
    scored = sm.surface_scores({"a": systems["mt"], "b": list(systems["mt"]), "c": systems["shifted"]}, refs,
                               metrics=("chrF",))
    assert scored.identical == frozenset({frozenset(("a", "b"))})
    samples = sm.resampled_scores(scored.metrics["chrF"], 2000)
    plain = sm.metric_significance(scored, "chrF", samples)
    assert plain.pair("a", "b") == 1.0
    holm = sm.metric_significance(scored, "chrF", samples, correction="holm")
    iu = np.triu_indices(3, 1)
    np.testing.assert_allclose(holm.matrix[iu], sig.holm(plain.matrix[iu]))
    assert holm.family == 3 and "Holm-adjusted over 3 comparisons" in holm.p_text("a", "c")


def test_a_metric_over_its_bound_is_left_out_with_the_reason(wmt):
    systems, refs = wmt
    scored = sm.surface_scores(systems, refs, max_outputs={"chrF": 10**6, "BLEU": 10**6, "TER": 100})
    assert list(scored.metrics) == ["chrF", "BLEU"]
    why = scored.skipped["TER"]
    assert "3 systems x 40 segments = 120 outputs" in why and "100" in why and "-m ter" in why
    with pytest.raises(ValueError, match="one output per segment"):
        sm.surface_scores({"a": ["x"]}, [["y"], ["z"]])
    with pytest.raises(ValueError, match="Unknown metric"):
        sm.surface_scores({"a": ["x"]}, [["y"]], metrics=("METEOR",))


def test_resamples_in_blocks_are_the_same_resamples(scored, resampled, monkeypatch):
    monkeypatch.setattr(resampling, "_BLOCK_CELLS", 130)  # three resamples of 40 segments per block
    blocks = sm.resampled_scores(scored.metrics["BLEU"])
    for name in blocks:
        assert np.array_equal(blocks[name], resampled["BLEU"][name])


def test_the_example_progress_counts_every_output_once_per_metric():
    ds = upload.parse_upload((EXAMPLES_DIR / "systems_example.csv").read_bytes(), "systems_example.csv")
    calls = []
    scored = sm.surface_scores(ds.systems, ds.references, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (3 * 4 * 30, 3 * 4 * 30) and all(t == 360 for _, t in calls)
    table = scored.corpus_table()
    assert set(table) == set(ds.systems) and set(table["literal"]) == set(sm.METRICS)
