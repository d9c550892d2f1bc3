"""A results file's numbers as a comparison (:func:`results_at`: what the Compare page and ``compare`` show of a
``scores.parquet``), and a Scorer that reproduces them for one segment (:func:`file_scorer`: the drill-down). The
file's format, reading and checks: :mod:`bertscore_viz.files.results`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bertscore_viz.engine.baseline import BaselineTable
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.results import ScoreResult
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import BaselineError
from bertscore_viz.evaluation.compare import Comparison, counted_mean
from bertscore_viz.files.results.format import signature_from, version_notes
from bertscore_viz.files.results.table import ResultsTable, read_results
from bertscore_viz.stats.ranking import rank_order

__all__ = ["LoadedResults", "results_at", "load_results", "file_scorer"]


@dataclass(frozen=True)
class LoadedResults:
    """A results file read back: the inputs as a :class:`~bertscore_viz.files.dataset.Dataset` and one
    :class:`~bertscore_viz.engine.results.ScoreResult` per system at one rescaling choice.

    Attributes:
        dataset: systems' outputs, references, sources, segment ids and rows.
        comparison: :class:`~bertscore_viz.evaluation.compare.Comparison`, systems best first (rescaled when asked and
            available).
        info: the file's metadata (signature, settings, baseline, input description).
        notes: what the reader should know: rescaling not available, versions differ from this installation.
        table: the :class:`~bertscore_viz.files.results.table.ResultsTable` it was built from.
    """

    dataset: object
    comparison: object
    info: dict
    notes: tuple[str, ...] = ()
    table: ResultsTable | None = None

    @property
    def signature(self) -> str:
        return self.comparison.signature



def results_at(table: ResultsTable, rescale: bool | None = None) -> LoadedResults:
    """The file's numbers as a :class:`~bertscore_viz.evaluation.compare.Comparison`, systems ranked best first by mean
    F1 as :func:`bertscore_viz.evaluation.compare.results_for` ranks them (ties in natural name order).

    Args:
        rescale: True = rescaled numbers (when the file has them), False = raw, None = as the signature says.
    """

    info = table.info
    settings = info["settings"]
    want = table.written_rescaled if rescale is None else bool(rescale)
    notes = []
    if want and not table.has_rescaled:
        notes.append(f"No rescaling baseline exists for {settings.get('model')} layer {settings.get('layer')} in the "
                     "results file; showing raw numbers.")
    rescaled = want and table.has_rescaled
    sig = signature_from(settings, rescaled=rescaled)
    baseline = np.asarray(info["baseline"], dtype=np.float64) if rescaled else None
    prefix = "rescaled_" if rescaled else "raw_"
    results = {}
    for name, cols in table.columns.items():
        best = cols["best_reference"]
        results[name] = ScoreResult(
            cols[prefix + "precision"], cols[prefix + "recall"], cols[prefix + "f1"], cols["raw_precision"],
            cols["raw_recall"], cols["raw_f1"], sig, baseline,
            None if best is None else np.repeat(best[:, None], 3, axis=1), cols["warnings"])
    means = {k: counted_mean(v.f1) for k, v in results.items()}
    results = {k: results[k] for k in rank_order(means)}
    notes.extend(version_notes(settings))
    comparison = Comparison(results, int(settings["layer"]), bool(settings["idf"]), rescaled,
                            notes[0] if want and not table.has_rescaled else None)
    return LoadedResults(table.dataset, comparison, info, tuple(notes), table)


def load_results(source, rescale: bool | None = None, max_bytes: int | None = None) -> LoadedResults:
    """Read a results file (path or bytes) into the Compare page's dataset and comparison, no model pass:
    :func:`read_results` then :func:`results_at`.

    Raises:
        InputError: see :func:`read_results`.
    """
    return results_at(read_results(source, max_bytes), rescale)



def file_scorer(table: ResultsTable, rescaled: bool, model=None, encoder=None) -> Scorer:
    """A Scorer that reproduces a results file's numbers for one segment (the Compare page's drill-down): the file's
    model and layer, the idf weights of the file's document frequencies (not recomputed from the references at
    hand; files without them, format 1, take idf from the file's references) and the file's baseline values (not
    looked up again in this installation), with the file's custom-baseline flag in the signature.

    Args:
        table: the file, read.
        rescaled: report rescaled numbers (the file's baseline; the file must have it).
        model: the model to load instead of the file's name (e.g. the app's resolved spec).
        encoder: an encoder already loaded for that model (the app's pooled one), else loaded on first use.
    """
    s = table.info["settings"]
    idf = bool(s["idf"])
    layer = int(s["layer"])
    baseline = None
    if rescaled:
        if not table.has_rescaled:
            raise BaselineError("This results file has no rescaled numbers (no baseline existed for its model and "
                                "layer).")
        baseline = BaselineTable(np.asarray([table.info["baseline"]], dtype=np.float64), "the results file",
                                 layers=(layer,))
    precision = s.get("precision", "fp32")
    if encoder is not None and encoder.precision != precision:
        encoder = None  # the file's numbers come from its own precision: its drill-down too
    options = ScoringOptions(model=model if model is not None else s["model"], layer=layer, idf=idf,
                             precision=precision, rescale_with_baseline=rescaled,
                             long_texts=s.get("long_texts", "truncate"))
    return options.scorer(idf_sentences=table.references if idf and table.idf is None else None,
                          idf_weights=table.idf if idf else None, baseline_table=baseline,
                          custom_baseline=bool(s.get("custom_baseline", False)), encoder=encoder)

