"""The sidebar's model picker over the catalog, in Streamlit's AppTest (the sidebar as a script of its own, so
every rerun runs it; see test_inspect_page.py for why app.py reruns skip the sidebar)."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from bertscore_viz.models.catalog import INSTALLED_MARKER
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME, bundled_model_path

TIMEOUT = 240


def _sidebar_script():
    import streamlit as st

    from bertscore_viz.app.shared.settings import sidebar

    settings = sidebar()
    st.write(f"MODEL={settings.model} LAYER={settings.layer}")


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("BERTSCORE_VIZ_HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
def open_server(monkeypatch):
    """A deployment that lets users type directories and fetch hub names (a researcher's own machine)."""
    from bertscore_viz.serving import config

    monkeypatch.setattr(config, "_POLICY", config.Policy(allow_custom_models=True, allow_downloads=True))


@pytest.fixture
def locked_server(monkeypatch):
    """The default deployment: the bundled and installed models only."""
    from bertscore_viz.serving import config

    monkeypatch.setattr(config, "_POLICY", config.Policy())


def _run(**state) -> AppTest:
    at = AppTest.from_function(_sidebar_script, default_timeout=TIMEOUT)
    for k, v in state.items():
        at.session_state[k] = v
    return at.run()


def _chosen(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("MODEL="))


def test_picker_lists_the_catalog_with_its_state(home, open_server):
    at = _run()
    assert not at.exception
    box = at.sidebar.selectbox(key="model_choice")
    options = box.options
    assert options[0] == "all-MiniLM-L6-v2 (bundled)"
    assert "all-mpnet-base-v2 (not installed: offline install)" in options
    assert "multilingual-e5-small (not installed: offline install)" in options
    assert any(o.startswith("roberta-large (") and "hub" in o for o in options)
    assert options[-1].startswith("Other")
    assert _chosen(at) == f"MODEL={BUNDLED_MODEL_NAME} LAYER=4"
    assert any("Languages: English" in c.value for c in at.sidebar.caption)


def test_not_installed_model_shows_the_one_command(home, locked_server):
    at = _run(model_choice="all-mpnet-base-v2")
    assert not at.exception
    assert [c.value for c in at.sidebar.code][0] == "python -m bertscore_viz models install all-mpnet-base-v2"
    assert any("not installed on this machine" in i.value and "bundled model meanwhile" in i.value
               for i in at.sidebar.info)
    assert _chosen(at).startswith(f"MODEL={BUNDLED_MODEL_NAME} ")


def test_installed_model_is_used(home, locked_server):
    """An installed copy (here the bundled weights under the catalog name: the picker only sees the install
    marker and loads whatever the directory holds) is picked, named in the signature, with its layer slider."""
    d = home / "all-mpnet-base-v2"
    d.mkdir()
    for f in bundled_model_path().iterdir():
        if f.is_file():
            (d / f.name).symlink_to(f)
    (d / INSTALLED_MARKER).write_text(json.dumps({"name": "all-mpnet-base-v2"}))
    at = _run(model_choice="all-mpnet-base-v2")
    assert not at.exception
    assert "all-mpnet-base-v2 (installed)" in at.sidebar.selectbox(key="model_choice").options
    assert not at.sidebar.info
    assert _chosen(at).startswith("MODEL=all-mpnet-base-v2 ")
    assert at.sidebar.code[-1].value.startswith("all-mpnet-base-v2_L")  # the signature
    assert at.sidebar.slider(key="layer::all-mpnet-base-v2").value == 6  # default 7, capped to this copy's 6


def test_hub_model_offline_falls_back_with_a_message(home, open_server):
    at = _run(model_choice="roberta-large")
    assert not at.exception
    assert any("Not in the Hugging Face cache" in c.value for c in at.sidebar.caption)
    assert at.sidebar.error and "'roberta-large' could not be loaded" in at.sidebar.error[0].value.replace("\\", "")
    assert _chosen(at).startswith(f"MODEL={BUNDLED_MODEL_NAME} ")


def test_free_text_stays(home, open_server):
    typed = "/nonexistent-bertscore-viz/nowhere"  # under 60 characters: messages echo longer input shortened
    at = _run(model_choice="Other: local directory or hub name", model_other=typed)
    assert not at.exception
    assert any("does not exist" in e.value for e in at.sidebar.error)
    assert any(typed in e.value.replace("\\", "") for e in at.sidebar.error)  # what was typed
    at = _run(model_choice="Other: local directory or hub name", model_other=str(bundled_model_path()))
    assert _chosen(at).startswith(f"MODEL={bundled_model_path()} ")


def test_a_locked_down_server_lists_hub_models_without_offering_them(home, locked_server):
    at = _run()
    assert not at.exception
    options = at.sidebar.selectbox(key="model_choice").options
    assert options[0] == "all-MiniLM-L6-v2 (bundled)"
    assert "all-mpnet-base-v2 (not installed: offline install)" in options  # shows its install command only
    assert not any(o.startswith("roberta-large") for o in options)
    assert not any(o.startswith("Other") for o in options)
    # issue 23, item 7: compact (an expander, not a standing paragraph), says how an operator allows more, and the
    # help mentions no 'Other' option that this server does not have
    (more,) = [e for e in at.sidebar.expander if "not offered here" in e.label]
    text = " ".join(c.value for c in more.caption)
    assert "roberta-large" in text and "BERTSCORE_VIZ_ALLOW_DOWNLOADS" in text and "docs/DEPLOY.md" in text
    assert "'Other'" not in at.sidebar.selectbox(key="model_choice").help


def test_an_operators_label_is_shown_and_the_model_keeps_its_own_name(home, monkeypatch):
    """``BERTSCORE_VIZ_MODELS="mpnet=/models/all-mpnet-base-v2"`` (docs/DEPLOY.md): users pick "mpnet"; the
    signature, the layer default and the baselines are those of all-mpnet-base-v2 (here the bundled weights under
    that directory name, so the default layer 7 is capped to this copy's 6)."""
    from bertscore_viz.serving import config

    d = home / "models" / "all-mpnet-base-v2"
    d.mkdir(parents=True)
    for f in bundled_model_path().iterdir():
        if f.is_file():
            (d / f.name).symlink_to(f)
    monkeypatch.setattr(config, "_POLICY", config.Policy(models=(f"mpnet={d}", BUNDLED_MODEL_NAME)))
    at = _run(model_choice="mpnet")
    assert not at.exception and not at.sidebar.error
    assert "mpnet" in at.sidebar.selectbox(key="model_choice").options
    assert _chosen(at).startswith("MODEL=mpnet ")  # what the sidebar stores: the label
    assert at.sidebar.code[-1].value.startswith("all-mpnet-base-v2_L6_no-idf_")  # the signature: the model
    assert at.sidebar.slider(key="layer::all-mpnet-base-v2").value == 6
    at.sidebar.toggle(key="rescale").set_value(True).run()
    assert "-rescaled" in at.sidebar.code[-1].value  # baselines/en/all-mpnet-base-v2.tsv, not .../mpnet.tsv
    assert str(d) not in "\n".join([c.value for c in at.sidebar.code] + [c.value for c in at.sidebar.caption])


def test_an_allow_listed_model_that_fails_to_load_is_named_by_its_label_not_its_directory(tmp_path, monkeypatch):
    """Issue 19, class 7: the operator's label is what users see; the directory behind it stays on the server."""
    from bertscore_viz.serving import config

    broken = tmp_path / "secret-weights-v3"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "bert"}')  # no weights, no tokenizer
    monkeypatch.setattr(config, "_POLICY", config.Policy(models=(BUNDLED_MODEL_NAME, f"house-model={broken}")))
    at = _run(model_choice="house-model")
    assert not at.exception
    shown = " ".join(e.value for e in at.sidebar.error).replace("\\", "")
    assert "'house-model'" in shown, shown
    assert "secret-weights-v3" not in shown and str(tmp_path) not in shown
    assert _chosen(at).startswith(f"MODEL={BUNDLED_MODEL_NAME} ")


def test_the_sidebar_names_the_baseline_in_use(home, locked_server):
    """Issue 23, item 6: with a session's own baseline the signature said -custom-rescaled while the sidebar named
    the shipped one."""
    import numpy as np

    from bertscore_viz.engine.baseline import BaselineTable

    at = _run(rescale=True)
    assert any(c.value.replace("\\", "").startswith("Baseline in use: baselines/en/all-MiniLM-L6-v2.tsv (shipped)")
               for c in at.sidebar.caption)
    mine = BaselineTable(np.full((7, 3), 0.4), "computed from corpus.txt, 500 pairs, seed 0")
    at = _run(rescale=True, custom_baselines={("en", BUNDLED_MODEL_NAME): mine})
    assert any("Baseline in use: computed from corpus.txt, 500 pairs, seed 0 (custom" in c.value.replace("\\", "")
               for c in at.sidebar.caption)
    assert at.sidebar.code[-1].value.endswith("-custom-rescaled")
