import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
TESTS = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# The persistent embedding store is on by default for users (~/.cache/bertscore-viz/embeddings); tests embed
# afresh unless a test gives a store of its own (tests/unit/test_store.py), so no test reads another's vectors.
os.environ.setdefault("BERTSCORE_VIZ_STORE", "off")
# Saved runs (docs/RUNS.md) go to a folder of this test session, never the user's ~/.cache/bertscore-viz/runs: the
# app under test counts as a local app (127.0.0.1), which uses the default runs folder.
if "BERTSCORE_VIZ_RUNS" not in os.environ:
    import tempfile

    os.environ["BERTSCORE_VIZ_RUNS"] = tempfile.mkdtemp(prefix="bertscore-viz-test-runs-")
if os.environ.get("PYTEST_XDIST_WORKER"):  # a worker of `-n 2` (the README's test command): two workers on two
    # cores, one thread each (torch's own pool would take both cores in each worker, and its threads spin-wait on each
    # other); a subprocess a test starts inherits it. Tests that need a thread count set it themselves.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

#: The layer of each test directory: its marker (registered in pyproject.toml). A test file gets its layer from the
#: directory it is in, so a file moved or added later needs no decorator. ``slow`` is put by hand on unit tests.
LAYERS = {"unit": "unit", "app": "app", "e2e": "browser", "parity": "parity", "distributed": "ray", "load": "load"}


@pytest.hookimpl(tryfirst=True)  # before pytest's own hook deselects by ``-m``
def pytest_collection_modifyitems(config, items):
    xdist = config.pluginmanager.hasplugin("xdist")
    for item in items:
        try:
            top = Path(item.path).resolve().relative_to(TESTS).parts[0]
        except (ValueError, IndexError):
            continue
        layer = LAYERS.get(top)
        if layer is not None:
            item.add_marker(layer)
        if xdist:
            item.add_marker(pytest.mark.xdist_group(name=_group(item, top)))


def _group(item, top: str) -> str:
    """The pytest-xdist group of a test (``-n 2 --dist loadgroup``, the README's test command): a group runs on one
    worker, in order. A test module is one group, so its module fixtures (a scorer, the wheel and its virtual
    environment) are built once; the Ray tests share one Ray session, the parity tests their reference models and the
    browser tests one server; the documents' examples (the longest module) are two groups, docs/CLI.md's and the
    others', so that the two workers share them."""
    if top in ("distributed", "parity", "e2e", "load"):
        return top
    path = Path(item.path).resolve().relative_to(TESTS).as_posix()
    if path == "unit/test_doc_examples.py":
        callspec = getattr(item, "callspec", None)
        ex = callspec.params.get("ex") if callspec is not None else None
        return path + (":docs/CLI.md" if getattr(ex, "file", None) == "docs/CLI.md" else ":others")
    return path


def pytest_collection_finish(session):
    """A test module that turns autograd off for the whole process when it is imported (a framework's import can:
    lighteval's does) would make every later gradient test of its worker fail far from the cause: said here."""
    torch = sys.modules.get("torch")
    if torch is not None and not torch.is_grad_enabled():
        raise pytest.UsageError("Autograd is off after collecting the tests: a test module (or what it imports) "
                                "called torch.set_grad_enabled(False) at import; turn it back on in that module.")
