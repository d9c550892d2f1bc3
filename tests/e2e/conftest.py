"""A real Streamlit server and Debian's Chromium driven by Playwright (no downloaded browser)."""

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
DOC_IMAGES = ROOT / "docs" / "images"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def screenshot(target, name: str, **options) -> None:
    """Save a screenshot of ``target`` (a page or a locator) as ``tests/artifacts/<name>``; with
    ``BERTSCORE_VIZ_DOC_IMAGES=1`` also as ``docs/images/<name>``, the docs' picture. A plain test run
    therefore never changes a tracked file."""
    folders = [ARTIFACTS]
    if os.environ.get("BERTSCORE_VIZ_DOC_IMAGES") == "1":
        folders.append(DOC_IMAGES)
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        target.screenshot(path=str(folder / name), **options)


def fill(page, label: str, text: str) -> None:
    """Type ``text`` into the text area labelled ``label`` and submit it (Ctrl+Enter), as a user does."""
    box = page.get_by_role("textbox", name=label, exact=True)
    box.fill(text)
    box.press("Control+Enter")


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("Debian's chromium is not installed: run `apt-get install -y chromium` (see README).")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def app_server(log_name: str, **env: str):
    """A real Streamlit server of the app on a free port of 127.0.0.1, with ``env`` added to this process's
    environment and its output in ``tests/artifacts/<log_name>``; yields its URL once it answers its health check,
    and stops it afterwards."""
    port = _free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **env)
    with open(ARTIFACTS / log_name, "w") as log:  # the server writes through its own copy
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
             "--browser.gatherUsageStats", "false"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            pytest.fail(f"Streamlit did not start; see {ARTIFACTS / log_name}")
        time.sleep(0.5)
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def app_url():
    with app_server("streamlit-server.log") as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.errors = errors
    yield pg
    context.close()
