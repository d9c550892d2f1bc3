"""Issue 22: reading rated outputs, and BERTScore / chrF / BLEU correlated with human scores from one model pass."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from scipy import stats

from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.evaluation.human_agreement import run_agreement
from bertscore_viz.evaluation.layer_tuning import read_da, tune_layers
from bertscore_viz.files.human_scores import parse_human_scores
from bertscore_viz.locations import EXAMPLES_DIR

LONG = (b"system,segment_id,candidate,reference,human,lp\n"
        b"A,1,The cat sat on the mat.,A cat sat on the mat.,0.9,de-en\n"
        b"B,1,Dogs bark at night.,A cat sat on the mat.,-0.5,de-en\n"
        b"A,2,,It is cold today.,0.1,de-en\n"
        b"B,2,It is freezing today.,It is cold today.,n/a,cs-en\n"
        b"C,2,Today it is cold.,It is cold today.,,cs-en\n"
        b"C,3,He left early.,He went home early.,0.7,cs-en\n")


def test_the_long_layout_keeps_every_rated_row_and_lists_the_others():
    rated = parse_human_scores(LONG, "rated.csv")
    assert rated.layout == "long" and rated.human_column == "human"
    assert rated.candidates == ["The cat sat on the mat.", "Dogs bark at night.", "", "He left early."]
    assert rated.human == [0.9, -0.5, 0.1, 0.7]
    assert rated.systems == ["A", "B", "A", "C"] and rated.groups == ["de-en", "de-en", "de-en", "cs-en"]
    assert rated.rows == [2, 3, 4, 7] and rated.segment_ids == ["1", "1", "2", "3"]
    errors = {p.row: p.problem for p in rated.errors}
    assert set(errors) == {5, 6}
    assert "'n/a', not a finite number" in errors[5] and "is empty" in errors[6]
    assert any(p.row == 4 and "Empty output" in p.problem for p in rated.problems if p.severity == "warning")


def test_a_named_column_and_the_wide_layout():
    data = (b"reference,sysA,human_sysA,sysB,sysB_human,rating\n"
            b"r1,a1,0.1,b1,0.2,9\nr2,a2,,b2,0.3,9\nr3,a3,0.5,b3,nan,9\n")
    wide = parse_human_scores(data, "w.csv")
    assert wide.layout == "wide" and wide.systems == ["sysA", "sysB", "sysB", "sysA"]
    assert wide.candidates == ["a1", "b1", "b2", "a3"] and wide.rows == [2, 2, 3, 4]
    plain = parse_human_scores(b"candidate,reference,rating,human\nx,y,1,2\nx2,y,2,3\nx3,y,3,1\n", "p.csv",
                               human_column="rating")
    assert plain.layout == "plain" and plain.human == [1.0, 2.0, 3.0] and plain.systems is None
    missing = parse_human_scores(b"candidate,reference\nx,y\n", "m.csv")
    assert not missing.ok and "No human-score column" in missing.errors[0].problem


@pytest.mark.parametrize("data", [b"", b"\xff\xfe\x00\x00", b"candidate,reference,human\n" + b"x,y,1\n" * 2])
def test_unusable_files_are_problems_not_exceptions(data):
    rated = parse_human_scores(data, "bad.csv")
    assert not rated.ok and rated.problems


DA = Path(__file__).resolve().parents[2] / "data" / "wmt16-da-to-english"


@pytest.fixture(scope="module")
def cs_en():
    return read_da(DA, ["cs-en"])[0]


def test_the_built_in_example_is_the_wmt16_da_data_unchanged():
    rated = parse_human_scores((EXAMPLES_DIR / "wmt16_da_to_english.csv").read_bytes(), "wmt16_da_to_english.csv")
    assert not rated.problems and rated.layout == "plain"
    sets = read_da(DA)
    assert rated.candidates == [c for s in sets for c in s.candidates]
    assert rated.references == [[r] for s in sets for r in s.references]
    assert rated.human == [float(h) for s in sets for h in s.human]
    assert rated.groups == [s.lp for s in sets for _ in s.human]


def test_the_layer_curve_equals_tune_layers_and_the_rows_equal_scipy(cs_en):
    scorer = Scorer()
    report = run_agreement(scorer, list(cs_en.candidates), list(cs_en.references), cs_en.human, n_samples=50)
    table = tune_layers([cs_en], scorer=scorer, bleu=True)
    # tune-layers takes each pair's F1 from per-token maxima on the host (float64), this report from the device
    # pass (match(keep="scores")): the same numbers to float32 rounding of the scores
    for layer in table.layers:
        assert report.layers["F1"][layer] == pytest.approx(table.pearson[layer]["cs-en"], abs=1e-7)
        assert report.layers_kendall["F1"][layer] == pytest.approx(table.kendall[layer]["cs-en"], abs=2e-5)
    # Scorer.score and this report's all-layer pass batch the sentences differently: float32 sums agree to ~1e-9
    f1 = scorer.score(list(cs_en.candidates), list(cs_en.references)).f1
    seg = report.overall.segment
    assert seg["BERTScore-F1"].values["pearson"] == pytest.approx(stats.pearsonr(f1, cs_en.human)[0], abs=1e-7)
    assert seg["BERTScore-F1"].values["spearman"] == pytest.approx(stats.spearmanr(f1, cs_en.human)[0], abs=2e-5)
    assert seg["BLEU"].values["pearson"] == pytest.approx(table.pearson["sentBLEU"]["cs-en"], abs=1e-12)
    chrf = [sacrebleu.sentence_chrf(c, [r]).score for c, r in zip(cs_en.candidates, cs_en.references)]
    assert seg["chrF"].values["kendall"] == pytest.approx(stats.kendalltau(chrf, cs_en.human)[0], abs=1e-12)
    assert report.best_layer == int(np.argmax(report.layers["F1"])) and report.tuned_layer == 4


def test_idf_rescaling_and_the_json_keys(cs_en):
    cands, refs, human = list(cs_en.candidates[:80]), list(cs_en.references[:80]), cs_en.human[:80]
    plain = run_agreement(Scorer(), cands, refs, human, n_samples=30, sentence_metrics=False)
    rescaled = run_agreement(Scorer(rescale_with_baseline=True), cands, refs, human, n_samples=30,
                             sentence_metrics=False)
    assert rescaled.overall.as_dict()["metrics"] == plain.overall.as_dict()["metrics"]  # linear: the same
    idf = run_agreement(Scorer(idf=True), cands, refs, human, n_samples=30, sentence_metrics=False)
    idf_f1 = Scorer(idf=True).score(cands, refs).f1
    assert idf.overall.segment["BERTScore-F1"].values["pearson"] == pytest.approx(stats.pearsonr(idf_f1, human)[0])
    d = json.loads(json.dumps(idf.as_dict()))
    assert set(d) >= {"n_pairs", "metrics", "layers", "lead", "dropped", "signature"}
    assert set(d["metrics"]["BERTScore-F1"]["segment"]) >= {"pearson", "spearman", "kendall", "ci95"}
    assert "_idf_" in d["signature"] and len(d["layers"]["F1"]) == 7


def test_the_cli_prints_the_table_and_exits_2_on_nothing_to_correlate(tmp_path, capsys):
    from bertscore_viz.cli.entry import main

    good = tmp_path / "rated.csv"
    good.write_bytes(LONG.replace(b"n/a", b"0.3").replace(b",,cs-en", b",0.2,cs-en"))
    assert main(["correlate", "--input", str(good), "--resamples", "100", "--no-sentence-metrics"]) == 0
    out = capsys.readouterr()
    assert "BERTScore-F1" in out.out and "Pearson [95% CI]" in out.out and "F1 Pearson by layer: L0" in out.out
    assert "warning: rated.csv: row 4: Empty output" in out.err
    assert "Warning: 1 empty candidate(s), scored 0: row 4." in out.out  # the file's row, as the problems
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"candidate,reference,human\nx,y,\n")
    assert main(["correlate", "--input", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "Nothing to correlate in bad.csv" in err and "row 2: The human score is empty" in err
    assert main(["correlate", "--input", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_another_layer_from_the_same_pass_equals_a_scorer_at_that_layer(cs_en):
    from bertscore_viz.evaluation.human_agreement import layer_scores, report_at

    cands, refs, human = list(cs_en.candidates[:50]), list(cs_en.references[:50]), cs_en.human[:50]
    scores = layer_scores(Scorer(), cands, refs)
    at2 = report_at(scores, 2, human, n_samples=20)
    direct = run_agreement(Scorer(layer=2), cands, refs, human, n_samples=20, sentence_metrics=False)
    assert at2.overall.as_dict()["metrics"] == direct.overall.as_dict()["metrics"]
    assert at2.signature == direct.signature and "_L2_" in at2.signature


def test_every_level_and_group_of_a_report_is_the_agreement_of_the_same_scores(cs_en):
    from bertscore_viz.evaluation.correlation import agreement
    from bertscore_viz.evaluation.human_agreement import BERTSCORE_METRICS, layer_scores, report_at
    from bertscore_viz.evaluation.levels import document_keys

    n = 48
    cands, refs, human = list(cs_en.candidates[:n]), list(cs_en.references[:n]), cs_en.human[:n]
    systems = [f"s{i % 4}" for i in range(n)]
    groups = ["a" if i < 24 else "b" for i in range(n)]
    documents = document_keys([str(i // 4) for i in range(n)], groups)
    gold = {"s0": 0.3, "s1": 0.1, "s2": -0.2, "s3": 0.0}
    scores = layer_scores(Scorer(), cands, refs)
    report = report_at(scores, 4, human, systems, groups, None, 100, 3, documents, gold)
    metrics = dict(zip(BERTSCORE_METRICS, scores.values[4]))
    direct = agreement(metrics, human, systems, 100, 3, documents=documents, system_scores=gold)
    assert report.overall.as_dict() == direct.as_dict()
    assert set(report.overall.levels()) == {"segment", "system", "system_gold", "summary"}
    assert report.overall.n_documents == 12 and report.overall.n_gold_systems == 4
    mask = np.array(groups) == "b"
    in_b = agreement({k: v[mask] for k, v in metrics.items()}, np.asarray(human)[mask], np.array(systems)[mask],
                     100, 3, documents=np.array(documents)[mask])
    assert report.by_group["b"].as_dict() == in_b.as_dict() and report.by_group["b"].n_documents == 6
    d = json.loads(json.dumps(report.as_dict()))
    assert d["groups"]["a"]["n_documents"] == 6 and report.documents == documents and report.system_scores == gold
