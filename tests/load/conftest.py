"""Load and fault tests: their own Streamlit server on 127.0.0.1 (a free port, bounded time), Debian's Chromium
driven by Playwright's async API (several sessions at once from one thread), and test files made from the WMT16
data in ``data/``. Deselected by default; run with ``python -m pytest -m load -s`` (``-s`` prints the figures)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.conftest import CHROMIUM_ARGS, _chromium, _free_port

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
DATA = Path(os.environ.get("BERTSCORE_VIZ_DATA", ROOT / "data"))
LPS = ["cs-en", "de-en", "fi-en", "ro-en", "ru-en", "tr-en"]


# --- the server ---------------------------------------------------------------------------------------------------
def health_seconds(url: str, timeout: float = 5.0) -> float | None:
    """Seconds one ``/_stcore/health`` request took, or None when it failed."""
    start = time.monotonic()
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=timeout) as r:
            r.read()
            return time.monotonic() - start if r.status == 200 else None
    except OSError:
        return None


@dataclass
class Server:
    """A Streamlit server of this repository; ``start()`` again after ``kill()`` serves on the same port."""

    env: dict
    name: str = "load"
    port: int = 0
    proc: subprocess.Popen | None = None

    def __post_init__(self):
        self.port = self.port or _free_port()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.log_path = ARTIFACTS / f"streamlit-{self.name}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 120) -> float:
        """Start and wait until healthy; returns the seconds it took."""
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **self.env)
        began = time.monotonic()
        with open(self.log_path, "a") as log:  # the server writes through its own copy
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
                 "--server.port", str(self.port), "--server.address", "127.0.0.1", "--server.fileWatcherType",
                 "none", "--browser.gatherUsageStats", "false"],
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
        while health_seconds(self.url, 2) is None:
            if self.proc.poll() is not None or time.monotonic() - began > timeout:
                self.stop()
                pytest.fail(f"Streamlit did not start; see {self.log_path}")
            time.sleep(0.3)
        return time.monotonic() - began

    def peak_rss_mb(self) -> float:
        """The server process's peak resident memory so far (VmHWM), in MB."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)


@pytest.fixture
def make_server():
    servers: list[Server] = []

    def make(name: str, **env) -> Server:
        server = Server({k: str(v) for k, v in env.items()}, name)
        servers.append(server)
        server.start()
        return server

    yield make
    for s in servers:
        s.stop()


async def launch_browser(pw):
    return await pw.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)


# --- test files ---------------------------------------------------------------------------------------------------
def _lines(kind: str, lp: str) -> list[str]:
    return (DATA / "wmt16-da-to-english" / f"DAseg-newstest2016.{kind}.{lp}").read_text(encoding="utf-8").splitlines()


def _variant(text: str, k: int, rnd: random.Random) -> str:
    """A different system's output: the MT output with words dropped, swapped or repeated (deterministic)."""
    words = text.split()
    if k == 0 or len(words) < 3:
        return text
    kind = k % 4
    if kind == 1:
        words = [w for i, w in enumerate(words) if (i + k) % (k + 2)]
    elif kind == 2:
        i = rnd.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
    elif kind == 3:
        words = words[: max(1, len(words) - 1 - k % 3)]
    else:
        words = words + words[-(1 + k % 2):]
    return " ".join(words)


def wide_csv(n_systems: int, n_rows: int, offset: int = 0, prefix: str = "sys", corpus: str = "wmt16") -> bytes:
    """A wide CSV: ``segment_id, reference`` and ``n_systems`` system columns named ``{prefix}_{k}``.

    ``corpus="wmt16"`` pairs the WMT16 DA references with their MT outputs (3,360 segments, cycled); ``"news"``
    uses the newstest2017 English references (19,021 lines), each system a variant of the reference itself.
    """
    import csv
    import io

    if corpus == "wmt16":
        refs = [r for lp in LPS for r in _lines("reference", lp)]
        outs = [m for lp in LPS for m in _lines("mt-system", lp)]
    else:
        refs = [line for f in sorted((DATA / "newstest2017-english").iterdir())
                for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
        outs = refs
    rnd = random.Random(offset)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["segment_id", "reference"] + [f"{prefix}_{k}" for k in range(n_systems)])
    for i in range(n_rows):
        j = (offset + i) % len(refs)
        w.writerow([str(i + 1), refs[j]] + [_variant(outs[j], k + (corpus == "news"), rnd)
                                            for k in range(n_systems)])
    return buf.getvalue().encode("utf-8")
