"""A hub model that cannot be fetched fails at once with a message, before any retry loop."""

import socket

import pytest

from bertscore_viz import encoder
from bertscore_viz.errors import ModelError
from bertscore_viz.models import resolve_model


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: connections are refused


def test_unreachable_hub_is_detected(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    assert encoder.hub_reachable(timeout=1.0) is False
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert encoder.hub_reachable() is False


def test_uncached_hub_model_offline_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    calls = []
    monkeypatch.setattr("transformers.AutoTokenizer.from_pretrained", lambda *a, **k: calls.append(a))
    with pytest.raises(ModelError, match="not in the Hugging Face cache and the hub cannot be reached"):
        encoder.Encoder(resolve_model("roberta-large"))
    assert not calls  # transformers (and its retries) never ran
