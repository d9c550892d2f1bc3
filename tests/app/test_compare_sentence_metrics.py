"""Compare at the engine's speed with the sentence metrics on (issue 40): BERTScore's answer, system table and tabs
come on the first run while sacrebleu's chrF, BLEU and TER are computed in the background with a progress bar and
counts; each joins the page when it is done, with sacrebleu's own numbers; a metric over the server's bound is left
out with the reason naming the setting."""

from __future__ import annotations

import csv
import io
import time

import numpy as np
import pytest
import sacrebleu

from bertscore_viz.serving import sentence_metrics

from .navigation import app, texts

pytestmark = pytest.mark.app

WORDS = ("the committee said on tuesday that the new rules would take effect next year after a long debate in "
         "parliament about costs and the effect on small firms across the country while critics warned").split()


def _upload(n_systems: int = 3, n: int = 40, words: int = 45) -> bytes:
    rng = np.random.default_rng(5)
    refs = [" ".join(rng.choice(WORDS, size=words)) for _ in range(n)]
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["reference"] + [f"system{k}" for k in range(n_systems)])
    for r in refs:
        row = [r]
        for _ in range(n_systems):
            kept = [x for x in r.split() if rng.random() > 0.25]
            rng.shuffle(kept[: len(kept) // 4])
            row.append(" ".join(kept))
        w.writerow(row)
    return out.getvalue().encode()


def _system_table(at):
    for df in at.dataframe:
        if "System" in df.value.columns and "F1" in df.value.columns:
            return df.value
    raise AssertionError("no system table")


def test_bertscore_first_then_the_sentence_metrics_with_progress_and_sacrebleus_numbers():
    data = _upload()
    at = app("compare.py", compare_input={"name": "long.csv", "data": data, "origin": "upload"})
    # the first run: BERTScore's answer and table, the tabs, and the sentence metrics' progress with counts
    assert at.success and "Best:" in at.success[0].value
    first = _system_table(at)
    assert "TER" not in first.columns
    shown = texts(at) + "\n".join(str(p.proto.text) for p in at.get("progress"))
    assert "in the background" in shown and "outputs scored" in shown
    end = time.monotonic() + 240
    while "TER" not in _system_table(at).columns and time.monotonic() < end:
        time.sleep(1.0)
        at.run()
        assert not at.exception, at.exception
    table = _system_table(at)
    assert {"chrF", "BLEU", "TER"} <= set(table.columns)
    rows = list(csv.reader(io.StringIO(data.decode())))
    refs = [r[0] for r in rows[1:]]
    for k in range(3):
        hyps = [r[k + 1] for r in rows[1:]]
        row = table[table["System"] == f"system{k}"].iloc[0]
        assert row["chrF"] == pytest.approx(sacrebleu.corpus_chrf(hyps, [refs]).score, abs=1e-9)
        assert row["BLEU"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=1e-9)
        assert row["TER"] == pytest.approx(sacrebleu.corpus_ter(hyps, [refs]).score, abs=1e-9)
    # BERTScore's numbers did not wait and did not change
    np.testing.assert_array_equal(first.sort_values("System")["F1"].to_numpy(),
                                  table.sort_values("System")["F1"].to_numpy())
    assert not at.get("progress")


def test_a_metric_over_the_servers_bound_is_left_out_naming_the_setting(monkeypatch):
    monkeypatch.setenv("BERTSCORE_VIZ_SENTENCE_METRICS_SECONDS", "0.5")
    from bertscore_viz.serving import config

    monkeypatch.setattr(config, "_POLICY", None)
    at = app("compare.py", compare_input={"name": "long.csv", "data": _upload(), "origin": "upload"})
    end = time.monotonic() + 120
    while "BLEU" not in _system_table(at).columns and time.monotonic() < end:
        time.sleep(0.5)
        at.run()
    table = _system_table(at)
    assert "TER" not in table.columns and "BLEU" in table.columns
    shown = texts(at).replace("\\", "")
    assert "TER was not computed" in shown and "BERTSCORE_VIZ_SENTENCE_METRICS_SECONDS" in shown
    monkeypatch.setattr(config, "_POLICY", None)
    assert sentence_metrics.INLINE_SECONDS < 1.0
