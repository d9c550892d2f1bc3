"""The library (bertscore_viz outside app/, the Streamlit client) imports and scores with ``streamlit`` unavailable."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import importlib, importlib.abc, pkgutil, sys

    class BlockStreamlit(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "streamlit" or name.startswith("streamlit."):
                raise ImportError("streamlit is blocked in this test")
            return None

    sys.meta_path.insert(0, BlockStreamlit())
    for name in [m for m in sys.modules if m == "streamlit" or m.startswith("streamlit.")]:
        del sys.modules[name]

    import bertscore_viz
    import bertscore_viz.engine.scorer, bertscore_viz.cli.entry  # noqa: E401

    imported = []
    for info in pkgutil.walk_packages(bertscore_viz.__path__, "bertscore_viz."):
        if info.name == "bertscore_viz.app" or info.name.startswith("bertscore_viz.app."):
            continue
        if info.name == "bertscore_viz.__main__":  # runs the CLI; its import is checked with -m below
            continue
        importlib.import_module(info.name)
        imported.append(info.name)

    assert "streamlit" not in sys.modules, "an engine module imported streamlit"
    res = bertscore_viz.score(["The cat sat on the mat."], ["There is a cat sitting on the mat."], layer=4)
    assert abs(float(res.f1[0]) - 0.887242) < 2e-6, res.f1
    assert "streamlit" not in sys.modules
    print("IMPORTED", " ".join(sorted(imported)))
    """
)


@pytest.mark.slow
def test_engine_imports_and_scores_without_streamlit():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [x for x in proc.stdout.splitlines() if x.startswith("IMPORTED")][0]
    imported = set(line.split()[1:])
    package = ROOT / "bertscore_viz"
    expected = {".".join(("bertscore_viz",) + p.relative_to(package).with_suffix("").parts).removesuffix(".__init__")
                for p in package.rglob("*.py")
                if p.stem != "__main__" and p.relative_to(package).parts[0] != "app"}
    expected.discard("bertscore_viz")  # the package itself, imported first
    assert expected <= imported, expected - imported
    assert {"bertscore_viz.engine.scorer", "bertscore_viz.cli.entry", "bertscore_viz.engine.encoder",
            "bertscore_viz.engine.tensor_ops"} <= imported


@pytest.mark.slow
def test_command_line_runs_without_streamlit():
    script = SCRIPT.split("import bertscore_viz\n")[0] + textwrap.dedent(
        """
        import runpy
        sys.argv = ["bertscore_viz", "score", "-c", "The cat sat.", "-r", "A cat sat.", "-l", "4"]
        try:
            runpy.run_module("bertscore_viz", run_name="__main__")
        except SystemExit as exc:
            assert exc.code in (0, None), exc.code
        assert "streamlit" not in sys.modules
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert " P: " in proc.stdout and " F1: " in proc.stdout


def test_blocker_really_blocks():
    # the same blocker makes a streamlit import fail, so the test above cannot pass by accident
    script = SCRIPT.split("import bertscore_viz\n")[0] + "import streamlit\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode != 0 and "streamlit is blocked" in proc.stderr
