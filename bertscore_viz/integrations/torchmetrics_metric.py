"""BERTScore as a torchmetrics ``Metric``, computed by this package's engine: bert-score 0.3.13's numbers.

    from bertscore_viz.integrations.torchmetrics_metric import BERTScore  # instead of torchmetrics.text.bert

    metric = BERTScore()
    metric.update(["hello there"], ["hello there"])
    metric.compute()  # {"precision": tensor([...]), "recall": ..., "f1": ...}

torchmetrics' own BERTScore drops the special tokens ([CLS], [SEP]) from the greedy matching and so differs from
bert-score; this one keeps them, as bert-score does (docs/SEMANTICS.md).

**States.** The texts themselves are stored, as UTF-8 bytes with their lengths (and the number of references of each
prediction), in list states reduced with ``"cat"``: gathering across processes (DDP) concatenates every process's
texts in rank order, and :meth:`compute` scores them all at once, so idf and multi-reference grouping see the whole
data, exactly as one process given everything in that order. A process that saw no data contributes nothing.

**Constructor.** torchmetrics' names where they apply: ``model_name_or_path`` (default the bundled
all-MiniLM-L6-v2, which runs offline; torchmetrics' default roberta-large is used when named), ``num_layers``,
``idf``, ``device`` (where the model runs), ``batch_size``, ``lang``, ``rescale_with_baseline``, ``baseline_path``,
``return_hash`` (adds ``"hash"``: the signature), ``verbose`` (a progress bar), ``max_length`` (None, or the model's
own maximum: texts are cut there, as bert-score does), ``truncation`` and ``num_threads`` (accepted; long texts are
always cut at the model's maximum with a warning, or scored whole with ``long_texts="window"``). Refused with a
message: ``all_layers=True``, ``model``, ``user_tokenizer``, ``user_forward_fn`` (give a model directory as
``model_name_or_path``), ``baseline_url`` (download the file and pass ``baseline_path``), another ``max_length``.
Ours: ``long_texts``, ``precision``. Other keyword arguments go to ``torchmetrics.Metric``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from bertscore_viz.engine.arguments import check_texts
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import InputError, ModelError, shorten
from bertscore_viz.integrations import missing_package
from bertscore_viz.models.spec import default_model_name
from bertscore_viz.progress import progress_bar

try:  # optional dependency: only this module needs torchmetrics
    from torchmetrics import Metric
    from torchmetrics.utilities.data import dim_zero_cat
except ImportError as _exc:
    raise missing_package("bertscore_viz.integrations.torchmetrics_metric", "torchmetrics", _exc) from _exc

__all__ = ["BERTScore", "TEXT_STATES"]

#: The list states (reduced with "cat"): the texts as UTF-8 bytes and lengths, and references per prediction.
TEXT_STATES = ("preds_bytes", "preds_lengths", "target_bytes", "target_lengths", "target_counts")
_STATE_DTYPES = {"preds_bytes": torch.uint8, "target_bytes": torch.uint8}
_REFUSED = {
    "model": "a user's own model is not taken: give the directory of a Hugging Face model as model_name_or_path",
    "user_tokenizer": "the tokenizer is the model's own: give the model's directory as model_name_or_path",
    "user_forward_fn": "the forward pass is the engine's: give the model's directory as model_name_or_path",
    "baseline_url": "nothing is downloaded here: save the baseline file and pass baseline_path=FILE",
}


def _encode(texts: Sequence[str], device) -> tuple[torch.Tensor, torch.Tensor]:
    """``(all texts' UTF-8 bytes, (n,) byte length of each)`` as uint8 and int64 tensors on ``device``."""
    raw = [t.encode("utf-8") for t in texts]
    data = np.frombuffer(b"".join(raw), dtype=np.uint8).copy()
    return (torch.from_numpy(data).to(device),
            torch.tensor([len(r) for r in raw], dtype=torch.int64, device=device))


def _decode(data: torch.Tensor, lengths: torch.Tensor) -> list[str]:
    blob = bytes(data.to("cpu", torch.uint8).numpy().tobytes())
    ends = np.cumsum(lengths.to("cpu", torch.int64).numpy())
    return [blob[a:b].decode("utf-8") for a, b in zip(np.r_[0, ends[:-1]].astype(int), ends.astype(int))]


def _texts(values, what: str) -> list:
    """A list from a string (one text) or a sequence of texts."""
    if isinstance(values, str):
        return [values]
    if isinstance(values, (bytes, bytearray)) or not isinstance(values, Sequence):
        raise InputError(f"Expected {what} as a string or a list of strings, got {type(values).__name__} "
                         f"{shorten(values)}.")
    return list(values)


class BERTScore(Metric):
    """BERTScore with torchmetrics' interface and bert-score's numbers (see the module docstring for the arguments).

    ``compute()`` returns ``{"precision", "recall", "f1"}``: ``(n,)`` tensors of the metric's dtype on its device,
    one value per prediction updated so far (gathered across processes), and ``"hash"`` with ``return_hash``.

    Raises:
        InputError, ModelError, BaselineError: refused or invalid arguments, at construction.
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def __init__(self, model_name_or_path: str | None = None, num_layers: int | None = None, all_layers: bool = False,
                 model: Any = None, user_tokenizer: Any = None, user_forward_fn: Any = None, verbose: bool = False,
                 idf: bool = False, device: str | torch.device | None = None, max_length: int | None = None,
                 batch_size: int = 64, num_threads: int = 0, return_hash: bool = False, lang: str = "en",
                 rescale_with_baseline: bool = False, baseline_path: str | None = None,
                 baseline_url: str | None = None, truncation: bool = False, *, long_texts: str = "truncate",
                 precision: str = "fp32", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        given = {"model": model, "user_tokenizer": user_tokenizer, "user_forward_fn": user_forward_fn,
                 "baseline_url": baseline_url}
        for name, value in given.items():
            if value is not None:
                raise InputError(f"{name} is not accepted by bertscore-viz's BERTScore: {_REFUSED[name]}.")
        if all_layers:
            raise InputError("all_layers=True is not offered: score one layer (num_layers=N), or use "
                             "bertscore_viz.Scorer().match(cands, refs, layers='all') for every layer at once.")
        self.model_name_or_path = model_name_or_path or default_model_name(lang)
        self.embedding_device = None if device is None else str(device)
        self.verbose, self.return_hash = verbose, return_hash
        self.num_threads, self.truncation = num_threads, truncation  # accepted for torchmetrics' callers; no effect
        self._options = ScoringOptions(model=self.model_name_or_path, layer=num_layers, idf=idf,
                                       rescale_with_baseline=rescale_with_baseline, lang=lang,
                                       baseline_path=baseline_path, batch_size=batch_size,
                                       device=self.embedding_device, long_texts=long_texts, precision=precision)
        self._scorer = self._options.scorer()  # checks every option now, before any data
        encoder = self._scorer.encoder  # loads the model (once per process) and checks the layer against it
        if max_length is not None and max_length != encoder.max_length:
            raise ModelError(f"max_length={max_length} differs from the maximum of {self._scorer.spec.name} "
                             f"({encoder.max_length} tokens), where bert-score cuts texts. Leave "
                             "max_length unset; use long_texts='window' to score longer texts whole.")
        self.max_length = max_length
        for name in TEXT_STATES:
            self.add_state(name, default=[], dist_reduce_fx="cat")

    @property
    def scorer(self) -> Scorer:
        """The engine's scorer of these settings (made again after unpickling; the model is cached per process)."""
        if getattr(self, "_scorer", None) is None:
            self._scorer = self._options.scorer()
        return self._scorer

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state["_scorer"] = None  # the encoder holds the model and locks: made again where needed
        return state

    def _apply(self, fn, exclude_state=()):
        """Move the states as torchmetrics does, except that the text states keep their integer dtype (a
        ``set_dtype(torch.half)`` would make byte lengths above 2048 inexact): they follow the device only."""
        this = super()._apply(fn, exclude_state=tuple(exclude_state) + TEXT_STATES)
        for key in TEXT_STATES:
            value = getattr(this, key)
            moved = value.to(this.device) if isinstance(value, torch.Tensor) else [v.to(this.device) for v in value]
            setattr(this, key, moved)
        return this

    def update(self, preds: str | Sequence[str], target: str | Sequence[str] | Sequence[Sequence[str]]) -> None:
        """Keep predictions and their reference(s) (a string, or a list of strings per prediction).

        Raises:
            InputError: non-string texts, unequal numbers of predictions and targets, a prediction without
                references, a text holding a lone surrogate (named by index and position).
        """
        preds, target = _texts(preds, "preds"), _texts(target, "target")
        if len(preds) != len(target):
            raise InputError(f"Expected as many targets as predictions, got {len(preds)} predictions and "
                             f"{len(target)} targets.")
        groups = [[t] if isinstance(t, str) else _texts(t, f"the references of prediction {i}")
                  for i, t in enumerate(target)]
        flat = [r for g in groups for r in g]
        bad = next((i for i, x in enumerate(list(preds) + flat) if not isinstance(x, str)), None)
        if bad is not None or any(not g for g in groups):
            raise InputError("Every prediction must be a string with at least one reference string; check the "
                             f"{'prediction' if bad is not None and bad < len(preds) else 'targets'} given.")
        check_texts(preds, "prediction")  # a lone surrogate: named by index, not a UnicodeEncodeError from _encode
        check_texts(flat, "reference (all targets in order)")
        for prefix, texts in (("preds", preds), ("target", flat)):
            data, lengths = _encode(texts, self.device)
            getattr(self, f"{prefix}_bytes").append(data)
            getattr(self, f"{prefix}_lengths").append(lengths)
        self.target_counts.append(torch.tensor([len(g) for g in groups], dtype=torch.int64, device=self.device))

    def _sync_dist(self, dist_sync_fn=None, process_group=None) -> None:
        """Gather the states of every process (torchmetrics' ``cat``), empty ones with their own dtype."""
        # A process without data has empty lists, which torchmetrics would send as float32 while the others send
        # uint8/int64 (all_gather needs one dtype): give it empty tensors of the right dtype instead.
        for name in TEXT_STATES:
            if isinstance(getattr(self, name), list) and not getattr(self, name):
                setattr(self, name, [torch.zeros(0, dtype=_STATE_DTYPES.get(name, torch.int64), device=self.device)])
        kwargs = {"process_group": process_group}
        if dist_sync_fn is not None:
            kwargs["dist_sync_fn"] = dist_sync_fn
        super()._sync_dist(**kwargs)

    def _gathered(self) -> tuple[list[str], list[list[str]]]:
        """The texts of every update (every process's after a sync), predictions and their reference groups."""
        state = self.preds_lengths
        if (isinstance(state, list) and not state) or (isinstance(state, torch.Tensor) and state.numel() == 0):
            return [], []
        preds = _decode(dim_zero_cat(self.preds_bytes), dim_zero_cat(self.preds_lengths))
        flat = _decode(dim_zero_cat(self.target_bytes), dim_zero_cat(self.target_lengths))
        counts = dim_zero_cat(self.target_counts).to("cpu", torch.int64).tolist()
        ends = np.cumsum(counts).tolist()
        return preds, [flat[e - c:e] for c, e in zip(counts, ends)]

    def compute(self) -> dict:
        """P, R and F1 of every prediction so far (all processes'), as bert-score 0.3.13 computes them."""
        preds, refs = self._gathered()
        if self.verbose and preds:
            with progress_bar("embedding", "sentences") as bar:
                res = self.scorer.score(preds, refs, progress=bar)
        else:
            res = self.scorer.score(preds, refs)
        out = {k: torch.as_tensor(np.asarray(v, dtype=np.float64), device=self.device).to(self.dtype)
               for k, v in (("precision", res.precision), ("recall", res.recall), ("f1", res.f1))}
        if self.return_hash:
            out["hash"] = str(res.signature)
        return out
