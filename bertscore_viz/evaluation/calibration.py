"""Where a BERTScore number stands: its percentile among random pairs of unrelated sentences and, where rated data
exists, among outputs humans rated in the bottom, middle and top third.

**Random pairs.** The pairs a rescaling baseline is computed from (:mod:`bertscore_viz.rescaling.baseline_compute`)
are scored at every layer; the quantiles of their raw P, R and F1 are stored at :data:`RANDOM_LEVELS` (every
percent, every per mille in the outer 1%, 0.01% and 0.05% at both ends; level 0 is the lowest pair, 1 the highest).
The baseline is the mean of the same per-pair scores: :func:`compute_baseline_and_calibration` computes both.

**Percentile rule** (:func:`interpolate_percentile`): at or below the lowest random pair 0; at or above the highest
100 (so an identical pair, F1 = 1, is at 100); in between, linear interpolation between neighbouring stored
quantiles, a value shared by several levels taking their middle level. It reads "higher than X% of random pairs" to
within the level spacing (1 point in the middle, 0.1 point in the outer 1%).

**Human bands.** Rated outputs (the WMT16 DA to-English example: 3,360 translations, 6 language pairs, DA z-scores)
are split at the 1/3 and 2/3 quantiles e1, e2 of the human score over all rows: bottom third ``h < e1``, middle
``e1 <= h < e2``, top ``h >= e2``; each band stores the quantiles of its raw P, R, F1 at every layer (every percent).
A value is set against the band whose median is nearest to it in units of that band's interquartile range: "typical
of" it from the band's 5th to its 95th percentile, else the sentence says how it stands there.

Calibrations hold raw scores without idf: rescaling is increasing, so a rescaled score has its raw score's
percentile (:func:`percentile_random` reads ``raw_f1``). Files: ``baselines/<lang>/<model>.calibration.json``.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from bertscore_viz.engine.arguments import check_whole
from bertscore_viz.engine.options import ScoringOptions
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import BaselineError, InputError, shorten
from bertscore_viz.files.fileio import atomic_write_text
from bertscore_viz.files.human_scores import parse_human_scores
from bertscore_viz.locations import BASELINE_DIR, EXAMPLES_DIR
from bertscore_viz.rescaling.baseline_compute import (
    DEFAULT_MAX_WORDS,
    BaselineResult,
    CorpusLines,
    block_moments,
    compute_baseline,
    score_block,
)
from bertscore_viz.versions import __version__, package_version

__all__ = [
    "BAND_LEVELS", "BAND_NAMES", "FORMAT", "LENGTH_MARGIN", "RANDOM_LEVELS", "WMT16_EXAMPLE", "Calibration",
    "CalibrationReading", "HumanBand", "PairCollector", "add_human_bands", "calibration_applies",
    "calibration_path_for", "compute_baseline_and_calibration", "find_calibration", "human_bands",
    "interpolate_percentile", "missing_calibration_hint", "missing_calibration_message", "percentile_random",
    "quantile_grid", "random_pair_calibration", "read_calibration", "read_rated_example", "register_calibration",
    "require_calibration", "score_all_layers", "shipped_calibration_path", "write_calibration",
]

FORMAT = "bertscore-viz-calibration/1"
_TAIL = [0.0, 0.0001, 0.0005] + [i / 1000 for i in range(1, 10)]
#: Quantile levels stored for random pairs: fine in the tails, where real outputs land.
RANDOM_LEVELS = np.round(np.array(_TAIL + [i / 100 for i in range(1, 100)] + [1 - x for x in reversed(_TAIL)]), 6)
#: Quantile levels stored for each human band: every percent.
BAND_LEVELS = np.round(np.arange(101) / 100.0, 6)
BAND_NAMES = ("bottom third", "middle third", "top third")
#: The rated example the shipped English calibration's human bands come from.
WMT16_EXAMPLE = EXAMPLES_DIR / "wmt16_da_to_english.csv"
_WHICH = {"p": 0, "precision": 0, "r": 1, "recall": 1, "f": 2, "f1": 2}
_LETTERS = ("P", "R", "F")
_REGISTERED: dict[tuple[str, str], Calibration] = {}
_READ_CACHE: dict[tuple[str, int, int], Calibration] = {}
ProgressFn = Callable[[int, int], None]


def _which(which: str) -> int:
    if str(which).lower() in _WHICH:
        return _WHICH[str(which).lower()]
    raise InputError(f"which must be 'precision', 'recall' or 'f1' (or P, R, F), got {shorten(which)}.")


def interpolate_percentile(values, quantiles, levels) -> np.ndarray:
    """Percentile (0..100) of each value in a distribution given by its quantiles (the rule in the module docstring).

    Args:
        values: any shape; NaN gives NaN. quantiles: ``(q,)`` non-decreasing values at ``levels``, ``(q,)``
            increasing from 0 to 1.

    Returns:
        float64 array of the shape of ``values``.
    """
    q = np.asarray(quantiles, dtype=np.float64)
    lv = np.asarray(levels, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    xs, inverse = np.unique(q, return_inverse=True)
    mids = np.bincount(inverse, weights=lv) / np.bincount(inverse)  # a plateau takes its middle level
    out = np.interp(v, xs, mids) * 100.0
    out = np.where(v <= xs[0], 0.0, out)
    out = np.where(v >= xs[-1], 100.0, out)
    return np.where(np.isnan(v), np.nan, out)


def quantile_grid(values, levels) -> np.ndarray:
    """``(n, n_layers, 3)`` per-item scores -> ``(n_layers, 3, q)`` quantiles (``numpy.quantile``, linear), rounded to
    7 decimals except the smallest and largest."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 3 or v.shape[2] != 3 or len(v) == 0 or not np.isfinite(v).all():
        raise InputError(f"Expected finite per-item scores of shape (n, n_layers, 3) with n >= 1, got shape {v.shape}"
                         f" with {int((~np.isfinite(v)).sum())} non-finite value(s).")
    grid = np.moveaxis(np.quantile(v, np.asarray(levels, dtype=np.float64), axis=0, method="linear"), 0, -1)
    out = np.round(grid, 7)  # small files; the ends stay exact, so the lowest pair is at 0 and the highest at 100
    out[..., 0], out[..., -1] = grid[..., 0], grid[..., -1]
    return np.clip(out, grid[..., :1], grid[..., -1:])


def _checked(a, source: str, what: str, shape: tuple | None = None, quantiles: bool = True) -> np.ndarray:
    """A read-only float64 copy of ``a``, or a BaselineError: levels (``shape`` None) rise strictly from 0 to 1;
    other arrays have ``shape``, finite values and, for quantiles, values that never fall with the level."""
    arr = np.array(a, dtype=np.float64)
    if shape is None:
        bad = arr.ndim != 1 or len(arr) < 2 or arr[0] != 0.0 or arr[-1] != 1.0 or bool(np.any(np.diff(arr) <= 0))
    else:
        bad = arr.shape != shape or not np.isfinite(arr).all() or (quantiles and bool(np.any(np.diff(arr) < 0)))
    if bad:
        _damaged(source, f"{what} {shorten(arr.tolist())} of shape {arr.shape}; expected " + (
            "levels rising from 0 to 1" if shape is None else f"shape {shape} of finite values"
            + (" that never fall with the level" if quantiles else "")))
    arr.setflags(write=False)
    return arr


def _damaged(source: str, what: str) -> None:
    raise BaselineError(f"The calibration {source} has {what}. The file is damaged or is not a calibration: compute "
                        f"it again ({missing_calibration_hint('MODEL', 'LANG')}).")


@dataclass(frozen=True, eq=False)
class HumanBand:
    """Outputs humans rated in one band: ``name`` (``"top third"``...), human scores ``low <= h < high`` (``-inf`` /
    ``inf`` at the ends), ``count`` outputs, ``quantiles``: ``(n_layers, 3, q)`` raw P, R, F1 quantiles at the
    calibration's ``band_levels`` (checked by the :class:`Calibration` holding it)."""

    name: str
    low: float
    high: float
    count: int
    quantiles: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "quantiles", np.array(self.quantiles, dtype=np.float64))
        self.quantiles.setflags(write=False)


@dataclass(frozen=True)
class CalibrationReading:
    """Where one value stands (:meth:`Calibration.reading`): ``percentile_random`` (0..100) among ``n_random``
    random pairs; ``band_percentiles``, ``{band: percentile among its outputs}`` (empty without bands); the
    ``typical_band`` (or None) and its ``band_count`` outputs; ``human_source`` and ``human_items`` name the data."""

    value: float
    layer: int
    which: str
    percentile_random: float
    n_random: int
    band_percentiles: dict
    typical_band: str | None
    band_count: int = 0
    human_source: str = ""
    human_items: str = "outputs"

    def sentence(self) -> str:
        """``"higher than 99.7% of random pairs of unrelated sentences; typical of translations humans rated in the
        top third (WMT16 DA to English)"``."""
        if math.isnan(self.percentile_random):
            return "no percentile: the score is missing"
        text = _standing(self.percentile_random, self.n_random, "random pairs of unrelated sentences")
        if self.typical_band is None:
            return text
        band_pct = self.band_percentiles[self.typical_band]  # "typical" from its 5th to its 95th percentile
        rated = f"{self.human_items} humans rated in the {self.typical_band}" + (
            f" ({self.human_source})" if self.human_source else "")
        return text + "; " + (f"typical of {rated}" if 5.0 <= band_pct <= 95.0 else
                              _standing(band_pct, self.band_count, rated))

    def as_dict(self) -> dict:
        return {"value": self.value, "layer": self.layer, "which": self.which, "n_random": self.n_random,
                "percentile_random": self.percentile_random, "band_percentiles": dict(self.band_percentiles),
                "typical_band": self.typical_band, "sentence": self.sentence()}


def _standing(pct: float, count: int, what: str) -> str:
    """``"higher than 82.6% of <what>"``; below 5 ``"lower than 97.1% of <what>"``; ``"higher than all 1,000 <what>"``
    at 100 (``"lower than all"`` at 0). As many decimals as keep the share from reading 0 or 100 (``99.997``)."""
    if pct >= 100.0 or pct <= 0.0:
        return f"{'higher' if pct >= 100.0 else 'lower'} than all {count:,} {what}"
    share, word = (100.0 - pct, "lower") if pct < 5.0 else (pct, "higher")
    digits = next((d for d in range(1, 7) if 0.0 < float(f"{share:.{d}f}") < 100.0), 6)
    return f"{word} than {share:.{digits}f}% of {what}"


@dataclass(frozen=True, eq=False)
class Calibration:
    """Quantiles of raw P, R and F1 over random unrelated pairs (and optional human bands), per layer.

    Attributes:
        model, lang: as the baseline files name them; idf: False for every computed calibration (random pairs have
            no reference corpus to weight by).
        layers: the layers covered, in the order of the arrays' first axis.
        levels: ``(q,)`` quantile levels (:data:`RANDOM_LEVELS`); random: ``(n_layers, 3, q)`` quantiles of P, R, F1.
        n_random: random pairs behind them; random_means: ``(n_layers, 3)`` their means (= the baseline).
        bands: human bands, low to high (may be empty); band_levels: their ``(q_b,)`` levels.
        human_source, human_items: e.g. ``"WMT16 DA to English"`` and ``"translations"``.
        provenance: how it was computed (command, corpus, checksums, seed, pairs, versions).

    Methods take ``layer``, one of :attr:`layers` (BaselineError otherwise), and ``which``: ``"precision"``,
    ``"recall"`` or ``"f1"`` (also P, R, F; InputError otherwise); values are raw scores, a number or an array.
    """

    model: str
    lang: str
    idf: bool
    layers: tuple[int, ...]
    levels: np.ndarray
    random: np.ndarray
    n_random: int
    random_means: np.ndarray
    bands: tuple[HumanBand, ...] = ()
    band_levels: np.ndarray | None = None
    human_source: str = ""
    human_items: str = "outputs"
    provenance: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        src = f"of {self.model} ({self.lang})"
        object.__setattr__(self, "layers", tuple(int(x) for x in self.layers))
        if (n := len(self.layers)) == 0 or len(set(self.layers)) != n:
            _damaged(src, f"layers {list(self.layers)}, not distinct layers")
        object.__setattr__(self, "levels", levels := _checked(self.levels, src, "levels"))
        object.__setattr__(self, "random", _checked(self.random, src, "random-pair quantiles", (n, 3, len(levels))))
        object.__setattr__(self, "random_means", _checked(self.random_means, src, "means", (n, 3), False))
        object.__setattr__(self, "bands", tuple(self.bands))
        if self.bands:
            object.__setattr__(self, "band_levels", band_levels := _checked(self.band_levels, src, "band levels"))
            for b in self.bands:
                _checked(b.quantiles, src, f"band {b.name!r} quantiles", (n, 3, len(band_levels)))

    def _row(self, layer: int) -> int:
        try:
            return self.layers.index(int(layer))
        except ValueError:
            raise BaselineError(f"The calibration of {self.model} ({self.lang}) covers layer(s) "
                                f"{', '.join(map(str, self.layers))}, not layer {layer}. Compute one for that layer "
                                f"(see {missing_calibration_hint(self.model, self.lang)}).") from None

    def percentile(self, values, layer: int, which: str = "f1"):
        """Percentile (0..100) of raw scores among the random pairs (float for a number, else an array)."""
        out = interpolate_percentile(values, self.random[self._row(layer), _which(which)], self.levels)
        return float(out) if out.ndim == 0 else out

    def quantile(self, percent, layer: int, which: str = "f1"):
        """The score at a percentile of the random pairs (the ladder), interpolated between stored levels."""
        q = np.interp(np.asarray(percent, dtype=np.float64) / 100.0, self.levels,
                      self.random[self._row(layer), _which(which)])
        return float(q) if q.ndim == 0 else q

    def band_percentiles(self, value: float, layer: int, which: str = "f1") -> dict[str, float]:
        """``{band name: percentile of value among that band's outputs}`` (empty without bands)."""
        row, k = self._row(layer), _which(which)
        return {b.name: float(interpolate_percentile(value, b.quantiles[row, k], self.band_levels))
                for b in self.bands}

    def band_median(self, band: str, layer: int, which: str = "f1") -> float:
        """The median score of a band's outputs."""
        for b in self.bands:
            if b.name == band:
                return float(np.interp(0.5, self.band_levels, b.quantiles[self._row(layer), _which(which)]))
        raise InputError(f"No band {shorten(band)}; have {[x.name for x in self.bands]}.")

    def typical_band(self, value: float, layer: int, which: str = "f1") -> str | None:
        """The band whose median is nearest to ``value`` in units of its interquartile range (None without bands;
        ties to the lower band)."""
        if not self.bands or value != value:
            return None
        row, k = self._row(layer), _which(which)
        quartiles = [np.interp([0.25, 0.5, 0.75], self.band_levels, b.quantiles[row, k]) for b in self.bands]
        distance = [abs(value - q50) / max(q75 - q25, 1e-12) for q25, q50, q75 in quartiles]
        return self.bands[int(np.argmin(distance))].name  # argmin: the first (lower) band on ties

    def reading(self, value: float, layer: int, which: str = "f1") -> CalibrationReading:
        """Where one raw score (a pair's, or a system's mean) stands: random pairs and human bands."""
        value, band = float(value), self.typical_band(float(value), layer, which)
        count = next((b.count for b in self.bands if b.name == band), 0)
        return CalibrationReading(value, int(layer), str(which), self.percentile(value, layer, which),
                                  self.n_random, self.band_percentiles(value, layer, which), band, count,
                                  self.human_source, self.human_items)

    def as_dict(self) -> dict:
        def grid(a: np.ndarray) -> dict:
            return {c: a[:, i, :].tolist() for i, c in enumerate(_LETTERS)}

        human = None
        if self.bands:
            human = {"source": self.human_source, "items": self.human_items,
                     "levels": self.band_levels.tolist(),
                     "bands": [{"name": b.name, "low": None if math.isinf(b.low) else b.low,
                                "high": None if math.isinf(b.high) else b.high, "count": b.count,
                                "quantiles": grid(b.quantiles)} for b in self.bands]}
        return {"format": FORMAT, "model": self.model, "lang": self.lang, "idf": self.idf,
                "layers": list(self.layers), "levels": self.levels.tolist(),
                "random": {"pairs": self.n_random,
                           "means": {c: self.random_means[:, i].tolist() for i, c in enumerate(_LETTERS)},
                           "quantiles": grid(self.random)},
                "human": human, "provenance": self.provenance}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"

    @classmethod
    def from_dict(cls, data: dict, source: str = "<dict>") -> Calibration:
        """Read :meth:`as_dict`'s layout, with a BaselineError naming what is wrong."""
        if data.get("format") != FORMAT:
            _damaged(source, f"format {shorten(data.get('format'))}, not {FORMAT!r}")
        try:
            def grid(d: dict) -> np.ndarray:
                return np.stack([np.asarray(d[c], dtype=np.float64) for c in _LETTERS], axis=1)

            rnd = data["random"]
            human = data.get("human") or {}
            bands = tuple(HumanBand(b["name"], -math.inf if b["low"] is None else float(b["low"]),
                                    math.inf if b["high"] is None else float(b["high"]), int(b["count"]),
                                    grid(b["quantiles"])) for b in human.get("bands", ()))
            means = np.stack([np.asarray(rnd["means"][c], dtype=np.float64) for c in _LETTERS], axis=1)
            return cls(str(data["model"]), str(data["lang"]), bool(data["idf"]), tuple(data["layers"]),
                       np.asarray(data["levels"], dtype=np.float64), grid(rnd["quantiles"]), int(rnd["pairs"]),
                       means, bands, np.asarray(human["levels"], dtype=np.float64) if bands else None,
                       str(human.get("source", "")), str(human.get("items", "outputs")),
                       dict(data.get("provenance") or {}))
        except BaselineError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            _damaged(source, f"an unexpected layout ({type(exc).__name__}: {shorten(str(exc))})")


LENGTH_MARGIN = 1.5  #: widens a calibration's 5th-95th percentile of reference words (6-40: texts of 4-60 placed)


def calibration_applies(words: float, low: float, high: float, margin: float = LENGTH_MARGIN) -> bool:
    """Whether texts of ``words`` words (a pair's mean, a dataset's median) can be placed on a calibration whose
    data's references have ``low``-``high`` words (5th-95th percentile): ``low / margin <= words <= high * margin``."""
    return low / margin <= float(words) <= high * margin


# --- files and lookup -------------------------------------------------------------------------------------------
def shipped_calibration_path(lang: str, model: str) -> Path:
    """``baselines/<lang>/<model>.calibration.json`` inside the package."""
    return BASELINE_DIR / lang / f"{model}.calibration.json"


def calibration_path_for(baseline_output: str | Path) -> Path:
    """``OUT.tsv`` -> ``OUT.calibration.json`` (beside the baseline it belongs to)."""
    out = Path(baseline_output)
    return out.with_name((out.name[: -len(out.suffix)] if out.suffix else out.name) + ".calibration.json")


def write_calibration(calibration: Calibration, path: str | Path) -> Path:
    """Write the JSON file atomically (a failure leaves any earlier file as it was)."""
    return atomic_write_text(path, calibration.to_json())


def read_calibration(path: str | Path) -> Calibration:
    """Read a calibration file (cached by path, size and mtime); BaselineError if missing, unreadable or not one."""
    path = Path(path)
    try:
        st = path.stat()
        key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
        if key not in _READ_CACHE:
            data = json.loads(path.read_text(encoding="utf-8"))
            _READ_CACHE[key] = Calibration.from_dict(data if isinstance(data, dict) else {}, path.name)
        return _READ_CACHE[key]
    except FileNotFoundError:
        raise BaselineError(f"The calibration file {path.name} does not exist.") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"The calibration file {path.name} cannot be read as JSON: {shorten(str(exc))}.") from None


def register_calibration(calibration: Calibration) -> None:
    """Make a computed calibration the one :func:`find_calibration` returns for its model and language here."""
    _REGISTERED[(calibration.lang, calibration.model)] = calibration


def missing_calibration_hint(model: str, lang: str) -> str:
    """The command (and the function) that compute a calibration for a model and language."""
    return (f"`python -m bertscore_viz baseline --corpus FILE -m {model} --lang {lang} -o OUT.tsv`, which writes "
            "OUT.calibration.json beside the baseline, or "
            "bertscore_viz.evaluation.calibration.compute_baseline_and_calibration")


def missing_calibration_message(model: str, lang: str, idf: bool = False) -> str:
    """Why there is no calibration for these settings, and how to compute one."""
    if idf:
        return ("Calibrations place scores without idf (random pairs have no reference corpus to weight by), so "
                "there is none for idf-weighted scores; turn idf off to see where a score stands.")
    return (f"No calibration for model {model!r} and language {lang!r}: baselines/{lang}/{model}.calibration.json "
            "does not exist, so where a score stands among random pairs is unknown. Compute one from a monolingual "
            f"corpus with {missing_calibration_hint(model, lang)}.")


def find_calibration(model_name: str, lang: str, idf: bool = False) -> Calibration | None:
    """The calibration of a model and language: one registered in this process, else the shipped file; None when
    there is none or for idf-weighted scores (:func:`missing_calibration_message` says why and how to compute one).
    """
    if idf:
        return None
    if (lang, model_name) in _REGISTERED:
        return _REGISTERED[(lang, model_name)]
    path = shipped_calibration_path(lang, model_name)
    try:  # a model or language typed as a path never reaches a file outside the baseline folder
        path.resolve().relative_to(BASELINE_DIR.resolve())
    except ValueError:
        return None
    return read_calibration(path) if path.is_file() else None


def require_calibration(model_name: str, lang: str, idf: bool = False) -> Calibration:
    """:func:`find_calibration`, or a BaselineError with :func:`missing_calibration_message`."""
    cal = find_calibration(model_name, lang, idf)
    if cal is None:
        raise BaselineError(missing_calibration_message(model_name, lang, idf))
    return cal


def percentile_random(result, calibration: Calibration, which: str = "f1") -> np.ndarray:
    """Each pair's percentile (0..100) among random pairs from a ScoreResult's raw scores (``score --json
    --calibrate``'s ``percentile_random``): ``(n,)`` float64. BaselineError when the result's model or idf setting
    is not the calibration's, or its layer is not covered."""
    sig = result.signature
    if sig.model != calibration.model or bool(sig.idf) != calibration.idf:
        raise BaselineError(f"The scores are from {sig.model} (idf {sig.idf}), the calibration from "
                            f"{calibration.model} (idf {calibration.idf}): a percentile needs both from the same.")
    raw = (result.raw_precision, result.raw_recall, result.raw_f1)[_which(which)]
    return np.atleast_1d(calibration.percentile(np.asarray(raw, dtype=np.float64), sig.layer, which))


# --- computing --------------------------------------------------------------------------------------------------
def score_all_layers(scorer: Scorer, candidates, references, progress: ProgressFn | None = None) -> np.ndarray:
    """Raw P, R, F1 (no idf) of every output at every layer from one model pass: ``(n, n_layers, 3)`` float64
    (several references: each score's maximum, as bert-score)."""
    stats = scorer.match(candidates, references, layers="all", keep="scores", progress=progress)
    out = np.empty((len(stats.candidates), len(stats.layers), 3))
    for j, layer in enumerate(stats.layers):
        res = scorer.result(stats, layer=layer, idf=False, baseline=None)
        out[:, j, :] = np.stack([res.raw_precision, res.raw_recall, res.raw_f1], axis=1)
    return out


def random_pair_calibration(values, model: str, lang: str, layers: Sequence[int] | None = None,
                            provenance: dict | None = None, levels=RANDOM_LEVELS) -> Calibration:
    """A calibration from ``values``, the ``(n_pairs, n_layers, 3)`` raw P, R, F1 of random pairs; ``layers``: the
    layer of each column (default 0 .. n_layers - 1)."""
    v = np.asarray(values, dtype=np.float64)
    grid = quantile_grid(v, levels)
    layers = tuple(range(v.shape[1])) if layers is None else tuple(layers)
    return Calibration(model, lang, False, layers, np.asarray(levels, dtype=np.float64), grid, int(len(v)),
                       v.mean(axis=0), provenance=dict(provenance or {}))


def human_bands(values, human, levels=BAND_LEVELS) -> tuple[HumanBand, ...]:
    """Split rated outputs (``values``: ``(n, n_layers, 3)`` raw P, R, F1; ``human``: ``(n,)``) at the 1/3 and 2/3
    quantiles of their human scores; the quantiles of each band's scores. Raises InputError for shapes that do not
    match, a non-finite human score, or a band left empty by ties."""
    v, h = np.asarray(values, dtype=np.float64), np.asarray(human, dtype=np.float64)
    if v.ndim != 3 or h.shape != (len(v),) or not np.isfinite(h).all():
        raise InputError(f"Expected one finite human score per output: scores of shape {v.shape}, human {h.shape} "
                         f"({int((~np.isfinite(h)).sum())} not finite). Leave unrated outputs out first.")
    e1, e2 = (float(e) for e in np.quantile(h, [1.0 / 3.0, 2.0 / 3.0]))
    bands = []
    for name, mask, lo, hi in zip(BAND_NAMES, (h < e1, (h >= e1) & (h < e2), h >= e2), (-math.inf, e1, e2),
                                  (e1, e2, math.inf)):
        if not mask.any():
            raise InputError(f"The {name} of the human scores is empty (too many equal scores at {lo:g}..{hi:g}); "
                             "human bands need scores that spread over thirds.")
        bands.append(HumanBand(name, lo, hi, int(mask.sum()), quantile_grid(v[mask], levels)))
    return tuple(bands)


def read_rated_example(path: str | Path = WMT16_EXAMPLE):
    """The rated outputs of a CSV/TSV/JSONL file (default the WMT16 DA example) and its provenance record:
    ``(HumanScored, {"file", "sha256", "rows", "left_out", "human_column"})``."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"The rated file {path} cannot be read: {exc.strerror or exc}.") from None
    rated = parse_human_scores(data, path.name)
    shown = path.relative_to(EXAMPLES_DIR.parent.parent).as_posix() if path.is_relative_to(EXAMPLES_DIR) else str(path)
    return rated, {"file": shown, "sha256": hashlib.sha256(data).hexdigest(), "rows": len(rated.candidates),
                   "left_out": len(rated.problems), "human_column": rated.human_column}


def add_human_bands(calibration: Calibration, scorer: Scorer, candidates, references, human, source: str,
                    items: str = "outputs", provenance: dict | None = None,
                    progress: ProgressFn | None = None) -> Calibration:
    """The calibration with human bands from rated outputs, scored at the calibration's layers (one model pass).

    Args:
        scorer: a Scorer of the calibration's model (its layer, idf and rescaling are not used).
        source: e.g. ``"WMT16 DA to English"``; items: what was rated (``"translations"``); provenance: recorded
            under ``provenance["human"]`` (file, checksum, rows...).

    Raises:
        InputError: the scorer's model is not the calibration's, or bad human scores.
    """
    if scorer.spec.name != calibration.model:
        raise InputError(f"The calibration is of {calibration.model}, the scorer runs {scorer.spec.name}: human "
                         "bands must be scored with the same model.")
    values = score_all_layers(scorer, candidates, references, progress)[:, list(calibration.layers), :]
    bands = human_bands(values, human)
    prov = dict(calibration.provenance)
    prov["human"] = dict(provenance or {}) | {
        "source": source, "outputs": int(len(values)), "edges": [bands[0].high, bands[1].high],
        "bands": "split at the 1/3 and 2/3 quantiles e1, e2 of the human score over all rows: bottom h < e1, "
                 "middle e1 <= h < e2, top h >= e2"}
    return replace(calibration, bands=bands, band_levels=np.asarray(BAND_LEVELS, dtype=np.float64),
                   human_source=source, human_items=items, provenance=prov)


class PairCollector:
    """A ``run_blocks`` for :func:`~bertscore_viz.rescaling.baseline_compute.compute_baseline` that scores each block
    here exactly as its own loop does (:func:`score_block`, then :func:`block_moments`) and keeps every pair's
    scores, so that the baseline and the calibration come from the same numbers."""

    def __init__(self, scorer: Scorer):
        self.scorer = scorer
        self._values: list[np.ndarray] = []

    def __call__(self, sentences, blocks, n_layers: int, progress: ProgressFn | None = None):
        total, done = int(sum(len(p) for p in blocks)), 0
        if progress:
            progress(0, total)
        for pairs in blocks:
            def block_progress(d: int, t: int, before=done, k=pairs.shape[0]) -> None:
                if progress and t:
                    progress(before + int(k * 0.9 * d / t), total)

            values = score_block(self.scorer, [sentences[i] for i in pairs[:, 0]],
                                 [sentences[j] for j in pairs[:, 1]], n_layers, block_progress)
            self._values.append(values)
            done += len(pairs)
            if progress:
                progress(done, total)
            yield block_moments(values)

    def values(self) -> np.ndarray:
        """``(n_pairs, n_layers, 3)`` of every block scored so far, in block order."""
        return np.concatenate(self._values) if self._values else np.zeros((0, 0, 3))


def compute_baseline_and_calibration(corpus: CorpusLines, model=None, lang: str = "en", n_pairs: int | None = None,
                                     seed: int = 0, max_words: int = DEFAULT_MAX_WORDS, batch_size: int = 64,
                                     device: str | None = None, progress: ProgressFn | None = None,
                                     block_pairs: int | None = None, scorer: Scorer | None = None,
                                     command: str | None = None) -> tuple[BaselineResult, Calibration]:
    """The rescaling baseline and the calibration of a model, from one pass over the same random pairs.

    Arguments as :func:`~bertscore_viz.rescaling.baseline_compute.compute_baseline` (the same corpus, pairs and
    seed give the same baseline file); ``command`` is recorded in the calibration's provenance.

    Returns:
        ``(BaselineResult, Calibration)``; the calibration's ``random_means`` are the baseline's means.

    Raises:
        InputError: as ``compute_baseline`` (bad seed or pairs, too few usable sentences).
    """
    check_whole(seed, "seed", minimum=0)  # before the model loads
    check_whole(n_pairs, "the number of pairs", minimum=1, optional=True)
    if scorer is None:
        scorer = ScoringOptions(model=model, batch_size=batch_size, device=device).for_every_layer().scorer()
    collector = PairCollector(scorer)
    result = compute_baseline(corpus, lang=lang, n_pairs=n_pairs, seed=seed, max_words=max_words,
                              progress=progress, block_pairs=block_pairs, scorer=scorer, run_blocks=collector)
    values, base = collector.values(), result.provenance
    provenance = {
        "description": (f"calibration of {base['model']} ({lang}): quantiles of raw P, R and F1 over the "
                        f"{base['pairs']} random pairs its baseline is the mean of"),
        "command": command or (f"compute_baseline_and_calibration(corpus={base['corpus']['path']!r}, "
                               f"lang={lang!r}, n_pairs={base['pairs']}, seed={seed}, max_words={max_words})"),
        "baseline_sha256": hashlib.sha256(result.tsv().encode("utf-8")).hexdigest(),
        "largest_mean_difference_to_baseline": float(np.max(np.abs(values.mean(axis=0) - result.means))),
        "quantiles": "numpy.quantile(method='linear') of the per-pair scores at each level; raw scores, no idf",
        **{k: base[k] for k in ("model", "model_source", "lang", "corpus", "pairs", "seed", "max_words", "pairing",
                                "precision") if k in base},
        "date": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "bertscore_viz_version": __version__, "numpy_version": np.__version__,
        **{f"{name}_version": package_version(name) for name in ("transformers", "torch")},
    }
    return result, random_pair_calibration(values, base["model"], lang, provenance=provenance)
