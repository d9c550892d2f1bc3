"""Writing output files so that an interruption (Ctrl-C, a killed process, a full disk) never leaves a truncated
file: the content goes to a temporary file in the same directory, is flushed to disk, and only then replaces the
target in one ``os.replace`` (atomic on POSIX and Windows within one file system). On failure the temporary file
is removed and an earlier file of the same name is left as it was.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable, IO

TEMP_PREFIX = ".tmp-bertscore-viz-"


def atomic_write(path: str | Path, write: Callable[[IO[bytes]], None]) -> Path:
    """Call ``write(fh)`` on a temporary binary file beside ``path``, then move it to ``path``.

    Args:
        path: the target; its directory is created when missing.
        write: fills the file; any exception (KeyboardInterrupt included) removes the temporary file and is
            raised again.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.
    """
    def render(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())

    return atomic_write_via(path, render)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    return atomic_write(path, lambda fh: fh.write(data))


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write text with ``\\n`` line ends (as ``write_text(..., newline="\\n")``), atomically."""
    return atomic_write_bytes(path, text.encode(encoding))


def atomic_write_via(path: str | Path, render: Callable[[str], None]) -> Path:
    """For writers that insist on a file name (e.g. plotly's ``write_image``): ``render(tmp_name)`` writes a
    temporary file with the same suffix, which then replaces ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        render(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path
