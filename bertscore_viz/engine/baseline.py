"""Rescaling baselines: bert-score-format files (``LAYER,P,R,F``, one row per layer from 0), lookup, rescaling.

Shipped files live in ``baselines/<lang>/<model>.tsv`` (comma-separated despite the name, as bert-score's).
The row is picked by position, as the reference does, after checking that the LAYER column agrees.

Messages and sources name a shipped file relative to the repository (``baselines/fr/<model>.tsv``), so that a
message shown in the app does not reveal where the server keeps its files; a file the caller named (a CLI user's
``--baseline_path``) keeps the name it was given. Inside :func:`full_paths` (the command line, whose user owns the
machine) shipped files are named by their absolute path.
"""

from __future__ import annotations

import contextlib
import contextvars
import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bertscore_viz.engine.arguments import check_lang
from bertscore_viz.errors import BaselineError, shorten
from bertscore_viz.locations import BASELINE_DIR, read_regular

__all__ = ["full_paths", "display_path", "BaselineTable", "check_values", "MAX_BASELINE_CHARS", "parse_baseline",
           "read_baseline", "format_baseline", "shipped_baseline_path", "languages_with_baseline", "find_baseline"]

_FULL_PATHS: contextvars.ContextVar[bool] = contextvars.ContextVar("bertscore_viz_full_paths", default=False)


@contextlib.contextmanager
def full_paths():
    """Within this block (in this thread), messages name shipped baseline files by their absolute path."""
    token = _FULL_PATHS.set(True)
    try:
        yield
    finally:
        _FULL_PATHS.reset(token)


def display_path(path: str | Path) -> str:
    """How messages name a baseline file: a shipped one as ``baselines/<lang>/<file>`` (absolute inside
    :func:`full_paths`), any other as it was given."""
    path = Path(path)
    if not _FULL_PATHS.get():
        for candidate in (path, path.resolve()):  # as built from BASELINE_DIR, else after following links
            try:
                return (Path(BASELINE_DIR.name) / candidate.relative_to(BASELINE_DIR)).as_posix()
            except ValueError:
                continue
    return str(path)


@dataclass(frozen=True)
class BaselineTable:
    """All layers of one baseline file.

    Attributes:
        values: ``(n_layers, 3)`` float64, the P, R and F baselines of layers 0..n-1.
        source: where it came from (a path, or a description).
        layers: the layer of each row when the table holds only some layers (e.g. the one layer a results file
            was rescaled at); None: rows are layers 0..n-1, as in a baseline file.
    """

    values: np.ndarray
    source: str
    layers: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        """Every table, whatever its source (a file, an upload, a saved folder, a results file, a computation), is
        checked here: an impossible value would rescale to nan or inf, or flip the sign of every score."""
        values = check_values(self.values, self.source, self.layers)
        values.setflags(write=False)
        object.__setattr__(self, "values", values)
        if self.layers is not None:
            object.__setattr__(self, "layers", tuple(int(x) for x in self.layers))

    def for_layer(self, layer: int, model: str = "?") -> np.ndarray:
        """``(3,)`` P/R/F baselines of one layer."""
        if self.layers is not None:
            if layer not in self.layers:
                raise BaselineError(f"The baseline {self.source} has rows for layer(s) "
                                    f"{', '.join(map(str, self.layers))} only, but layer {layer} of {model} was asked "
                                    "for.")
            return np.asarray(self.values[self.layers.index(layer)], dtype=np.float64).copy()
        if not 0 <= layer < len(self.values):
            raise BaselineError(
                f"The baseline {self.source} has rows for layers 0 to {len(self.values) - 1}, but layer {layer} "
                f"of {model} was asked for. Compute a baseline for this model with "
                "`python -m bertscore_viz baseline --corpus FILE -m MODEL --lang LANG -o OUT.tsv` "
                "or on the app's Baselines page."
            )
        return self.values[layer].copy()


def check_values(values, source: str, layers: tuple[int, ...] | None = None) -> np.ndarray:
    """``values`` as a fresh ``(n, 3)`` float64 array, or a BaselineError naming the row and what is wrong.

    A baseline is a mean of cosine similarities (and of F1s built from them) between unrelated sentences, so each
    of P, R and F must be a finite number below 1: rescaling computes ``(x - b) / (1 - b)``, which is infinite at
    ``b = 1`` and reverses the order of all scores above it. Values below -1 cannot come from cosine similarities
    either.
    """
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise BaselineError(f"The baseline {source} does not hold numbers: expected P, R and F per layer.") from None
    if arr.ndim != 2 or arr.shape[1] != 3 or arr.shape[0] == 0:
        raise BaselineError(f"The baseline {source} has shape {arr.shape}; expected one row of P, R, F per layer.")
    if layers is not None and (len(layers) != len(arr) or len(set(layers)) != len(layers)
                               or any(int(x) < 0 for x in layers)):
        raise BaselineError(f"The baseline {source} names layers {list(layers)} for {len(arr)} row(s); expected "
                            "one distinct layer (0 or more) per row.")
    for k, row in enumerate(arr):
        layer = k if layers is None else int(layers[k])
        for name, b in zip("PRF", row):
            if not np.isfinite(b) or not -1.0 <= b < 1.0:
                raise BaselineError(
                    f"The baseline {source} gives {name} = {float(b)!r} for layer {layer}; a baseline value must be a "
                    "finite number from -1 up to (not including) 1, since rescaling divides by 1 - b. The file is "
                    "damaged or was not computed as a baseline: recompute it (`python -m bertscore_viz baseline`, "
                    "or the app's Baselines page) or use the shipped one."
                )
    return arr


#: A baseline file has one short row per layer (a few dozen at most); anything larger is not one.
MAX_BASELINE_CHARS = 256 * 1024


def parse_baseline(text: str, source: str = "<text>") -> BaselineTable:
    """Parse a baseline file's text (``LAYER,P,R,F`` header, one row per layer from 0)."""
    if len(text) > MAX_BASELINE_CHARS:
        raise BaselineError(f"The baseline {source} is {len(text):,} characters long; a baseline file (one row per "
                            f"layer) is far smaller, at most {MAX_BASELINE_CHARS:,} characters here. Is it the right "
                            "file?")
    if "\x00" in text:
        raise BaselineError(f"The baseline {source} holds NUL bytes: it is not a text file.")
    try:  # line ends \n, \r\n or \r, as pandas (bert-score's reader) takes them
        reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=None))
        rows = [r for r in reader if r and any(c.strip() for c in r)]
    except csv.Error as exc:
        raise BaselineError(f"The baseline {source} is not a comma-separated table ({exc}).") from None
    if not rows:
        raise BaselineError(f"The baseline {source} is empty. Expected a header LAYER,P,R,F and one row per layer.")
    header = [c.strip().upper() for c in rows[0]]
    if header != ["LAYER", "P", "R", "F"]:
        raise BaselineError(
            f"The baseline {source} starts with {shorten(','.join(rows[0]))}; expected the header LAYER,P,R,F "
            "(bert-score's format)."
        )
    values: list[tuple[float, float, float]] = []
    for n, row in enumerate(rows[1:], start=2):
        try:
            layer, p, r, f = (float(c) for c in row)
        except ValueError:
            raise BaselineError(
                f"Line {n} of the baseline {source} is {shorten(','.join(row))}; expected four numbers LAYER,P,R,F."
            ) from None
        if not float(layer).is_integer() or int(layer) != len(values):
            raise BaselineError(
                f"Line {n} of the baseline {source} is for layer {layer:g}, expected layer {len(values)}: rows "
                "must run from layer 0 upwards without gaps."
            )
        values.append((p, r, f))
    if not values:
        raise BaselineError(f"The baseline {source} has a header but no rows.")
    return BaselineTable(np.asarray(values, dtype=np.float64), source)


def read_baseline(path: str | Path) -> BaselineTable:
    """Read a baseline file; clear errors for a missing, non-UTF-8 or malformed file."""
    path = Path(path)
    shown = display_path(path)
    if path.is_dir():
        raise BaselineError(f"The baseline file {shown} is a directory; give the file (LAYER,P,R,F).")
    try:
        data = read_regular(path, MAX_BASELINE_CHARS + 1)  # a pipe in a baseline folder is refused, not read
        if len(data) > MAX_BASELINE_CHARS:
            raise BaselineError(f"The baseline file {shown} is larger than {MAX_BASELINE_CHARS // 1024} KB; a baseline "
                                "file (one row per layer) is far smaller. Is it the right file?")
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise BaselineError(f"The baseline file {shown} does not exist.") from None
    except UnicodeDecodeError:
        raise BaselineError(f"The baseline file {shown} is not UTF-8 text.") from None
    except OSError as exc:
        raise BaselineError(f"The baseline file {shown} cannot be read: {exc.strerror or exc}.") from None
    return parse_baseline(text, shown)


def format_baseline(values: np.ndarray) -> str:
    """bert-score's format: ``LAYER,P,R,F`` and one row per layer."""
    lines = ["LAYER,P,R,F"]
    for layer, (p, r, f) in enumerate(np.asarray(values, dtype=np.float64)):
        lines.append(f"{layer},{float(p)!r},{float(r)!r},{float(f)!r}")  # numpy 2 reprs say np.float64(..)
    return "\n".join(lines) + "\n"


def shipped_baseline_path(lang: str, model: str) -> Path:
    return BASELINE_DIR / lang / f"{model}.tsv"


def _shipped_file(lang: str, model: str) -> Path | None:
    """The shipped file of (lang, model) when it exists inside the baseline folder: a model name typed as a path
    (``../x``, ``/abs/dir``) never reaches a file elsewhere."""
    path = shipped_baseline_path(lang, model)
    try:
        path.resolve().relative_to(BASELINE_DIR.resolve())
    except ValueError:
        return None
    return path if path.is_file() else None


def languages_with_baseline(model: str) -> list[str]:
    """Languages with a shipped baseline file for ``model`` (sorted; ``en`` first)."""
    langs = {d.name for d in BASELINE_DIR.iterdir()
             if d.is_dir() and d.name != "layers" and _shipped_file(d.name, model) is not None}
    return sorted(langs, key=lambda x: (x != "en", x))


def find_baseline(model: str, lang: str, baseline_path: str | Path | None = None) -> BaselineTable:
    """The baseline for a model and language: an explicit file, else the shipped one.

    Raises:
        BaselineError: naming the file that was looked for, the model, and how to compute one.
    """
    if baseline_path is not None:
        return read_baseline(baseline_path)
    check_lang(lang)
    path = shipped_baseline_path(lang, model)
    if _shipped_file(lang, model) is None:
        raise BaselineError(
            f"No rescaling baseline for model {model!r} and language {lang!r}: {display_path(path)} does not "
            "exist. Compute one from a monolingual corpus (one sentence per line) with "
            f"`python -m bertscore_viz baseline --corpus FILE -m {model} --lang {lang} -o OUT.tsv` "
            "and pass it as baseline_path (--baseline_path), or compute or upload one on the app's "
            "Baselines page (used at once in that session), or turn rescaling off."
        )
    return read_baseline(path)
