"""WMT16 DA segments with the system that produced each, and what a metric difference means on them.

The layout is ``data/wmt16-da-to-english`` (data/README.md): per language pair ``lp``, line-aligned files
``DAseg-newstest2016.{human,mt-system,reference}.<lp>`` and ``DAseg-newstest2016.details.<lp>``, a tab-separated
table with a header (``LP DATA THIS.SID ORIG.SID SYSTEM``) and one row per segment naming its system.

**The shipped details files.** The six ``details`` files in this repository are byte-identical: all six list the
cs-en bookkeeping (their ``LP`` column says ``cs-en``), as in the repository they were copied from. Their system
names are therefore cs-en's, not those of the de-en, fi-en, ... segments. :func:`read_rated_da` reads a language
pair only when its details file's ``LP`` column names that pair, and lists every other one in ``skipped`` with the
reason: on the shipped data only cs-en (5 systems, 10 system pairs) has its systems.

Within one language pair each segment is a different source sentence translated by one system, so two systems'
human (and metric) means are taken over different segments: the deltas are not paired.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from bertscore_viz.errors import InputError
from bertscore_viz.stats.delta_agreement import DEFAULT_SUBSET_FRACTION, DeltaAgreement, segment_delta_agreement

__all__ = ["DETAILS_COLUMNS", "PREFIX", "DetailsOfAnotherPair", "RatedDA", "read_details", "read_rated_da",
           "wmt16_delta_agreement"]

PREFIX = "DAseg-newstest2016"
#: The details file's header, in order (tab-separated; runs of tabs are one separator).
DETAILS_COLUMNS = ("LP", "DATA", "THIS.SID", "ORIG.SID", "SYSTEM")


class DetailsOfAnotherPair(InputError):
    """A details file whose rows belong to another language pair."""


@dataclass(frozen=True)
class RatedDA:
    """The rated segments of every language pair whose systems are known, concatenated in ``lps`` order.

    Attributes:
        lps: language pairs read; groups, systems: ``(n,)`` each segment's language pair and system; human:
            ``(n,)`` DA z-scores; candidates, references: ``(n,)`` texts; skipped: ``{lp: reason}`` for the pairs
            not read.
    """

    lps: tuple[str, ...]
    groups: np.ndarray
    systems: np.ndarray
    human: np.ndarray
    candidates: tuple[str, ...]
    references: tuple[str, ...]
    skipped: dict[str, str] = field(default_factory=dict)


def _lines(path: Path) -> list[str]:
    if not path.is_file():
        raise InputError(f"{path} is missing: expected a file laid out as WMT16 DA ({PREFIX}.<kind>.<lp>).")
    return path.read_text(encoding="utf-8").splitlines()


def read_details(data_dir: str | Path, lp: str) -> np.ndarray:
    """The system of each segment of ``lp`` from ``DAseg-newstest2016.details.<lp>`` (``(n,)`` str).

    Raises :class:`~bertscore_viz.errors.InputError` when the header is not :data:`DETAILS_COLUMNS`, a row has not
    five fields, or a row's ``LP`` is not ``lp`` (the details belong to another language pair).
    """
    path = Path(data_dir) / f"{PREFIX}.details.{lp}"
    lines = _lines(path)
    rows = [[f for f in line.split("\t") if f.strip()] for line in lines if line.strip()]
    if not rows or tuple(rows[0]) != DETAILS_COLUMNS:
        raise InputError(f"{path}: the first line must be the header {' '.join(DETAILS_COLUMNS)} (tab-separated).")
    systems = []
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(DETAILS_COLUMNS):
            raise InputError(f"{path}, line {number}: expected {len(DETAILS_COLUMNS)} tab-separated fields, got "
                             f"{len(row)}.")
        if row[0] != lp:
            raise DetailsOfAnotherPair(f"{path}, line {number}: the row is for {row[0]}, not {lp}: this details "
                                       f"file lists another language pair's bookkeeping, so it does not say which "
                                       f"system made the {lp} segments.")
        systems.append(row[4].strip())
    return np.array(systems, dtype=object)


def _read_lp(data_dir: Path, lp: str) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    systems = read_details(data_dir, lp)
    human_lines, cands, refs = (_lines(data_dir / f"{PREFIX}.{kind}.{lp}")
                                for kind in ("human", "mt-system", "reference"))
    if not (len(human_lines) == len(cands) == len(refs) == len(systems)):
        raise InputError(f"{lp}: expected one line per segment in every file; got {len(human_lines)} human scores, "
                         f"{len(cands)} outputs, {len(refs)} references and {len(systems)} details rows.")
    try:
        human = np.array([float(x) for x in human_lines], dtype=np.float64)
    except ValueError as exc:
        raise InputError(f"{lp}: a human score is not a number ({exc}).") from None
    return systems, human, cands, refs


def read_rated_da(data_dir: str | Path, lps: Sequence[str] | None = None) -> RatedDA:
    """Every (or the given) language pair of a WMT16 DA directory whose details name its systems.

    A pair whose details file belongs to another pair is skipped with its reason (module docstring); other
    problems (a missing file, unequal line counts, a score that is not a number) raise
    :class:`~bertscore_viz.errors.InputError`. None readable at all is an error too.
    """
    data_dir = Path(data_dir)
    if lps is None:
        found = sorted(p.name[len(PREFIX) + len(".human."):] for p in data_dir.glob(f"{PREFIX}.human.*"))
        lps = found
    if not lps:
        raise InputError(f"No language pair found in {data_dir}: expected files {PREFIX}.human.<lp>.")
    read, skipped = [], {}
    for lp in lps:
        try:
            read.append((lp, *_read_lp(data_dir, lp)))
        except DetailsOfAnotherPair as exc:
            skipped[lp] = str(exc)
    if not read:
        raise InputError(f"No language pair of {data_dir} names its systems: " + " ".join(skipped.values()))
    return RatedDA(tuple(r[0] for r in read),
                   np.concatenate([np.full(len(r[1]), r[0], dtype=object) for r in read]),
                   np.concatenate([r[1] for r in read]), np.concatenate([r[2] for r in read]),
                   tuple(c for r in read for c in r[3]), tuple(x for r in read for x in r[4]), skipped)


def wmt16_delta_agreement(f1: Mapping[str, ArrayLike], data_dir: str | Path, *, subsets: int = 0,
                          subset_fraction: float = DEFAULT_SUBSET_FRACTION, seed: int = 0,
                          tie_tolerance: float = 0.0, window_pairs: int | None = None) -> DeltaAgreement:
    """How often the WMT16 DA humans agree with an F1 difference of a given size, system pairs within a language pair.

    Args:
        f1: ``{lp: (560,) F1 of each segment}``, in the files' line order, for (at least) every language pair
            :func:`read_rated_da` reads (on the shipped data: cs-en only; the others are in ``result.extra``).
        data_dir: the WMT16 DA directory (``data/wmt16-da-to-english`` in a clone).
        subsets, subset_fraction, seed, tie_tolerance, window_pairs: as
            :func:`~bertscore_viz.stats.delta_agreement.segment_delta_agreement`.

    Returns the :class:`~bertscore_viz.stats.delta_agreement.DeltaAgreement` of F1, ``extra`` holding ``lps`` (read)
    and ``skipped`` (``{lp: reason}``).
    """
    rated = read_rated_da(data_dir)
    missing = [lp for lp in rated.lps if lp not in f1]
    if missing:
        raise InputError(f"no F1 scores given for {', '.join(missing)}; give {{lp: (n,) F1}} for {list(rated.lps)}.")
    scores = np.concatenate([np.asarray(f1[lp], dtype=np.float64) for lp in rated.lps])
    if len(scores) != len(rated.human):
        raise InputError(f"expected one F1 per segment ({len(rated.human)} in {list(rated.lps)}); got {len(scores)}.")
    result = segment_delta_agreement({"F1": scores}, rated.human, rated.systems, rated.groups, subsets=subsets,
                                     subset_fraction=subset_fraction, seed=seed, tie_tolerance=tie_tolerance,
                                     window_pairs=window_pairs)["F1"]
    result.extra.update(lps=list(rated.lps), skipped=dict(rated.skipped))
    return result
