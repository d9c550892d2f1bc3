"""The deployment policy in the app (AppTest, real model): a model outside the allow-list gets a clear message and
no server path, uploads meet the operator's limits, and a baseline is either kept only in the session (said
plainly, with a download) or saved for later sessions when the operator configured a baseline directory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from bertscore_viz import deploy
from bertscore_viz.models import BUNDLED_MODEL_NAME, bundled_model_path
from bertscore_viz.ui.settings import OTHER, Settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "bertscore_viz" / "examples" / "systems_example.csv").read_bytes()
BASELINE = ("LAYER,P,R,F\n" + "".join(f"{i},0.{i + 1},0.{i + 1},0.{i + 1}\n" for i in range(7))).encode()


@pytest.fixture
def with_policy(monkeypatch):
    def use(**kw):
        monkeypatch.setattr(deploy, "_POLICY", deploy.Policy(**kw))
    return use


def _app(page: str | None = None, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    if page:
        at.switch_page(str(ROOT / "pages" / page))
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def _sidebar_with(typed: str) -> AppTest:
    """The app after a user chose "Other" and typed ``typed`` (set before the run: AppTest drops the sidebar of a
    navigation app on reruns)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["model_choice"] = OTHER
    at.session_state["model_other"] = typed
    at.run()
    assert not at.exception, at.exception
    assert at.text_input(key="model_other").value == typed
    return at


def _problems(at) -> list[str]:
    return list(next(df.value for df in at.dataframe if "Problem" in df.value.columns)["Problem"])


def _texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("success", "info", "warning", "error", "markdown", "caption", "code")
                     for e in getattr(at, kind))


@pytest.mark.parametrize("typed", ["/etc", str(bundled_model_path()), "roberta-large", "../../../root"])
def test_a_locked_server_offers_no_free_text_and_refuses_it_plainly(with_policy, typed):
    from bertscore_viz.deploy import ModelNotAllowed
    from bertscore_viz.ui import cache as ui_cache

    with_policy()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()  # one run: AppTest keeps the sidebar
    assert not at.exception, at.exception
    assert OTHER not in at.sidebar.selectbox(key="model_choice").options
    assert at.session_state["settings"].model == BUNDLED_MODEL_NAME
    with pytest.raises(ModelNotAllowed) as info:  # the check behind the picker, for anything sent anyway
        ui_cache.resolve_model(typed)
    assert "not offered on this server" in str(info.value)
    assert str(bundled_model_path().parent) not in str(info.value).replace(typed, "")


def test_a_hub_name_is_refused_plainly_when_downloads_are_off(with_policy):
    with_policy(allow_custom_models=True)
    at = _sidebar_with("roberta-large")
    errors = [e.value for e in at.sidebar.error]
    assert len(errors) == 1 and "downloads are turned off" in errors[0]
    assert at.session_state["settings"].model == BUNDLED_MODEL_NAME  # the bundled model meanwhile


def test_an_allowed_directory_loads_when_free_text_is_on(with_policy):
    with_policy(allow_custom_models=True)
    at = _sidebar_with(str(bundled_model_path()))
    assert not at.sidebar.error
    assert at.session_state["settings"].model == str(bundled_model_path())


def test_upload_rows_and_the_session_total_follow_the_operator(with_policy):
    with_policy(upload_rows=10)
    at = _app("compare.py", compare_input={"name": "example.csv", "data": EXAMPLE})
    assert any("more than 10 data rows (the limit)" in p for p in _problems(at))
    assert "Best:" in _texts(at) and any(m.value == "4 x 10" for m in at.metric)  # the first 10 rows scored
    with_policy(session_upload_mb=0.012)  # 3 kB, then the 10.8 kB example: together over 12 kB
    at = _app("compare.py", compare_input={"name": "example.csv", "data": EXAMPLE[:3000] + b"\n"})
    at.session_state["compare_input"] = {"name": "again.csv", "data": EXAMPLE}
    at.run()
    assert any("this server accepts 0.012 MB per session" in p for p in _problems(at))


def test_without_a_baseline_directory_the_page_says_the_baseline_lives_in_this_session(with_policy):
    with_policy()
    at = _app("baselines.py", settings=Settings(lang="fr"),
              baseline_file_input={"name": "mine.tsv", "data": BASELINE})
    assert any("lives only in this browser session" in i.value for i in at.info)
    assert not [b for b in at.button if b.key == "bl_keep"]


def test_a_saved_baseline_appears_for_a_later_session(with_policy, tmp_path):
    with_policy(baseline_dir=str(tmp_path))
    at = _app("baselines.py", settings=Settings(lang="fr"),
              baseline_file_input={"name": "mine.tsv", "data": BASELINE})
    at.button(key="bl_keep").click().run()
    assert not at.exception, at.exception
    assert any("Saved on this server" in s.value for s in at.success)
    saved = tmp_path / "fr" / f"{BUNDLED_MODEL_NAME}.tsv"
    assert np.loadtxt(saved, delimiter=",", skiprows=1)[4, 3] == pytest.approx(0.5)
    later = _app("baselines.py", settings=Settings(lang="fr"))  # a new session: nothing uploaded
    assert "saved on this server" in _texts(later)
    assert "custom_baselines" not in later.session_state
    later.switch_page(str(ROOT / "pages" / "inspect.py"))
    later.session_state["settings"] = Settings(lang="fr", rescale=True)
    later.run()
    later.text_area(key="inspect_candidate").input("The cat sat on the mat.")
    later.text_area(key="inspect_reference_0").input("There is a cat sitting on the mat.").run()
    text = _texts(later).replace("\\", "")
    assert not later.exception and "custom-rescaled" in text and "baseline 0.5000" in text
