"""``bertscore-viz app [STREAMLIT OPTIONS]``: the app from an installed package, the same as ``streamlit run app.py``
in a clone; and ``bertscore-viz check-deploy [--exec CMD ...]``, the deployment check."""

from __future__ import annotations

import argparse
import io
import os
import sys

from bertscore_viz.extras import require
from bertscore_viz.locations import PACKAGE_DIR
from bertscore_viz.serving.check import check
from bertscore_viz.serving.check import main as check_main

__all__ = ["APP_SCRIPT", "add_parsers", "app_command"]

#: The script Streamlit runs (the repository's ``app.py`` calls the same code).
APP_SCRIPT = PACKAGE_DIR / "app" / "main.py"

#: Streamlit settings the app is made for, used unless the command line or the environment gives them.
DEFAULT_OPTIONS = {
    "server.fileWatcherType": "none",  # the package does not change under a running server
    "browser.gatherUsageStats": "false",
    "client.toolbarMode": "minimal",
}


def add_parsers(sub) -> None:
    p = sub.add_parser("app", help="start the app (needs bertscore-viz[app]); Streamlit's options pass through",
                       description="Start the app, as `streamlit run app.py` does in a clone. Any Streamlit option "
                                   "passes through: bertscore-viz app --server.port 8502 --server.headless true")
    p.set_defaults(func=run_app, passthrough=True)
    p = sub.add_parser("check-deploy", help="check a server's deployment settings (docs/DEPLOY.md)",
                       description="Print the effective deployment settings; exit 2 naming a setting that cannot "
                                   "be used. With --exec CMD ..., run CMD after a successful check (the Docker "
                                   "image's entry point).")
    p.add_argument("--exec", dest="exec_command", nargs=argparse.REMAINDER, default=[],
                   help="the command to run after a successful check")
    p.set_defaults(func=run_check_deploy)


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


def run_app(args) -> int:
    require("The app", "app")
    quiet = io.StringIO()
    code = check(out=quiet)
    if code:
        return code
    command = app_command(list(args.passthrough_args))
    os.execv(command[0], command)
    return 0  # pragma: no cover - execv does not return


def run_check_deploy(args) -> int:
    return check_main(list(args.exec_command))
