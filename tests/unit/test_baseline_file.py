"""Baseline files in bert-score's format (``LAYER,P,R,F``): parsing, errors, lookup, rescaling through the Scorer."""

from __future__ import annotations

import numpy as np
import pytest

from bertscore_viz import BaselineError, Scorer
from bertscore_viz.engine.baseline import (
    BaselineTable,
    display_path,
    find_baseline,
    format_baseline,
    full_paths,
    parse_baseline,
    read_baseline,
    shipped_baseline_path,
)

TEXT = "LAYER,P,R,F\n0,0.5,0.4,0.45\n1,0.8,0.7,0.75\n2,0.9,0.85,0.875\n"


def test_parse_rows_by_layer():
    t = parse_baseline(TEXT, "toy")
    assert t.values.shape == (3, 3)
    np.testing.assert_array_equal(t.for_layer(1), [0.8, 0.7, 0.75])
    assert t.source == "toy"


def test_for_layer_returns_a_copy():
    t = parse_baseline(TEXT)
    row = t.for_layer(0)
    row[:] = 0
    np.testing.assert_array_equal(t.for_layer(0), [0.5, 0.4, 0.45])


def test_parse_tolerates_bom_blank_lines_and_lowercase_header():
    t = parse_baseline("\ufefflayer,p,r,f\n\n0,0.1,0.2,0.3\n\n")
    np.testing.assert_array_equal(t.values, [[0.1, 0.2, 0.3]])


def test_shipped_bert_score_file_parses():
    # a file carried over from bert-score 0.3.13 (baselines/en/roberta-large.tsv): 25 rows, layers 0..24
    path = shipped_baseline_path("en", "roberta-large")
    t = read_baseline(path)
    assert t.values.shape == (25, 3)
    assert np.all((t.values > 0) & (t.values < 1))


@pytest.mark.parametrize(
    "text, words",
    [
        ("", ["empty", "LAYER,P,R,F"]),
        ("L,P,R,F\n0,1,2,3\n", ["header", "LAYER,P,R,F"]),
        ("LAYER,P,R,F\n", ["no rows"]),
        ("LAYER,P,R,F\n0,0.1,0.2\n", ["Line 2", "four numbers"]),
        ("LAYER,P,R,F\n0,a,b,c\n", ["Line 2", "four numbers"]),
        ("LAYER,P,R,F\n0,0.1,0.2,0.3\n2,0.1,0.2,0.3\n", ["Line 3", "layer 2", "expected layer 1"]),
    ],
)
def test_malformed_files_give_clear_errors(text, words):
    with pytest.raises(BaselineError) as info:
        parse_baseline(text, "bad.tsv")
    msg = str(info.value)
    assert "bad.tsv" in msg
    for w in words:
        assert w in msg


def test_layer_beyond_the_file():
    t = parse_baseline(TEXT, "toy.tsv")
    with pytest.raises(BaselineError) as info:
        t.for_layer(5, "my-model")
    msg = str(info.value)
    assert "layer 5" in msg and "my-model" in msg and "0 to 2" in msg and "bertscore_viz baseline" in msg


def test_missing_file(tmp_path):
    with pytest.raises(BaselineError, match="does not exist"):
        read_baseline(tmp_path / "nope.tsv")


def test_not_utf8(tmp_path):
    p = tmp_path / "latin.tsv"
    p.write_bytes(b"LAYER,P,R,F\n0,0.1,0.2,0.3\xff\n")
    with pytest.raises(BaselineError, match="UTF-8"):
        read_baseline(p)


def test_format_round_trips_exactly(tmp_path):
    values = np.array([[0.1234567890123, 0.2, 0.3], [0.83, 0.8299999, 1 / 3]])
    text = format_baseline(values)
    assert text.splitlines()[0] == "LAYER,P,R,F"
    assert text.splitlines()[1].startswith("0,")
    p = tmp_path / "b.tsv"
    p.write_text(text, encoding="utf-8")
    np.testing.assert_array_equal(read_baseline(p).values, values)


def test_missing_baseline_names_file_model_language_and_fix():
    with pytest.raises(BaselineError) as info:
        find_baseline("all-MiniLM-L6-v2", "zz")
    msg = str(info.value)
    assert "all-MiniLM-L6-v2" in msg and "'zz'" in msg
    assert "baselines/zz/all-MiniLM-L6-v2.tsv does not exist" in msg
    assert "python -m bertscore_viz baseline" in msg and "baseline_path" in msg


def test_messages_name_shipped_files_relative_to_the_repository_and_absolute_for_the_command_line():
    """The app shows these messages to browser users: no server path. The command line (whose user owns the
    machine) runs inside ``full_paths()``."""
    shipped = shipped_baseline_path("zz", "all-MiniLM-L6-v2")
    root = str(shipped.parents[2])
    with pytest.raises(BaselineError) as info:
        Scorer(layer=4, rescale_with_baseline=True, lang="zz")
    assert root not in str(info.value) and "baselines/zz/all-MiniLM-L6-v2.tsv" in str(info.value)
    with full_paths(), pytest.raises(BaselineError) as info:
        find_baseline("all-MiniLM-L6-v2", "zz")
    assert f"{shipped} does not exist" in str(info.value)
    with pytest.raises(BaselineError) as info:  # the context is over: relative again
        find_baseline("all-MiniLM-L6-v2", "zz")
    assert root not in str(info.value)
    table = find_baseline("roberta-large", "en")
    assert table.source == "baselines/en/roberta-large.tsv"
    with pytest.raises(BaselineError) as info:
        table.for_layer(30, "roberta-large")
    assert "The baseline baselines/en/roberta-large.tsv has rows for layers 0 to 24" in str(info.value)
    assert root not in str(info.value)
    assert display_path(shipped.parent / ".." / ".." / "etc" / "x.tsv") == "baselines/zz/../../etc/x.tsv"


def test_a_file_the_caller_named_keeps_its_name(tmp_path):
    mine = tmp_path / "mine.tsv"
    with pytest.raises(BaselineError, match=f"The baseline file {mine} does not exist"):
        find_baseline("m", "en", mine)
    mine.write_text("LAYER,P,R,F\n0,0.1,0.2,0.3\n")
    assert find_baseline("m", "en", mine).source == str(mine)


def test_scorer_with_missing_baseline_fails_before_any_work():
    # bert-score returns unrescaled scores labelled "rescaled" here; we refuse at construction
    with pytest.raises(BaselineError, match="No rescaling baseline") as info:
        Scorer(layer=4, rescale_with_baseline=True, lang="zz")
    # BERTSCORE.md: the error names the file, the model and the layer, and how to compute a baseline
    msg = str(info.value)
    assert "baselines/zz/all-MiniLM-L6-v2.tsv" in msg and "layer 4" in msg and "bertscore_viz baseline" in msg


def test_scorer_rescales_with_the_file_row_of_its_layer(tmp_path):
    p = tmp_path / "custom.tsv"
    rows = ["LAYER,P,R,F"] + [f"{layer},{0.5 + layer / 100},{0.45 + layer / 100},{0.47 + layer / 100}"
                             for layer in range(7)]
    p.write_text("\n".join(rows) + "\n", encoding="utf-8")
    s = Scorer(layer=4, rescale_with_baseline=True, baseline_path=str(p))
    np.testing.assert_allclose(s.baseline, [0.54, 0.49, 0.51])
    res = s.score(["The cat sat on the mat."], ["There is a cat sitting on the mat."])
    np.testing.assert_allclose(res.baseline, [0.54, 0.49, 0.51])
    # raw values of BERTSCORE.md (layer 4, pair 0), rescaled by hand: (x - b) / (1 - b)
    assert res.raw_precision[0] == pytest.approx(0.906293, abs=2e-6)
    assert res.precision[0] == pytest.approx((res.raw_precision[0] - 0.54) / 0.46, abs=1e-12)
    assert res.recall[0] == pytest.approx((res.raw_recall[0] - 0.49) / 0.51, abs=1e-12)
    assert res.f1[0] == pytest.approx((res.raw_f1[0] - 0.51) / 0.49, abs=1e-12)
    assert str(res.signature).endswith("-custom-rescaled")


def test_scorer_with_a_baseline_table():
    table = BaselineTable(np.tile([0.6, 0.5, 0.55], (7, 1)), "computed in a test")
    s = Scorer(layer=2, rescale_with_baseline=True, baseline_table=table)
    np.testing.assert_allclose(s.baseline, [0.6, 0.5, 0.55])
    assert "-custom-rescaled" in str(s.signature)
