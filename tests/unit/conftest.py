"""Fixtures shared by unit-test modules; a module that defines its own fixture of the same name uses that one."""

import warnings
from pathlib import Path

import pytest

from bertscore_viz import Scorer

from .pair_example import CAND, REF


@pytest.fixture(scope="module")
def scorer():
    """The default scorer (bundled model, layer 4, no idf, raw)."""
    return Scorer()


@pytest.fixture(scope="module")
def pair(scorer):
    """The explanation of ``pair_example.CAND`` against ``pair_example.REF``."""
    return scorer.explain(CAND, REF)


#: Unit tests that take long (> ~5 s on 2 cores), in files that were being edited elsewhere when the ``slow`` marker
#: came: marked here by name, every parametrization, until they carry ``@pytest.mark.slow`` themselves (then delete
#: them here). Tests in other files carry the decorator.
SLOW_BY_NAME = {
    "test_device_path.py": ("test_host_side_work_per_sentence_is_at_least_5x_lower",  # 5 timed rounds, ~30 s
                            "test_wide_models_fill_their_batches"),  # 10-14 s with its setup
    "test_scorer.py": ("test_batch_size_token_budget_and_order_do_not_change_results",),  # 14-18 s
    "test_loss.py": ("test_one_hot_probabilities_and_ids_give_the_exact_score",),  # 5 cases, 1.5-7 s each
}
HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before pytest's own hook deselects by ``-m``
def pytest_collection_modifyitems(config, items):
    for file, names in SLOW_BY_NAME.items():
        source = (HERE / file).read_text(encoding="utf-8")
        for name in names:
            if f"def {name}(" not in source:
                warnings.warn(f"tests/unit/conftest.py SLOW_BY_NAME: no test {name} in {file} any more",
                              pytest.PytestWarning, stacklevel=1)
    for item in items:
        path = Path(item.path)
        if path.parent == HERE and getattr(item, "originalname", item.name) in SLOW_BY_NAME.get(path.name, ()):
            item.add_marker("slow")
