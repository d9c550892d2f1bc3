"""The check of a model given as a name or a local folder, before transformers reads any of it: the one door every
client (command line, ``score()``, the app's model check) goes through, so that a broken folder is a one-line
:class:`ModelError` instead of a traceback, an endless read or an allocation of terabytes.

* **The name** is at most :data:`MAX_MODEL_NAME_CHARS` characters (the longest path Linux takes); a name the file
  system cannot look up (a part longer than 255 bytes) is not a folder.
* **The folder's files** are regular files (a pipe among them would be read for ever by transformers).
* **config.json** is a regular file of at most :data:`MAX_CONFIG_BYTES`, UTF-8 JSON, one object, not nested past
  Python's recursion limit; its depth (``num_hidden_layers``), width (``hidden_size``) and vocabulary
  (``vocab_size``) are whole numbers of at least 1 where given.
* **The weights agree with the config**: the embedding table the config describes (``vocab_size x hidden_size``,
  at 2 bytes a value, the smallest dtype transformers loads) is not larger than the weight files on disk, so a
  ``hidden_size`` of 10**9 is refused before a byte is allocated.
* **safetensors files are whole**: the header is read and the tensors it lists must end where the file ends (half
  a ``model.safetensors`` was a SafetensorError trace).

Loading itself (``load_error``) turns what transformers, torch, safetensors and tokenizers raise on a bad folder
(a pickle that would run code, a tokenizer that cannot tokenize) into the same one-line error.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import struct
from pathlib import Path

from bertscore_viz.errors import ModelError, shorten
from bertscore_viz.locations import read_regular, special_kind

__all__ = ["MAX_MODEL_NAME_CHARS", "MAX_CONFIG_BYTES", "MAX_SAFETENSORS_HEADER_BYTES", "LOAD_ERRORS", "is_dir",
           "check_model_name_length", "check_model_folder", "load_error"]

#: The longest model name or path taken (Linux's PATH_MAX); a hub name is far shorter (at most 96 characters).
MAX_MODEL_NAME_CHARS = 4096
#: The largest config.json read (real ones are a few KB; those with label maps of thousands of classes < 1 MB).
MAX_CONFIG_BYTES = 16 * 2**20
#: The largest safetensors header read (the header lists each tensor's name, dtype, shape and offsets).
MAX_SAFETENSORS_HEADER_BYTES = 100 * 2**20
#: What loading a model or tokenizer from a bad folder raises (besides ModelError): turned into a ModelError.
LOAD_ERRORS = (OSError, ValueError, ImportError, RuntimeError, pickle.UnpicklingError, RecursionError, KeyError,
               TypeError, AttributeError, MemoryError, EOFError)
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack")
_PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt")


def is_dir(path: Path) -> bool:
    """``path.is_dir()``, False for a name the file system cannot look up (too long, a permission error)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def check_model_name_length(text: str) -> None:
    """A model name or path of at most :data:`MAX_MODEL_NAME_CHARS` characters, else a ModelError."""
    if len(text) > MAX_MODEL_NAME_CHARS:
        raise ModelError(f"The model name is {len(text):,} characters long ({shorten(text, 40)}); a model name or "
                         f"path has at most {MAX_MODEL_NAME_CHARS:,} (MAX_MODEL_NAME_CHARS). Give a hub name or "
                         "the path of a model folder.")


def _special_files(path: Path, shown: str) -> None:
    try:
        entries = list(os.scandir(path))
    except OSError as exc:
        raise ModelError(f"The model folder {shown} cannot be read: {exc.strerror or exc}.") from None
    for entry in entries:
        try:
            kind = special_kind(entry.stat().st_mode)  # follows symlinks, as transformers does
        except OSError:
            continue  # a dangling link: transformers reports a missing file if it needs it
        if kind is not None and kind != "a directory":
            raise ModelError(f"{entry.name} in the model folder {shown} is {kind}, not a regular file; a model "
                             "folder holds plain files (copy the content into a file).")


def _read_config(path: Path, shown: str) -> dict:
    config = path / "config.json"
    try:
        data = read_regular(config, MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ModelError(f"The folder {shown} holds no config.json, so it is not a Hugging Face model folder. "
                         "Point to the folder that contains config.json and the weights.") from None
    except OSError as exc:
        raise ModelError(f"config.json of the model folder {shown} cannot be read: {exc.strerror or exc}.") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ModelError(f"config.json of the model folder {shown} is larger than {MAX_CONFIG_BYTES // 2**20} MB "
                         "(MAX_CONFIG_BYTES); a model's config is a few KB. Is it the right file?")
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise ModelError(f"config.json of the model folder {shown} is not UTF-8 text.") from None
    except RecursionError:
        raise ModelError(f"config.json of the model folder {shown} is nested too deeply to read; a model's config "
                         "is a flat object of settings.") from None
    except ValueError as exc:
        raise ModelError(f"config.json of the model folder {shown} is not valid JSON: {exc}.") from None
    if not isinstance(value, dict):
        raise ModelError(f"config.json of the model folder {shown} is {type(value).__name__}, not an object of "
                         "settings.")
    return value


def _whole(config: dict, keys: tuple[str, ...], shown: str) -> int | None:
    """The first of ``keys`` present in the config, checked to be a whole number of at least 1."""
    for key in keys:
        if key in config:
            value = config[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ModelError(f"config.json of the model folder {shown} has {key} = {shorten(value, 40)}; it "
                                 "must be a whole number of at least 1 (a model with no layer, no width or no "
                                 "vocabulary cannot score).")
            return value
    return None


def _check_safetensors(file: Path, size: int, shown: str) -> None:
    """The header of a safetensors file read, and the tensors it lists end where the file ends."""
    try:
        head = read_regular(file, 8)
        n = struct.unpack("<Q", head)[0] if len(head) == 8 else -1
        if n < 0 or n > min(size - 8, MAX_SAFETENSORS_HEADER_BYTES):
            raise ValueError("the header's length is past the end of the file")
        header = json.loads(read_regular(file, 8 + n)[8:].decode("utf-8"))
        ends = [int(v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__"]
    except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError, struct.error) as exc:
        raise ModelError(f"{file.name} in the model folder {shown} is not a readable safetensors file ({exc}); "
                         "copy or download it again.") from None
    held, needed = size - 8 - n, max(ends, default=0)
    if held < needed:
        raise ModelError(f"{file.name} in the model folder {shown} is incomplete: its tensors need "
                         f"{needed / 2**20:,.1f} MB but the file holds {held / 2**20:,.1f} MB (a copy or download "
                         "cut short?). Copy or download it again.")


def _weights(path: Path, shown: str) -> int:
    """The total bytes of the weight files (safetensors checked whole); 0 when there are none."""
    total = 0
    for file in sorted(path.iterdir()):
        if not file.name.endswith(_WEIGHT_SUFFIXES) or not file.is_file():
            continue
        size = file.stat().st_size
        total += size
        if file.name.endswith(".safetensors"):
            _check_safetensors(file, size, shown)
    return total


def _size(n: int) -> str:
    return f"{n / 2**30:,.1f} GB" if n >= 2**30 else f"{n / 2**20:,.1f} MB" if n >= 2**20 else f"{n:,} bytes"


def check_model_folder(path: str | Path, shown: str | None = None) -> dict:
    """A local model folder checked before transformers reads it (the module docstring lists what); returns its
    config.

    Args:
        shown: how messages name the folder (default: the path).

    Raises:
        ModelError: the first problem found, in one line.
    """
    path = Path(path)
    shown = shown or str(path)
    _special_files(path, shown)
    config = _read_config(path, shown)
    _whole(config, ("num_hidden_layers", "n_layers", "num_layers"), shown)
    hidden = _whole(config, ("hidden_size", "dim", "d_model"), shown)
    vocab = _whole(config, ("vocab_size",), shown)
    weights = _weights(path, shown)
    if hidden and vocab and weights and vocab * hidden * 2 > weights:
        raise ModelError(f"config.json of the model folder {shown} describes an embedding table of {vocab:,} x "
                         f"{hidden:,} values ({_size(vocab * hidden * 2)} at least), larger than all its weight "
                         f"files ({_size(weights)}): the config does not belong to these weights. Fix hidden_size "
                         "/ vocab_size in config.json.")
    return config


def load_error(what: str, spec_name: str, source: str, exc: BaseException) -> ModelError:
    """The one-line ModelError for an exception raised while loading ``what`` (``"model"``, ``"tokenizer"``)."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
    if isinstance(exc, pickle.UnpicklingError) or "weights_only" in str(exc):
        found = re.search(r"GLOBAL ([\w.]+)", str(exc))
        calls = f" (it calls {found.group(1)})" if found else ""
        return ModelError(f"The weights of {spec_name!r} are a pickle that would run code when loaded{calls}; they "
                          "were not loaded. Use safetensors weights (model.safetensors), or convert a copy you "
                          "trust.")
    if isinstance(exc, RecursionError):
        return ModelError(f"A JSON file of {spec_name!r} is nested too deeply to read; a model's files are flat "
                          "objects of settings.")
    if isinstance(exc, MemoryError) or "can't allocate memory" in first or "not enough memory" in first:
        return ModelError(f"Loading {what} {spec_name!r} needs more memory than this machine has ({first}). "
                          "Check its config.json (hidden_size, vocab_size, num_hidden_layers).")
    return ModelError(
        f"Could not load {what} {spec_name!r} from {source!r}: {first}. A hub name needs internet access or "
        "a copy in the Hugging Face cache; otherwise give a local directory holding config.json, the tokenizer "
        "and the weights, or use the bundled model 'all-MiniLM-L6-v2'.")
