"""What a tracker run gets, built once for MLflow and W&B alike: the summary metrics, the signature and its parts,
the per-segment table, the comparison's system table, and the heatmaps of the worst pairs as PNG images.

The writers (:mod:`.mlflow_writer`, :mod:`.wandb_writer`) only hand a :class:`TrackerContent` to their framework, so
both trackers log the same names and the same numbers: the engine's, unrounded.

Names (the same in both trackers):

* metrics ``bertscore/P``, ``bertscore/R``, ``bertscore/F1`` (a :class:`ScoreResult`: its corpus means,
  :meth:`ScoreResult.mean`); for a :class:`Comparison` per system ``bertscore/<system>/P``, ``.../R``, ``.../F1``
  (:meth:`Comparison.means`: an undefined segment counts as 0), ``.../<metric>_ci_low``, ``.../<metric>_ci_high``,
  ``.../rank`` and ``.../cluster``; a system's name in a key keeps letters, digits, ``_ - .`` and spaces, every other
  character becomes ``_`` (and two names alike after that get ``_2``, ``_3``);
* params ``bertscore.signature`` and the signature's parts ``bertscore.model``, ``bertscore.layer``, ... and the
  counts; the tag ``bertscore.signature``;
* tables ``segments`` (one row per segment: texts and scores) and, for a comparison, ``systems`` (the Compare
  page's system table: rank, cluster, wins, P, R, F1 and the 95% interval); each also as a CSV whose text cells a
  spreadsheet will not run as formulas (:func:`~bertscore_viz.files.export.safe_csv`);
* figures ``worst/<nn>_segment_<id>.png`` (a comparison: ``worst/<system>/...``): the similarity heatmap of each of
  the ``worst`` lowest-F1 pairs, as ``save_heatmap`` draws it.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from bertscore_viz.engine.arguments import normalize_inputs
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.results import MultiReferenceExplanation, PairExplanation, ScoreResult, Signature
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.compare import Comparison, counted, significance
from bertscore_viz.figures import tables
from bertscore_viz.figures.report import scorer_explainer
from bertscore_viz.figures.static_figures import FigureTooLarge, heatmap_image
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.files.export import safe_csv
from bertscore_viz.stats.analysis import Significance

__all__ = ["DEFAULT_WORST", "FOLDER", "LoggedRun", "TrackerContent", "build_content", "metric_key", "write_files"]

#: The run's folder (MLflow artifacts) or section and files folder (W&B) of everything this package logs.
FOLDER = "bertscore"

#: Heatmaps logged by default: the lowest-F1 pairs (of each system, for a comparison).
DEFAULT_WORST = 5
#: Longest part of a key made from a system's name (MLflow takes keys up to 250 characters).
_KEY_CHARS = 80
_UNSAFE = re.compile(r"[^\w.\- ]")


@dataclass(frozen=True)
class TrackerContent:
    """Everything one run gets.

    Attributes:
        metrics: ``{key: value}``, the summary numbers.
        params: ``{key: text}``, the signature, its parts and the counts.
        tags: ``{key: text}``, the signature.
        tables: ``{name: DataFrame}``, ``segments`` and (a comparison) ``systems``.
        figures: ``{path: PNG bytes}``, the worst pairs' heatmaps (paths relative to the run's ``bertscore/``).
        notes: what was not logged and why (a pair too long to draw, no texts or no scorer for the figures).
        signature: the signature's text (the CSVs' last column).
    """

    metrics: dict[str, float]
    params: dict[str, str]
    tags: dict[str, str]
    tables: dict[str, pd.DataFrame]
    figures: dict[str, bytes]
    signature: str
    notes: tuple[str, ...] = field(default=())

    def csv(self, name: str) -> bytes:
        """The table ``name`` as CSV bytes, text cells neutralised for spreadsheets, the signature as last column."""
        return safe_csv(self.tables[name], self.signature)


@dataclass(frozen=True)
class LoggedRun:
    """Where a result went.

    Attributes:
        tracker: ``"mlflow"`` or ``"wandb"``; run_id: the run's id in it; notes: what was not logged and why.
    """

    tracker: str
    run_id: str
    notes: tuple[str, ...] = ()


def write_files(content: TrackerContent, folder: Path) -> list[Path]:
    """The run's files under ``folder``: each table as ``<name>.csv``, each figure at its path, and ``notes.txt``
    when there are notes. Returns the paths written."""
    files = {f"{name}.csv": content.csv(name) for name in content.tables} | dict(content.figures)
    if content.notes:
        files["notes.txt"] = ("\n".join(content.notes) + "\n").encode("utf-8")
    written = []
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


def metric_key(name: str) -> str:
    """A system's name as a part of a tracker key: letters, digits, ``_ - .`` and spaces kept, other characters
    (``/``, ``:``, ``#``, control characters) as ``_``; a name of dots only (a path in MLflow's eyes) as ``_``."""
    key = _UNSAFE.sub("_", name)[:_KEY_CHARS].strip() or "_"
    return "_" if set(key) <= {"."} else key


def _keys(names: Sequence[str]) -> dict[str, str]:
    """``{name: key}`` with distinct keys: a key two names share gets ``_2``, ``_3`` after the first."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        key, k = metric_key(name), 1
        while key in taken:
            k += 1
            key = f"{metric_key(name)}_{k}"
        taken.add(key)
        out[name] = key
    return out


def _signature_params(signature: Signature) -> dict[str, str]:
    parts = {f"bertscore.{k}": "" if v is None else str(v) for k, v in signature.as_dict().items() if k != "text"}
    return {"bertscore.signature": str(signature)} | parts


def _scorer(scorer: Scorer | ScoringOptions | None) -> Scorer | None:
    if scorer is None or isinstance(scorer, Scorer):
        return scorer
    if isinstance(scorer, ScoringOptions):
        return scorer.scorer()
    raise InputError(f"scorer= takes a bertscore_viz Scorer or ScoringOptions (the settings that produced the scores), "
                     f"got {type(scorer).__name__}.")


def _check_worst(worst) -> int:
    if isinstance(worst, bool) or not isinstance(worst, (int, np.integer)) or worst < 0:
        raise InputError(f"worst= is the number of lowest-F1 pairs to draw (0 for none), got {worst!r}.")
    return int(worst)


def _same_setting(got: Signature, want: Signature) -> None:
    """Explanations must come from the setting that gave the scores, or their heatmaps would show other numbers."""
    fields_ = ("model", "layer", "idf", "rescaled", "precision", "long_texts")
    if any(getattr(got, f) != getattr(want, f) for f in fields_):
        raise InputError(f"The scorer given explains pairs with the signature {got}, but the scores were computed "
                         f"with {want}: pass the Scorer (or ScoringOptions) that produced them as scorer=.")


def _one_pair(explanation) -> PairExplanation:
    """The pair to draw: the pair itself, or of several references the one that gave F1."""
    if isinstance(explanation, MultiReferenceExplanation):
        return explanation.pairs[int(np.asarray(explanation.best_reference)[2])]
    return explanation


def _worst_figures(f1, worst: int, label: Callable[[int], str], explain: Callable[[int], object],
                   signature: Signature, prefix: str) -> tuple[dict[str, bytes], list[str]]:
    """PNG heatmaps of the ``worst`` lowest-F1 segments (undefined F1 counted as 0, stable order), and notes."""
    figures: dict[str, bytes] = {}
    notes: list[str] = []
    order = np.argsort(counted(f1), kind="stable")[:worst]
    for rank, pos in enumerate(order, start=1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the result's own warnings already say it (degenerate idf)
            pair = _one_pair(explain(int(pos)))
        _same_setting(pair.signature, signature)
        name = f"{prefix}{rank:02d}_segment_{metric_key(label(int(pos)))}.png"
        try:
            figures[name] = heatmap_image(pair, "png")
        except FigureTooLarge as exc:
            notes.append(f"No heatmap for segment {label(int(pos))}: {exc}")
    return figures, notes


def _join(refs: Sequence[str]) -> str:
    return refs[0] if len(refs) == 1 else " ‖ ".join(refs)


def _score_content(result: ScoreResult, candidates, references, scorer: Scorer | None,
                   worst: int) -> TrackerContent:
    n = len(result)
    if n == 0:
        raise InputError("Nothing to log: the ScoreResult has no candidates.")
    p, r, f = result.mean()
    params = _signature_params(result.signature) | {"bertscore.segments": str(n)}
    frame = pd.DataFrame({"segment": np.arange(1, n + 1)})
    figures: dict[str, bytes] = {}
    notes: list[str] = []
    if (candidates is None) != (references is None):
        raise InputError("Give both candidates= and references= (the texts that were scored), or neither.")
    if candidates is not None:
        cands, groups = normalize_inputs(candidates, references)
        if len(cands) != n:
            raise InputError(f"The result has {n} scores but {len(cands)} candidates were given: give the texts "
                             "that were scored, in the same order.")
        frame["candidate"] = cands
        frame["reference"] = [_join(g) for g in groups]
    frame["P"], frame["R"], frame["F1"] = result.precision, result.recall, result.f1
    if worst and candidates is not None and scorer is not None:
        sc = scorer
        refit = result.signature.idf and not result.signature.idf_source  # idf of the scored references, as scored
        _same_setting((scorer.replace(idf=True) if refit else scorer).signature, result.signature)  # before a model
        if refit:
            sc = scorer.replace(idf_weights=scorer.idf_weights([t for g in groups for t in g]))
        figures, notes = _worst_figures(
            result.f1, worst, lambda i: str(i + 1),
            lambda i: sc.explain(cands[i], groups[i][0] if len(groups[i]) == 1 else groups[i]),
            result.signature, "worst/")
    elif worst:
        notes.append("No heatmaps: they need the texts (candidates=, references=) and the scorer (scorer=).")
    return TrackerContent({"bertscore/P": p, "bertscore/R": r, "bertscore/F1": f}, params,
                          {"bertscore.signature": str(result.signature)}, {"segments": frame}, figures,
                          str(result.signature), tuple(notes))


def _comparison_metrics(comparison: Comparison, sig: Significance, keys: dict[str, str]) -> dict[str, float]:
    means = {m: comparison.means(m) for m in ("P", "R", "F1")}
    metrics: dict[str, float] = {}
    for rank, name in enumerate(sig.systems, start=1):
        base = f"bertscore/{keys[name]}"
        iv = sig.interval(name)
        metrics.update({f"{base}/P": means["P"][name], f"{base}/R": means["R"][name], f"{base}/F1": means["F1"][name],
                        f"{base}/{sig.metric}_ci_low": iv.low, f"{base}/{sig.metric}_ci_high": iv.high,
                        f"{base}/rank": float(rank), f"{base}/cluster": float(sig.standing(name).cluster)})
    return metrics


def _comparison_segments(comparison: Comparison, dataset: Dataset | None) -> pd.DataFrame:
    if dataset is not None:
        return tables.segment_table(dataset, comparison, with_pr=True)
    n = len(next(iter(comparison.results.values())))
    data: dict[str, object] = {"Segment": np.arange(1, n + 1)}
    for name, res in comparison.results.items():
        data |= {f"F1 · {name}": res.f1, f"P · {name}": res.precision, f"R · {name}": res.recall}
    return pd.DataFrame(data)


def _explain_output(explain: Callable[[str, list[str]], object], dataset: Dataset,
                    system: str) -> Callable[[int], object]:
    """``explain(i)`` of segment ``i`` of one system: its output against the segment's references."""
    outputs = dataset.systems[system]
    return lambda i: explain(outputs[i], dataset.references[i])


def _comparison_content(comparison: Comparison, dataset: Dataset | None, scorer: Scorer | None,
                        sig: Significance | None, worst: int) -> TrackerContent:
    first = next(iter(comparison.results.values()), None)
    if first is None:
        raise InputError("Nothing to log: the Comparison has no systems.")
    if dataset is not None and (set(dataset.systems) != set(comparison.results) or dataset.n_segments != len(first)):
        raise InputError(f"dataset= is not the one compared: it has systems {', '.join(map(repr, dataset.systems))} "
                         f"and {dataset.n_segments} segments, the comparison "
                         f"{', '.join(map(repr, comparison.results))} and {len(first)}.")
    sig = significance(comparison) if sig is None else sig
    if set(sig.systems) != set(comparison.results):
        raise InputError("significance= is of other systems than the comparison: give the analysis of this "
                         "comparison (bertscore_viz.evaluation.compare.significance(comparison)).")
    keys = _keys(sig.systems)
    params = _signature_params(first.signature) | {
        "bertscore.systems": str(len(comparison.results)), "bertscore.segments": str(len(first)),
        "bertscore.best": sig.systems[0], "bertscore.bootstrap_samples": str(sig.n_samples),
        "bertscore.bootstrap_seed": str(sig.seed), "bertscore.correction": sig.correction or "none"}
    notes = [comparison.note] if comparison.note else []
    figures: dict[str, bytes] = {}
    if worst and dataset is not None and scorer is not None:
        _same_setting(scorer.replace(layer=comparison.layer, idf=comparison.idf,
                                     rescale_with_baseline=comparison.rescaled).signature, first.signature)
        explain = scorer_explainer(scorer, dataset, comparison)
        for name in sig.systems:
            made, said = _worst_figures(
                comparison.results[name].f1, worst, lambda i: str(dataset.segment_ids[i]),
                _explain_output(explain, dataset, name), comparison.results[name].signature,
                f"worst/{keys[name]}/")
            figures |= made
            notes += [f"{name}: {n}" for n in said]
    elif worst:
        notes.append("No heatmaps: they need the texts (dataset=) and the scorer (scorer=).")
    frames = {"segments": _comparison_segments(comparison, dataset), "systems": tables.system_table(comparison, sig)}
    return TrackerContent(_comparison_metrics(comparison, sig, keys), params,
                          {"bertscore.signature": comparison.signature}, frames, figures, comparison.signature,
                          tuple(notes))


def build_content(target: ScoreResult | Comparison, *, candidates=None, references=None,
                  dataset: Dataset | None = None, scorer: Scorer | ScoringOptions | None = None,
                  significance: Significance | None = None, worst: int = DEFAULT_WORST) -> TrackerContent:
    """What to log of a :class:`ScoreResult` (with ``candidates`` and ``references``: the texts scored) or of a
    :class:`Comparison` (with ``dataset``: the systems' outputs and references; ``significance``: its analysis,
    default :func:`~bertscore_viz.evaluation.compare.significance` of it, the Compare page's).

    ``scorer`` (the Scorer or ScoringOptions that produced the scores) explains the ``worst`` lowest-F1 pairs for
    their heatmaps; without it, or without the texts, no figure is made (a note says so).

    Raises:
        InputError: another object than a result or a comparison; texts that are not those scored; a scorer of
            another setting than the scores'; a negative ``worst``.
    """
    worst = _check_worst(worst)
    sc = _scorer(scorer)
    if isinstance(target, ScoreResult):
        if dataset is not None or significance is not None:
            raise InputError("dataset= and significance= are for a Comparison; a ScoreResult takes candidates= and "
                             "references=.")
        return _score_content(target, candidates, references, sc, worst)
    if isinstance(target, Comparison):
        if candidates is not None or references is not None:
            raise InputError("A Comparison takes its texts as dataset= (the Dataset it was scored from), not "
                             "candidates= and references=.")
        return _comparison_content(target, dataset, sc, significance, worst)
    raise InputError(f"A tracker logs a ScoreResult (Scorer.score, score()) or a Comparison "
                     f"(bertscore_viz.evaluation.compare.results_for), got {type(target).__name__}.")
