"""``correlate`` (issues 30, 32, 33): the disagreements list equals a direct ranking of the same scores (BERTScore-F1
from ``Scorer.score``, chrF from sacrebleu, ranks by scipy), every level is printed with its best marked, and WMT's
mt-metrics-eval layout is read (language pair, reference, human scores; domains as groups; system-level human
scores correlated beside the system means).

``--disagreements``, ``--within``, ``--mtme``, ``--lp``, ``--test-set`` and ``--reference`` are defined in
``bertscore_viz/cli/parser.py``; until it has them, :func:`correlate` gives their values to ``correlate.run`` on
the namespace the parser builds for the other flags (the values the parser would give).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu
from scipy import stats
from scipy.stats import rankdata

from bertscore_viz import Scorer
from bertscore_viz.cli import correlate as correlate_cmd
from bertscore_viz.cli.entry import main
from bertscore_viz.cli.parser import build_parser
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation.layer_tuning import read_da

ROOT = Path(__file__).resolve().parents[2]
DA = ROOT / "data" / "wmt16-da-to-english"
NEW_FLAGS = {"disagreements": "--disagreements", "within": "--within", "mtme": "--mtme", "lp": "--lp",
             "test_set": "--test-set", "reference": "--reference"}


def _parser_knows(flag: str) -> bool:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return any(flag in action.option_strings for action in sub.choices["correlate"]._actions)


def correlate(argv: list[str], **new) -> int:
    """``correlate`` with ``argv`` and this task's new flags ``new`` (through the parser when it defines them)."""
    if all(_parser_knows(NEW_FLAGS[k]) for k in new):
        extra = [x for k, v in new.items() for x in (NEW_FLAGS[k], str(v))]
        if "mtme" in new:
            argv = [a for a in argv if a not in ("--example", "wmt16")]
        return main(["correlate", *argv, *extra])
    args = build_parser().parse_args(["correlate", *argv])
    if "mtme" in new:
        args.example = args.input = None
    for k, v in new.items():
        setattr(args, k, v)
    try:
        return correlate_cmd.run(args)
    except BertScoreVizError as exc:  # as bertscore_viz.cli.entry.main reports it
        print(f"error: {exc}", file=sys.stderr)
        return 2


@pytest.fixture(scope="module")
def rated_file(tmp_path_factory) -> Path:
    """60 rated cs-en and de-en outputs of WMT16 DA, with systems named and the language pair as the group."""
    frames = []
    for lp in ("cs-en", "de-en"):
        s = read_da(DA, [lp])[0]
        frames.append(pd.DataFrame({"lp": lp, "system": [f"sys{i % 3}" for i in range(30)],
                                    "candidate": s.candidates[:30], "reference": s.references[:30],
                                    "human": s.human[:30]}))
    path = tmp_path_factory.mktemp("rated") / "rated.csv"
    pd.concat(frames).to_csv(path, index=False)
    return path


def direct_ranking(metric: np.ndarray, human: np.ndarray, groups: np.ndarray, n: int) -> tuple[list, list]:
    """The largest percentile-rank differences each way, ranked within each group (scipy's average ranks)."""
    diff = np.empty(len(metric))
    for g in set(groups):
        at = np.flatnonzero(groups == g)
        diff[at] = 100 * (rankdata(metric[at]) - rankdata(human[at])) / (len(at) - 1)
    kind = sorted((i for i in range(len(diff)) if diff[i] > 0), key=lambda i: (-diff[i], i))[:n]
    harsh = sorted((i for i in range(len(diff)) if diff[i] < 0), key=lambda i: (diff[i], i))[:n]
    return [(i, diff[i]) for i in kind], [(i, diff[i]) for i in harsh]


def test_the_disagreements_equal_a_direct_ranking_of_the_same_scores(rated_file, capsys):
    assert correlate(["--input", str(rated_file), "--json", "--resamples", "100"], disagreements=4) == 0
    out = json.loads(capsys.readouterr().out)
    frame = pd.read_csv(rated_file)
    cands, refs = frame["candidate"].tolist(), frame["reference"].tolist()
    human, groups = frame["human"].to_numpy(), frame["lp"].to_numpy()
    f1 = Scorer().score(cands, refs).f1
    chrf = np.array([sacrebleu.sentence_chrf(c, [r]).score for c, r in zip(cands, refs)])
    expected = {("BERTScore-F1", "human"): direct_ranking(f1, human, groups, 4),
                ("chrF", "human"): direct_ranking(chrf, human, groups, 4),
                ("BERTScore-F1", "chrF"): direct_ranking(f1, chrf, groups, 4)}
    assert [(d["metric"], d["human"]) for d in out["disagreements"]] == list(expected)
    for d in out["disagreements"]:
        kind, harsh = expected[(d["metric"], d["human"])]
        for rows, want in ((d["too_kind"], kind), (d["too_harsh"], harsh)):
            assert [r["index"] for r in rows] == [i for i, _ in want]
            assert [r["difference"] for r in rows] == pytest.approx([x for _, x in want], abs=1e-6)
            assert [r["row_in_file"] for r in rows] == [i + 2 for i, _ in want]  # header is line 1
            assert [r["candidate"] for r in rows] == [cands[i] for i, _ in want]
    assert out["disagreements"][0]["within"] == "group"


def test_the_text_report_marks_the_best_of_each_level_and_lists_the_disagreements(rated_file, capsys):
    assert correlate(["--input", str(rated_file), "--resamples", "100"], disagreements=2, within="all") == 0
    text = capsys.readouterr().out
    assert "segment level (outputs resampled)" in text and "system level, 3 systems" in text
    assert "* best in its column at that level" in text
    assert any(line.startswith("* ") for line in text.splitlines())
    assert "Segment level (60 outputs): " in text and "System level (3 systems): " in text
    assert "Where BERTScore-F1 and human disagree most (ranked within the whole set" in text
    assert "metric too kind:" in text and "metric too harsh:" in text


def test_a_bad_number_of_disagreements_is_an_error(rated_file, capsys):
    assert correlate(["--input", str(rated_file)], disagreements=-1) == 2
    assert "--disagreements takes a number of outputs: 0 to 1,000, got -1." in capsys.readouterr().err


def write_lines(path: Path, lines) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")


def mtme_set(root: Path) -> Path:
    """An mt-metrics-eval test set: de-en, 12 segments in two domains, one reference, four systems rated at segment
    level (one segment unrated) and three of them at system level."""
    ts = root / "wmt16"
    lines = {k: (DA / f"DAseg-newstest2016.{k}.de-en").read_text(encoding="utf-8").splitlines()
             for k in ("source", "reference", "mt-system", "human")}
    write_lines(ts / "sources" / "de-en.txt", lines["source"][:12])
    write_lines(ts / "references" / "de-en.refA.txt", lines["reference"][:12])
    write_lines(ts / "documents" / "de-en.docs", ["news d1"] * 6 + ["speech d2"] * 6)
    seg = []
    for k in range(4):
        write_lines(ts / "system-outputs" / "de-en" / f"sys{k}.txt", lines["mt-system"][12 * k:12 * k + 12])
        seg += [f"sys{k} {'None' if (k, i) == (3, 0) else float(lines['human'][12 * k + i]) + k}" for i in range(12)]
    write_lines(ts / "human-scores" / "de-en.wmt-z.seg.score", seg)
    write_lines(ts / "human-scores" / "de-en.wmt-z.sys.score", ["sys0 0.1", "sys1 0.4", "sys2 0.2", "sys3 None"])
    return ts


def test_the_mt_metrics_eval_layout(tmp_path, capsys):
    ts = mtme_set(tmp_path)
    assert correlate(["--example", "wmt16", "--json", "--resamples", "100"], mtme=str(ts), lp="de-en") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_pairs"] == 47 and out["n_systems"] == 4 and out["input"]["human_column"] == "wmt-z"
    assert out["n_gold_systems"] == 3 and "system_gold" in out["metrics"]["BERTScore-F1"]
    assert set(out["groups"]) == {"news", "speech"}
    assert out["n_documents"] == 12  # every segment has 3 or 4 rated systems: the summary level
    outputs = [(DA / "DAseg-newstest2016.mt-system.de-en").read_text(encoding="utf-8").splitlines()[12 * k:12 * k + 12]
               for k in range(3)]
    refs = (DA / "DAseg-newstest2016.reference.de-en").read_text(encoding="utf-8").splitlines()[:12]
    means = [Scorer().score(o, refs).f1.mean() for o in outputs]
    assert out["metrics"]["BERTScore-F1"]["system_gold"]["pearson"] == pytest.approx(
        stats.pearsonr(means, [0.1, 0.4, 0.2])[0], abs=1e-6)
    assert correlate(["--example", "wmt16"], mtme=str(ts)) == 2
    assert "--mtme needs --lp: the language pairs of the folder" in capsys.readouterr().err


def test_the_resample_count_is_bounded_and_zero_gives_no_verdict(rated_file, capsys, monkeypatch):
    """Issue 46: ``--resamples 0`` printed a verdict ("not significantly ... p = nan"); ``--resamples 50000000``
    grew memory for 100 s and ended in a MemoryError trace. The count is 0 or MIN_RESAMPLES to MAX_RESAMPLES (in
    --help), refused before the model loads; the library refuses above MAX_RESAMPLES."""
    from bertscore_viz.engine.options import ScoringOptions
    from bertscore_viz.errors import InputError
    from bertscore_viz.evaluation import MAX_RESAMPLES, MIN_RESAMPLES
    from bertscore_viz.evaluation.correlation import agreement

    with monkeypatch.context() as m:  # refused before any model loads
        m.setattr(ScoringOptions, "scorer", lambda *a, **k: (_ for _ in ()).throw(AssertionError("model loaded")))
        for bad in ("50000000", str(MAX_RESAMPLES + 1), str(MIN_RESAMPLES - 1), "-1"):
            assert main(["correlate", "--input", str(rated_file), "--resamples", bad]) == 2
            err = capsys.readouterr().err
            assert "--resamples takes a number of resamples: 0 or" in err and "Traceback" not in err, err
            assert f"{MIN_RESAMPLES:,} to {MAX_RESAMPLES:,}" in err
    assert main(["correlate", "--input", str(rated_file), "--resamples", "0", "--no-sentence-metrics"]) == 0
    out = capsys.readouterr().out
    assert "significantly" not in out and "p = nan" not in out and "not tested" in out
    with pytest.raises(InputError, match="MAX_RESAMPLES"):
        agreement({"m": np.arange(10.0)}, np.arange(10.0), n_samples=50_000_000)
