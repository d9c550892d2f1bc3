"""The evaluate and torchmetrics drop-ins: how their users call them, what they return, what they refuse, and the
torchmetrics states gathered across two real processes (torch.distributed, gloo on 127.0.0.1).

The numbers against bert-score are in tests/parity/test_parity_dropins.py; here the drop-ins are held to this
engine's own ``Scorer.score`` on the same texts.
"""

from __future__ import annotations

import copy
import os
import pickle
import socket
import subprocess
import sys
from pathlib import Path

import evaluate
import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from bertscore_viz import BertScoreWarning, Scorer
from bertscore_viz.errors import InputError, ModelError
from bertscore_viz.integrations import MissingIntegrationError, evaluate_metric_path
from bertscore_viz.integrations.torchmetrics_metric import TEXT_STATES, BERTScore

DATA = Path(__file__).resolve().parents[2] / "data" / "wmt16-da-to-english"
ROOT = Path(__file__).resolve().parents[2]


def real(kind: str, lp: str = "de-en", start: int = 0, n: int = 8) -> list[str]:
    return (DATA / f"DAseg-newstest2016.{kind}.{lp}").read_text(encoding="utf-8").splitlines()[start:start + n]


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(evaluate_metric_path())


# --- evaluate ------------------------------------------------------------------------------------------------------
@pytest.mark.slow  # a Python subprocess importing torch
def test_the_path_is_the_shipped_script_and_the_module_prints_it():
    path = Path(evaluate_metric_path())
    assert path.name == "bertscore.py" and path.is_file()
    assert path.parent == ROOT / "bertscore_viz" / "integrations" / "evaluate_metric"
    out = subprocess.run([sys.executable, "-m", "bertscore_viz.integrations.evaluate_metric"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == str(path)


def test_evaluate_loads_offline_and_returns_the_hub_keys(metric):
    assert metric.name == "bert_score"  # evaluate's name for the hub's BERTScore class too
    cands, refs = real("mt-system"), real("reference")
    out = metric.compute(predictions=cands, references=refs, lang="en")
    assert list(out) == ["precision", "recall", "f1", "hashcode"]
    assert all(isinstance(x, float) for k in ("precision", "recall", "f1") for x in out[k])
    ours = Scorer().score(cands, refs)
    np.testing.assert_array_equal(out["f1"], ours.f1)
    np.testing.assert_array_equal(out["precision"], ours.precision)
    assert out["hashcode"] == str(ours.signature) == "all-MiniLM-L6-v2_L4_no-idf_version=bertscore-viz-" \
                                                     f"{ours.signature.version}(hug_trans={ours.signature.transformers_version})"


def test_evaluate_add_batch_several_references_and_options(metric):
    cands, refs, other = real("mt-system"), real("reference"), real("reference", start=50)
    metric.add_batch(predictions=cands[:5], references=[[r, o] for r, o in zip(refs[:5], other[:5])])
    metric.add_batch(predictions=cands[5:], references=[[r, o] for r, o in zip(refs[5:], other[5:])])
    out = metric.compute(model_type="all-MiniLM-L6-v2", num_layers=6, idf=True, batch_size=3)
    ours = Scorer(layer=6, idf=True).score(cands, [[r, o] for r, o in zip(refs, other)])
    np.testing.assert_array_equal(out["recall"], ours.recall)
    assert out["hashcode"].startswith("all-MiniLM-L6-v2_L6_idf_")


def test_evaluate_rescaled(metric):
    cands, refs = real("mt-system"), real("reference")
    rescaled = metric.compute(predictions=cands, references=refs, lang="en", rescale_with_baseline=True)
    np.testing.assert_array_equal(rescaled["f1"], Scorer(rescale_with_baseline=True).score(cands, refs).f1)
    assert rescaled["hashcode"].endswith("-rescaled")


@pytest.mark.parametrize("kwargs, message", [
    ({}, "Either 'lang'"),
    ({"lang": "en", "all_layers": True}, "all_layers=True"),
    ({"lang": "en", "idf": {101: 1.0}}, "precomputed dict"),
    ({"model_type": "all-MiniLM-L6-v2", "rescale_with_baseline": True}, "needs the language"),
    ({"lang": "en", "num_layers": 99}, "Layer 99 does not exist"),
])
def test_evaluate_refuses_with_a_message(metric, kwargs, message):
    with pytest.raises(ValueError, match=message):  # the engine's errors are ValueErrors, as the hub's
        metric.compute(predictions=["a cat"], references=["the cat"], **kwargs)


@pytest.mark.parametrize("predictions, references, message", [
    ("abc", ["abd"], "predictions is a single string 'abc'"),  # evaluate and bert-score both iterated characters
    ("abc", "abd", "predictions is a single string"),
    (["abc"], "abd", "references is a single string"),
    (["a cat"], [None], "Reference 0 is NoneType None"),  # was a TypeError
    (["a cat"], [5], "Reference 0 is int 5"),
    (["a cat"], [{"x": 1}], "Reference 0 is dict"),  # was scored as the reference 'x'
    (["a cat"], [["the cat", None]], "index 1 is NoneType"),
    (["a\ud800cat"], ["the cat"], "lone surrogate"),
])
def test_evaluate_refuses_texts_it_would_misread(metric, predictions, references, message):
    """Issue 46: a single string was scored one character at a time, None and numbers raised TypeError, a dict was
    read as its keys. Each is the package's InputError (a ValueError, as the rest of the drop-in) before any
    scoring, through compute, add_batch and add."""
    with pytest.raises(InputError, match=message):
        metric.compute(predictions=predictions, references=references, lang="en")
    with pytest.raises(InputError, match=message):
        metric.add_batch(predictions=predictions, references=references)
    with pytest.raises(InputError, match="Reference 0 is NoneType"):
        metric.add(prediction="a cat", reference=None)
    assert metric.compute(predictions=["a cat"], references=[["the cat"]], lang="en")["f1"][0] > 0.5


def test_a_dict_is_not_a_list_of_texts_anywhere():
    """The class behind the drop-in's dict: the engine read a mapping as its keys for candidates and references."""
    for cands, refs in ((["a cat"], {"the cat": 1}), ({"a cat": 1}, ["the cat"]), (["a cat"], [{"the cat": 1}])):
        with pytest.raises(InputError, match="dict"):
            Scorer().score(cands, refs)


# --- torchmetrics ----------------------------------------------------------------------------------------------------
def test_torchmetrics_update_compute_forward_reset():
    cands, refs = real("mt-system"), real("reference")
    m = BERTScore(return_hash=True)
    m.update(cands[:3], refs[:3])
    m.update(cands[3], refs[3])  # one string each
    batch = m(cands[4:], refs[4:])  # forward: the batch's scores, and kept
    out = m.compute()
    assert list(out) == ["precision", "recall", "f1", "hash"]
    ours = Scorer().score(cands, refs)
    assert out["f1"].dtype == torch.float32 and out["f1"].shape == (8,)
    np.testing.assert_allclose(out["f1"].numpy(), ours.f1, atol=1e-7, rtol=0)
    np.testing.assert_allclose(batch["recall"].numpy(), ours.recall[4:], atol=1e-7, rtol=0)
    assert out["hash"] == str(ours.signature)
    exact = BERTScore().set_dtype(torch.float64)  # the text states keep their dtype; the scores take the metric's
    exact.update(cands, refs)
    assert exact.preds_bytes[0].dtype == torch.uint8 and exact.preds_lengths[0].dtype == torch.int64
    np.testing.assert_array_equal(exact.compute()["precision"].numpy(), ours.precision)
    half = BERTScore().set_dtype(torch.half)
    long_text = " ".join(cands * 40)  # more than 2048 bytes: a float16 length would be inexact
    half.update([long_text], [refs[0]])
    with pytest.warns(BertScoreWarning, match="truncated"):
        assert half.compute()["f1"].dtype == torch.half
    assert half.preds_lengths[0].item() == len(long_text.encode("utf-8"))
    assert copy.deepcopy(m).compute()["f1"].shape == (8,)
    assert pickle.loads(pickle.dumps(m)).compute()["f1"].shape == (8,)
    m.reset()
    assert all(getattr(m, name) == [] for name in TEXT_STATES)


def test_torchmetrics_several_references_and_settings():
    cands, refs, other = real("mt-system"), real("reference"), real("reference", start=50)
    groups = [[r, o] if i % 2 else [r] for i, (r, o) in enumerate(zip(refs, other))]
    m = BERTScore(model_name_or_path="all-MiniLM-L6-v2", num_layers=6, idf=True, batch_size=2, device="cpu",
                  lang="en", rescale_with_baseline=True, num_threads=4, truncation=True)
    m.update(cands[:5], groups[:5])
    m.update(cands[5:], groups[5:])
    ours = Scorer(layer=6, idf=True, rescale_with_baseline=True).score(cands, groups)
    np.testing.assert_allclose(m.compute()["f1"].numpy(), ours.f1, atol=1e-7, rtol=0)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"model": torch.nn.Linear(2, 2)}, InputError, "model is not accepted"),
    ({"user_tokenizer": object()}, InputError, "user_tokenizer is not accepted"),
    ({"user_forward_fn": len}, InputError, "user_forward_fn is not accepted"),
    ({"baseline_url": "https://example.org/b.tsv"}, InputError, "pass baseline_path"),
    ({"all_layers": True}, InputError, "all_layers=True"),
    ({"max_length": 128}, ModelError, "max_length=128 differs from the maximum"),
    ({"num_layers": 99}, ModelError, "Layer 99 does not exist"),
    ({"lang": "xx", "rescale_with_baseline": True}, Exception, "xx"),
    ({"device": "cuda:7"} if not torch.cuda.is_available() else {"device": "tpu0"}, ModelError, "evice"),
])
def test_torchmetrics_refuses_with_a_message(kwargs, error, message):
    with pytest.raises(error, match=message):
        BERTScore(**kwargs)


def test_both_use_the_engines_shared_model_and_device(metric):
    metric.compute(predictions=["a cat"], references=["the cat"], lang="en", device="cpu")
    shared = Scorer(device="cpu").encoder  # the process-wide encoder of the model and device
    assert next(iter(metric._scorers.values())).encoder is shared
    m = BERTScore(device=torch.device("cpu"))
    assert m.scorer.encoder is shared and m.scorer.encoder.device == "cpu"


def test_torchmetrics_accepts_the_models_own_max_length_and_checks_updates():
    m = BERTScore(max_length=Scorer().encoder.max_length)
    with pytest.raises(InputError, match="2 predictions and 1 targets"):
        m.update(["a", "b"], ["c"])
    with pytest.raises(InputError, match="at least one reference"):
        m.update(["a"], [[]])
    with pytest.raises(InputError, match="check the prediction"):
        m.update([3], ["c"])
    with pytest.raises(InputError, match="as a string or a list"):
        m.update(None, ["c"])
    # issue 46: a lone surrogate raised a raw UnicodeEncodeError from the byte states
    with pytest.raises(InputError, match=r"prediction at index 1 .* lone surrogate '\\udc80' at position 1"):
        m.update(["a", "b\udc80"], ["c", "d"])
    with pytest.raises(InputError, match="lone surrogate"):
        m.update(["a"], [["c", "\ud800"]])
    assert all(getattr(m, name) == [] for name in TEXT_STATES)  # nothing half-kept


@pytest.mark.slow  # a Python subprocess importing torch
def test_a_missing_framework_is_named_with_its_pip_command():
    code = ("import sys; sys.modules['torchmetrics'] = None\n"
            "try:\n    import bertscore_viz.integrations.torchmetrics_metric\n"
            "except ImportError as e:\n    print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.startswith(MissingIntegrationError.__name__)
    assert "pip install torchmetrics" in out.stdout


# --- two processes --------------------------------------------------------------------------------------------------
SHARDS = {
    "uneven": [[("mt-system", 0, 3), ("mt-system", 3, 2)], [("mt-system", 5, 4)]],
    "rank 1 has no data": [[("mt-system", 0, 5)], []],
}


def shard_data(updates):
    """(preds, targets) of each update: real outputs, with two references for every third prediction."""
    out = []
    for kind, start, n in updates:
        cands, refs, other = real(kind, start=start, n=n), real("reference", start=start, n=n), \
            real("reference", start=start + 40, n=n)
        out.append((cands, [[r, o] if (start + i) % 3 == 0 else r for i, (r, o) in enumerate(zip(refs, other))]))
    return out


def _worker(rank: int, port: int, case: str, out_dir: str) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        m = BERTScore(idf=True)
        for preds, target in shard_data(SHARDS[case][rank]):
            m.update(preds, target)
        torch.save(m.compute(), os.path.join(out_dir, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@pytest.mark.parametrize("case", list(SHARDS))
def test_states_gather_across_two_processes_as_one_process_on_all_data(case, tmp_path):
    mp.spawn(_worker, args=(_free_port(), case, str(tmp_path)), nprocs=2, join=True)
    gathered = [torch.load(tmp_path / f"rank{r}.pt") for r in (0, 1)]
    single = BERTScore(idf=True)  # every update of rank 0, then of rank 1: the order the gather concatenates
    for rank in (0, 1):
        for preds, target in shard_data(SHARDS[case][rank]):
            single.update(preds, target)
    expected = single.compute()
    n = sum(n for updates in SHARDS[case] for _, _, n in updates)
    for got in gathered:
        assert got["f1"].shape == (n,)
        for key in ("precision", "recall", "f1"):
            torch.testing.assert_close(got[key], expected[key], atol=1e-7, rtol=0)
    # idf came from all the gathered references: one process's own references give other numbers
    if case == "uneven":
        alone = BERTScore(idf=True)
        for preds, target in shard_data(SHARDS[case][1]):
            alone.update(preds, target)
        assert not torch.allclose(alone.compute()["f1"], expected["f1"][-4:], atol=1e-4)
