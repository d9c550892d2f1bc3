"""Where the package's own files are: the shipped rescaling baselines and layer tables, and the example data; and
the one way a file given by a user or an operator is read (a regular file, never a pipe or a device)."""

import errno
import os
import stat
from pathlib import Path

__all__ = ["PACKAGE_DIR", "BASELINE_DIR", "EXAMPLES_DIR", "NotRegularFile", "special_kind", "read_regular"]

#: The installed package.
PACKAGE_DIR = Path(__file__).resolve().parent
#: ``baselines/<lang>/<model>.tsv`` and ``baselines/layers/``, inside the package (so that a wheel has them).
BASELINE_DIR = PACKAGE_DIR / "baselines"
#: Example files (the Compare page's "Load example").
EXAMPLES_DIR = PACKAGE_DIR / "examples"


class NotRegularFile(OSError):
    """A path that is a pipe, a socket, a device or a directory where a file's content was expected (a pipe
    would be read for ever, ``/dev/zero`` without end). An ``OSError``: readers that ignore an unreadable file
    ignore it too."""


def special_kind(mode: int) -> str | None:
    """What a ``st_mode`` is when it is not a regular file (``"a pipe (FIFO)"``, ...); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def read_regular(path: str | Path, limit: int | None = None) -> bytes:
    """The bytes of a regular file (at most ``limit`` of them), checked on the opened file itself: a pipe is opened
    without waiting for a writer and refused, as are sockets, devices and directories (:class:`NotRegularFile`,
    whose ``strerror`` says which); a symlink is followed to what it names. Other ``OSError``s pass through."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        kind = special_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise NotRegularFile(errno.EINVAL, f"it is {kind}, not a regular file" if kind.startswith("a ")
                                 else "it is not a regular file", str(path))
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as fh:
            fd = -1  # closed by the file object
            return fh.read() if limit is None else fh.read(limit)
    finally:
        if fd >= 0:
            os.close(fd)
