"""The one place that reads text files of sentences (one per line) and decodes text bytes: the command line's
``-c``/``-r`` files, baseline corpora (files and uploads) and anything else given as plain text.

Lines are read as bert-score's command line reads them (``open(path)`` and ``[line.strip() for line in f]``):
Python's universal newlines, so ``\\n``, ``\\r\\n`` and ``\\r`` each end a line, and nothing else does (a vertical
tab, ``\\x1c`` or U+2028 stays inside its line, where ``str.splitlines`` would split); each line is then stripped
of surrounding whitespace; a final line end does not start another line. A UTF-8 byte-order mark is dropped.

Errors say what the file is instead: a directory, missing, empty (no lines at all), UTF-16 or UTF-32 (by its
byte-order mark, or by its zero bytes), binary, or text in another 8-bit encoding (with the offset and line of the
first byte UTF-8 cannot read, and how to convert it).
"""

from __future__ import annotations

import io
from pathlib import Path

from bertscore_viz.errors import InputError

_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
         (b"\xfe\xff", "UTF-16"))


def _wide_encoding(data: bytes) -> str | None:
    """UTF-16 or UTF-32 from a byte-order mark, or from zero bytes in every other (fourth) byte of a text
    without one."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    head = data[:4096]
    if len(head) >= 8:
        zeros = [head[i::4].count(0) / max(1, len(head[i::4])) for i in range(4)]
        if sum(z > 0.6 for z in zeros) >= 3:
            return "UTF-32"
        if (zeros[1] > 0.4 and zeros[3] > 0.4) or (zeros[0] > 0.4 and zeros[2] > 0.4):
            return "UTF-16"
    return None


def decode_text(data: bytes, what: str) -> str:
    """UTF-8 text (a byte-order mark dropped), or an InputError naming the encoding found and how to convert.

    Args:
        what: how messages name the input, e.g. ``"The candidate file hyps.txt"`` or ``"The corpus upload.txt"``.
    """
    wide = _wide_encoding(data)
    if wide is not None:
        raise InputError(f"{what} is {wide} text; save it as UTF-8 (in an editor: encoding UTF-8; in Excel: 'CSV "
                         f"UTF-8'), or convert it: `iconv -f {wide} -t UTF-8 FILE > FILE.utf8`.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        if b"\x00" in data[:8192]:
            raise InputError(f"{what} is not text (it holds zero bytes; byte {exc.start}, line {line}, is not "
                             "UTF-8): give a plain text file, one sentence per line.") from None
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
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"The {what} {path} does not exist.") from None
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
