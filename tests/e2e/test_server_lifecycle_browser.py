"""The server as a newcomer starts it (issue 40): ``streamlit run app.py`` in the repository, with no address given,
listens on 127.0.0.1 only (it listened on every interface); after an upload (read in a worker process from the
forkserver) a SIGTERM leaves no child behind (the forkserver outlived the server by many seconds); the log has none
of the worker noise."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import expect

from .conftest import ARTIFACTS, ROOT, _free_port

EXAMPLE = ROOT / "bertscore_viz" / "examples" / "systems_example.csv"


def _listening(port: int) -> list[str]:
    """Local addresses (hex, as /proc/net/tcp and tcp6 write them) of the sockets listening on ``port``."""
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, state = fields[1], fields[3]
            if state == "0A" and address.endswith(f":{port:04X}"):  # 0A: LISTEN
                out.append(address.rsplit(":", 1)[0])
    return out


def _children(pid: int) -> list[int]:
    kids = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as f:
                kids += [int(k) for k in f.read().split()]
        except OSError:
            continue
    return kids + [g for k in kids for g in _children_safe(k)]


def _children_safe(pid: int) -> list[int]:
    try:
        return _children(pid)
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_streamlit_run_serves_this_machine_only_and_leaves_nothing_after_sigterm(browser):
    port = _free_port()
    log_path = ARTIFACTS / "lifecycle-server.log"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    with open(log_path, "w") as log:  # as the README says: streamlit run app.py (the port only, to run beside others)
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)],
                                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    kids: list[int] = []
    try:
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2):
                    break
            except OSError:
                assert proc.poll() is None and time.time() < deadline, log_path.read_text()
                time.sleep(0.5)
        assert _listening(port) and set(_listening(port)) <= {"0100007F", "00000000000000000000000001000000"}, \
            _listening(port)  # 127.0.0.1 (or ::1), not 0.0.0.0 or ::
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.goto(url)
        page.get_by_role("link", name="Compare systems").click(timeout=120_000)
        page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(EXAMPLE))
        expect(page.get_by_text("Best:", exact=False).first).to_be_visible(timeout=300_000)
        page.context.close()
        kids = _children(proc.pid)
        assert kids, "the upload was read in a worker process: the forkserver is a child of the server"
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        end = time.time() + 5
        while any(_alive(k) for k in kids) and time.time() < end:
            time.sleep(0.1)
        assert not [k for k in kids if _alive(k)], "a child of the server outlived it by 5 s"
    finally:
        if proc.poll() is None:
            proc.kill()
        for k in kids:
            if _alive(k):
                os.kill(k, signal.SIGKILL)
    text = log_path.read_text(encoding="utf-8", errors="replace")
    assert "missing ScriptRunContext" not in text and "Traceback" not in text
