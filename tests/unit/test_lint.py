"""The pipeline checks its own habits (issue 41): ruff with bugbear, pyupgrade and simplify over the package, the
tests and the benchmarks, and mypy over the library's core layers (pyproject.toml says which), both green. They run
with the test suite, so CI runs them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _tool(name: str) -> list[str]:
    if shutil.which(name, path=str(Path(sys.executable).parent)) is None:
        pytest.fail(f"{name} is not installed: it is in requirements-dev.txt (the README's test command)")
    return [sys.executable, "-m", name]


def test_ruff_finds_nothing():
    done = subprocess.run(_tool("ruff") + ["check", "bertscore_viz", "tests", "bench", "app.py"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_mypy_finds_nothing_in_the_core():
    done = subprocess.run(_tool("mypy"), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "Success" in done.stdout, done.stdout[-4000:] + done.stderr[-2000:]
