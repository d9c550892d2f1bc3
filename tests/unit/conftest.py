"""Fixtures shared by unit-test modules; a module that defines its own fixture of the same name uses that one."""

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
