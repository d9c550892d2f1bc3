"""The deployment policy in the app (AppTest, real model): a model outside the allow-list gets a clear message and
no server path, uploads meet the operator's limits, and a baseline is either kept only in the session (said
plainly, with a download) or saved for later sessions when the operator configured a baseline directory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from bertscore_viz.app.shared.settings import OTHER, Settings
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME, bundled_model_path
from bertscore_viz.serving import config

from .navigation import use_settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "bertscore_viz" / "examples" / "systems_example.csv").read_bytes()
CORPUS = "\n".join((ROOT / "data" / "newstest2017-english" / "newstest2017-fien-ref.en").read_text(encoding="utf-8")
                   .splitlines()[:50]).encode("utf-8")
BASELINE = ("LAYER,P,R,F\n" + "".join(f"{i},0.{i + 1},0.{i + 1},0.{i + 1}\n" for i in range(7))).encode()


@pytest.fixture
def with_policy(monkeypatch):
    def use(**kw):
        monkeypatch.setattr(config, "_POLICY", config.Policy(**kw))
    return use


def _app(page: str | None = None, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    if page:
        at.switch_page(str(ROOT / "bertscore_viz" / "app" / "app_pages" / page.removesuffix(".py") / "page.py"))
    for k, v in state.items():
        if k == "settings":
            use_settings(at, v)
        else:
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


def _inspect_a_pair_rescaled_in_french(at) -> None:
    """Go to Inspect with rescaling on for French and score a pair (the sidebar offers French when a French
    baseline exists: saved on the server, or made in the session)."""
    at.switch_page(str(ROOT / "bertscore_viz" / "app" / "app_pages" / "inspect" / "page.py"))
    use_settings(at, Settings(lang="fr", rescale=True))
    at.run()
    at.text_area(key="inspect_candidate").input("The cat sat on the mat.")
    at.text_area(key="inspect_reference_0").input("There is a cat sitting on the mat.").run()


def _inspect_page_rescaled_in_french() -> AppTest:
    """The Inspect page on its own, asked to rescale a French pair (the bundled model has no French baseline; the
    sidebar would not offer French, so the page is run alone with those settings) ."""
    at = AppTest.from_file(str(ROOT / "bertscore_viz" / "app" / "app_pages" / "inspect" / "page.py"),
                           default_timeout=300)
    at.session_state["settings"] = Settings(lang="fr", rescale=True)
    at.session_state["inspect_candidate"] = "The cat sat on the mat."
    at.session_state["inspect_reference_0"] = "There is a cat sitting on the mat."
    at.run()
    return at


def _problems(at) -> list[str]:
    return list(next(df.value for df in at.dataframe if "Problem" in df.value.columns)["Problem"])


def _texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("success", "info", "warning", "error", "markdown", "caption", "code")
                     for e in getattr(at, kind))


@pytest.mark.parametrize("typed", ["/etc", str(bundled_model_path()), "roberta-large", "../../../root"])
def test_a_locked_server_offers_no_free_text_and_refuses_it_plainly(with_policy, typed):
    from bertscore_viz.app import gateway
    from bertscore_viz.serving.model_access import ModelNotAllowed

    with_policy()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()  # one run: AppTest keeps the sidebar
    assert not at.exception, at.exception
    assert OTHER not in at.sidebar.selectbox(key="model_choice").options
    assert at.session_state["settings"].model == BUNDLED_MODEL_NAME
    with pytest.raises(ModelNotAllowed) as info:  # the check behind the picker, for anything sent anyway
        gateway.resolve_model(typed)
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
    assert any("more than 10 data rows" in p and "BERTSCORE_VIZ_UPLOAD_ROWS" in p for p in _problems(at))
    assert "Best:" in _texts(at) and any(m.value == "4 x 10" for m in at.metric)  # the first 10 rows scored
    with_policy(session_upload_mb=0.012)  # 3 kB, then the 10.8 kB example: together over 12 kB
    at = _app("compare.py", compare_input={"name": "example.csv", "data": EXAMPLE[:3000] + b"\n"})
    at.session_state["compare_input"] = {"name": "again.csv", "data": EXAMPLE}
    at.run()
    assert any("this server accepts 12.3 kB per session" in p for p in _problems(at))


def _uploaders(at) -> dict:
    return {u.proto.label.split(" (")[0]: u.proto for u in at.get("file_uploader")}


def test_every_uploader_states_and_applies_the_operators_limits(with_policy):
    import streamlit

    cap = streamlit.config.get_option("server.maxUploadSize")  # Streamlit's own cap (config.toml: 50 MB)
    with_policy(upload_mb=3, upload_rows=1234, session_upload_mb=40)
    at = _app("compare.py")
    (compare_up,) = _uploaders(at).values()
    assert compare_up.max_upload_size_mb == 3  # the operator's number: the uploader says "3MB" (issue 40: it said 4)
    assert compare_up.help.startswith("At most 3 MB per file, 1,234 rows") and "40 MB per session" in compare_up.help
    at = _app("baselines.py")
    ups = _uploaders(at)
    assert ups["Corpus"].max_upload_size_mb == 3 and "At most 3 MB per file" in ups["Corpus"].help
    assert ups["Baseline file"].max_upload_size_mb == 1 and "At most 1 MB per file" in ups["Baseline file"].help
    with_policy(upload_mb=cap + 70)  # above Streamlit's cap: the widgets say (and use) the cap, which applies
    at = _app("compare.py")
    assert next(iter(_uploaders(at).values())).max_upload_size_mb == cap
    # The uploader states the operator's number of MB, as the help and the messages do (issue 40: "53MB" under a
    # 50 MB setting, the limit rounded up in the browser's 10^6-byte MB). The browser then refuses a file a little
    # under the server's limit in 2^20-byte MB (a 19.2 MB file under 19.43), never one over it; a fractional setting
    # is stated by its whole part.
    with_policy(upload_mb=19.43)
    at = _app("compare.py")
    assert next(iter(_uploaders(at).values())).max_upload_size_mb == 19


def test_baselines_page_uploads_count_towards_the_limits(with_policy):
    with_policy(upload_mb=0.004)  # 4 kB per file: the 5 kB corpus is refused, plainly, and not read
    at = _app("baselines.py", baseline_corpus_input={"name": "corpus.txt", "data": CORPUS})
    assert any("The file corpus.txt is 5.0 kB; this server accepts at most 4.1 kB per file here" in e.value
               .replace("\\", "") for e in at.error)
    assert at.button(key="bl_compute").disabled
    with_policy(session_upload_mb=0.012)  # the 5 kB corpus, then the 10.8 kB example on Compare: over 12 kB
    at = _app("baselines.py", baseline_corpus_input={"name": "corpus.txt", "data": CORPUS})
    assert not at.error and not at.button(key="bl_compute").disabled
    at.switch_page(str(ROOT / "bertscore_viz" / "app" / "app_pages" / "compare" / "page.py"))
    at.session_state["compare_input"] = {"name": "example.csv", "data": EXAMPLE}
    at.run()
    assert any("This session has uploaded 15.6 kB with this file" in p for p in _problems(at))
    at.switch_page(str(ROOT / "bertscore_viz" / "app" / "app_pages" / "baselines" / "page.py"))
    at.session_state["baseline_file_input"] = {"name": "mine.tsv", "data": BASELINE}  # 0.1 kB more: still fits
    at.run()
    assert not at.exception and not at.error


def _all_text(at) -> str:
    return _texts(at) + "\n".join(str(e.value) for e in at.sidebar.error)


def test_no_server_path_reaches_the_page_when_a_baseline_is_missing(with_policy):
    with_policy()
    at = _app("baselines.py", settings=Settings(lang="fr"))  # rescaling off: the page names the missing file
    text = _all_text(at).replace("\\", "")
    assert "baselines/fr/all-MiniLM-L6-v2.tsv does not exist" in text
    assert str(ROOT) not in text and str(Path.home()) not in text
    at = _inspect_page_rescaled_in_french()
    text = _all_text(at).replace("\\", "")
    assert "No rescaling baseline" in text and "baselines/fr/all-MiniLM-L6-v2.tsv" in text
    assert str(ROOT) not in text and str(Path.home()) not in text
    # Compare: raw, and why
    at = AppTest.from_file(str(ROOT / "bertscore_viz" / "app" / "app_pages" / "compare" / "page.py"),
                           default_timeout=300)
    at.session_state["settings"] = Settings(lang="fr", rescale=True)
    at.session_state["compare_input"] = {"name": "example.csv", "data": EXAMPLE}
    at.run()
    text = _all_text(at).replace("\\", "")
    assert "Showing raw numbers" in text and "baselines/fr/all-MiniLM-L6-v2.tsv does not exist" in text
    assert str(ROOT) not in text and str(Path.home()) not in text


@pytest.mark.parametrize("typed", ["~", "~/.cache", "/srv/nope", "multilingual-e5-small"])
def test_typed_models_that_cannot_be_used_name_only_what_was_typed(with_policy, typed, tmp_path, monkeypatch):
    monkeypatch.setenv("BERTSCORE_VIZ_HOME", str(tmp_path))  # no catalog model installed here
    with_policy(allow_custom_models=True)
    at = _sidebar_with(typed)
    errors = [e.value.replace("\\", "") for e in at.sidebar.error]
    assert len(errors) == 1 and typed in errors[0]
    for server_path in (str(Path.home()), str(tmp_path), str(ROOT)):
        assert server_path not in errors[0].replace(typed, "")
    assert at.session_state["settings"].model == BUNDLED_MODEL_NAME


def test_an_operator_listed_model_that_cannot_load_is_reported_by_its_label(with_policy):
    with_policy(models=("broken=/srv/models/nope", BUNDLED_MODEL_NAME))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["model_choice"] = "broken"
    at.run()
    assert not at.exception, at.exception
    errors = [e.value.replace("\\", "") for e in at.sidebar.error]
    assert len(errors) == 1 and "'broken' cannot be used on this server" in errors[0] and "/srv" not in errors[0]
    assert at.session_state["settings"].model == BUNDLED_MODEL_NAME


def test_a_downloaded_provenance_names_no_server_directory(tmp_path):
    """A baseline computed with a model from a directory of the server, from a corpus file read on the server (as
    the command line records it): the provenance the page offers for download keeps everything but the paths."""
    import json

    from bertscore_viz import Scorer
    from bertscore_viz.app import gateway
    from bertscore_viz.models.spec import ModelSpec
    from bertscore_viz.rescaling import baseline_compute as bc

    d = tmp_path / "mini"
    d.mkdir()
    for f in bundled_model_path().iterdir():
        (d / f.name).symlink_to(f)
    spec = ModelSpec("mini", str(d), 4, local=True)
    corpus_file = tmp_path / "corpus.txt"
    result = bc.compute_baseline(bc.prepare_corpus(CORPUS, str(corpus_file)), n_pairs=8, seed=0,
                                 scorer=Scorer(model=spec, layer=4))
    raw = result.provenance_json()
    assert str(corpus_file) in raw  # what the server may keep beside a saved baseline
    public = gateway.public_provenance(raw)
    assert str(tmp_path) not in public and "(on the server) corpus.txt" in public
    back, original = json.loads(public), json.loads(raw)
    assert back["corpus"]["sha256"] == original["corpus"]["sha256"] and back["means"] == original["means"]
    assert back["description"].endswith("random pairs of (on the server) corpus.txt")
    assert gateway.public_provenance('{"model_source": "/srv/models/m", "note": "P/R/F of 3 layers"}') == \
        json.dumps({"model_source": "(on the server) m", "note": "P/R/F of 3 layers"}, indent=1)


def test_no_traceback_reaches_the_browser_when_streamlit_starts_elsewhere(tmp_path):
    """``streamlit run /path/to/app.py`` from another directory does not read the repository's
    .streamlit/config.toml: app.py itself hides error details. An error raised after app.py ran in the process
    (here a script of its own) reaches the page without its message or stack trace."""
    import subprocess
    import sys

    script = f"""
from streamlit import config
from streamlit.testing.v1 import AppTest
before = config.get_option("client.showErrorDetails")
AppTest.from_file({str(ROOT / "app.py")!r}, default_timeout=300).run()
failing = AppTest.from_string("raise RuntimeError('secret /srv/data/x')").run()
e = failing.exception[0]
print("BEFORE", before, "AFTER", config.get_option("client.showErrorDetails"))
print("LEAK" if ("/srv/data" in e.message or e.stack_trace) else "REDACTED")
"""
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env=dict(__import__("os").environ, PYTHONPATH=str(ROOT)))
    assert run.returncode == 0, run.stderr[-3000:]
    assert "BEFORE full AFTER none" in run.stdout and "REDACTED" in run.stdout


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
    _inspect_a_pair_rescaled_in_french(later)
    text = _texts(later).replace("\\", "")
    assert not later.exception and "custom-rescaled" in text and "baseline 0.5000" in text


def test_unusable_settings_stop_the_app_with_a_plain_message(monkeypatch):
    """``streamlit run app.py`` with a bad setting (the image checks them before it starts; a plain run does not):
    one message, no traceback, no page."""
    monkeypatch.setattr(config, "_POLICY", None)
    monkeypatch.setenv("BERTSCORE_VIZ_MAX_JOBS", "none")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "This server's settings cannot be used, so the app cannot start. Whoever runs the server finds the reason "
        "in its log (`bertscore-viz check-deploy` checks the settings)."]
    assert "BERTSCORE_VIZ_MAX_JOBS" not in _texts(at)


def test_shown_messages_hide_the_servers_directories():
    """The safety net under every error and warning the pages show (the messages themselves name files relative to
    the repository): the app's directory, the Python environment and the home directory become "…"."""
    import sys

    from bertscore_viz.app.shared.messages import hide_server_paths

    text = (f"{ROOT / 'bertscore_viz' / 'baselines' / 'fr' / 'x.tsv'} and {Path(sys.prefix) / 'lib'} and "
            f"{Path.home() / '.cache'} and baselines/en/y.tsv")
    shown = hide_server_paths(text)
    assert shown == "…/bertscore_viz/baselines/fr/x.tsv and …/lib and …/.cache and baselines/en/y.tsv"
