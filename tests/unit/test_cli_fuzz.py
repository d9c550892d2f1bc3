"""Issue 19: a small fuzz of the command line through real subprocesses (slow layer). Whatever the arguments (flags
in any order, numbers of any kind, files that are directories, empty, UTF-16, binary or missing), the process
exits 0 with finite numbers or 2 with ``error: ...`` (argparse's own usage errors also exit 2), never a traceback.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
FILES = {
    "good": "The cat sat on the mat.\nIt is cold today.\n",
    "good_refs": "A cat sat on a mat.\nToday is cold.\n",
    "empty": "",
    "blank": "\n\n",
    "cr": "The cat sat.\rIt is cold.\r",
    "one": "Hello there.\n",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("cli-fuzz")
    out = {}
    for name, text in FILES.items():
        (d / f"{name}.txt").write_text(text, encoding="utf-8", newline="")
        out[name] = str(d / f"{name}.txt")
    (d / "utf16.txt").write_bytes("The cat sat.\n".encode("utf-16"))
    (d / "binary.txt").write_bytes(bytes(range(256)) * 4)
    (d / "nan.tsv").write_text("LAYER,P,R,F\n" + "".join(f"{k},nan,0.5,0.5\n" for k in range(7)), encoding="utf-8")
    (d / "adir").mkdir()
    out.update(utf16=str(d / "utf16.txt"), binary=str(d / "binary.txt"), nan=str(d / "nan.tsv"),
               adir=str(d / "adir"), adir_slash=str(d / "adir") + "/", missing=str(d / "missing.txt"),
               out_png=str(d / "o.png"), out_tsv=str(d / "o.tsv"), out_in_missing=str(d / "no" / "o.tsv"),
               root=str(d))
    return out


def _value(files):
    return st.one_of(
        st.sampled_from(sorted(files)).map(lambda k: files[k]),
        st.sampled_from(["0", "-1", "4", "4.5", "99", "True", "nan", "", "en", "../../etc", "bogus", "cpu", "fp64",
                         "The cat sat.", "Hello.", "3.14", "x" * 300]),
    )


FLAGS = {
    "score": ["-c", "-r", "-m", "-l", "--lang", "--idf", "--rescale_with_baseline", "--baseline_path", "-b",
              "--device", "--precision", "-s", "--json"],
    "show": ["-c", "-r", "-o", "-m", "-l", "--lang", "--idf", "--rescale_with_baseline", "--baseline_path"],
    "baseline": ["--corpus", "-m", "--lang", "--pairs", "--seed", "--max-words", "-b", "-o"],
    "tune-layers": ["--data", "-m", "-b", "-o", "--no-bleu"],
    "models": [],
}
SWITCHES = {"--idf", "--rescale_with_baseline", "-s", "--json", "--no-bleu"}


@st.composite
def argv(draw, files):
    command = draw(st.sampled_from(sorted(FLAGS)))
    out = [command]
    if command == "models":
        out += [draw(st.sampled_from(["list", "path", "bogus"]))]
        out += draw(st.lists(st.sampled_from(["all-MiniLM-L6-v2", "no-such-model", "../x", ""]), max_size=2))
        return out
    for flag in draw(st.lists(st.sampled_from(FLAGS[command]), max_size=7)):
        out.append(flag)
        if flag not in SWITCHES:
            out.append(draw(_value(files)))
    return out


def _run(args: list[str], cwd: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TQDM_DISABLE="1")
    return subprocess.run([sys.executable, "-m", "bertscore_viz", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env=env)


def _check(proc: subprocess.CompletedProcess, args: list[str]) -> None:
    shown = f"argv={args!r}\nexit={proc.returncode}\nstderr={proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr, shown
    assert proc.returncode in (0, 2), shown
    if proc.returncode == 2:
        assert re.search(r"^(error: |usage: )", proc.stderr, flags=re.M), shown
    else:
        assert not re.search(r"\bnan\b|\binf\b", proc.stdout, flags=re.I), shown + f"\nstdout={proc.stdout[-500:]}"


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_command_line_exits_0_or_2_without_a_traceback_or_nan(files, data):
    args = data.draw(argv(files))
    _check(_run(args, files["root"]), args)


@pytest.mark.parametrize("args", [
    ["score", "-c", "{adir}", "-r", "{adir}"],
    ["score", "-c", "{adir_slash}", "-r", "{adir_slash}"],
    ["score", "-c", "{empty}", "-r", "{empty}"],
    ["score", "-c", "{utf16}", "-r", "{utf16}"],
    ["score", "-c", "{binary}", "-r", "{good}"],
    ["score", "-c", "{good}", "-r", "{good_refs}", "--rescale_with_baseline", "--baseline_path", "{nan}"],
    ["score", "-c", "{good}", "-r", "{good_refs}", "--device", "bogus"],
    ["score", "-c", "{good}", "-r", "{good_refs}", "-m", "no-such-model"],
    ["score", "-c", "{good}", "-r", "{good_refs}", "--lang", "../../etc", "--rescale_with_baseline"],
    ["baseline", "--corpus", "{good}", "-o", "{adir}"],
    ["baseline", "--corpus", "{adir}", "-o", "{out_tsv}"],
    ["show", "-c", "The cat sat.", "-r", "A cat sat.", "-o", "{adir}"],
])
def test_the_known_hostile_cases_exit_2_with_a_message(files, args):
    args = [a.format(**files) for a in args]
    proc = _run(args, files["root"])
    _check(proc, args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
