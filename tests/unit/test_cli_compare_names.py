"""``bertscore-viz compare -r refs.txt -s ONLINE-A.txt ...`` names each system by its file name without the
extension (``ONLINE-A``); files that would share a name keep names that tell them apart, and one ``Warning:`` line
says which names collided. Each case runs the command line with the real bundled model."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from bertscore_viz.cli.entry import main

REFS = ["The cat sat on the mat.", "Heavy rain caused flooding near the river.", "She finished the marathon.",
        "The train was late again."]
OUTPUTS = [["A cat sat on the mat.", "Rain flooded the river banks.", "She ran the marathon.", "The train was late."],
           ["The mat sat on the cat.", "Flooding near the river.", "The marathon finished her.", "Late train again."],
           ["Cat mat.", "Heavy rain.", "She finished.", "The train."]]


def _write(path: Path, lines: list[str]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _compare(tmp_path: Path, systems: list[str], *flags: str) -> tuple[int, str, str]:
    """``compare -r refs.txt -s SYSTEMS... -q FLAGS`` with each system file written under ``tmp_path``."""
    paths = [_write(tmp_path / s, OUTPUTS[i % len(OUTPUTS)]) for i, s in enumerate(systems)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["compare", "-r", _write(tmp_path / "refs.txt", REFS), "-s", *paths, "-q", *flags])
    return code, out.getvalue(), err.getvalue()


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("Warning:")]


def test_systems_are_named_without_the_extension(tmp_path):
    code, out, err = _compare(tmp_path, ["ONLINE-A.txt", "ONLINE-B.txt", "x.tar.gz"], "--json")
    assert code == 0, err
    assert json.loads(out)["input"]["systems"] == ["ONLINE-A", "ONLINE-B", "x.tar"]  # only the last suffix goes
    assert _warnings(err) == []


def test_the_text_output_and_the_flags_use_the_names_without_the_extension(tmp_path):
    code, out, err = _compare(tmp_path, ["ONLINE-A.txt", "ONLINE-B.txt"], "--baseline", "ONLINE-B")
    assert code == 0, err
    assert "Baseline: ONLINE-B " in out and ".txt" not in out


def test_same_name_in_two_folders_is_named_by_the_path(tmp_path):
    code, out, err = _compare(tmp_path, ["a/sys.txt", "b/sys.txt", "other.txt"], "--json")
    assert code == 0, err
    a, b = str(tmp_path / "a" / "sys.txt"), str(tmp_path / "b" / "sys.txt")
    assert json.loads(out)["input"]["systems"] == [a, b, "other"]
    assert _warnings(err) == [f"Warning: Several system files would get the same name ('sys', 'sys.txt'); they are "
                              f"named by their file name or path instead: {a!r}, {b!r}."]


def test_same_name_with_two_extensions_is_named_by_the_file_name(tmp_path):
    code, out, err = _compare(tmp_path, ["sys.txt", "sys.tsv", "other.txt"], "--json")
    assert code == 0, err
    assert json.loads(out)["input"]["systems"] == ["sys.txt", "sys.tsv", "other"]
    assert _warnings(err) == ["Warning: Several system files would get the same name ('sys'); they are named by "
                              "their file name or path instead: 'sys.txt', 'sys.tsv'."]


def test_a_fallback_name_that_meets_another_files_name_is_told_apart_too(tmp_path):
    """``sys.txt`` falls back to its file name, which is the name of ``sys.txt.gz`` without its extension."""
    code, out, err = _compare(tmp_path, ["sys.txt", "sys.tsv", "sys.txt.gz"], "--json")
    assert code == 0, err
    names = json.loads(out)["input"]["systems"]
    assert names == ["sys.txt", "sys.tsv", "sys.txt.gz"] and len(_warnings(err)) == 1
