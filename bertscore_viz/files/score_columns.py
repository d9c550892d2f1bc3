"""Scores of other metrics that come with the outputs (a COMET column, an LLM judge, a learned metric): read from
an upload's score columns, from a file of one score per line (``compare --scores NAME=FILE``) or from
mt-metrics-eval's ``metric-scores/``; every value checked, every bad one listed (pure, no Streamlit).

A value is a score when it is a finite number (``0.83``, ``-1.5e-2``, a JSON number). Anything else (text,
``NaN``, ``inf``, an empty cell, a missing line) is a **missing score**: it is listed with its row or line and the
system and segment it belongs to, and it is never read as 0. What a metric does with a segment some system has no
score for is :mod:`bertscore_viz.evaluation.own_metrics`'s rule: the segment is left out of that metric for every
system (the tests are paired), and said.

**Columns.** In the long layout (one row per system and segment) a score column holds the score of the row's
output, and the metric is named after the column. In the wide layout (one row per segment, one column per system)
a metric needs one column per system, named ``<metric>_<system>`` or ``<system>_<metric>`` (also with a space,
``-``, ``:`` or ``·`` between): ``comet_sysA, comet_sysB`` are the metric ``comet`` of systems ``sysA`` and
``sysB`` (:func:`wide_score_column`).

**Files** (:func:`scores_from_lines`): one score per line, every system's segments in turn (the systems in the
order the command names them: ``systems x segments`` lines), or two fields per line, ``SYSTEM SCORE`` (whitespace
separated, each system's lines in segment order: mt-metrics-eval's ``<lp>-seg.score`` layout); one system's file
may also hold just its ``segments`` lines when only one system is given.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from bertscore_viz.errors import InputError
from bertscore_viz.files.tables import JsonValue, Problem

__all__ = ["MAX_METRICS", "ScoreColumns", "parse_score", "wide_score_column", "scores_from_lines",
           "scores_from_mtme", "score_problem"]

#: Most metrics of one's own compared at once (each is one more column of every table and one more analysis).
MAX_METRICS = 20
_SEPARATORS = ("_", " ", "-", ":", "·", ".")
_STRIP = " _-:·."
_NUMBER = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$")  # anchored, no nested repetition


def parse_score(value) -> float | None:
    """``value`` as a score: a finite number, or a text holding only one (None otherwise: not a score)."""
    if isinstance(value, (bool, tuple, JsonValue)) or value is None:
        return None
    if isinstance(value, (int, float, np.floating, np.integer)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, str) and _NUMBER.match(value):
        v = float(value)
        return v if math.isfinite(v) else None
    return None


def _shown(value) -> str:
    if isinstance(value, JsonValue):
        return value.describe()
    text = str(value)
    return repr(text if len(text) <= 30 else text[:27] + "...")


def score_problem(value, metric: str, system: str, segment: str, row: int | None, column: str | None) -> Problem:
    """The warning for a value that is not a score (always a warning: the segment is still scored by BERTScore)."""
    what = "empty" if isinstance(value, str) and not value.strip() else f"{_shown(value)}, not a number"
    return Problem(row, column, f"{metric} of system {system!r}, segment {segment!r}, is {what}; {metric} leaves "
                                "this segment out for every system (it is not read as 0).", "warning")


def wide_score_column(column: str, systems: Sequence[str]) -> tuple[str, str] | None:
    """``(metric, system)`` when ``column`` is named ``<metric><sep><system>`` or ``<system><sep><metric>`` for one
    of ``systems`` (the longest system name that fits; letter case must match), else None."""
    best: tuple[str, str] | None = None
    for s in sorted(systems, key=len, reverse=True):
        if not s or s == column:
            continue
        for sep in _SEPARATORS:
            if column.endswith(sep + s) and len(column) > len(s) + len(sep):
                best = (column[: -len(s) - len(sep)].strip(_STRIP), s)
            elif column.startswith(s + sep) and len(column) > len(s) + len(sep):
                best = (column[len(s) + len(sep):].strip(_STRIP), s)
            if best and best[0]:
                return best
            best = None
    return None


@dataclass(frozen=True)
class ScoreColumns:
    """Every metric of one's own read from an input: ``{metric: {system: (n,) float64}}``, NaN where a score is
    missing or not a number (each listed in ``problems``), and where each metric came from."""

    scores: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()

    def merged(self, other: ScoreColumns) -> ScoreColumns:
        """Both, ``other`` winning for a metric named in both (raises for a name clash from different inputs)."""
        clash = sorted(set(self.scores) & set(other.scores))
        if clash:
            raise InputError(f"The metric {clash[0]!r} is given twice ({self.origins[clash[0]]} and "
                             f"{other.origins[clash[0]]}); rename one (--scores NAME=FILE names it).")
        return ScoreColumns(self.scores | other.scores, self.origins | other.origins, self.problems + other.problems)


def _check_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise InputError("A metric of one's own needs a name: --scores NAME=FILE, e.g. --scores COMET=comet.txt.")
    if name in ("P", "R", "F1", "chrF", "BLEU", "TER"):
        raise InputError(f"The metric name {name!r} is taken by a metric the comparison computes itself; name "
                         "yours differently (e.g. 'COMET', 'judge').")
    return name


def _two_fields(name: str, lines: list[str], systems: Sequence[str], n: int, where: str):
    values: dict[str, list] = {s: [] for s in systems}
    problems: list[Problem] = []
    for k, line in enumerate(lines, 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2:
            raise InputError(f"{where} line {k}: expected SYSTEM SCORE (two fields) as on the other lines, got "
                             f"{len(parts)} fields.")
        system, raw = parts
        if system not in values:
            raise InputError(f"{where} line {k}: unknown system {system!r}; the systems are "
                             f"{', '.join(map(repr, systems))}.")
        values[system].append((raw, k))
    for s, got in values.items():
        if len(got) != n:
            raise InputError(f"{where}: system {s!r} has {len(got):,} scores; expected {n:,} (one per segment, in "
                             "segment order).")
    arrays = {}
    for s, got in values.items():
        out = np.full(n, np.nan)
        for i, (raw, k) in enumerate(got):
            v = parse_score(raw)
            if v is None:
                problems.append(score_problem(raw, name, s, str(i + 1), None, f"{where} line {k}"))
            else:
                out[i] = v
        arrays[s] = out
    return arrays, problems


def scores_from_lines(name: str, lines: Sequence[str], systems: Sequence[str], n_segments: int,
                      where: str) -> ScoreColumns:
    """A metric's scores from a file's lines (see the module docstring for the two layouts).

    Args:
        name: the metric's name; lines: the file's lines; systems: the systems in the command's order;
        n_segments: segments per system; where: the file, for messages.

    Raises:
        InputError: a line count that fits neither layout, an unknown system, a bad name.
    """
    name = _check_name(name)
    lines = [line.rstrip("\r\n") for line in lines]
    while lines and not lines[-1].strip():
        lines.pop()
    two = sum(len(line.split()) == 2 for line in lines)
    if lines and two == len([line for line in lines if line.strip()]) and not all(
            parse_score(line.split()[0]) is not None for line in lines if line.strip()):
        arrays, problems = _two_fields(name, lines, systems, n_segments, where)
        return ScoreColumns({name: arrays}, {name: where}, tuple(problems))
    want = n_segments * len(systems)
    if len(lines) != want:
        raise InputError(f"{where} has {len(lines):,} lines; {name} needs one score per line for every system's "
                         f"segments in turn ({len(systems)} systems x {n_segments:,} segments = {want:,} lines, the "
                         "systems in the order given), or lines of SYSTEM SCORE.")
    arrays, problems = {}, []
    for j, s in enumerate(systems):
        out = np.full(n_segments, np.nan)
        for i in range(n_segments):
            raw = lines[j * n_segments + i]
            v = parse_score(raw)
            if v is None:
                problems.append(score_problem(raw, name, s, str(i + 1), None,
                                              f"{where} line {j * n_segments + i + 1}"))
            else:
                out[i] = v
        arrays[s] = out
    return ScoreColumns({name: arrays}, {name: where}, tuple(problems))


def scores_from_mtme(metric_scores: Mapping[str, Mapping[str, Mapping[str, Sequence]]], systems: Sequence[str],
                     names: Sequence[str] | None = None, label: str = "mt-metrics-eval") -> ScoreColumns:
    """Segment-level scores of mt-metrics-eval's ``metric-scores/`` (``EvalSet.metric_scores``: ``{name: {level:
    {system: scores}}}``) for ``systems``: every metric with segment scores for all of them (or those ``names``).

    Raises:
        InputError: a name asked for that has no segment scores for every system.
    """
    out: dict[str, dict[str, np.ndarray]] = {}
    origins: dict[str, str] = {}
    problems: list[Problem] = []
    for name, levels in metric_scores.items():
        if names is not None and name not in names:
            continue
        seg = levels.get("seg", {})
        missing = [s for s in systems if s not in seg]
        if missing:
            if names is not None:
                raise InputError(f"The metric {name!r} of {label} has no segment scores for "
                                 f"{', '.join(map(repr, missing[:5]))}.")
            continue
        arrays = {}
        for s in systems:
            values = [parse_score(v) for v in seg[s]]
            for i, v in enumerate(values):
                if v is None:
                    problems.append(score_problem(seg[s][i], name, s, str(i + 1), None, f"{label} {name}"))
            arrays[s] = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        out[name], origins[name] = arrays, f"{label}'s metric-scores ({name})"
    unknown = sorted(set(names or ()) - set(out))
    if unknown:
        raise InputError(f"{label} has no segment-level metric scores named {', '.join(map(repr, unknown))}; it has "
                         f"{', '.join(map(repr, sorted(metric_scores))) or 'none'}.")
    return ScoreColumns(out, origins, tuple(problems))
