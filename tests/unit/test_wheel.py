"""Issue 19, class 9: a wheel (``pip install .``, not editable) holds everything the package reads at run time.

Before: the baselines lived beside the package (``<repo>/baselines``) and package data listed only the examples,
so an installed wheel held none of the 72 baseline and layer tables and could not rescale; the editable install
and the Docker image (which copied the folder) hid it.

The test builds the wheel, installs it into a fresh virtual environment that sees the development environment's
dependencies (torch, transformers, the bundled model) but not the repository, and rescales a pair there from
another directory.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out)], check=True, capture_output=True, timeout=600)
    (found,) = out.glob("bertscore_viz-*.whl")
    return found


def test_the_wheel_holds_every_file_the_package_reads(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    package = ROOT / "bertscore_viz"
    needed = [p for sub in ("baselines", "examples") for p in (package / sub).rglob("*") if p.is_file()]
    assert len([p for p in needed if "baselines" in p.parts]) >= 72 + 6  # bert-score's 72 files and ours
    missing = [str(p.relative_to(ROOT)) for p in needed if p.relative_to(ROOT).as_posix() not in names]
    assert not missing, missing


def test_an_installed_wheel_rescales_a_pair_away_from_the_repository(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    # the development environment's packages as plain paths: its .pth files (the editable install of this
    # repository among them) are not processed from a path added this way
    (site / "dev_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
                    str(wheel)], check=True, capture_output=True, timeout=600)
    code = ("import json, bertscore_viz\n"
            "r = bertscore_viz.score(['The cat sat on the mat.'], ['A cat was sitting on the mat.'],"
            " rescale_with_baseline=True, lang='en')\n"
            "print(json.dumps({'file': bertscore_viz.__file__, 'f1': float(r.f1[0]), 'sig': str(r.signature)}))")
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(got["file"]).resolve().is_relative_to(env_dir.resolve())  # the wheel, not the repository
    from bertscore_viz import score

    here = score(["The cat sat on the mat."], ["A cat was sitting on the mat."], rescale_with_baseline=True,
                 lang="en")
    assert got["f1"] == pytest.approx(float(here.f1[0]), abs=1e-6) and got["sig"].endswith("-rescaled")
