"""The "Agreement with humans" page (issues 22, 30, 32, 33) in Streamlit's AppTest with the real model and
navigation: its numbers are the API's (and so the CLI's) at every level, with the best of each column marked and a
headline naming each level's winner; a seed change recomputes only the bootstrap (no model pass, no sentence
metric); the disagreements table is the library's and a click on a row explains that pair; an mt-metrics-eval zip is
read with its choices; the one-click layer choice changes the sidebar; bad rows are listed while the good ones are
used; a Compare upload with a human column is offered and then the uploader is emptied."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from bertscore_viz.app.app_pages.agreement import inputs as source
from bertscore_viz.app.app_pages.agreement import meta_view, view, work
from bertscore_viz.app.app_pages.agreement.disagree import TABLE_KEY
from bertscore_viz.app.shared.messages import escape_markdown
from bertscore_viz.cli.entry import main as cli
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.evaluation.correlation import best_metrics
from bertscore_viz.evaluation.disagreements import disagreements
from bertscore_viz.evaluation.human_agreement import run_agreement
from bertscore_viz.evaluation.layer_tuning import read_da
from bertscore_viz.evaluation.levels import document_keys, winners
from bertscore_viz.evaluation.meta_evaluation import format_p, meta_evaluate
from bertscore_viz.files.export import safe_csv, to_json
from bertscore_viz.files.human_scores import parse_human_scores
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME

from .navigation import ROOT, app, go, texts

CS_EN = read_da(ROOT / "data" / "wmt16-da-to-english", ["cs-en"])[0]
N = 60


def _rated(human, extra: str = "") -> bytes:
    frame = pd.DataFrame({"system": [f"sys{i % 4}" for i in range(N)], "candidate": CS_EN.candidates[:N],
                          "reference": CS_EN.references[:N], "human": human, "lp": ["cs-en"] * N})
    return frame.to_csv(index=False).encode() + extra.encode()


def _summeval_like() -> bytes:
    """12 documents x 4 systems: each document a cs-en reference; the systems its MT output, the output with the
    word order reversed, the first half of the reference, another segment's output. Human scores: WMT16's DA of the
    MT output, lowered per system."""
    rows = []
    for d in range(12):
        words = CS_EN.candidates[d].split()
        ref = CS_EN.references[d]
        outputs = [CS_EN.candidates[d], " ".join(words[::-1]), " ".join(ref.split()[:len(ref.split()) // 2]),
                   CS_EN.candidates[d + 20]]
        for s, text in enumerate(outputs):
            rows.append({"segment_id": f"doc{d}", "system": f"sys{s}", "summary": text, "reference": ref,
                         "human": float(CS_EN.human[(d * 4 + s) % N]) - 0.3 * s})
    return pd.DataFrame(rows).to_csv(index=False).encode()


@pytest.fixture(scope="module")
def layer1_f1() -> np.ndarray:
    """Human scores that are exactly BERTScore-F1 at layer 1: layer 1 must come out best (Pearson 1)."""
    return Scorer(layer=1).score(list(CS_EN.candidates[:N]), list(CS_EN.references[:N])).f1


def _page(data: bytes, name: str = "rated.csv"):
    return app("agreement.py", agreement_input={"name": name, "data": data, "origin": "upload"})


def _api(data: bytes, name: str = "rated.csv", **kw):
    rated = parse_human_scores(data, name)
    return rated, run_agreement(Scorer(), rated.candidates, rated.references, rated.human, rated.systems,
                                rated.groups, documents=document_keys(rated.segment_ids, rated.groups), **kw)


def _levels(at) -> pd.DataFrame:
    return next(df.value for df in at.dataframe if "level" in df.value.columns)


def test_every_level_is_the_api_and_cli_report_with_the_best_marked(tmp_path, capsys):
    data = _summeval_like()
    at = _page(data)
    rated, api = _api(data)
    table = _levels(at)
    agr = api.overall
    assert set(agr.levels()) == {"segment", "system", "summary"} and agr.n_documents == 12
    for level, results in agr.levels().items():
        rows = table[table["level"] == view.level_label(agr, level)].set_index("metric")
        assert sorted(rows.index) == sorted(results)
        stat = "kendall" if level == "summary" else "pearson"
        best = max(results, key=lambda m: round(results[m].values[stat], 4))
        for metric, res in results.items():
            cell = rows.loc[metric, f"{stat.capitalize()} [95% CI]"]
            lo, hi = res.ci95[stat]
            expected = f"{res.values[stat]:+.4f} [{lo:+.3f}, {hi:+.3f}]"
            assert cell.endswith(expected)
            assert cell.startswith(view.BEST_MARK) == (metric in best_metrics(results, stat))
        assert rows.loc[best, f"{stat.capitalize()} [95% CI]"].startswith(view.BEST_MARK)
    (tmp_path / "rated.csv").write_bytes(data)
    assert cli(["correlate", "--input", str(tmp_path / "rated.csv"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"]["BERTScore-F1"]["summary"]["pearson"] == round(agr.summary["BERTScore-F1"].values["pearson"],
                                                                         6)
    assert out["headline"] == agr.headline()


def test_the_headline_names_the_level_and_the_winner_at_each_level():
    data = _summeval_like()
    at = _page(data)
    _, api = _api(data)
    shown = "\n".join(str(e.value) for kind in ("info", "warning") for e in getattr(at, kind))
    assert view.headline_markdown(api.overall) in shown
    best = winners(api.overall)
    for level, name in (("segment", "Segment level"), ("system", "System level"), ("summary", "Summary level")):
        line = next(x for x in api.overall.headline() if x.startswith(name))
        assert f"{best[level]} leads" in line
    said = "The levels disagree" if len(set(best.values())) > 1 else "Every level names the same winner"
    assert escape_markdown(said) in shown


def test_a_seed_change_recomputes_only_the_bootstrap():
    at = _page(_rated(CS_EN.human[:N]))
    before = at.session_state[work.WORK_KEY]["counts"]
    assert before == {"model": 1, "sentence": 1, "report": 1}
    interval = _levels(at).iloc[0]["Pearson [95% CI]"]
    at.number_input(key="agr_seed").set_value(7).run()
    assert not at.exception, at.exception
    assert at.session_state[work.WORK_KEY]["counts"] == {"model": 1, "sentence": 1, "report": 2}
    assert _levels(at).iloc[0]["Pearson [95% CI]"] != interval  # another bootstrap, the same value
    assert _levels(at).iloc[0]["Pearson [95% CI]"].split(" [")[0] == interval.split(" [")[0]
    at.number_input(key="agr_resamples").set_value(200).run()
    assert at.session_state[work.WORK_KEY]["counts"] == {"model": 1, "sentence": 1, "report": 3}
    assert "200 bootstrap resamples (seed 7)" in texts(at)
    at.number_input(key="agr_resamples").set_value(1000)
    at.number_input(key="agr_seed").set_value(12345).run()  # back to a kept report: nothing computed
    assert at.session_state[work.WORK_KEY]["counts"] == {"model": 1, "sentence": 1, "report": 3}
    assert _levels(at).iloc[0]["Pearson [95% CI]"] == interval


def test_the_disagreements_are_the_library_s_and_a_row_click_explains_the_pair():
    data = _rated(CS_EN.human[:N])
    at = _page(data)
    report = next(iter(at.session_state[work.WORK_KEY]["reports"].values()))
    rated = parse_human_scores(data, "rated.csv")
    table = next(df.value for df in at.dataframe if "direction" in df.value.columns)
    found = disagreements(report.scores["BERTScore-F1"], rated.human, n=10, groups=rated.groups,
                          systems=rated.systems)
    assert table["row"].tolist() == [rated.rows[r.index] for r in found.rows()]
    assert table["difference (percentile points)"].tolist() == pytest.approx([r.difference for r in found.rows()])
    at.multiselect(key="agr_dis_systems").set_value(["sys2"]).run()
    table = next(df.value for df in at.dataframe if "direction" in df.value.columns)
    assert set(table["system"]) == {"sys2"}
    at.selectbox(key="agr_dis_pair").set_value("BERTScore-F1 against chrF").run()
    table = next(df.value for df in at.dataframe if "direction" in df.value.columns)
    assert "chrF rank" in table.columns
    at.session_state[TABLE_KEY] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert not at.exception, at.exception
    first = table.iloc[0]
    assert any(m.value.startswith(f"**Row {first['row']}**") for m in at.markdown)
    assert [t.label for t in at.tabs][:3] == ["Heatmap", "Alignment", "Token table"]
    assert any(str(e.value) == first["output"] for e in at.text)


def _mtme_zip() -> bytes:
    """An mt-metrics-eval test set in a zip: de-en, 10 segments in two domains, reference refA, four systems rated
    at segment level and at system level."""
    da = ROOT / "data" / "wmt16-da-to-english"
    lines = {k: (da / f"DAseg-newstest2016.{k}.de-en").read_text(encoding="utf-8").splitlines()
             for k in ("source", "reference", "mt-system", "human")}
    files = {"wmt16/sources/de-en.txt": lines["source"][:10], "wmt16/references/de-en.refA.txt":
             lines["reference"][:10], "wmt16/documents/de-en.docs": ["news d1"] * 5 + ["speech d2"] * 5,
             "wmt16/human-scores/de-en.wmt-z.sys.score": ["sys0 0.1", "sys1 0.4", "sys2 0.2", "sys3 -0.3"]}
    seg = []
    for k in range(4):
        files[f"wmt16/system-outputs/de-en/sys{k}.txt"] = lines["mt-system"][10 * k:10 * k + 10]
        seg += [f"sys{k} {float(lines['human'][10 * k + i]) + k}" for i in range(10)]
    files["wmt16/human-scores/de-en.wmt-z.seg.score"] = seg
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, content in files.items():
            zf.writestr(name, "".join(f"{x}\n" for x in content))
    return buf.getvalue()


def test_an_mt_metrics_eval_zip_with_its_choices_and_system_scores():
    at = _page(_mtme_zip(), "wmt16.zip")
    assert not at.exception, at.exception
    assert at.selectbox(key="agr_mtme_lp").value == "de-en" and at.selectbox(key="agr_mtme_human").value == "wmt-z"
    assert at.selectbox(key="agr_mtme_ref").options == ["refA"]
    assert f"40 rated outputs ({escape_markdown('wmt16 de-en, reference refA, human scores wmt-z')})" in texts(at)
    levels = set(_levels(at)["level"])
    assert {"segment (40 outputs)", "system (4 systems)", "system vs human system scores (4 systems)",
            "summary (10 documents)"} == levels
    systems = next(df.value for df in at.dataframe if "human system score" in df.value.columns)
    assert dict(zip(systems["system"], systems["human system score"])) == {"sys0": 0.1, "sys1": 0.4, "sys2": 0.2,
                                                                           "sys3": -0.3}
    assert "By group" in [h.value for h in at.subheader]  # the domains


def test_one_click_sets_the_sidebar_layer_for_every_page(layer1_f1):
    at = _page(_rated(layer1_f1))
    (button,) = [b for b in at.button if b.key == "agr_use_best"]
    assert button.label.startswith("Use layer 1 (F1 Pearson +1.0000 here")
    button.click().run()
    assert not at.exception, at.exception
    assert at.sidebar.slider(key=f"layer::{BUNDLED_MODEL_NAME}").value == 1
    assert at.session_state["settings"].layer == 1  # what every page reads
    assert "Layer 1, the sidebar's, is the best layer" in texts(at)
    assert "_L1_" in texts(at)


def test_bad_rows_are_listed_and_the_good_ones_used():
    human = [str(x) for x in CS_EN.human[:N]]
    human[5], human[9] = "", "very good"
    at = _page(_rated(np.array(human, dtype=object), extra="sysX,orphan output,,0.3,cs-en\n"))
    assert not at.exception, at.exception
    listed = at.expander[0]
    assert listed.label == "3 row(s) left out"
    problems = at.dataframe[0].value
    assert sorted(problems["Row"].tolist()) == [7, 11, 62]
    assert "58 rated outputs" in texts(at)


def test_a_compare_upload_is_offered_here_and_then_the_uploader_is_empty():
    data = _rated(CS_EN.human[:N])
    at = app("compare.py", compare_input={"name": "rated.csv", "data": data, "origin": "upload"})
    go(at, "agreement.py")
    key = at.session_state.get("_agr_uploader_version", 0)
    (button,) = [b for b in at.button if b.key == "agr_from_compare"]
    assert button.label == "Use the Compare page's file" and "rated.csv" in button.help
    button.click().run()
    assert not at.exception, at.exception
    assert at.session_state["agreement_input"]["data"] == data
    assert at.session_state["_agr_uploader_version"] == key + 1  # a new uploader: it shows no earlier file
    assert "60 rated outputs" in texts(at)
    example = next(b for b in at.button if b.key == "agr_example")
    assert example.label == source.EXAMPLE_LABEL == "Load the example" and "3,360" in example.help


def test_downloads_are_safe_csv_and_json_with_the_signature():
    at = _page(_rated(CS_EN.human[:N]).replace(b"sys1,", b"=HYPERLINK(1),"))
    report = next(iter(at.session_state[work.WORK_KEY]["reports"].values()))
    rated = at.session_state[work.WORK_KEY]["rated"]
    csv = safe_csv(view.outputs_frame(report, rated), report.signature).decode("utf-8-sig")
    frame = pd.read_csv(io.StringIO(csv))
    assert frame["system"].str.startswith("=").sum() == 0 and (frame["system"] == "'=HYPERLINK(1)").any()
    assert frame["signature"].iloc[0] == report.signature
    assert json.loads(json.dumps(report.as_dict()))["signature"] == report.signature
    kept_report, meta = at.session_state[work.WORK_KEY]["meta"].value  # the section drawn on the page
    assert kept_report is report
    with_meta = json.loads(to_json(view.report_json(report, meta)))  # the JSON download: the pairwise accuracy too
    assert with_meta["signature"] == report.signature
    assert with_meta["meta_evaluation"] == json.loads(json.dumps(meta.as_dict()))
    levels = pd.read_csv(io.StringIO(safe_csv(view.levels_table(report.overall), report.signature).decode("utf-8-sig")))
    assert set(levels["level"]) == {"segment (60 outputs)", "system (4 systems)"}


def _meta(at) -> pd.DataFrame:
    return next(df.value for df in at.dataframe if "acc_eq [95% CI]" in df.value.columns)


def _api_meta(report, documents, **kw):
    first = ["BERTScore-F1", "BERTScore-P", "BERTScore-R"]
    scores = {m: report.scores[m] for m in first + [m for m in report.scores if m not in first]}
    return meta_evaluate(scores, report.human, report.systems, documents, seed=12345, **kw)


def test_pairwise_accuracy_is_the_api_s_for_every_metric_grouped_by_document():
    data = _summeval_like()
    at = _page(data)
    assert not at.exception, at.exception
    assert meta_view.META_HEADING in [h.value for h in at.subheader]
    rated, api = _api(data)
    expected = _api_meta(api, document_keys(rated.segment_ids, rated.groups))
    assert expected.grouping == "item" and expected.system_level and expected.n_segments == 12
    table = _meta(at).set_index("metric")
    assert list(table.index) == list(expected.metrics) == ["BERTScore-F1", "BERTScore-P", "BERTScore-R", "chrF",
                                                            "BLEU"]
    for name, m in expected.metrics.items():
        for level, (value, ci) in {"acc_eq": (m.acc_eq, m.acc_eq_ci), "spa": (m.spa, m.spa_ci),
                                   "system": (m.system, m.system_ci)}.items():
            cell = table.loc[name, meta_view.COLUMNS[level]]
            assert cell.endswith(f"{value:.4f} [{ci[0]:.3f}, {ci[1]:.3f}]")
            assert cell.startswith("★") == (expected.best[level] == name)
        assert table.loc[name, "epsilon"] == f"{m.epsilon:.4g}"
    for t in expected.tests:
        assert table.loc[t.other, f"{t.level} p vs best"] == (format_p(t.p_value, t.n_permutations)
                                                              + (" *" if t.significant else ""))
    shown = texts(at)
    assert escape_markdown(expected.grouping_reason) in shown
    for line in meta_view.significance_lines(expected):
        assert escape_markdown(line) in shown
    runs = at.session_state[work.WORK_KEY]["meta_runs"]
    at.number_input(key="agr_seed").set_value(7).run()  # another seed: the section is computed again
    assert at.session_state[work.WORK_KEY]["meta_runs"] == runs + 1


def test_own_metric_columns_join_every_table_and_bad_values_are_listed():
    frame = pd.read_csv(io.StringIO(_summeval_like().decode()))
    rng = np.random.default_rng(0)
    frame["comet"] = (frame["human"] + rng.normal(scale=0.3, size=len(frame))).round(3).astype(object)
    frame["errors"] = (-frame["human"] * 2 + rng.normal(size=len(frame))).round(2)
    data = frame.to_csv(index=False).encode()
    at = _page(data)
    assert at.session_state[work.WORK_KEY]["counts"]["model"] == 1
    at.multiselect(key=source.METRICS_KEY).set_value(["errors"]).run()
    at.multiselect(key=source.LOWER_KEY).set_value(["errors"]).run()
    assert not at.exception, at.exception
    assert at.session_state[work.WORK_KEY]["counts"]["model"] == 1  # no row left out: the texts' pass is kept
    assert "errors (negated)" in set(_levels(at)["metric"])
    assert "errors (negated)" in list(_meta(at)["metric"])
    assert escape_markdown("Lower is better, so negated for these statistics: errors (negated).") in texts(at)

    frame.loc[[3, 10], "comet"] = ["n/a", None]  # text and empty: listed, never 0
    data = frame.to_csv(index=False).encode()
    at = _page(data)
    at.multiselect(key=source.METRICS_KEY).set_value(["comet", "errors"]).run()
    at.multiselect(key=source.LOWER_KEY).set_value(["errors"]).run()
    assert not at.exception, at.exception
    problems = at.dataframe[0].value
    assert sorted(problems["Row"].tolist()) == [5, 12]  # file rows (the header is row 1)
    assert "46 rated outputs" in texts(at)
    rated = parse_human_scores(data, "rated.csv", metric_columns=["comet", "errors"])
    assert len(rated) == 46 and rated.metrics["comet"] == [float(x) for x in frame["comet"].drop([3, 10])]
    report = run_agreement(Scorer(), rated.candidates, rated.references, rated.human, rated.systems, rated.groups,
                           documents=document_keys(rated.segment_ids, rated.groups))
    levels = _levels(at)
    segment = levels[levels["level"] == "segment (46 outputs)"].set_index("metric")
    from bertscore_viz.evaluation.correlation import agreement
    own = agreement({"comet": np.array(rated.metrics["comet"])}, np.array(rated.human), rated.systems)
    assert segment.loc["comet", "Pearson [95% CI]"].lstrip("★ ").startswith(
        f"{own.segment['comet'].values['pearson']:+.4f}")
    report.scores.update({"comet": np.array(rated.metrics["comet"]),
                          "errors (negated)": -np.array(rated.metrics["errors"])})
    expected = _api_meta(report, document_keys(rated.segment_ids, rated.groups))
    table = _meta(at).set_index("metric")
    for name in ("comet", "errors (negated)"):
        m = expected.metrics[name]
        assert table.loc[name, meta_view.COLUMNS["acc_eq"]].endswith(f"{m.acc_eq:.4f} [{m.acc_eq_ci[0]:.3f}, "
                                                                     f"{m.acc_eq_ci[1]:.3f}]")
        assert table.loc[name, meta_view.COLUMNS["spa"]].lstrip("★ ").startswith(f"{m.spa:.4f}")


def test_what_a_difference_means_is_the_library_s_curve():
    """4 systems: 6 system pairs, too few to say; the sentence says so, with the library's own words."""
    from bertscore_viz.app.app_pages.agreement import delta_view
    from bertscore_viz.stats.delta_agreement import segment_delta_agreement

    data = _summeval_like()
    at = _page(data)
    assert not at.exception, at.exception
    assert delta_view.DELTA_HEADING in [h.value for h in at.subheader]
    rated, api = _api(data)
    curve = segment_delta_agreement({"BERTScore-F1": api.scores["BERTScore-F1"]}, api.human, api.systems,
                                    items=document_keys(rated.segment_ids, rated.groups),
                                    subsets=delta_view.SUBSETS, seed=0)["BERTScore-F1"]
    sentence = curve.sentence(0.01, "BERTScore-F1")
    assert "too few rated system pairs (6)" in sentence
    assert escape_markdown(sentence[:1].upper() + sentence[1:]) in texts(at)
