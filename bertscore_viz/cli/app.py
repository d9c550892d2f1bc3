"""``bertscore-viz app [STREAMLIT OPTIONS]``: the app from an installed package, the same as ``streamlit run app.py``
in a clone (needs bertscore-viz[app])."""

from __future__ import annotations

import io
import os
import sys

from bertscore_viz.extras import require
from bertscore_viz.locations import PACKAGE_DIR
from bertscore_viz.serving.check import check

__all__ = ["APP_SCRIPT", "DEFAULT_OPTIONS", "app_command", "run"]

#: The script Streamlit runs (the repository's ``app.py`` calls the same code).
APP_SCRIPT = PACKAGE_DIR / "app" / "main.py"

#: Streamlit settings the app is made for, used unless the command line or the environment gives them.
DEFAULT_OPTIONS = {
    "server.address": "127.0.0.1",  # this machine only; a server for others says so (--server.address=0.0.0.0)
    "server.fileWatcherType": "none",  # the package does not change under a running server
    "browser.gatherUsageStats": "false",
    "client.toolbarMode": "minimal",
}


def app_command(options: list[str], env: dict[str, str] | None = None) -> list[str]:
    """The ``streamlit run`` command line for the packaged app with the user's ``options`` and the defaults they do
    not override (an option given on the command line or as ``STREAMLIT_...`` in ``env`` wins)."""
    env = os.environ if env is None else env
    given = {opt.lstrip("-").split("=", 1)[0] for opt in options if opt.startswith("--")}
    defaults = [f"--{name}={value}" for name, value in DEFAULT_OPTIONS.items()
                if name not in given and _env_name(name) not in env]
    return [sys.executable, "-m", "streamlit", "run", str(APP_SCRIPT), *defaults, *options]


def _env_name(name: str) -> str:
    """Streamlit's environment variable for an option (``server.fileWatcherType`` ->
    ``STREAMLIT_SERVER_FILE_WATCHER_TYPE``)."""
    out = "".join("_" + ch if ch.isupper() else ch for ch in name.replace(".", "_"))
    return "STREAMLIT_" + out.upper()


def run(args) -> int:
    """Check the extra and the deployment settings (as the image does), then become the Streamlit server."""
    require("The app", "app")
    code = check(out=io.StringIO())  # the settings are printed by `check-deploy`; here only errors are said
    if code:
        return code
    command = app_command(list(args.passthrough_args))
    os.execv(command[0], command)
    return 0  # pragma: no cover - execv does not return
