"""The stress test of the metric: does BERTScore notice when a candidate is made worse?

Each candidate is perturbed (:mod:`bertscore_viz.evaluation.perturb`: negation added or removed, a number changed,
an entity swapped, words shuffled, the second half dropped, the text repeated, typos) and scored against its
reference(s) next to the original and an **unrelated** candidate (another segment's, a derangement), in ONE model
pass: the originals, every perturbed candidate and the unrelated ones go into one :meth:`Scorer.match` call with
``keep="scores"`` and ``layers="all"`` (the references are embedded once; each pair keeps only its P/R/F per layer),
and :meth:`Scorer.result` reads each layer's F1 from it. Figures use **raw** F1.

For a perturbation and a layer, over the n pairs where the perturbation applies (original o, perturbed p,
unrelated u, all F1):

- ``pass_rate``: the share of pairs with p < o, strictly: a tie (p == o, e.g. both 0 against an empty reference)
  counts as not noticed. ``ties`` counts them.
- ``mean_drop``: the mean of o - p (negative when perturbed candidates score higher).
- ``relative_drop``: sum(o - p) / sum(o - u) over the pairs where the unrelated candidate exists too (usually all):
  the mean drop in units of the mean drop to an unrelated text. 0 = the metric does not notice the perturbation,
  1 = it scores the perturbed candidates as low as unrelated texts (the ``unrelated`` row is 1 by construction).
  A ratio of means, not a mean of per-pair ratios: a pair whose unrelated candidate happens to score about as high
  as the original (a poor original, a generic unrelated text) has o - u near 0 or below, and its own ratio is
  unbounded or of the wrong sign; the ratio of means weighs each pair by its gap and stays within the scale of the
  data. When the mean gap is not above :data:`GAP_EPS` (the metric does not separate the candidates from unrelated
  ones at this layer) the ratio is NaN, and the row's ``note`` says why.

Rescaling with a baseline b is ``(x - b) / (1 - b)`` per layer: increasing, so pass rates do not change; every
difference is divided by ``1 - b``, so ``mean_drop`` grows by ``1 / (1 - b_F)`` and ``relative_drop`` (a ratio of
differences) does not change. With idf on, the weights come from the original references, as when the data are
scored alone (the references repeated for the perturbed candidates would otherwise count again).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bertscore_viz.engine.arguments import check_whole, normalize_inputs
from bertscore_viz.engine.messages import WINDOW_HINT
from bertscore_viz.engine.options import scorer_from
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.perturb import PERTURBATIONS, Corpus, Perturbation, find_perturbation, perturb_all

__all__ = ["AUDIT_METRICS", "GAP_EPS", "UNRELATED", "AuditExample", "AuditResult", "AuditRow", "PerturbedSet", "audit",
           "audit_figures", "choose_perturbations", "perturb_candidates"]

#: Below this mean gap o - u, relative drops are NaN: unrelated candidates score as high as the originals.
GAP_EPS = 1e-6
#: The perturbation every audit scores: the reference point of ``relative_drop``.
UNRELATED = "unrelated"
#: The figures of a row, as :meth:`AuditResult.series` takes them.
AUDIT_METRICS = ("pass_rate", "mean_drop", "relative_drop")
#: Orders of :meth:`AuditResult.examples`.
EXAMPLE_ORDERS = ("fooled", "noticed", "index")


@dataclass(frozen=True)
class AuditRow:
    """The figures of one perturbation at one layer (definitions in the module docstring).

    Attributes:
        perturbation, layer: what and where.
        n: pairs where the perturbation applies.
        pass_rate: share of those with F1(perturbed) < F1(original); NaN when n = 0.
        mean_drop: mean of F1(original) - F1(perturbed) (raw F1); NaN when n = 0.
        relative_drop: sum of drops / sum of F1(original) - F1(unrelated) over ``n_relative`` pairs; NaN with a note.
        ties: pairs with F1(perturbed) == F1(original) (counted as not noticed).
        n_relative: pairs of the n where an unrelated candidate exists (the pairs ``relative_drop`` is over).
        note: why a figure is NaN ("" when none is).
    """

    perturbation: str
    layer: int
    n: int
    pass_rate: float
    mean_drop: float
    relative_drop: float
    ties: int = 0
    n_relative: int = 0
    note: str = ""

    def as_dict(self) -> dict:
        """The CLI's JSON record: ``{perturbation, layer, n, pass_rate, mean_drop, relative_drop}``, NaN as null."""
        return {"perturbation": self.perturbation, "layer": self.layer, "n": self.n,
                "pass_rate": _json_float(self.pass_rate), "mean_drop": _json_float(self.mean_drop),
                "relative_drop": _json_float(self.relative_drop)}


@dataclass(frozen=True)
class PerturbedSet:
    """One perturbation's candidates and their scores.

    Attributes:
        name, description: the perturbation's (:data:`~bertscore_viz.evaluation.perturb.PERTURBATIONS`).
        indices: ``(m,)`` int64, the segments it applies to, ascending.
        texts: ``(m,)`` the perturbed candidates, in the order of ``indices``.
        f1: ``(n_layers, m)`` raw F1 of each against its segment's reference(s), per layer of the audit.
    """

    name: str
    description: str
    indices: np.ndarray
    texts: tuple[str, ...]
    f1: np.ndarray


@dataclass(frozen=True)
class AuditExample:
    """One perturbed pair at one layer, for showing (and explaining) it.

    Attributes:
        perturbation, index, layer: which pair, which segment (from 0), which layer.
        candidate, perturbed: the original and perturbed candidates; references: the segment's reference(s).
        f1_original, f1_perturbed: raw F1 against the references; f1_unrelated: the unrelated candidate's (NaN when
            there is none). drop: f1_original - f1_perturbed. noticed: f1_perturbed < f1_original.
    """

    perturbation: str
    index: int
    layer: int
    candidate: str
    perturbed: str
    references: tuple[str, ...]
    f1_original: float
    f1_perturbed: float
    f1_unrelated: float
    drop: float
    noticed: bool


@dataclass(frozen=True)
class AuditResult:
    """An audit: every perturbed candidate with its F1 per layer, and the figures per perturbation and layer.

    Attributes:
        candidates: ``(n,)`` the originals; references: ``(n,)`` tuples of each segment's reference(s).
        layers: the layers scored, ascending as given; every ``(n_layers, ...)`` array follows them.
        seed: the perturbations' seed; lang: the language the perturbations were chosen for.
        f1_original: ``(n_layers, n)`` raw F1 of the originals.
        f1_unrelated: ``(n_layers, n)`` raw F1 of each segment's unrelated candidate (NaN where there is none).
        sets: one :class:`PerturbedSet` per perturbation run, in registry order, ``unrelated`` last.
        rows: one :class:`AuditRow` per perturbation and layer, perturbation-major.
        signatures: ``(n_layers,)`` the raw scores' signature at each layer.
        skipped: perturbations left out, with why (their rules are for another language).
        warnings: the scorer's warnings about the originals (empty or truncated texts, unknown tokens...).
    """

    candidates: tuple[str, ...]
    references: tuple[tuple[str, ...], ...]
    layers: tuple[int, ...]
    seed: int
    lang: str
    f1_original: np.ndarray
    f1_unrelated: np.ndarray
    sets: tuple[PerturbedSet, ...]
    rows: tuple[AuditRow, ...]
    signatures: tuple[str, ...]
    skipped: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def perturbations(self) -> tuple[str, ...]:
        """The names of the perturbations run, in the order of :attr:`sets`."""
        return tuple(s.name for s in self.sets)

    def layer_position(self, layer: int) -> int:
        """The position of ``layer`` in :attr:`layers` (the row of every per-layer array)."""
        if layer not in self.layers:
            raise InputError(f"Layer {layer} was not audited; the audit has layers {list(self.layers)}.")
        return self.layers.index(layer)

    def perturbed(self, name: str) -> PerturbedSet:
        """The candidates and scores of one perturbation."""
        for s in self.sets:
            if s.name == name:
                return s
        raise InputError(f"The perturbation {name!r} was not run; this audit has {', '.join(self.perturbations)}.")

    def row(self, name: str, layer: int) -> AuditRow:
        """The figures of one perturbation at one layer."""
        self.perturbed(name)  # a clear error for a perturbation not run
        self.layer_position(layer)  # and for a layer not audited
        return next(r for r in self.rows if r.perturbation == name and r.layer == layer)

    def series(self, metric: str = "relative_drop") -> dict[str, np.ndarray]:
        """Per perturbation, ``(n_layers,)`` values of one figure by layer (what a chart by layer draws).

        Args:
            metric: ``"pass_rate"``, ``"mean_drop"`` or ``"relative_drop"``.
        """
        if metric not in AUDIT_METRICS:
            raise InputError(f"Unknown audit figure {metric!r}. Expected one of {', '.join(AUDIT_METRICS)}.")
        return {name: np.array([getattr(self.row(name, layer), metric) for layer in self.layers], dtype=np.float64)
                for name in self.perturbations}

    def examples(self, name: str, layer: int, limit: int | None = 5, order: str = "fooled") -> list[AuditExample]:
        """Perturbed pairs of one perturbation at one layer, with texts and F1.

        Args:
            name: the perturbation; layer: an audited layer.
            limit: at most this many (None: all).
            order: ``"fooled"``: the smallest drops first (the pairs where the metric noticed least; perturbed
                candidates scoring higher than their originals come first); ``"noticed"``: the largest drops first;
                ``"index"``: by segment.
        """
        if order not in EXAMPLE_ORDERS:
            raise InputError(f"Unknown order {order!r}. Expected one of {', '.join(EXAMPLE_ORDERS)}.")
        s, k = self.perturbed(name), self.layer_position(layer)
        orig = self.f1_original[k, s.indices]
        drop = orig - s.f1[k]
        picks = np.arange(len(s.indices))
        if order != "index":  # stable: equal drops stay in segment order
            picks = np.argsort(drop if order == "fooled" else -drop, kind="stable")
        if limit is not None:
            picks = picks[: max(0, int(limit))]
        return [AuditExample(name, int(s.indices[j]), layer, self.candidates[s.indices[j]], s.texts[j],
                             self.references[s.indices[j]], float(orig[j]), float(s.f1[k, j]),
                             float(self.f1_unrelated[k, s.indices[j]]), float(drop[j]), bool(s.f1[k, j] < orig[j]))
                for j in picks]

    def to_pandas(self):
        """A ``pandas.DataFrame``, one row per perturbation and layer (perturbation-major, as :attr:`rows`):
        ``perturbation``, ``layer``, ``n``, ``pass_rate``, ``mean_drop``, ``relative_drop`` (NaN as NaN), ``ties``,
        ``n_relative``, ``note`` and ``signature`` (the raw scores' of that layer). ``df.attrs`` holds ``layers``,
        ``seed``, ``lang``, ``candidates`` (their number), ``skipped`` and ``warnings``.

        Raises:
            MissingExtraError: pandas is not installed (it comes with ``bertscore-viz[app]``).
        """
        try:
            import pandas as pd  # optional: the [app] extra
        except ImportError:
            from bertscore_viz.extras import MissingExtraError, missing_extra_message
            raise MissingExtraError(missing_extra_message("AuditResult.to_pandas()", "pandas", "app")) from None
        signature = dict(zip(self.layers, self.signatures))
        df = pd.DataFrame([{"perturbation": r.perturbation, "layer": r.layer, "n": r.n, "pass_rate": r.pass_rate,
                            "mean_drop": r.mean_drop, "relative_drop": r.relative_drop, "ties": r.ties,
                            "n_relative": r.n_relative, "note": r.note, "signature": signature[r.layer]}
                           for r in self.rows])
        df.attrs.update({"layers": list(self.layers), "seed": self.seed, "lang": self.lang,
                         "candidates": len(self.candidates), "skipped": list(self.skipped),
                         "warnings": list(self.warnings)})
        return df

    def as_rows(self) -> list[dict]:
        """The CLI's ``--json`` list: ``{perturbation, layer, n, pass_rate, mean_drop, relative_drop}`` per
        perturbation and layer, NaN as null."""
        return [r.as_dict() for r in self.rows]

    def dump_rows(self) -> list[dict]:
        """Every perturbed candidate as a JSON Lines record ``{perturbation, index, candidate, perturbed}``, in the
        order of :attr:`sets` then segment: what ``audit --dump`` writes, enough to re-score and check the figures."""
        return [{"perturbation": s.name, "index": int(i), "candidate": self.candidates[i], "perturbed": t}
                for s in self.sets for i, t in zip(s.indices, s.texts)]


def _json_float(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def audit_figures(name: str, layer: int, f1_original, f1_perturbed, f1_unrelated) -> AuditRow:
    """The figures of one perturbation at one layer from per-pair F1 (the definitions of the module docstring).

    Args:
        name, layer: copied into the row.
        f1_original, f1_perturbed: ``(m,)`` F1 of the pairs where the perturbation applies.
        f1_unrelated: ``(m,)`` F1 of those segments' unrelated candidates, NaN where there is none.

    Returns:
        An :class:`AuditRow`; with m = 0 every figure is NaN and the note says the perturbation did not apply.
    """
    o, p, u = (np.asarray(x, dtype=np.float64) for x in (f1_original, f1_perturbed, f1_unrelated))
    if not (o.shape == p.shape == u.shape) or o.ndim != 1:
        raise InputError(f"Expected three (m,) arrays of F1, got shapes {o.shape}, {p.shape} and {u.shape}.")
    nan = float("nan")
    if len(o) == 0:
        return AuditRow(name, int(layer), 0, nan, nan, nan, note="the perturbation applies to no pair")
    drop = o - p
    both = ~np.isnan(u)
    n_rel = int(both.sum())
    rel, note = nan, ""
    if n_rel == 0:
        note = "no unrelated candidate for these pairs (a data set of one segment, or empty or repeated candidates)"
    else:
        gap = float(np.mean(o[both] - u[both]))
        if gap > GAP_EPS:
            rel = float(np.mean(drop[both])) / gap
        else:
            note = (f"unrelated candidates score as high as the originals on average (mean gap {gap:.3g}): the "
                    "metric does not separate them at this layer, so there is no scale for the drop")
    return AuditRow(name, int(layer), len(o), float(np.mean(p < o)), float(np.mean(drop)), rel,
                    int(np.sum(p == o)), n_rel, note)


def choose_perturbations(names: Sequence[str | Perturbation] | str | None, lang: str
                         ) -> tuple[tuple[Perturbation, ...], tuple[str, ...]]:
    """The perturbations to run, in registry order, ``unrelated`` always among them, and those left out.

    Args:
        names: None (every perturbation whose rules fit ``lang``), names (a list, or one comma-separated string) or
            :class:`Perturbation` objects.
        lang: the candidates' language.

    Returns:
        ``(perturbations, skipped)``: skipped says which were left out for the language, and why.

    Raises:
        InputError: an unknown name, or a perturbation asked for by name whose rules are for another language.
    """
    if names is None:
        chosen = [p for p in PERTURBATIONS if p.applies_to(lang)]
        skipped = tuple(f"{p.name}: its rules are for {', '.join(p.languages or ())}, not {lang!r}"
                        for p in PERTURBATIONS if not p.applies_to(lang))
    else:
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        chosen = [n if isinstance(n, Perturbation) else find_perturbation(n) for n in names]
        if not chosen:
            raise InputError("No perturbation given: name at least one (e.g. 'negation_add,typos'), or None for all.")
        wrong = [p for p in chosen if not p.applies_to(lang)]
        if wrong:
            rules = ", ".join(sorted({x for p in wrong for x in p.languages or ()}))
            raise InputError(f"{', '.join(p.name for p in wrong)}: the rules are for {rules}, and the language is "
                             f"{lang!r}. Leave them out, or set the language (lang=..., --lang) if the texts are in "
                             "it.")
        skipped = ()
    if not any(p.name == UNRELATED for p in chosen):  # the reference point of relative_drop
        chosen.append(find_perturbation(UNRELATED))
    known = [p.name for p in PERTURBATIONS]
    order = {name: k for k, name in enumerate(known)}
    unique = {p.name: p for p in chosen}
    return tuple(sorted(unique.values(), key=lambda p: order.get(p.name, len(known)))), skipped


def perturb_candidates(candidates: Sequence[str], perturbations: Sequence[Perturbation], seed: int
                       ) -> dict[str, list[str | None]]:
    """Every perturbation of every candidate: ``{name: (n,) perturbed texts, None where it does not apply}``, each
    item from its own generator (:func:`~bertscore_viz.evaluation.perturb.item_rng`), so any subset of the
    perturbations gives the same texts."""
    corpus = Corpus(candidates, seed)  # shared: the entity pool and the derangement are computed once
    return {p.name: perturb_all(candidates, p, seed, corpus) for p in perturbations}


def audit(candidates, references, *, scorer: Scorer | None = None,
          perturbations: Sequence[str | Perturbation] | str | None = None, layers: Sequence[int] | str | int = "all",
          seed: int = 0, lang: str | None = None, progress: Callable[[int, int], None] | None = None,
          **options) -> AuditResult:
    """Perturb every candidate and measure, per perturbation and layer, how much raw F1 notices (one model pass).

    Args:
        candidates: ``(n,)`` strings.
        references: ``(n,)`` strings, or lists of strings (several references per candidate: F1 is the maximum).
        scorer: the :class:`Scorer` (model, idf, device, precision, long texts...); or give its options as keyword
            arguments instead (``model=..., idf=True``); default the bundled model. Rescaling is not applied (raw F1).
        perturbations: names (or :class:`Perturbation` objects) to run; default every one whose rules fit ``lang``.
            ``unrelated`` is always run: it is the reference point of ``relative_drop``.
        layers: ``"all"`` (every layer from the one pass), a list of layers, or one layer.
        seed: the perturbations' seed: the same seed gives the same perturbed texts on any machine.
        lang: the candidates' language, which decides the perturbations with language rules; default the scorer's.
        progress: ``progress(done, total)`` in sentences embedded.

    Returns:
        :class:`AuditResult`.

    Raises:
        InputError: unequal lengths, no candidates, unknown or unsuitable perturbations, bad options.
        ModelError: a layer the model does not have.
    """
    scorer = scorer_from(scorer, options)
    cands, groups = normalize_inputs(candidates, references)
    if not cands:
        raise InputError("Nothing to audit: the candidates are empty. Give at least two segments (the unrelated "
                         "candidate of a segment is another segment's).")
    seed = check_whole(seed, "seed")
    lang = scorer.lang if lang is None else str(lang)
    chosen, skipped = choose_perturbations(perturbations, lang)
    texts = perturb_candidates(cands, chosen, seed)
    layers = (layers,) if isinstance(layers, (int, np.integer)) and not isinstance(layers, bool) else layers
    n = len(cands)
    all_cands, all_refs, blocks = list(cands), list(groups), []
    for p in chosen:
        idx = np.array([i for i, t in enumerate(texts[p.name]) if t is not None], dtype=np.int64)
        blocks.append((p, idx, len(all_cands)))
        all_cands.extend(texts[p.name][i] for i in idx)
        all_refs.extend(groups[i] for i in idx)
    idf = scorer.idf_weights([r for g in groups for r in g]) if scorer.idf else None
    stats = scorer.match(all_cands, all_refs, layers=layers, progress=progress, keep="scores", idf_weights=idf)
    results = [scorer.result(stats, layer=layer, baseline=None) for layer in stats.layers]
    f1 = np.stack([r.raw_f1 for r in results])  # (n_layers, all candidates)
    f1_original = f1[:, :n].copy()
    f1_unrelated = np.full_like(f1_original, np.nan)
    sets = []
    for p, idx, start in blocks:
        sets.append(PerturbedSet(p.name, p.description, idx, tuple(texts[p.name][i] for i in idx),
                                 f1[:, start:start + len(idx)].copy()))
        if p.name == UNRELATED:
            f1_unrelated[:, idx] = sets[-1].f1
    rows = tuple(audit_figures(s.name, layer, f1_original[k, s.indices], s.f1[k], f1_unrelated[k, s.indices])
                 for s in sets for k, layer in enumerate(stats.layers))
    warnings = list(scorer.result(stats.select(0, n), layer=stats.layers[0], baseline=None).warnings)
    cut = {p.name: int(np.count_nonzero(stats.cand_truncated[start:start + len(idx)])) for p, idx, start in blocks}
    if any(cut.values()):  # e.g. "addition" doubles a text: past the maximum length its tail is not scored
        counts = ", ".join(f"{name}: {k}" for name, k in cut.items() if k)
        warnings.append(f"{sum(cut.values())} perturbed candidate(s) longer than the model's maximum length were "
                        f"truncated ({counts}); their scores ignore the tail. {WINDOW_HINT}")
    return AuditResult(tuple(cands), tuple(tuple(g) for g in groups), tuple(stats.layers), seed, lang, f1_original,
                       f1_unrelated, tuple(sets), rows, tuple(str(r.signature) for r in results), skipped,
                       tuple(warnings))
