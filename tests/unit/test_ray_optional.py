"""Ray is optional: the engine, the CLI and the results-file reader import without it, and asking for --ray
without Ray installed is a message saying how to install it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import importlib.abc, sys

    class BlockRay(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "ray" or name.startswith("ray."):
                raise ImportError("ray is blocked in this test")
            return None

    sys.meta_path.insert(0, BlockRay())
    import bertscore_viz.distributed as d, bertscore_viz.results_file, bertscore_viz.cli as cli
    assert "ray" not in sys.modules
    cli.build_parser().parse_args(["score", "--ray", "--input", "x.csv", "--output", "out"])
    open("in.csv", "w").write("reference,sys\\nThe cat sat.,A cat sat.\\n")
    code = cli.main(["score", "--ray", "--input", "in.csv", "--output", "out"])
    print("EXIT", code)
    """
)


def test_engine_and_cli_import_without_ray_and_explain_how_to_install_it(tmp_path):
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "EXIT 2" in proc.stdout
    assert "requirements-ray.txt" in proc.stderr and "Traceback" not in proc.stderr
