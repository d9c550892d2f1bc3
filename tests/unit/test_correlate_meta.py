"""``correlate``'s pairwise accuracy (issue 44): its JSON "meta_evaluation" is meta_evaluate's on the report's own
scores, own metric columns (``--metric-column``, ``--lower-is-better``) join the correlations and the
meta-evaluation, a bad value in such a column is listed and its row left out (never 0), the text output prints the
section, and wrong flags are errors that say what to do."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bertscore_viz import Scorer
from bertscore_viz.cli.entry import main
from bertscore_viz.evaluation.human_agreement import own_metric_scores, run_agreement
from bertscore_viz.evaluation.layer_tuning import read_da
from bertscore_viz.evaluation.levels import document_keys
from bertscore_viz.evaluation.meta_evaluation import meta_evaluate
from bertscore_viz.files.human_scores import parse_human_scores

ROOT = Path(__file__).resolve().parents[2]
CS_EN = read_da(ROOT / "data" / "wmt16-da-to-english", ["cs-en"])[0]


@pytest.fixture(scope="module")
def rated(tmp_path_factory) -> Path:
    """10 segments x 4 systems (the MT output, reversed, half the reference, another output), human scores from
    WMT16 DA lowered per system, a comet-like column (one cell text, one empty) and an error count (lower is
    better)."""
    rows = []
    rng = np.random.default_rng(5)
    for d in range(10):
        ref = CS_EN.references[d]
        outputs = [CS_EN.candidates[d], " ".join(CS_EN.candidates[d].split()[::-1]),
                   " ".join(ref.split()[:len(ref.split()) // 2]), CS_EN.candidates[d + 20]]
        for s, text in enumerate(outputs):
            human = float(CS_EN.human[d * 4 + s]) - 0.3 * s
            rows.append({"segment_id": f"doc{d}", "system": f"sys{s}", "candidate": text, "reference": ref,
                         "human": human, "comet": round(human + rng.normal(scale=0.4), 3),
                         "errors": int(max(0, round(3 - human * 2 + rng.normal())))})
    frame = pd.DataFrame(rows).astype({"comet": object})
    frame.loc[[6, 13], "comet"] = ["high", None]
    path = tmp_path_factory.mktemp("meta") / "rated.csv"
    frame.to_csv(path, index=False)
    return path


FLAGS = ["--metric-column", "comet", "--metric-column", "errors", "--lower-is-better", "errors",
         "--resamples", "100"]


def test_the_json_meta_evaluation_is_meta_evaluate_of_the_report(rated, capsys):
    assert main(["correlate", "--input", str(rated), "--json", *FLAGS]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted(p["row"] for p in out["input"]["rows_left_out"]) == [8, 15]  # file rows of the bad comet cells
    data = parse_human_scores(rated.read_bytes(), "rated.csv", metric_columns=["comet", "errors"])
    assert len(data) == 38
    documents = document_keys(data.segment_ids, data.groups)
    report = run_agreement(Scorer(), data.candidates, data.references, data.human, data.systems, data.groups,
                           n_samples=100, documents=documents,
                           extra_metrics=own_metric_scores(data.metrics, ["errors"]))
    assert set(out["metrics"]) == {"BERTScore-P", "BERTScore-R", "BERTScore-F1", "chrF", "BLEU", "comet",
                                   "errors (negated)"}
    own = report.overall.segment["errors (negated)"].values["pearson"]
    assert out["metrics"]["errors (negated)"]["segment"]["pearson"] == round(own, 6)
    first = ["BERTScore-F1", "BERTScore-P", "BERTScore-R"]
    scores = {m: report.scores[m] for m in first + [m for m in report.scores if m not in first]}
    expected = meta_evaluate(scores, report.human, data.systems, documents, seed=12345)
    assert out["meta_evaluation"] == json.loads(json.dumps(expected.as_dict()))
    meta = out["meta_evaluation"]
    assert meta["grouping"] == "item" and meta["system_level"] and meta["metrics"]["errors (negated)"]["negated"] \
        is False  # negated by the column's choice before meta_evaluate, named so
    assert meta["n_segments"] == 8  # the two segments with a left-out output are not complete


def test_the_text_output_prints_the_section(rated, capsys):
    assert main(["correlate", "--input", str(rated), *FLAGS]) == 0
    text = capsys.readouterr().out
    section = text[text.index("Pairwise accuracy (WMT meta-evaluation)"):]
    for name in ("BERTScore-F1", "chrF", "comet", "errors (negated)"):
        assert f"  {name}" in section
    assert "acc_eq grouped by item" in section and "on the 8 segment(s) every one of the 4 systems has" in section
    assert "acc_eq: best " in section


def test_no_meta_skips_it(rated, capsys):
    assert main(["correlate", "--input", str(rated), "--json", "--no-meta", "--resamples", "100"]) == 0
    assert "meta_evaluation" not in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("argv, message", [
    (["--metric-column", "comet", "--lower-is-better", "errors"], "is not a --metric-column"),
    (["--metric-column", "nothing"], "has no column 'nothing'"),
    (["--metric-column", "candidate"], "is the text column"),
])
def test_wrong_metric_columns_are_errors(rated, capsys, argv, message):
    assert main(["correlate", "--input", str(rated), "--no-meta", *argv]) == 2
    assert message in capsys.readouterr().err


def test_metric_columns_with_mtme_are_an_error(tmp_path, capsys):
    assert main(["correlate", "--mtme", str(tmp_path), "--lp", "de-en", "--metric-column", "comet"]) == 2
    assert "--mtme" in capsys.readouterr().err


def test_lower_is_better_takes_several_names_or_the_flag_repeated_as_compare_does():
    from bertscore_viz.cli.parser import build_parser

    parser = build_parser()
    for argv in (["--lower-is-better", "ter", "wer"], ["--lower-is-better", "ter", "--lower-is-better", "wer"]):
        assert parser.parse_args(["correlate", "--input", "x.csv", *argv]).lower_is_better == ["ter", "wer"]
        assert parser.parse_args(["compare", "--input", "x.csv", *argv]).lower_is_better == ["ter", "wer"]
