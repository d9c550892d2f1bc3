"""The one place that checks what callers hand the engine: texts, flags, whole numbers, layers, languages, paths.

Every client (the Python API, the CLI, the app, Ray, the loss) reaches the engine through :class:`Scorer` and
:func:`score`, which check their arguments here before any work; a bad value raises the engine's own error
(:class:`~bertscore_viz.errors.InputError`, ``ModelError`` or ``BaselineError``) saying what was given, what was
expected and how to fix it, never a ``TypeError`` from deep inside. ``bool`` is not a whole number here
(``layer=True`` is refused, not read as layer 1), and a flag must be a bool (``rescale_with_baseline="no"`` would
otherwise be true).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal, overload

import numpy as np

from bertscore_viz.errors import BaselineError, InputError, ModelError, shorten
from bertscore_viz.models.spec import ModelSpec

__all__ = ["PRECISIONS", "DEFAULT_TOKEN_BUDGET",
           "check_texts", "normalize_inputs", "check_flag", "check_whole", "check_layers", "check_lang", "check_path",
           "check_model_name", "corpus_tag", "LONG_TEXT_MODES", "check_long_texts", "check_precision"]

#: The precisions a model runs in: ``fp32`` is exact (bert-score's numbers); the others are named in the signature.
PRECISIONS = ("fp32", "fp16", "bf16")
#: Padded cells (sentences x longest length) allowed in one forward batch: bounds a batch's memory whatever the
#: lengths.
DEFAULT_TOKEN_BUDGET = 4096
#: A language code as baseline folders are named (``en``, ``zh``, ``en-sci``, ``pt_BR``): letters, digits, ``-``,
#: ``_``; no path separators, so a language can never name a file outside the baseline folder.
_LANG = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")


def check_texts(values, what: str) -> list[str]:
    """A list of strings from any iterable of strings (list, tuple, numpy array, generator), each valid Unicode.

    Raises:
        InputError: a single string, a non-iterable, a mapping (a dict's keys are not texts), a non-string element,
            or a string holding a lone surrogate (which no tokenizer can read), naming the index.
    """
    if isinstance(values, str):
        raise InputError(f"Expected a list of {what} strings, got a single string {shorten(values)}. "
                         f"Wrap it in a list: [{shorten(values)}].")
    if isinstance(values, (bytes, bytearray)) or not isinstance(values, Iterable):
        raise InputError(f"Expected a list of {what} strings, got {type(values).__name__} {shorten(values)}.")
    if isinstance(values, Mapping):  # iterating a dict gives its keys: {'x': 1} would score the text 'x'
        raise InputError(f"Expected a list of {what} strings, got a {type(values).__name__} {shorten(values)} "
                         "(whose keys would be read as the texts). Give a list of strings.")
    out = list(values)
    for i, v in enumerate(out):
        if isinstance(v, np.str_):
            v = out[i] = str(v)
        if not isinstance(v, str):
            raise InputError(f"Expected every {what} to be a string, but the one at index {i} is "
                             f"{type(v).__name__} {shorten(v)}. Convert missing values to '' first.")
        if not v.isascii():
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise InputError(f"The {what} at index {i} is not valid Unicode text: it holds a lone surrogate "
                                 f"{v[exc.start]!r} at position {exc.start} (text decoded with errors='surrogate"
                                 "escape' or a broken string). Decode the source as UTF-8 or replace it.") from None
    return out


def normalize_inputs(candidates, references) -> tuple[list[str], list[list[str]]]:
    """Candidates as a list of strings, references as one non-empty list of strings per candidate.

    Raises:
        InputError: unequal lengths, non-strings, or a candidate with an empty list of references.
    """
    cands = check_texts(candidates, "candidate")
    if isinstance(references, str):
        raise InputError(f"Expected a list of references, got a single string {shorten(references)}.")
    if isinstance(references, (bytes, bytearray, Mapping)) or not isinstance(references, Iterable):
        raise InputError(f"Expected a list of references (strings, or lists of strings for several references per "
                         f"candidate), got {type(references).__name__} {shorten(references)}.")
    refs_in = list(references)
    if len(cands) != len(refs_in):
        raise InputError(
            f"Expected as many candidates as references, got {len(cands)} candidates and {len(refs_in)} "
            "references. Check that both files have one sentence per line."
        )
    groups: list[list[str]] = []
    for i, r in enumerate(refs_in):
        if isinstance(r, (str, np.str_)):
            groups.append(check_texts([r], "reference"))
            continue
        if isinstance(r, (bytes, bytearray, Mapping)) or not isinstance(r, Iterable):
            raise InputError(f"Reference {i} is {type(r).__name__} {shorten(r)}; expected a string or a list of "
                             "strings.")
        group = check_texts(r, f"reference of candidate {i}")
        if not group:
            raise InputError(f"Candidate {i} has an empty list of references; give at least one.")
        groups.append(group)
    return cands, groups


def check_flag(value, what: str) -> bool:
    """A bool (or numpy bool); anything else is refused rather than read by its truth value."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"{what} must be True or False, got {type(value).__name__} {shorten(value)}.")


@overload
def check_whole(value, what: str, minimum: int | None = None, optional: Literal[False] = False) -> int: ...
@overload
def check_whole(value, what: str, minimum: int | None = None, optional: bool = False) -> int | None: ...
def check_whole(value, what: str, minimum: int | None = None, optional: bool = False) -> int | None:
    """A whole number (int or numpy integer, not bool), at least ``minimum``; None passes when ``optional``."""
    if value is None and optional:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{what} must be a whole number, got {type(value).__name__} {shorten(value)}.")
    if minimum is not None and value < minimum:
        raise InputError(f"{what} must be at least {minimum}, got {int(value)}.")
    return int(value)


def check_layers(layers, num_layers: int, model: str) -> tuple[int, ...]:
    """Layers to compute: ``"all"``, or a non-empty sequence of distinct whole numbers in ``0..num_layers``."""
    if isinstance(layers, str):
        if layers == "all":
            return tuple(range(num_layers + 1))
        raise InputError(f"layers must be 'all' or a list of layer numbers, got {layers!r}.")
    if not isinstance(layers, Iterable):
        raise InputError(f"layers must be 'all' or a list of layer numbers, got {type(layers).__name__} "
                         f"{shorten(layers)}.")
    out = tuple(check_whole(x, "Each layer") for x in layers)
    if not out:
        raise InputError("layers is empty: give at least one layer (0 = embeddings), or 'all'.")
    bad = [x for x in out if not 0 <= x <= num_layers]
    if bad:
        raise ModelError(f"Layer(s) {', '.join(map(str, bad))} do not exist in {model}: it has layers 0 to "
                         f"{num_layers} (0 = embeddings).")
    return tuple(dict.fromkeys(out))


def check_lang(lang) -> str:
    """A language code naming a baseline folder (``en``, ``zh``, ``en-sci``)."""
    if not isinstance(lang, str) or not _LANG.match(lang):
        raise BaselineError(f"lang must be a language code such as 'en', 'de' or 'zh' (letters, digits, '-', '_'), "
                            f"got {type(lang).__name__} {shorten(lang)}.")
    return lang


def check_path(value, what: str) -> str | None:
    """A file path (str or os.PathLike) or None; a directory is refused."""
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)) or isinstance(value, bytes):
        raise InputError(f"{what} must be a file path, got {type(value).__name__} {shorten(value)}.")
    path = Path(value)
    if str(value).strip() == "":
        raise InputError(f"{what} is empty; give a file path.")
    if path.is_dir():
        raise InputError(f"{what} {path} is a directory; give a file.")
    return str(value)


def check_model_name(model) -> None:
    """A model is None, a name or a path (str / os.PathLike); anything else is refused before it is looked up."""
    if model is None or isinstance(model, (str, os.PathLike)):
        return
    if isinstance(model, ModelSpec):
        return
    raise ModelError(f"model must be a model name or a directory path (a string), got {type(model).__name__} "
                     f"{shorten(model)}. Leave it unset for the bundled model.")


def corpus_tag(sentences: list[str]) -> str:
    """``corpus-{n}-{sha8}``: how a signature names idf computed from these sentences (order and content count)."""
    digest = hashlib.sha256("\n".join(sentences).encode("utf-8")).hexdigest()[:8]
    return f"corpus-{len(sentences)}-{digest}"


#: The modes of ``long_texts``: ``truncate`` (bert-score's: the tail past the maximum is dropped) and ``window``.
LONG_TEXT_MODES = ("truncate", "window")


def check_long_texts(mode) -> str:
    """``mode`` if it is one of :data:`LONG_TEXT_MODES`, else an InputError that lists them."""
    if not isinstance(mode, str) or mode not in LONG_TEXT_MODES:
        raise InputError(f"long_texts must be 'truncate' (bert-score's: the tail past the model's maximum length is "
                         f"dropped) or 'window' (long texts are embedded in overlapping windows), got {mode!r}.")
    return mode


def check_precision(precision) -> str:
    """One of :data:`PRECISIONS`.

    Raises:
        ModelError: anything else, naming the precisions there are.
    """
    if not isinstance(precision, str) or precision not in PRECISIONS:
        raise ModelError(f"Unknown precision {precision!r}. Expected one of {', '.join(PRECISIONS)}.")
    return precision
