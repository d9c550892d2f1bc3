"""The deployment check (``bertscore-viz check-deploy``): read the settings, say what they are, refuse unusable ones
before the server starts. The image's entry point runs it with ``--exec`` in front of ``streamlit run``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bertscore_viz.serving.config import (
    ENV_PREFIX,
    SETTINGS,
    STREAMLIT_UPLOAD_VAR,
    DeployConfigError,
    Policy,
    load_policy,
    streamlit_upload_mb,
)
from bertscore_viz.serving.model_access import offered_models

__all__ = ["describe", "check", "main"]


def describe(pol: Policy) -> str:
    """The effective settings, one per line, as an operator checks them (``bertscore-viz check-deploy``)."""
    lines = [f"{ENV_PREFIX}{name.upper()} = {getattr(pol, name)!r}" for name in SETTINGS]
    lines.append(f"offered models: {', '.join(offered_models(pol))}")
    return "\n".join(lines)


def check(out=None, err=None) -> int:
    """Check the deployment settings and print them to ``out``; 2 with the reason on ``err`` when one is unusable,
    else 0. Sets Streamlit's upload cap (``STREAMLIT_SERVER_MAX_UPLOAD_SIZE``, read when Streamlit starts) from
    ``BERTSCORE_VIZ_UPLOAD_MB`` unless the operator set it."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        pol = load_policy()
    except DeployConfigError as exc:
        print(f"error: {exc}", file=err)
        return 2
    if pol.baseline_dir:
        directory = Path(pol.baseline_dir)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            probe = directory / ".write-test"
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            print(f"error: {ENV_PREFIX}BASELINE_DIR {directory} is not writable: {exc.strerror}", file=err)
            return 2
    cap = env_cap = os.environ.get(STREAMLIT_UPLOAD_VAR)
    if env_cap is None:  # Streamlit's cap follows the policy (it reads this variable when it starts)
        cap = os.environ[STREAMLIT_UPLOAD_VAR] = str(streamlit_upload_mb(pol))
    print(describe(pol), file=out, flush=True)
    print(f"{STREAMLIT_UPLOAD_VAR} = {cap!r}" + ("" if env_cap is None else " (set by the operator)"), file=out,
          flush=True)
    try:
        too_low = env_cap is not None and float(env_cap) < pol.upload_mb
    except ValueError:
        print(f"error: {STREAMLIT_UPLOAD_VAR} must be a whole number of MB, got {env_cap!r}.", file=err)
        return 2
    if too_low:
        print(f"warning: {STREAMLIT_UPLOAD_VAR}={env_cap} is below {ENV_PREFIX}UPLOAD_MB={pol.upload_mb:g}: "
              f"Streamlit refuses larger files itself, and the app states {env_cap} MB as the limit. Leave "
              f"{STREAMLIT_UPLOAD_VAR} unset to follow {ENV_PREFIX}UPLOAD_MB.", file=err, flush=True)
    return 0


def main(command: list[str] | None = None) -> int:
    """``bertscore-viz check-deploy [--exec CMD ...]``: :func:`check`, then, when the settings can be used and a
    command is given, replace this process with it (the image's entry point), so that a container with a bad
    setting stops at once instead of serving an app that fails later."""
    code = check()
    if code == 0 and command:
        os.execvp(command[0], command)
    return code
