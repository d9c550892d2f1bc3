"""The sidebar's precision choice in the whole app (issue 35): exact fp32 by default; "Fast (bf16)" offered only
where this machine's probe finds bf16 fast, and then every number on the page is the bf16 engine's and every
signature says ``_bf16``; Compare keeps a bf16 pass apart from the fp32 one. Real model, real probe, real app."""

from __future__ import annotations

import pytest

from bertscore_viz import Scorer
from bertscore_viz.app.app_pages.compare import scoring as compare_scoring
from bertscore_viz.app.shared.settings import PRECISION_KEY
from bertscore_viz.engine.devices import resolve_device
from bertscore_viz.serving import hardware

from .navigation import app, go, texts

CAND, REF = "The cat sat on the mat.", "There is a cat sitting on the mat."


def _signature(at) -> str:
    return next(c.value for c in at.sidebar.code)


def _metrics(at) -> list[str]:
    return [m.value for m in at.metric[:3]]


def test_the_sidebar_offers_bf16_only_where_it_is_fast_and_labels_what_it_computes():
    status = hardware.bf16_status(resolve_device(None))
    at = app()
    assert "_bf16" not in _signature(at)
    if not status.fast:  # exact only, and the sidebar says why
        assert not [r for r in at.sidebar.radio if r.key == PRECISION_KEY]
        assert any(c.value.startswith("Precision: exact (fp32).") for c in at.sidebar.caption)
        pytest.skip(f"bf16 is not fast on this machine ({status.label}): the exact branch was checked")
    radio = next(r for r in at.sidebar.radio if r.key == PRECISION_KEY)
    assert radio.options == ["Exact (fp32)", "Fast (bf16)"] and radio.value == "Exact (fp32)"
    assert status.label in radio.help
    at.text_area(key="inspect_candidate").input(CAND)
    at.text_area(key="inspect_reference_0").input(REF)
    at.run()
    exact = Scorer().explain(CAND, REF)
    assert _metrics(at) == [f"{exact.precision:.4f}", f"{exact.recall:.4f}", f"{exact.f1:.4f}"]
    radio.set_value("Fast (bf16)").run()
    assert not at.exception
    fast = Scorer(precision="bf16").explain(CAND, REF)
    assert _metrics(at) == [f"{fast.precision:.4f}", f"{fast.recall:.4f}", f"{fast.f1:.4f}"]
    assert _signature(at).endswith("_bf16") and _signature(at) == str(fast.signature)
    assert at.session_state["settings"].precision == "bf16"
    go(at, "walkthrough.py")  # the walkthrough follows the sidebar too (its gradient once crashed in bf16)
    assert not at.exception and "_bf16" in texts(at)
    go(at, "samples.py")  # and the Many samples page
    at.button(key="samples_example").click().run()
    assert not at.exception and at.metric


def test_compare_keeps_a_bf16_pass_apart_from_the_exact_one():
    """The kept model pass of a dataset is keyed by precision: switching to bf16 is a pass of its own whose
    signature says _bf16, and back to fp32 the exact pass's key and numbers return (never a bf16 number under an
    fp32 signature)."""
    at = app("compare.py")
    at.button(key="cmp_load_example").click().run()
    assert not at.exception
    exact_key = at.session_state["compare_state"].stats.key
    exact_text = texts(at)
    assert "_bf16" not in exact_text
    if not hardware.bf16_status(resolve_device(None)).fast:
        pytest.skip("bf16 is not offered on this machine: nothing to keep apart")
    radio = next(r for r in at.sidebar.radio if r.key == PRECISION_KEY)
    radio.set_value("Fast (bf16)").run()
    assert not at.exception
    assert at.session_state["compare_state"].stats.key != exact_key
    assert "_bf16" in texts(at) and compare_scoring.precision_of(at.session_state["settings"]) == "bf16"
    next(r for r in at.sidebar.radio if r.key == PRECISION_KEY).set_value("Exact (fp32)").run()
    assert at.session_state["compare_state"].stats.key == exact_key and "_bf16" not in texts(at)
