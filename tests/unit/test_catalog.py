"""The model catalog: entries, availability, and resolve_model for offline models."""

from __future__ import annotations

import pytest

from bertscore_viz.catalog import (INSTALLED_MARKER, availability, catalog, get_entry, installed_path, models_home,
                                   status_line)
from bertscore_viz.errors import ModelError
from bertscore_viz.models import MODEL_LAYERS, resolve_model


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("BERTSCORE_VIZ_HOME", str(tmp_path))
    return tmp_path


def _fake_install(home, name):
    d = home / name
    d.mkdir()
    (d / "config.json").write_text("{}")
    (d / INSTALLED_MARKER).write_text("{}")
    return d


def test_entries():
    names = [e.name for e in catalog()]
    assert names[:3] == ["all-MiniLM-L6-v2", "all-mpnet-base-v2", "multilingual-e5-small"]
    assert {"roberta-large", "microsoft/deberta-xlarge-mnli", "bert-base-multilingual-cased"} <= set(names)
    assert len(names) == len(set(names))
    for e in catalog():
        assert e.kind in ("bundled", "offline", "hub") and e.languages and e.size_mb > 0 and e.baselines
        if e.kind == "hub":
            assert e.default_layer == MODEL_LAYERS[e.name]
        if e.kind == "offline":
            assert e.install_command == f"python -m bertscore_viz models install {e.name}"
            assert e.default_layer is not None
            assert all(len(p.sha256) == 64 for p in e.parts)
    assert get_entry("mpnet").name == "all-mpnet-base-v2"
    assert get_entry("intfloat/multilingual-e5-small").name == "multilingual-e5-small"
    assert get_entry("roberta-large").default_layer == 17
    assert get_entry("no-such-model") is None


def test_models_home_default(monkeypatch, tmp_path):
    monkeypatch.delenv("BERTSCORE_VIZ_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert models_home() == tmp_path / ".cache" / "bertscore-viz" / "models"


def test_not_installed_gives_install_command(home):
    with pytest.raises(ModelError, match=r"not installed.*`python -m bertscore_viz models install all-mpnet-base-v2`"):
        resolve_model("all-mpnet-base-v2")
    assert availability(get_entry("all-mpnet-base-v2")) == "installable"
    assert "models install all-mpnet-base-v2" in status_line(get_entry("all-mpnet-base-v2"))
    # the hub-style name stays a hub name when not installed
    spec = resolve_model("sentence-transformers/all-mpnet-base-v2")
    assert spec.source == "sentence-transformers/all-mpnet-base-v2" and not spec.local


def test_installed_resolves_to_home(home):
    d = _fake_install(home, "all-mpnet-base-v2")
    for name in ("all-mpnet-base-v2", "mpnet", "sentence-transformers/all-mpnet-base-v2"):
        spec = resolve_model(name)
        assert spec.name == "all-mpnet-base-v2" and spec.source == str(d) and spec.local
        assert spec.default_layer == 7
    assert availability(get_entry("mpnet")) == "available"
    assert installed_path(get_entry("mpnet")) == d


def test_marker_missing_means_not_installed(home):
    d = home / "multilingual-e5-small"
    d.mkdir()
    (d / "config.json").write_text("{}")
    with pytest.raises(ModelError, match="models install multilingual-e5-small"):
        resolve_model("multilingual-e5-small")


def test_bundled_and_hub(home):
    assert availability(get_entry("minilm")) == "available"
    assert availability(get_entry("roberta-large")) in ("hub", "hub-cached")
    assert resolve_model("roberta-large").default_layer == 17
