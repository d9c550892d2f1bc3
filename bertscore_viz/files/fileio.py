"""Writing output files so that an interruption (Ctrl-C, a killed process, a full disk, a power cut) never leaves a
truncated file: the content goes to a temporary file in the same directory, is flushed to disk (``fsync``), and only
then replaces the target in one ``os.replace`` (atomic on POSIX and Windows within one file system); the directory
is then flushed too, so that the rename itself survives a power cut. On failure the temporary file is removed and
an earlier file of the same name is left as it was.

A process killed outright (SIGKILL, out of memory) cannot remove its temporary file: such leftovers
(``.tmp-bertscore-viz-*``, ours only) older than :data:`STALE_SECONDS` are removed by the next write into the same
directory.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import IO

from bertscore_viz.errors import BertScoreVizError

__all__ = ["TEMP_PREFIX", "STALE_SECONDS", "OutputError", "atomic_write", "atomic_write_bytes", "atomic_write_text",
           "atomic_write_via", "atomic_write_many", "check_writable", "remove_stale_temporaries", "tsv_field",
           "read_tsv_field", "terminal_safe", "terminal_json"]

TEMP_PREFIX = ".tmp-bertscore-viz-"
#: A temporary file of ours untouched for this long belongs to a writer that died; a live writer is far quicker.
STALE_SECONDS = 15 * 60
_FULL = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}


class OutputError(BertScoreVizError):
    """An output file that could not be written (full disk, no permission, ...); nothing was changed."""


def atomic_write(path: str | Path, write: Callable[[IO[bytes]], None]) -> Path:
    """Call ``write(fh)`` on a temporary binary file beside ``path``, then move it to ``path``.

    Args:
        path: the target; its directory is created when missing.
        write: fills the file; any exception (KeyboardInterrupt included) removes the temporary file and is
            raised again.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        OutputError: the file system refused (full disk, file size limit, permissions): the message names the
            file and says that nothing was changed.
    """
    def render(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            write(fh)

    return atomic_write_via(path, render)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    return atomic_write(path, lambda fh: fh.write(data))


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write text with ``\\n`` line ends (as ``write_text(..., newline="\\n")``), atomically."""
    return atomic_write_bytes(path, text.encode(encoding))


def atomic_write_via(path: str | Path, render: Callable[[str], None]) -> Path:
    """For writers that insist on a file name (e.g. plotly's ``write_image``): ``render(tmp_name)`` writes a
    temporary file with the same suffix, which is flushed to disk and then replaces ``path``."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=path.suffix, dir=path.parent)
        os.close(fd)
        render(tmp)
        _fsync_path(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise OutputError(_message(path, exc)) from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    _fsync_directory(path.parent)
    return path


def atomic_write_many(items: list[tuple[str | Path, bytes]]) -> list[Path]:
    """Write several files as one: each to a temporary file first (flushed to disk), then moved into place in
    order; when a move fails, the files already moved are put back as they were (from a hard link, or a copy, of
    each earlier file taken before), so that a failure leaves every file as it was (a table and its provenance
    never disagree).

    Raises:
        OutputError: the file system refused; nothing was written or changed.
    """

    paths = [Path(p) for p, _ in items]
    temps: list[str] = []
    backups: dict[Path, str | None] = {}
    done: list[Path] = []
    try:
        for path, (_, data) in zip(paths, items):
            path.parent.mkdir(parents=True, exist_ok=True)
            remove_stale_temporaries(path.parent)
            fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=path.suffix, dir=path.parent)
            temps.append(tmp)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            _fsync_path(tmp)
            os.chmod(tmp, 0o644)
        for path in paths:
            backups[path] = None
            if path.exists():
                fd, keep = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=".old", dir=path.parent)
                os.close(fd)
                os.unlink(keep)
                try:
                    os.link(path, keep)
                except OSError:
                    shutil.copy2(path, keep)
                backups[path] = keep
        for path, tmp in zip(paths, temps):
            os.replace(tmp, path)
            done.append(path)
    except OSError as exc:
        for path in reversed(done):  # put back what was replaced
            try:
                if backups.get(path):
                    os.replace(backups.pop(path), path)
                else:
                    os.unlink(path)
            except OSError:
                pass
        failed = paths[len(done)] if len(done) < len(paths) else paths[-1]
        raise OutputError(_message(failed, exc)) from exc
    finally:
        for name in temps + [b for b in backups.values() if b]:
            with contextlib.suppress(OSError):
                os.unlink(name)
    for directory in dict.fromkeys(p.parent for p in paths):
        _fsync_directory(directory)
    return paths


def check_writable(path: str | Path, what: str = "the output") -> Path:
    """Refuse an output that cannot be written, before any work: a directory, a missing folder that cannot be
    made (a file in the way), or a folder this process may not write in (checked by creating and removing a
    temporary file there). Creates nothing that stays.

    Raises:
        OutputError: naming the file and the reason.
    """
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"Cannot write {what} {path}: it is a directory. Give a file name (e.g. {path / 'out.tsv'}).")
    parent = path.parent
    existing = parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OutputError(f"Cannot write {what} {path}: {existing} is a file, not a folder.")
    try:
        fd, probe = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=".probe", dir=existing)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(f"Cannot write {what} {path}: {existing} is not writable ({exc.strerror or exc}). "
                          "Choose another output location.") from None
    return path


def remove_stale_temporaries(directory: str | Path, older_than: float = STALE_SECONDS) -> list[str]:
    """Remove our own temporary files (``.tmp-bertscore-viz-*``, owned by this user, regular files) in
    ``directory`` that were not touched for ``older_than`` seconds; returns their names. Errors are ignored: this is
    tidying, not the write."""
    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(TEMP_PREFIX):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            mine = not hasattr(os, "getuid") or st.st_uid == os.getuid()
            if entry.is_file(follow_symlinks=False) and mine and now - st.st_mtime > older_than:
                os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:
            continue
    return removed


def _message(path: Path, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    hint = " (the disk is full, or a file size limit was reached)" if exc.errno in _FULL else ""
    return (f"Could not write {path}: {reason}{hint}. Nothing was written or changed: an earlier {path.name}, if "
            "there was one, is as it was. Free some space or choose another output location.")


def _fsync_path(name: str) -> None:
    fd = os.open(name, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_directory(directory: Path) -> None:
    """Flush the directory entry of the rename (POSIX); where a directory cannot be opened (Windows) the rename
    is as durable as the platform makes it."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems do not sync directories (EINVAL): the file itself is on disk
        pass
    finally:
        os.close(fd)


#: What :func:`tsv_field` writes for each character that would break a TSV row or be ambiguous in one.
_TSV_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
#: Other characters that end a line for ``str.splitlines`` (vertical tab, form feed, file/group/record separators,
#: NEL, line and paragraph separators): written as ``\xNN`` / ``\uNNNN``.
_TSV_LINE_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def tsv_field(value: object) -> str:
    """A value as one TSV cell that keeps its row whole and reads back exactly: a backslash is written ``\\\\``,
    a tab ``\\t``, a line feed ``\\n``, a carriage return ``\\r`` and the other line breaks of ``str.splitlines``
    as ``\\xNN`` / ``\\uNNNN`` (the escapes of PostgreSQL's text format and of Python's string literals): undo each
    escape to read the value back."""
    out = []
    for c in str(value):
        if c in _TSV_ESCAPES:
            out.append(_TSV_ESCAPES[c])
        elif c in _TSV_LINE_BREAKS:
            out.append(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return "".join(out)


_TSV_UNESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


def read_tsv_field(cell: str) -> str:
    """The value :func:`tsv_field` wrote as ``cell`` (its escapes undone; a backslash that starts no escape is kept
    as it is)."""
    out, i = [], 0
    while i < len(cell):
        c = cell[i]
        nxt = cell[i + 1] if i + 1 < len(cell) else ""
        width = {"x": 2, "u": 4}.get(nxt, 0)
        digits = cell[i + 2:i + 2 + width]
        if c != "\\":
            out.append(c)
            i += 1
        elif nxt in _TSV_UNESCAPES:
            out.append(_TSV_UNESCAPES[nxt])
            i += 2
        elif width and len(digits) == width and all(d in "0123456789abcdefABCDEF" for d in digits):
            out.append(chr(int(digits, 16)))
            i += 2 + width
        else:
            out.append(c)
            i += 1
    return "".join(out)


#: Format characters a terminal shows as text should: the zero-width non-joiner and joiner (Persian, Indic scripts,
#: emoji sequences) change neither the terminal's state nor the order of the text.
_TERMINAL_KEPT = frozenset("\u200c\u200d")


def _acts_on_terminal(c: str) -> bool:
    """A character a terminal would act on or that hides or reorders text: control characters (NUL, BEL, BS, ESC,
    CR, DEL, the C1 range with its one-byte CSI), format characters (bidi overrides and isolates, zero-width spaces,
    the byte-order mark, soft hyphen, tags), lone surrogates (a file name's undecodable bytes, which cannot even be
    encoded for output) and the line and paragraph separators."""
    return c not in _TERMINAL_KEPT and unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")


def _escape(c: str) -> str:
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal_safe(text: object, keep: str = "") -> str:
    """``text`` as it may be printed on a terminal: every character a terminal would act on (see
    :func:`_acts_on_terminal`: ESC, BEL, NUL, CR, tab and line feed, bidi overrides, lone surrogates...) written as
    a Python-style escape, ``\\x1b``, ``\\u202e``, ``\\U000e0001``; every other character as it is. ``keep``: the
    characters to leave as they are (a table's tabs and line feeds).

    >>> terminal_safe("sys\\x1b[31mA\\u202e")
    'sys\\\\x1b[31mA\\\\u202e'
    """
    return "".join(_escape(c) if c not in keep and _acts_on_terminal(c) else c for c in str(text))


def terminal_json(text: str) -> str:
    """A JSON document written by ``json.dumps(..., ensure_ascii=False)`` with every character a terminal would act
    on that ``json.dumps`` leaves raw (DEL, the C1 range, format characters, lone surrogates, line and paragraph
    separators) written as a JSON ``\\uXXXX`` escape (above U+FFFF as its surrogate pair): the same JSON value, every
    other character (accents, CJK, emoji) kept as it is. The layout's line feeds (``indent=``) are kept; inside a
    string ``json.dumps`` has escaped them already."""

    def escape(c: str) -> str:
        code = ord(c)
        if code < 0x10000:
            return f"\\u{code:04x}"
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"

    return "".join(escape(c) if c != "\n" and _acts_on_terminal(c) else c for c in text)
