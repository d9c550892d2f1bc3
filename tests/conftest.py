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

#: The layer of each test directory: its marker (registered in pyproject.toml). A test file gets its layer from the
#: directory it is in, so a file moved or added later needs no decorator. ``slow`` is put by hand on unit tests.
LAYERS = {"unit": "unit", "app": "app", "e2e": "browser", "parity": "parity", "distributed": "ray", "load": "load"}


@pytest.hookimpl(tryfirst=True)  # before pytest's own hook deselects by ``-m``
def pytest_collection_modifyitems(config, items):
    for item in items:
        try:
            top = Path(item.path).resolve().relative_to(TESTS).parts[0]
        except (ValueError, IndexError):
            continue
        layer = LAYERS.get(top)
        if layer is not None:
            item.add_marker(layer)
