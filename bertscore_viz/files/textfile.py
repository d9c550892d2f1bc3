"""The one place that reads text files of sentences (one per line) and decodes text bytes: the command line's
``-c``/``-r`` files, baseline corpora (files and uploads) and anything else given as plain text.

Lines are read as bert-score's command line reads them (``open(path)`` and ``[line.strip() for line in f]``):
Python's universal newlines, so ``\\n``, ``\\r\\n`` and ``\\r`` each end a line, and nothing else does (a vertical
tab, ``\\x1c`` or U+2028 stays inside its line, where ``str.splitlines`` would split); each line is then stripped
of surrounding whitespace; a final line end does not start another line. A UTF-8 byte-order mark is dropped.

Errors say what the file is instead: a directory, missing, empty (no lines at all), a compressed file, an
archive, a spreadsheet, a PDF or another known format (by its first bytes, :mod:`bertscore_viz.files.formats`),
UTF-16 or UTF-32 (by its byte-order mark, or by its zero bytes), binary, or text in another 8-bit encoding (with the
offset and line of the first byte UTF-8 cannot read, and how to convert it).
"""

from __future__ import annotations

import io
from pathlib import Path

from bertscore_viz.errors import InputError
from bertscore_viz.files.formats import identify_binary, looks_binary, wide_encoding
from bertscore_viz.locations import NotRegularFile, read_regular

__all__ = ["decode_text", "split_lines", "read_bytes", "read_text_lines"]


def decode_text(data: bytes, what: str) -> str:
    """UTF-8 text (a byte-order mark dropped), or an InputError naming what the bytes are and what to do.

    Args:
        what: how messages name the input, e.g. ``"The candidate file hyps.txt"`` or ``"The corpus upload.txt"``.

    Raises:
        InputError: a known non-text format (compressed, archive, spreadsheet, PDF, ...), UTF-16/32 text, binary
            data, or text in another 8-bit encoding.
    """
    found = identify_binary(data)
    if found is not None:
        raise InputError(found.sentence(what))
    wide = wide_encoding(data)
    if wide is not None:
        raise InputError(f"{what} is {wide} text; save it as UTF-8 (in an editor: encoding UTF-8; in Excel: 'CSV "
                         f"UTF-8'), or convert it: `iconv -f {wide} -t UTF-8 FILE > FILE.utf8`.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        if looks_binary(data):
            raise InputError(f"{what} is not text (it holds zero bytes or control characters; byte {exc.start}, "
                             f"line {line}, is not UTF-8): give a plain text file, one sentence per line.") from None
        bad = data[exc.start: exc.start + 4]
        raise InputError(f"{what} is not UTF-8: byte {exc.start} (line {line}) is {bad!r}. It is in another "
                         "encoding; convert it with `iconv -f ENCODING -t UTF-8 FILE > FILE.utf8`, ENCODING being "
                         "the file's (`file -i FILE` may tell; WINDOWS-1252 for most Western files from Windows, "
                         "ISO-8859-2 for Central European ones).") from None


def split_lines(text: str) -> list[str]:
    """Lines as Python's universal newlines give them (``\\n``, ``\\r\\n``, ``\\r``), each stripped."""
    return [line.rstrip("\n").strip() for line in io.StringIO(text, newline=None)]


def read_bytes(path: str | Path, what: str) -> bytes:
    """A file's bytes, or an InputError that says it is a directory, missing or unreadable."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"The {what} {path} is a directory; give a file (one sentence per line).")
    if path.exists() and not path.is_file():  # a pipe or a device (/dev/zero would be read for ever)
        raise InputError(f"The {what} {path} is not a regular file (a pipe, socket or device); save its content "
                         "to a file and give that.")
    try:
        return read_regular(path)  # checked again on the opened file: one swapped for a pipe meanwhile is refused
    except FileNotFoundError:
        raise InputError(f"The {what} {path} does not exist.") from None
    except NotRegularFile:
        raise InputError(f"The {what} {path} is not a regular file (a pipe, socket or device); save its content "
                         "to a file and give that.") from None
    except OSError as exc:
        raise InputError(f"The {what} {path} cannot be read: {exc.strerror or exc}.") from None


def read_text_lines(path: str | Path, what: str, allow_empty: bool = False) -> list[str]:
    """The stripped lines of a UTF-8 text file, as bert-score reads ``-c``/``-r`` files.

    Args:
        what: ``"candidate file"``, ``"reference file"``, ``"corpus file"``: how messages name it.
        allow_empty: a file with no line at all gives ``[]`` instead of an error.

    Raises:
        InputError: a directory, a missing or unreadable file, not UTF-8 text, or (unless ``allow_empty``) empty.
    """
    data = read_bytes(path, what)
    lines = split_lines(decode_text(data, f"The {what} {path}"))
    if not lines and not allow_empty:
        raise InputError(f"The {what} {path} is empty: it has no lines. Give one sentence per line.")
    return lines
