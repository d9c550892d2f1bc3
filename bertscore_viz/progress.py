"""Progress bars for the command line: one ``progress(done, total)`` callback drawn by ``tqdm`` on stderr.

The engine reports progress by calling ``progress(done, total)`` with cumulative counts (``done`` may be 0 at the
start, and ``total`` may change from one call to the next). :func:`progress_bar` returns such a callback; it draws

    what [#########.....................] 3/10 sentences (41.20 sentences/s)

on stderr (stdout stays for results, e.g. ``score --json``), whether or not stderr is a terminal, as the
hand-written ``\\r`` lines it replaces did. The bar appears at the first call, so a callback that is never called
prints nothing; closing it (``with progress_bar(...) as bar:`` or ``bar.close()``) ends the line::

    with progress_bar("scoring pairs", "pairs") as bar:
        run = score_files(..., progress=bar)
"""

from __future__ import annotations

import sys
from typing import IO

from tqdm import tqdm

__all__ = ["BAR_FORMAT", "ProgressBar", "progress_bar"]

#: ``what [######....] done/total unit (rate)``; ``{unit}`` carries its own leading space (see :func:`progress_bar`).
BAR_FORMAT = "{desc} [{bar:30}] {n_fmt}/{total_fmt}{unit} ({rate_fmt})"


class ProgressBar:
    """A ``progress(done, total)`` callback drawing one tqdm bar; a context manager that closes it."""

    def __init__(self, what: str, unit: str = "", *, scale_bytes: bool = False, file: IO[str] | None = None):
        self.what = what
        self.unit = unit
        self.scale_bytes = scale_bytes
        self.file = file
        self._bar: tqdm | None = None

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            # made at the first call: stderr as it is then (pytest's capture), and nothing printed if never called
            self._bar = tqdm(total=total, desc=self.what, file=self.file or sys.stderr, disable=False, ascii=".#",
                             bar_format=BAR_FORMAT, **self._units())
        bar = self._bar
        if total != bar.total:
            bar.total = total
            bar.refresh()
        bar.update(done - bar.n)

    def _units(self) -> dict:
        if self.scale_bytes:  # 12.0M/48.0MB (5.00MB/s), in MiB as the downloads' MB have always been
            return {"unit": self.unit or "B", "unit_scale": True, "unit_divisor": 1024}
        return {"unit": f" {self.unit}" if self.unit else ""}

    @property
    def done(self) -> int:
        """The last ``done`` reported (0 before the first call)."""
        return 0 if self._bar is None else int(self._bar.n)

    def write(self, message: str) -> None:
        """Print a line on the bar's stream without breaking the bar (it is drawn again below)."""
        tqdm.write(message, file=self.file or sys.stderr)

    def close(self) -> None:
        """Draw the final state and end the line (nothing when the callback was never called); idempotent."""
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress_bar(what: str, unit: str = "", *, scale_bytes: bool = False,
                 file: IO[str] | None = None) -> ProgressBar:
    """A ``progress(done, total)`` callback drawing ``what [#####.....] done/total unit (rate/s)`` on stderr.

    Args:
        what: the description, e.g. ``"embedding"`` or ``"scoring pairs"``.
        unit: what is counted, e.g. ``"sentences"`` (none by default).
        scale_bytes: counts are bytes: shown as ``12.0M/48.0MB`` (binary prefixes) with the rate in MB/s.
        file: where to draw (default: ``sys.stderr`` at the first call).
    """
    return ProgressBar(what, unit, scale_bytes=scale_bytes, file=file)
