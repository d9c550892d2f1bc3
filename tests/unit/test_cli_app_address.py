"""`streamlit run app.py` and `bertscore-viz app` serve this machine only unless told otherwise (issue 40: the
server listened on every interface; a real server's listening socket is checked in
tests/e2e/test_server_lifecycle_browser.py)."""

from __future__ import annotations

from pathlib import Path

import tomllib

from bertscore_viz.cli.app import app_command

ROOT = Path(__file__).resolve().parents[2]


def test_the_repositorys_streamlit_config_listens_on_loopback():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["address"] == "127.0.0.1"


def test_the_packaged_app_listens_on_loopback_unless_told():
    assert "--server.address=127.0.0.1" in app_command([], env={})
    given = app_command(["--server.address", "0.0.0.0"], env={})
    assert "--server.address=127.0.0.1" not in given and given[-2:] == ["--server.address", "0.0.0.0"]
    assert "--server.address=127.0.0.1" not in app_command([], env={"STREAMLIT_SERVER_ADDRESS": "0.0.0.0"})


def test_the_image_serves_others_on_purpose():
    assert "--server.address=0.0.0.0" in (ROOT / "Dockerfile").read_text(encoding="utf-8")
