"""Meta-evaluation of metrics against human scores by pairwise accuracy, as WMT's metrics task ranks metrics:
segment-level acc_eq with tie calibration, soft pairwise accuracy and system-level pairwise accuracy, each with a
resampled interval, and a test between the best metric and each other one (:mod:`bertscore_viz.stats.meta`'s
functions, fed from rated outputs).

Input: one entry per rated output: its score under each metric (``{name: (n,) scores}``), its human score, its
system and its item (the segment or document that several systems' outputs share). What is computed:

* **acc_eq** (segment level): grouped by item (pairs of systems' outputs of the same item, averaged over items)
  when at least one item has outputs of 2 or more systems, else over all pairs of outputs (``grouping="none"``; an
  interval then cannot resample items and is not given, and above :data:`MAX_GLOBAL_OUTPUTS` outputs a seeded
  sample of that many is used, said in ``notes``). The epsilon is tie-calibrated per metric and reported.
* **soft pairwise accuracy** and **system-level pairwise accuracy**: with 3 or more systems, on the items every
  system has an output of (the complete ``(systems, segments)`` matrix; how many are used is reported), else not,
  with the reason.

An output whose human score or any metric's score is missing or not finite is left out for every metric (counted
and, per metric, listed by index in ``dropped``); an item rated twice for one system keeps its first output.
A metric that is better when lower is negated first (``lower_is_better``), and the result says so. Items (rows of
the matrices, and so the positions the seeded resamples and permutations draw) are in the order of their first
output; systems in sorted order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from bertscore_viz.errors import InputError
from bertscore_viz.stats import meta

__all__ = ["DEFAULT_ALPHA", "DEFAULT_INTERVAL_RESAMPLES", "DEFAULT_PERMUTATIONS", "DEFAULT_SPA_PERMUTATIONS",
           "DEFAULT_SPA_RESAMPLES", "LEVELS", "MAX_GLOBAL_OUTPUTS", "MAX_GLOBAL_TEST_DRAWS", "MetaEvaluation",
           "MetricMeta", "MetricTest", "format_p", "meta_evaluate"]

ProgressFn = Callable[[int, int], None]
#: The three statistics, in the order shown.
LEVELS = ("acc_eq", "spa", "system")
#: Bootstrap resamples of the acc_eq and system-level intervals (about 0.03 s and 0.1 s per metric for 1,000
#: items x 10 systems on one core).
DEFAULT_INTERVAL_RESAMPLES = 1_000
#: Bootstrap resamples of soft pairwise accuracy's interval and permutations of its test (each recomputes the
#: pairwise p values of every pair of systems: at 1,000 segments x 10 systems about 4 ms each, so 50 resamples and
#: a test of 50 permutations cost about 0.6 s per metric on one core).
DEFAULT_SPA_RESAMPLES = 50
#: Permutations of the tests between metrics (0.4 s per acc_eq test at 1,000 items x 10 systems).
DEFAULT_PERMUTATIONS = 1_000
#: Permutations of the p values inside soft pairwise accuracy, its interval and its test (every resample recomputes
#: them: at 1,000 segments x 10 systems, 1,000 permutations made the section 15 s per metric, 200 about 1 s).
DEFAULT_SPA_PERMUTATIONS = 200
#: A difference is called significant below this p value.
DEFAULT_ALPHA = 0.05
#: Most outputs of a global acc_eq (their pairs grow as the square: 500 outputs are 124,750 pairs, a test of
#: 1,000 permutations about 1 s on one core); above it a seeded sample of this many outputs is used.
MAX_GLOBAL_OUTPUTS = 500
#: Most pairs x permutations of one global acc_eq test (the random draws it makes): 124,750 pairs get 200
#: permutations (about 0.3 s), fewer pairs up to ``n_permutations``; said in ``notes`` when it bounds them.
MAX_GLOBAL_TEST_DRAWS = 25_000_000


@dataclass(frozen=True)
class MetricMeta:
    """One metric's statistics (NaN / None where not computed).

    Attributes:
        name; negated: True when the metric is better when lower and was negated.
        acc_eq, epsilon, acc_eq_ci: tie-calibrated acc_eq, its epsilon (in the metric's units) and 95% interval
            (None for global grouping); pairs: the pairs it counts.
        spa, spa_ci: soft pairwise accuracy and its interval; system, system_ci: system-level pairwise accuracy
            and its interval; system_agreements, system_pairs: the agreeing system pairs of all pairs.
    """

    name: str
    negated: bool
    acc_eq: float
    epsilon: float
    acc_eq_ci: tuple[float, float] | None
    pairs: int
    spa: float = math.nan
    spa_ci: tuple[float, float] | None = None
    system: float = math.nan
    system_ci: tuple[float, float] | None = None
    system_agreements: int = 0
    system_pairs: int = 0


def format_p(p_value: float | None, n_permutations: int) -> str:
    """A permutation p value as text: ``"0.034"``, or ``"< 0.001"`` (``< 1/n``) when none of the ``n``
    permutations reached the observed difference (mt-metrics-eval's count has no +1, so its p can be 0, which a
    finite test cannot show)."""
    if p_value is None or not math.isfinite(p_value):
        return "n/a"
    if p_value == 0 and n_permutations > 0:
        return f"< {1 / n_permutations:.2g}"
    return f"{p_value:.3f}"


@dataclass(frozen=True)
class MetricTest:
    """A permutation test: is ``best`` better than ``other`` at ``level``? ``p_value`` < alpha is significant;
    ``n_permutations`` the permutations it drew."""

    level: str
    best: str
    other: str
    delta: float
    p_value: float
    significant: bool
    n_permutations: int = 0


@dataclass(frozen=True)
class MetaEvaluation:
    """Every metric's pairwise accuracies against the humans.

    Attributes:
        metrics: ``{name: MetricMeta}`` in the order given.
        grouping: ``"item"`` or ``"none"``; grouping_reason: why, in words.
        n_outputs: outputs given; n_used: outputs scored; dropped: ``{metric or "human": [indices]}`` of outputs
            left out for a missing or non-finite value; n_items, n_systems: of the used outputs.
        system_level: whether SPA and system-level accuracy were computed; system_reason: why not (or how many
            segments), n_segments: segments every system has.
        tests: the best metric against each other one, per level; best: ``{level: name}``.
        n_resamples, spa_resamples, n_permutations, seed, alpha, spa_permutations: the settings; notes: anything
            else to say.
    """

    metrics: dict
    grouping: str
    grouping_reason: str
    n_outputs: int
    n_used: int
    dropped: dict
    n_items: int
    n_systems: int
    system_level: bool
    system_reason: str
    n_segments: int
    tests: list
    best: dict
    n_resamples: int
    spa_resamples: int
    n_permutations: int
    seed: int | None
    alpha: float
    notes: list = field(default_factory=list)
    spa_permutations: int = DEFAULT_SPA_PERMUTATIONS

    def as_dict(self) -> dict:
        """JSON-ready: non-finite numbers are None, numbers rounded to 6 decimals."""
        metrics = {}
        for name, m in self.metrics.items():
            metrics[name] = {"negated": m.negated, "acc_eq": _num(m.acc_eq), "epsilon": _num(m.epsilon),
                             "acc_eq_ci95": _ci(m.acc_eq_ci), "pairs": m.pairs, "spa": _num(m.spa),
                             "spa_ci95": _ci(m.spa_ci), "system": _num(m.system), "system_ci95": _ci(m.system_ci),
                             "system_agreements": m.system_agreements, "system_pairs": m.system_pairs}
        return {"grouping": self.grouping, "grouping_reason": self.grouping_reason, "n_outputs": self.n_outputs,
                "n_used": self.n_used, "dropped": {k: list(v) for k, v in self.dropped.items()},
                "n_items": self.n_items, "n_systems": self.n_systems, "system_level": self.system_level,
                "system_reason": self.system_reason, "n_segments": self.n_segments, "metrics": metrics,
                "best": dict(self.best),
                "tests": [{"level": t.level, "best": t.best, "other": t.other, "delta": _num(t.delta),
                           "p_value": _num(t.p_value), "significant": t.significant,
                           "n_permutations": t.n_permutations} for t in self.tests],
                "settings": {"n_resamples": self.n_resamples, "spa_resamples": self.spa_resamples,
                             "n_permutations": self.n_permutations, "spa_permutations": self.spa_permutations,
                             "seed": self.seed, "alpha": self.alpha},
                "notes": list(self.notes)}

    def to_pandas(self):
        """One row per metric: each statistic, its interval bounds and the p value of the best metric against it
        (needs pandas)."""
        import pandas as pd  # optional: the result itself needs numpy only

        p = {(t.level, t.other): t.p_value for t in self.tests}
        rows = []
        for name, m in self.metrics.items():
            row = {"metric": name, "negated": m.negated, "acc_eq": m.acc_eq, "epsilon": m.epsilon}
            for level, value, ci in (("acc_eq", None, m.acc_eq_ci), ("spa", m.spa, m.spa_ci),
                                     ("system", m.system, m.system_ci)):
                if value is not None:
                    row[level] = value
                row[f"{level}_low"], row[f"{level}_high"] = ci if ci else (math.nan, math.nan)
                row[f"{level}_p_vs_best"] = p.get((level, name), math.nan)
            rows.append(row)
        return pd.DataFrame(rows)


def _num(v) -> float | None:
    return None if v is None or not math.isfinite(v) else round(float(v), 6)


def _ci(ci) -> list | None:
    return None if ci is None else [_num(ci[0]), _num(ci[1])]


# ------------------------------------------------------------------------------------------------ the inputs


def _vectors(metrics: Mapping, human, systems, items) -> tuple[dict, np.ndarray, list, list]:
    if not isinstance(metrics, Mapping) or not metrics:
        raise InputError("metrics must be a non-empty {name: scores} mapping.")
    try:
        h = np.asarray(human, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError("human must be numbers (NaN for a missing one).") from exc
    if h.ndim != 1:
        raise InputError(f"human must be one score per output; got shape {h.shape}.")
    n = len(h)
    out = {}
    for name, values in metrics.items():
        try:
            v = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(f"The scores of {name!r} must be numbers (NaN for a missing one).") from exc
        if v.shape != (n,):
            raise InputError(f"{name!r} has {v.size} score(s) for {n} outputs; give one per output.")
        out[str(name)] = v
    sys_list = [None] * n if systems is None else [None if s is None else str(s) for s in systems]
    item_list = [str(i) for i in range(n)] if items is None else [str(i) for i in items]
    for what, values in (("systems", sys_list), ("items", item_list)):
        if len(values) != n:
            raise InputError(f"{what} has {len(values)} entries for {n} outputs; give one per output.")
    return out, h, sys_list, item_list


def _usable(metrics: dict, human: np.ndarray) -> tuple[np.ndarray, dict]:
    dropped = {"human": [int(i) for i in np.flatnonzero(~np.isfinite(human))]}
    keep = np.isfinite(human)
    for name, v in metrics.items():
        dropped[name] = [int(i) for i in np.flatnonzero(~np.isfinite(v))]
        keep &= np.isfinite(v)
    return keep, {k: v for k, v in dropped.items() if v}


@dataclass
class _Cells:
    """The used outputs as (items, systems) cells: ``index[i, s]`` the output, -1 where none."""

    index: np.ndarray
    systems: list
    items: list
    duplicates: int


def _cells(keep: np.ndarray, systems: list, items: list) -> _Cells:
    names = sorted({s for s, k in zip(systems, keep) if k and s is not None})
    item_names = list(dict.fromkeys(i for i, k in zip(items, keep) if k))
    col = {s: j for j, s in enumerate(names)}
    row = {i: j for j, i in enumerate(item_names)}
    index = np.full((len(item_names), max(1, len(names))), -1, dtype=np.int64)
    duplicates = 0
    for k in np.flatnonzero(keep):
        r, c = row[items[k]], col.get(systems[k], 0)
        if index[r, c] >= 0:
            duplicates += 1
        else:
            index[r, c] = k
    return _Cells(index, names, item_names, duplicates)


def _fill(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    out = np.full(index.shape, np.nan)
    present = index >= 0
    out[present] = values[index[present]]
    return out


# -------------------------------------------------------------------------------------------- the statistics


def _global_sample(used: np.ndarray, seed: int | None, notes: list) -> np.ndarray:
    if len(used) <= MAX_GLOBAL_OUTPUTS:
        return used
    notes.append(f"acc_eq over all pairs of outputs: a seeded sample of {MAX_GLOBAL_OUTPUTS:,} of the "
                 f"{len(used):,} outputs (their pairs grow as the square of their number).")
    return np.sort(np.random.default_rng(seed).choice(used, MAX_GLOBAL_OUTPUTS, replace=False))


def _segment_level(vectors: dict, human: np.ndarray, cells: _Cells, grouping: str, n_resamples: int,
                   seed: int | None, notes: list, step: Callable[[], None]) -> dict:
    if grouping == "item":
        h = _fill(human, cells.index)
        mats = {name: _fill(v, cells.index) for name, v in vectors.items()}
    else:
        used = _global_sample(np.sort(cells.index[cells.index >= 0]), seed, notes)
        h = human[used][:, None]
        mats = {name: v[used][:, None] for name, v in vectors.items()}
    out = {}
    for name, m in mats.items():
        result, eps = meta.tie_calibrated_accuracy(h, m, grouping=grouping)
        ci = meta.accuracy_interval(h, m, epsilon=eps, n_resamples=n_resamples, seed=seed) if grouping == "item" \
            else None
        out[name] = (result, eps, ci)
        step()
    return {"human": h, "metrics": mats, "values": out}


def _system_matrices(vectors: dict, human: np.ndarray, cells: _Cells) -> tuple[np.ndarray, dict, str]:
    n_sys = len(cells.systems)
    if n_sys < 3:
        return np.zeros((0, 0)), {}, (f"{n_sys} system(s): soft and system-level pairwise accuracy need 3 or more "
                                      "(outputs name their system in a system column).")
    complete = (cells.index >= 0).all(axis=1)
    if not complete.any():
        return np.zeros((0, 0)), {}, (f"No item has an output of every one of the {n_sys} systems: the systems "
                                      "were not rated on the same segments (give a segment_id column shared by "
                                      "the systems' outputs of one segment).")
    index = cells.index[complete].T  # (systems, segments)
    partial = int((~complete).sum())
    reason = (f"on the {int(complete.sum()):,} segment(s) every one of the {n_sys} systems has"
              + (f" ({partial:,} other item(s) left out: not every system was rated on them)." if partial else "."))
    return _fill(human, index), {name: _fill(v, index) for name, v in vectors.items()}, reason


def _system_level(h: np.ndarray, mats: dict, counts: tuple[int, int, int], seed: int | None,
                  step: Callable[[], None]) -> dict:
    n_resamples, spa_resamples, n_permutations = counts
    out = {}
    for name, m in mats.items():
        spa = meta.soft_pairwise_accuracy(h, m, n_resamples=n_permutations, seed=seed)
        spa_ci = meta.soft_pairwise_interval(h, m, n_resamples=spa_resamples, n_permutations=n_permutations,
                                             seed=seed)
        system = meta.system_pairwise_accuracy(h.mean(axis=1), m.mean(axis=1))
        system_ci = meta.system_accuracy_interval(h, m, n_resamples=n_resamples, seed=seed)
        out[name] = (spa, spa_ci, system, system_ci)
        step()
    return out


def _best(values: dict) -> str | None:
    finite = {k: v for k, v in values.items() if math.isfinite(v)}
    return max(finite, key=lambda k: finite[k]) if finite else None  # the first of equal ones


def _test(level: str, best: str, other: str, comparison: meta.MetricComparison, alpha: float) -> MetricTest:
    return MetricTest(level, best, other, comparison.delta, comparison.p_value, comparison.p_value < alpha,
                      comparison.n_resamples)


def _tests(seg: dict, sysl: dict | None, sys_mats: tuple, grouping: str, settings: dict,
           step: Callable[[], None]) -> tuple[list, dict]:
    seed, alpha, perms, spa_resamples = (settings["seed"], settings["alpha"], settings["n_permutations"],
                                         settings["spa_resamples"])
    tests, best = [], {}
    acc = {k: v[0].accuracy for k, v in seg["values"].items()}
    best["acc_eq"] = _best(acc)
    acc_perms = perms
    if grouping == "none":
        pairs = max(1, next(iter(seg["values"].values()))[0].pairs)
        acc_perms = max(1, min(perms, MAX_GLOBAL_TEST_DRAWS // pairs))
        if acc_perms < perms and len(acc) > 1:
            settings["notes"].append(f"acc_eq's tests over all {pairs:,} pairs: {acc_perms:,} permutations each "
                                     f"(at most {MAX_GLOBAL_TEST_DRAWS:,} pairs x permutations).")
    for other in seg["values"]:
        if best["acc_eq"] is None or other == best["acc_eq"]:
            continue
        b = best["acc_eq"]
        cmp = meta.compare_accuracy(seg["human"], seg["metrics"][b], seg["metrics"][other],
                                    epsilon_a=seg["values"][b][1], epsilon_b=seg["values"][other][1],
                                    grouping=grouping, n_resamples=acc_perms, seed=seed)
        tests.append(_test("acc_eq", b, other, cmp, alpha))
        step()
    if sysl is None:
        return tests, best
    h, mats = sys_mats
    best["spa"] = _best({k: v[0] for k, v in sysl.items()})
    best["system"] = _best({k: v[2].accuracy for k, v in sysl.items()})
    for other in sysl:
        if best["spa"] is not None and other != best["spa"]:
            cmp = meta.compare_soft_pairwise(h, mats[best["spa"]], mats[other], n_resamples=spa_resamples,
                                             n_permutations=settings["spa_permutations"], seed=seed)
            tests.append(_test("spa", best["spa"], other, cmp, alpha))
        if best["system"] is not None and other != best["system"]:
            cmp = meta.compare_system_accuracy(h, mats[best["system"]], mats[other], n_resamples=perms, seed=seed)
            tests.append(_test("system", best["system"], other, cmp, alpha))
        step()
    return tests, best


def _grouping(cells: _Cells) -> tuple[str, str]:
    shared = int(((cells.index >= 0).sum(axis=1) >= 2).sum()) if cells.systems else 0
    if shared:
        return "item", (f"by item: pairs of systems' outputs of the same item ({shared:,} of {len(cells.items):,} "
                        "items have outputs of 2 or more systems), each item's accuracy averaged over items")
    why = "the outputs name no system" if not cells.systems else "no item has outputs of 2 or more systems"
    return "none", f"globally: all pairs of outputs ({why}, so there is no item to group the pairs by)"


def meta_evaluate(metrics: Mapping, human, systems=None, items=None, *, lower_is_better=(),
                  n_resamples: int = DEFAULT_INTERVAL_RESAMPLES, spa_resamples: int = DEFAULT_SPA_RESAMPLES,
                  n_permutations: int = DEFAULT_PERMUTATIONS, spa_permutations: int = DEFAULT_SPA_PERMUTATIONS,
                  seed: int | None = 12345,
                  alpha: float = DEFAULT_ALPHA, progress: ProgressFn | None = None) -> MetaEvaluation:
    """Pairwise accuracy of every metric against the human scores (WMT's meta-evaluation).

    Args:
        metrics: ``{name: (n,) scores}``, one score per rated output (NaN or None for a missing one).
        human: ``(n,)`` human scores; systems: ``(n,)`` system names, or None; items: ``(n,)`` the item (segment
            or document) of each output, shared by the systems' outputs of one item, or None (each its own).
        lower_is_better: names of metrics that are better when lower; they are negated first.
        n_resamples: bootstrap resamples of the acc_eq and system-level intervals; spa_resamples: of SPA's
            interval and its test; n_permutations: of the tests between metrics; spa_permutations: of the
            permutation p values inside soft pairwise accuracy (mt-metrics-eval's ``num_permutations``).
        seed: of every draw; alpha: a test's p value below it is significant.
        progress: ``progress(done, total)`` in metrics and tests computed.

    Returns:
        :class:`MetaEvaluation`.

    Raises:
        InputError: inputs of the wrong length or type, an unknown ``lower_is_better`` name, fewer than 2 usable
            outputs, or bad resample counts.
    """
    vectors, human_v, sys_list, item_list = _vectors(metrics, human, systems, items)
    if all(s is None for s in sys_list):
        item_list = [str(i) for i in range(len(human_v))]  # no systems: every output is its own cell
    elif any(s is None for s in sys_list):
        raise InputError("systems has a None among the names: give every output's system, or systems=None.")
    unknown = [n for n in lower_is_better if n not in vectors]
    if unknown:
        raise InputError(f"lower_is_better names {unknown!r}, not among the metrics {list(vectors)!r}.")
    for value, what in ((n_resamples, "n_resamples"), (spa_resamples, "spa_resamples"),
                        (n_permutations, "n_permutations"), (spa_permutations, "spa_permutations")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{what} must be a positive whole number; got {value!r}.")
    vectors = {k: -v if k in lower_is_better else v for k, v in vectors.items()}
    keep, dropped = _usable(vectors, human_v)
    if keep.sum() < 2:
        raise InputError(f"{int(keep.sum())} output(s) have a finite human score and every metric's score; "
                         "pairwise accuracy needs at least 2.")
    cells = _cells(keep, sys_list, item_list)
    grouping, grouping_reason = _grouping(cells)
    sys_h, sys_mats, system_reason = _system_matrices(vectors, human_v, cells)
    has_system = bool(sys_mats)
    total = 2 * len(vectors) - 1 + 2 * len(vectors) * has_system
    done = [0]

    def step() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    notes: list[str] = []
    if cells.duplicates:
        notes.append(f"{cells.duplicates:,} output(s) repeat an (item, system) already rated: the first is kept.")
    seg = _segment_level(vectors, human_v, cells, grouping, n_resamples, seed, notes, step)
    sysl = _system_level(sys_h, sys_mats, (n_resamples, spa_resamples, spa_permutations), seed, step) \
        if has_system else None
    settings = {"seed": seed, "alpha": alpha, "n_permutations": n_permutations, "spa_resamples": spa_resamples,
                "spa_permutations": spa_permutations, "notes": notes}
    tests, best = _tests(seg, sysl, (sys_h, sys_mats), grouping, settings, step)
    if progress is not None and done[0] < total:
        progress(total, total)
    results = {}
    for name in vectors:
        acc, eps, ci = seg["values"][name]
        extra = {}
        if sysl is not None:
            spa, spa_ci, system, system_ci = sysl[name]
            extra = {"spa": spa, "spa_ci": spa_ci, "system": system.accuracy, "system_ci": system_ci,
                     "system_agreements": system.agreements, "system_pairs": system.pairs}
        results[name] = MetricMeta(name, name in lower_is_better, acc.accuracy, eps, ci, acc.pairs, **extra)
    return MetaEvaluation(results, grouping, grouping_reason, len(human_v), int(keep.sum()), dropped,
                          len(cells.items), len(cells.systems), has_system, system_reason,
                          int(sys_h.shape[1]) if has_system else 0, tests, best, n_resamples, spa_resamples,
                          n_permutations, seed, alpha, notes, spa_permutations)
