"""The Compare page's runs that last, in Streamlit's AppTest with the real app, model and a real runs folder (the
operator's ``runs_dir`` setting): "Save this run", "Earlier runs" (a kept system beside a new upload, its numbers
the kept ones; a run of other references refused with the reason), the history chart, escaped names, and a shared
server without a runs folder offering none."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from bertscore_viz import score
from bertscore_viz.files.runs import list_runs
from bertscore_viz.serving import config

from .navigation import app, texts

REFS = ["The cat sat on the mat.", "A dog barked loudly at the postman.", "It is raining in the city today.",
        "The committee approved the budget.", "She finished the marathon in four hours."]
OUT = {
    "alpha": ["The cat sat on a mat.", "A dog barked at the postman.", "It rains in the city today.",
              "The committee passed the budget.", "She ran the marathon in four hours."],
    "beta": ["A cat is on the mat.", "The dog was loud to the mailman.", "Today the city has rain.",
             "The budget was approved by the committee.", "In four hours she finished the marathon."],
    "gamma": ["Cat mat sat.", "Dog postman barked.", "Rain city today is.", "Committee budget.", "Marathon hours she."],
}


def _csv(systems, refs=REFS) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["reference", *systems])
    for i, ref in enumerate(refs):
        w.writerow([ref, *(OUT[s][i] for s in systems)])
    return buf.getvalue().encode("utf-8")


def _upload(at, data: bytes, name: str):
    at.session_state["compare_input"] = {"name": name, "data": data}
    at.run()
    assert not at.exception, at.exception
    return at


def _save(at, name: str):
    at.text_input(key="cmp_run_name").input(name).run()
    at.button(key="cmp_save_run").click().run()
    assert not at.exception, at.exception
    return at


def _systems(at) -> list[str]:
    for df in at.dataframe:
        if "System" in df.value.columns:
            return list(df.value["System"])
    raise AssertionError("no system table")


@pytest.fixture
def runs_dir(tmp_path, monkeypatch):
    folder = tmp_path / "runs"
    monkeypatch.setattr(config, "_POLICY", config.Policy(runs_dir=str(folder)))
    return folder


def test_a_saved_run_joins_a_new_upload_with_its_kept_numbers(runs_dir):
    at = _upload(app("compare.py"), _csv(["alpha", "beta"]), "first.csv")
    assert "shared runs folder" in texts(at)
    _save(at, "base **bold** <b>x</b>")
    assert any("Saved the run" in s.value and "\\*\\*bold\\*\\*" in s.value for s in at.success)
    kept = list_runs(runs_dir).runs
    assert len(kept) == 1 and set(kept[0].systems) == {"alpha", "beta"}

    _upload(at, _csv(["gamma"]), "second.csv")
    picker = at.multiselect(key="cmp_earlier_runs")
    assert picker.options[0].startswith("base **bold** <b>x</b> (")  # labels are plain text
    picker.set_value([str(kept[0].path)]).run()
    assert not at.exception, at.exception
    systems = _systems(at)
    assert set(systems) == {"gamma", "alpha @ base **bold** <b>x</b>", "beta @ base **bold** <b>x</b>"}
    frame = next(df.value for df in at.dataframe if "System" in df.value.columns)
    f1 = dict(zip(frame["System"], frame["F1"]))
    assert f1["alpha @ base **bold** <b>x</b>"] == pytest.approx(float(np.mean(score(OUT["alpha"], REFS).f1)),
                                                                  abs=1e-6)
    assert f1["gamma"] == pytest.approx(float(np.mean(score(OUT["gamma"], REFS).f1)), abs=1e-6)
    assert "Best: alpha @ base" in at.success[0].value.replace("\\", "")  # the answer ranks the kept system too


def test_a_run_of_other_references_is_refused_with_the_reason_and_history_is_drawn(runs_dir):
    at = _upload(app("compare.py"), _csv(["alpha", "beta"]), "first.csv")
    _save(at, "one")
    _save(at, "two")
    other = [r + " Indeed." for r in REFS]
    _upload(at, _csv(["gamma"], other), "other.csv")
    paths = [str(r.path) for r in list_runs(runs_dir).runs]
    at.multiselect(key="cmp_earlier_runs").set_value(paths[:1]).run()
    assert not at.exception, at.exception
    assert any("other references" in w.value for w in at.warning)
    assert _systems(at) == ["gamma"]

    _upload(at, _csv(["gamma"]), "same.csv")
    at.multiselect(key="cmp_earlier_runs").set_value(paths).run()
    assert not at.exception, at.exception
    assert len(_systems(at)) == 5 and any(s.endswith("@ one") for s in _systems(at))
    assert len(at.get("plotly_chart")) >= 1  # the chosen systems' F1 across the two runs


@pytest.fixture
def shared_server():
    """The server listens for others (the Docker image's --server.address=0.0.0.0), not on this machine only."""
    from streamlit import config as st_config

    before = st_config.get_option("server.address")
    st_config.set_option("server.address", "0.0.0.0")
    yield
    st_config.set_option("server.address", before)


def test_a_shared_server_without_a_runs_folder_offers_no_runs(monkeypatch, shared_server, tmp_path):
    monkeypatch.setattr(config, "_POLICY", config.Policy())
    monkeypatch.setenv("BERTSCORE_VIZ_RUNS", str(tmp_path))  # a local app's folder: not used on a shared server
    at = _upload(app("compare.py"), _csv(["alpha", "beta"]), "first.csv")
    assert "not offered on this shared server" in texts(at)
    assert not [w for w in at.text_input if w.key == "cmp_run_name"]
    assert not [w for w in at.multiselect if w.key == "cmp_earlier_runs"]


def test_a_local_app_uses_the_users_runs_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "_POLICY", config.Policy())
    monkeypatch.setenv("BERTSCORE_VIZ_RUNS", str(tmp_path / "mine"))
    at = _upload(app("compare.py"), _csv(["alpha", "beta"]), "first.csv")
    _save(at, "local")
    assert [r.name for r in list_runs(tmp_path / "mine").runs] == ["local"]
    assert "on this machine" in texts(at)
