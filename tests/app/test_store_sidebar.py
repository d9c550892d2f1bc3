"""The app and the persistent embedding store (docs/STORE.md, docs/DEPLOY.md): a server others reach keeps the store
off unless its operator sets BERTSCORE_VIZ_STORE; a local app (127.0.0.1) uses it; the sidebar's line says how much
was reused only on a local app. Each case is a fresh process, as a server is: the gateway decides at import."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import warnings
warnings.simplefilter("ignore")
from bertscore_viz.app import gateway
from bertscore_viz.engine.store import default_store
from bertscore_viz.engine.options import ScoringOptions
if default_store() is not None:
    ScoringOptions().scorer().score(["The cat sat on the mat."], ["A cat was sitting on the mat."])
print(gateway.local_server())
print(gateway.store_status())
"""


def _status(tmp_path: Path, address: str, **env: str) -> tuple[str, str]:
    """``(local_server(), the sidebar's line)`` of a server bound to ``address`` (its .streamlit/config.toml, as the
    repository's own says 127.0.0.1 and the Docker image's command line 0.0.0.0), after one pair was scored."""
    (tmp_path / ".streamlit").mkdir(exist_ok=True)
    (tmp_path / ".streamlit" / "config.toml").write_text(f'[server]\naddress = "{address}"\n', encoding="utf-8")
    base = {k: v for k, v in os.environ.items() if k not in ("BERTSCORE_VIZ_STORE", "STREAMLIT_SERVER_ADDRESS")}
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=base | {"HOME": str(tmp_path), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
                                      "PYTHONPATH": str(ROOT)} | env)
    assert done.returncode == 0, done.stderr[-3000:]
    local, line = done.stdout.strip().splitlines()[-2:]
    return local, line


def test_a_server_others_reach_keeps_the_store_off_unless_its_operator_sets_it(tmp_path):
    local, line = _status(tmp_path, "0.0.0.0")
    assert local == "False" and line == "Embedding store: off; texts are embedded afresh after a restart."
    assert not (tmp_path / ".cache" / "bertscore-viz" / "embeddings").exists()  # the user's default folder unused
    local, line = _status(tmp_path, "0.0.0.0", BERTSCORE_VIZ_STORE=str(tmp_path / "op"))
    assert local == "False" and line.startswith("Embedding store: on (") and line.endswith("kept by this server).")
    assert "reused" not in line  # what a request reused would tell a user what others scored
    assert (tmp_path / "op" / "embeddings-v1.sqlite3").is_file()


def test_a_local_app_uses_the_default_store_and_says_what_it_reused(tmp_path):
    local, line = _status(tmp_path, "127.0.0.1")
    assert local == "True" and line.startswith("Embedding store: 0 of 2 sentence-layers reused since the app started")
    assert (tmp_path / ".cache" / "bertscore-viz" / "embeddings" / "embeddings-v1.sqlite3").is_file()
    local, line = _status(tmp_path, "127.0.0.1")  # the next start: the same texts
    assert line.startswith("Embedding store: 2 of 2 sentence-layers reused since the app started")
