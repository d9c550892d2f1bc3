"""The Compare page's tables (pandas DataFrames with the page's column names; the command line and the HTML report
show the same ones): the system table, the test of every metric against one baseline, where two metrics rank the
systems, the segment table with its sort and search, the length buckets, and everything on the page as one JSON-ready
dict. The numbers are :mod:`bertscore_viz.evaluation.compare`'s (pure, no Streamlit)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bertscore_viz.evaluation.compare import MIN_BUCKET_SEGMENTS, Comparison, bucket_intervals, counted_mean, headline
from bertscore_viz.evaluation.own_metrics import is_own
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.stats.analysis import Significance
from bertscore_viz.stats.ranking import rank_order
from bertscore_viz.stats.resampling import DEFAULT_SAMPLES, DEFAULT_SEED

if TYPE_CHECKING:  # annotations only: the tables take these objects, they never build them
    from bertscore_viz.evaluation.calibration import CalibrationReading
    from bertscore_viz.evaluation.sacrebleu_metrics import SurfaceScores

__all__ = ["BAND_COLUMN", "JSON_SCHEMA", "JSON_SCHEMA_VERSION", "RANDOM_COLUMN", "diff_column", "filter_segments",
           "json_key", "length_buckets", "rank_table", "segment_table", "sort_by_difference", "system_records",
           "system_table", "to_jsonable", "versus_baseline_table"]

#: Columns of the calibration in the system table.
RANDOM_COLUMN = "Above random pairs (%)"
BAND_COLUMN = "Typical of"


def system_table(comparison: Comparison, sig: Significance, surface: SurfaceScores | None = None,
                 readings: dict[str, CalibrationReading] | None = None):
    """One row per system, best first: rank, cluster, pairwise wins, P, R, F1, the 95% interval of the metric
    tested, best marked; with ``surface``, sacrebleu's corpus chrF, BLEU and TER; with ``readings`` (each system's
    mean F1 on the calibration: :meth:`Calibration.reading`), its percentile among random pairs and the human band
    it is typical of.

    Returns:
        pandas DataFrame with columns ``Rank, Cluster, Wins, System, Best, P, R, F1, <metric> CI low,
        <metric> CI high``, then ``chrF, BLEU, TER`` (those scored), ``Above random pairs (%), Typical of``, and
        ``Segments``, in the order of ``sig.systems`` (by score, ties in natural name order).
    """

    rows = []
    for name in sig.systems:
        res = comparison.results[name]
        p, r, f = counted_mean(res.precision), counted_mean(res.recall), counted_mean(res.f1)
        iv = sig.interval(name)
        st_ = sig.standing(name)
        row = {"System": name, "Cluster": st_.cluster, "Wins": st_.wins, "P": p, "R": r, "F1": f,
               f"{sig.metric} CI low": iv.low, f"{sig.metric} CI high": iv.high}
        for metric, scores in (surface.metrics if surface is not None else {}).items():
            row[metric] = scores.corpus[name]
        row.setdefault(sig.metric, iv.mean)  # a metric of one's own tested without its surface: its mean
        if readings is not None:
            row[RANDOM_COLUMN] = readings[name].percentile_random
            row[BAND_COLUMN] = readings[name].typical_band or "—"
        rows.append(row | {"Segments": len(res)})
    frame = pd.DataFrame(rows)
    key = sig.metric
    frame["Rank"] = frame[key].rank(ascending=not sig.higher_is_better, method="min").astype(int)
    best = frame[key].max() if sig.higher_is_better else frame[key].min()
    frame["Best"] = np.where(frame[key] == best, "★ best", "")
    cols = ["Rank", "Cluster", "Wins", "System", "Best", "P", "R", "F1", f"{key} CI low", f"{key} CI high"]
    return frame[cols + [c for c in frame.columns if c not in cols]]


def versus_baseline_table(sigs: dict[str, Significance], baseline: str):
    """Every metric's test of each system against one baseline system, side by side (sacrebleu's paired output):
    per metric its score, the difference to the baseline and the pair's p (with Holm: adjusted).

    Args:
        sigs: ``{metric: Significance}`` over the same systems (e.g. F1 and sacrebleu's chrF, BLEU, TER).
        baseline: a system of every analysis.

    Returns:
        DataFrame, one row per system in the order of the first analysis (the baseline first), columns ``System``
        and per metric ``<m>``, ``<m> Δ``, ``<m> p`` (the baseline's Δ and p empty).
    """
    first = next(iter(sigs.values()))
    order = [baseline] + [s for s in first.systems if s != baseline]
    rows = []
    for system in order:
        row: dict[str, object] = {"System": system}
        for metric, sig in sigs.items():
            row[metric] = sig.interval(system).mean
            paired = next((r for r in sig.rebase(baseline).versus_baseline if r.system == system), None)
            row[f"{metric} Δ"] = None if paired is None else paired.difference
            row[f"{metric} p"] = None if paired is None else paired.p
        rows.append(row)
    return pd.DataFrame(rows)


def rank_table(comparison: Comparison, surface: SurfaceScores, metric: str = "chrF"):
    """Where BERTScore-F1 and a sacrebleu metric rank the systems: ``System, F1, F1 rank, <metric>,
    <metric> rank, Shift`` (shift = F1 rank - metric rank: positive when the metric puts the system higher), in
    the F1 order. Ranks 1..k by score, ties in natural name order, as everywhere on the page."""
    scores = surface.metrics[metric]
    f1 = comparison.means("F1")
    f1_rank = {s: i + 1 for i, s in enumerate(rank_order(f1))}
    other = scores.ranks()
    return pd.DataFrame([{"System": s, "F1": f1[s], "F1 rank": f1_rank[s], metric: scores.corpus[s],
                          f"{metric} rank": other[s], "Shift": f1_rank[s] - other[s]} for s in rank_order(f1)])


def _join_refs(refs: list[str]) -> str:
    return refs[0] if len(refs) == 1 else " ‖ ".join(refs)


def segment_table(dataset: Dataset, comparison: Comparison, with_pr: bool = False, with_outputs: bool = True,
                  surface: SurfaceScores | None = None):
    """One row per segment: id, row, reference(s), source, every system's F1 (and P, R), with ``surface``
    sacrebleu's sentence chrF, BLEU and TER of every system (``chrF · name``), and the outputs.

    Systems in rank order; the index is the segment's position in the dataset. Without a segment id column the
    ids are the file's line numbers, so only "Row" is shown.
    """

    data: dict[str, object] = {"Segment": dataset.segment_ids, "Row": dataset.rows,
                               "Reference": [_join_refs(r) for r in dataset.references]}
    if [str(s) for s in dataset.segment_ids] == [str(r) for r in dataset.rows]:
        del data["Segment"]
    if dataset.sources is not None:
        data["Source"] = dataset.sources
    for name, res in comparison.results.items():
        data[f"F1 · {name}"] = res.f1
        if with_pr:
            data[f"P · {name}"] = res.precision
            data[f"R · {name}"] = res.recall
    for metric, scores in (surface.metrics if surface is not None else {}).items():
        for name in comparison.results:
            data[f"{metric} · {name}"] = scores.sentence[name]
    if with_outputs:
        for name in comparison.results:
            data[f"Output · {name}"] = dataset.systems[name]
    return pd.DataFrame(data)


def diff_column(a: str, b: str, metric: str = "F1") -> str:
    return f"{metric} {a} − {b}"


def sort_by_difference(frame, comparison: Comparison, a: str, b: str, metric: str = "F1"):
    """The segment table with a column ``a - b`` of ``metric``, sorted where they differ most (|a - b| first).

    The index stays the segment's position in the dataset (as in :func:`segment_table`), so a row picked in the
    sorted table finds its segment.
    """
    scores = comparison.scores(metric)
    out = frame.copy()
    col = diff_column(a, b, metric)
    diff = scores[a] - scores[b]
    out.insert(3, col, diff[out.index.to_numpy()])
    order = np.argsort(-np.abs(out[col].to_numpy()), kind="stable")
    return out.iloc[order]


def filter_segments(frame, query: str):
    """Rows whose reference, source, outputs or segment id contain ``query`` (case-insensitive, plain text)."""
    query = (query or "").strip().lower()
    if not query:
        return frame
    cols = [c for c in frame.columns if c in ("Segment", "Reference", "Source") or c.startswith("Output · ")]
    mask = np.zeros(len(frame), dtype=bool)
    for c in cols:
        mask |= frame[c].astype(str).str.lower().str.contains(query, regex=False).to_numpy()
    return frame[mask]


def length_buckets(dataset: Dataset, comparison: Comparison, metric: str = "F1",
                   min_segments: int = MIN_BUCKET_SEGMENTS, n_samples: int = DEFAULT_SAMPLES,
                   seed: int | None = DEFAULT_SEED):
    """Mean score per system in each reference-length bucket with its 95% bootstrap interval, as the page's table
    (the numbers: :func:`bertscore_viz.evaluation.compare.bucket_intervals`, whose arguments these are).

    Returns:
        DataFrame with columns ``Bucket, System, Segments, <metric>, CI low, CI high``, buckets in length order
        (empty ones left out).
    """
    rows = [{"Bucket": b.label, "System": b.system, "Segments": b.segments, metric: b.mean, "CI low": b.low,
             "CI high": b.high}
            for b in bucket_intervals(dataset, comparison, metric, min_segments, n_samples, seed)]
    return pd.DataFrame(rows, columns=["Bucket", "System", "Segments", metric, "CI low", "CI high"])


#: The JSON's name and version (docs/COMPARE_CLI.md, "The JSON schema"). Version 2: snake_case keys everywhere and
#: no display glyphs (``systems``: ``f1``, ``ci_low``, ``best`` a boolean); version 1's system records stay as
#: ``systems_v1`` for one release.
JSON_SCHEMA = "bertscore-viz/compare"
JSON_SCHEMA_VERSION = 2

#: The system table's columns as JSON keys; a column not named here is lower-cased with spaces as underscores.
_JSON_KEYS = {"Rank": "rank", "Cluster": "cluster", "Wins": "wins", "System": "system", "P": "precision",
              "R": "recall", "F1": "f1", "Segments": "segments", RANDOM_COLUMN: "above_random_pairs_percent",
              BAND_COLUMN: "typical_of"}


def json_key(column: str) -> str:
    """A column or metric name as a stable JSON key: ``"F1 CI low"`` is ``"f1_ci_low"``, ``"chrF"`` ``"chrf"``."""
    return _JSON_KEYS.get(column) or "_".join(column.replace("(%)", "percent").lower().split())


def system_records(table: pd.DataFrame, metric: str) -> list[dict]:
    """The system table (:func:`system_table`) as JSON records with stable snake_case keys and no glyphs: ``best``
    is a boolean, the interval is ``ci_low``/``ci_high`` of ``ci_metric``, a band not known is None."""
    out = []
    for row in table.to_dict(orient="records"):
        rec: dict = {"ci_metric": metric}
        for col, value in row.items():
            if col == "Best":
                rec["best"] = bool(value)
            elif col == f"{metric} CI low":
                rec["ci_low"] = value
            elif col == f"{metric} CI high":
                rec["ci_high"] = value
            else:
                rec[json_key(col)] = None if col == BAND_COLUMN and value == "—" else value
        out.append(rec)
    return out


def to_jsonable(dataset: Dataset, comparison: Comparison, sig: Significance, with_segments: bool = True,
                surface: SurfaceScores | None = None) -> dict:
    """Everything on the page as one JSON-ready dict (schema :data:`JSON_SCHEMA` version
    :data:`JSON_SCHEMA_VERSION`: snake_case keys, no display glyphs): settings, signature, systems, significance,
    segments, problems of the input; with ``surface``, sacrebleu's corpus scores and signatures (``"sacrebleu"``,
    keyed ``chrf``, ``bleu``, ``ter``) and each segment's sentence scores."""
    table = system_table(comparison, sig, surface)
    out = {
        "schema": JSON_SCHEMA, "schema_version": JSON_SCHEMA_VERSION,
        "signature": comparison.signature,
        "settings": {"layer": comparison.layer, "idf": comparison.idf, "rescaled": comparison.rescaled,
                     "rescale_note": comparison.note},
        "mapping": None if dataset.mapping is None else dataset.mapping.as_dict(),
        "n_segments": dataset.n_segments,
        "systems": system_records(table, sig.metric),
        "systems_v1": table.to_dict(orient="records"),
        "significance": sig.as_dict(),
        "headline": headline(comparison, sig),
        "warnings": comparison.warnings(),
        "problems": [p.as_dict() for p in dataset.problems],
    }
    if surface is not None:
        sacre = {m: ms for m, ms in surface.metrics.items() if not is_own(ms)}
        own = {m: ms for m, ms in surface.metrics.items() if is_own(ms)}
        if sacre or surface.skipped:
            out["sacrebleu"] = {json_key(m): {"corpus": ms.corpus, "corpus_signature": ms.corpus_signature,
                                              "sentence_signature": ms.sentence_signature}
                                for m, ms in sacre.items()}
            out["sacrebleu_skipped"] = surface.skipped
        if own:
            out["own_metrics"] = {json_key(m): {"name": m, "scores": ms.corpus, "higher_is_better": ms.higher_is_better,
                                                "origin": ms.origin, "segments_used": ms.n_kept,
                                                "segments_left_out": ms.n_segments - ms.n_kept}
                                  for m, ms in own.items()}
    if with_segments:
        out["segments"] = [
            {"segment_id": sid, "row": row, "references": refs,
             "source": None if dataset.sources is None else dataset.sources[i],
             "systems": {name: {"output": dataset.systems[name][i], "precision": float(res.precision[i]),
                                "recall": float(res.recall[i]), "f1": float(res.f1[i])}
                         | ({json_key(m): float(ms.sentence[name][i]) for m, ms in surface.metrics.items()}
                            if surface is not None else {})
                         for name, res in comparison.results.items()}}
            for i, (sid, row, refs) in enumerate(zip(dataset.segment_ids, dataset.rows, dataset.references))]
    return out
