"""Our command line against bert-score's (``bert-score -c ... -r ...``) on the same files: same numbers."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from bert_score_cli import score as bert_score_cli

from bertscore_viz import Scorer
from bertscore_viz.cli.entry import main

from .conftest import MODEL, no_negative_best, read_lines

LINE = re.compile(r"^(\S+) P: (-?\d+\.\d+) R: (-?\d+\.\d+) F1: (-?\d+\.\d+)$")
PRINT_TOL = 2e-6  # both print 6 decimals


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """20 real de-en pairs, a second reference file (the next lines' references), no negative best matches."""
    mt, ref = read_lines("mt-system", "de-en"), read_lines("reference", "de-en")
    idx = list(range(200, 260, 3))
    cands, refs, refs2 = [mt[i] for i in idx], [ref[i] for i in idx], [ref[i + 1] for i in idx]
    stats = Scorer(layer=4).match(cands, [[a, b] for a, b in zip(refs, refs2)])
    keep = no_negative_best(stats, 4)
    assert len(keep) >= 15
    d = tmp_path_factory.mktemp("cli")
    out = {}
    for name, lines in (("cand", cands), ("ref", refs), ("ref2", refs2)):
        out[name] = d / f"{name}.txt"
        out[name].write_text("\n".join(lines[i] for i in keep) + "\n", encoding="utf-8")
    out["baseline"] = d / "base.tsv"
    out["baseline"].write_text("LAYER,P,R,F\n" + "".join(f"{i},0.6{i},0.5{i},0.55{i}\n" for i in range(7)),
                               encoding="utf-8")
    return {k: str(v) for k, v in out.items()}


def parse(out: str):
    lines = out.strip().splitlines()
    m = LINE.match(lines[-1 - sum(1 for x in lines if "\t" in x)])
    assert m, out
    seg = np.array([[float(x) for x in line.split("\t")] for line in lines if "\t" in line])
    return m.group(1), np.array([float(m.group(i)) for i in (2, 3, 4)]), seg


def run_both(capsys, monkeypatch, args: list[str]):
    monkeypatch.setattr(sys, "argv", ["bert-score", "-m", MODEL] + args)
    bert_score_cli.main()
    theirs = capsys.readouterr().out
    assert main(["score"] + args) == 0
    ours = capsys.readouterr().out
    return parse(ours), parse(theirs)


@pytest.mark.parametrize("extra", [[], ["--idf"]])
def test_same_numbers_as_bert_score_cli(files, capsys, monkeypatch, extra):
    (sig, mean, seg), (their_sig, their_mean, their_seg) = run_both(
        capsys, monkeypatch, ["-c", files["cand"], "-r", files["ref"], "-l", "4", "-s"] + extra)
    np.testing.assert_allclose(mean, their_mean, atol=PRINT_TOL)
    assert seg.shape == their_seg.shape and seg.shape[1] == 3
    np.testing.assert_allclose(seg, their_seg, atol=PRINT_TOL)
    # same signature layout, with our name and version in place of bert-score's
    assert sig.startswith("all-MiniLM-L6-v2_L4_" + ("idf" if extra else "no-idf") + "_version=bertscore-viz-")
    # (bert-score 0.3.13 still calls itself 0.3.12 in its hash)
    assert their_sig.startswith(MODEL + "_L4_" + ("idf" if extra else "no-idf") + "_version=0.3.1")


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")  # inside bert-score
def test_several_reference_files_and_rescaling(files, capsys, monkeypatch):
    (sig, mean, seg), (_, their_mean, their_seg) = run_both(
        capsys, monkeypatch, ["-c", files["cand"], "-r", files["ref"], files["ref2"], "-l", "4", "-s",
                              "--lang", "en", "--rescale_with_baseline", "--baseline_path", files["baseline"]])
    np.testing.assert_allclose(mean, their_mean, atol=PRINT_TOL)
    np.testing.assert_allclose(seg, their_seg, atol=PRINT_TOL)
    assert sig.endswith("-custom-rescaled")
    assert seg.min() < 0.5 < seg.max()
