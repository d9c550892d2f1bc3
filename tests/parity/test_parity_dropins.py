"""The evaluate and torchmetrics drop-ins give bert-score 0.3.13's numbers to 1e-5 on the bundled model, called as
their users call them: ``evaluate.load(path).compute(...)`` (and ``add_batch``), torchmetrics' ``update``/
``compute`` (and ``forward``). Real WMT16 pairs and the edge cases of the parity set; default settings, idf,
rescaling (a custom baseline file and the shipped one), several references, another layer.

torchmetrics' own BERTScore, on the same model and layer, is shown to differ: it drops the special tokens from the
greedy matching (the reason the drop-in exists).
"""

from __future__ import annotations

import warnings

import evaluate
import numpy as np
import pytest
import torch
from torchmetrics.text.bert import BERTScore as TorchmetricsOwnBERTScore

from bertscore_viz import Scorer
from bertscore_viz.integrations import evaluate_metric_path
from bertscore_viz.integrations.torchmetrics_metric import BERTScore
from bertscore_viz.locations import BASELINE_DIR

from .conftest import ATOL, MODEL, multi_reference_set, no_negative_best, parity_set

LAYER = 4  # the bundled model's default layer: what the drop-ins use without num_layers
SHIPPED_BASELINE = str(BASELINE_DIR / "en" / "all-MiniLM-L6-v2.tsv")


@pytest.fixture(scope="module")
def single():
    return parity_set()


@pytest.fixture(scope="module")
def multi():
    """Several references per candidate, without candidates whose best real similarity is negative (where
    bert-score's padding makes its own numbers depend on the batch; see test_parity_differences.py)."""
    cands, groups = multi_reference_set()
    stats = Scorer(layer=6).match(cands, groups, layers=[LAYER, 6])
    keep = sorted(set(no_negative_best(stats, LAYER)) & set(no_negative_best(stats, 6)))
    assert len(keep) >= 15
    return [cands[i] for i in keep], [groups[i] for i in keep]


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(evaluate_metric_path())


def assert_parity(p, r, f, theirs):
    for ours, ref in zip((p, r, f), theirs):
        np.testing.assert_allclose(np.asarray(ours, dtype=np.float64), ref, atol=ATOL, rtol=0, equal_nan=True)


def evaluate_parity(metric, cands, refs, theirs, **kwargs):
    out = metric.compute(predictions=cands, references=refs, **kwargs)
    assert_parity(out["precision"], out["recall"], out["f1"], theirs)


def torchmetrics_parity(cands, refs, theirs, batches=3, **kwargs):
    m = BERTScore(**kwargs)
    step = -(-len(cands) // batches)
    for start in range(0, len(cands), step):
        m.update(cands[start:start + step], refs[start:start + step])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the edge cases' warnings: the numbers are what is tested here
        out = m.compute()
    assert_parity(out["precision"].numpy(), out["recall"].numpy(), out["f1"].numpy(), theirs)


def test_evaluate_default_settings(metric, reference_score, single):
    cands, refs = single
    evaluate_parity(metric, cands, refs, reference_score(cands, refs, LAYER), lang="en")


def test_evaluate_add_batch_idf_and_another_layer(metric, reference_score, single):
    cands, refs = single
    half = len(cands) // 2
    metric.add_batch(predictions=cands[:half], references=refs[:half])
    metric.add_batch(predictions=cands[half:], references=refs[half:])
    out = metric.compute(model_type=MODEL, num_layers=6, idf=True)
    assert_parity(out["precision"], out["recall"], out["f1"], reference_score(cands, refs, 6, idf=True))


def test_evaluate_rescaled_custom_and_shipped_baseline(metric, reference_score, single, baseline_path):
    cands, refs = single
    evaluate_parity(metric, cands, refs, reference_score(cands, refs, LAYER, baseline_path=baseline_path),
                    lang="en", rescale_with_baseline=True, baseline_path=baseline_path)
    evaluate_parity(metric, cands, refs, reference_score(cands, refs, LAYER, baseline_path=SHIPPED_BASELINE),
                    lang="en", rescale_with_baseline=True)


@pytest.mark.parametrize("idf", [False, True])
def test_evaluate_several_references(metric, reference_score, multi, idf):
    cands, groups = multi
    evaluate_parity(metric, cands, groups, reference_score(cands, groups, LAYER, idf=idf), lang="en", idf=idf)


def test_torchmetrics_default_settings(reference_score, single):
    cands, refs = single
    torchmetrics_parity(cands, refs, reference_score(cands, refs, LAYER))


def test_torchmetrics_idf_rescaled_and_another_layer(reference_score, single, baseline_path):
    cands, refs = single
    torchmetrics_parity(cands, refs, reference_score(cands, refs, 6, idf=True, baseline_path=baseline_path),
                        model_name_or_path=MODEL, num_layers=6, idf=True, rescale_with_baseline=True,
                        baseline_path=baseline_path)
    torchmetrics_parity(cands, refs, reference_score(cands, refs, LAYER, baseline_path=SHIPPED_BASELINE),
                        lang="en", rescale_with_baseline=True, batches=1)


@pytest.mark.parametrize("idf", [False, True])
def test_torchmetrics_several_references(reference_score, multi, idf):
    cands, groups = multi
    torchmetrics_parity(cands, groups, reference_score(cands, groups, LAYER, idf=idf), idf=idf)


def test_torchmetrics_own_bertscore_differs_from_bert_score(reference_score, single):
    """Why the drop-in: torchmetrics' BERTScore on the same model and layer leaves [CLS]/[SEP] out of the
    matching, so its numbers are not bert-score's (ours are, by the tests above)."""
    cands, refs = single
    cands, refs = cands[:24], refs[:24]
    theirs = reference_score(cands, refs, LAYER)
    own = TorchmetricsOwnBERTScore(model_name_or_path=MODEL, num_layers=LAYER, max_length=256)
    own.update(cands, refs)
    out = own.compute()
    gap = np.abs(out["f1"].to(torch.float64).numpy() - theirs[2])
    assert gap.max() > 1e-3, "torchmetrics' own BERTScore now matches bert-score: revisit docs/INTEGRATIONS.md"
