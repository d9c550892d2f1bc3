"""The stress test's figures (bertscore_viz/evaluation/audit.py, bertscore_viz/cli/audit.py) against an independent
computation: every perturbed candidate scored on its own with ``Scorer.score`` (one call per perturbation and
layer), the figures computed with plain numpy; the CLI's ``--json`` figures re-computed from its ``--dump``.
The data are written here (not the repository's)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.cli import audit as audit_cli
from bertscore_viz.cli.audit import format_table, parse_layers
from bertscore_viz.cli.entry import build_parser, main
from bertscore_viz.errors import InputError, ModelError
from bertscore_viz.evaluation.audit import AuditResult, audit, audit_figures, choose_perturbations
from bertscore_viz.evaluation.perturb import PERTURBATIONS, perturb_all
from bertscore_viz.files.fileio import OutputError

CANDS = [
    "The council approved 12 new schools in Leeds last year.",
    "Maria Lopez won the race in 2 hours and 5 minutes.",
    "The bridge is not safe for heavy trucks.",
    "He bought three apples and a loaf of bread.",
    "Prices rose by 4.5 percent in March.",
    "The museum will open a new wing in Vienna.",
    "She never eats meat on Fridays.",
    "Our team lost the final against Ajax.",
]
REFS = [
    "Last year the council approved twelve new schools in Leeds.",
    "Maria Lopez finished the race in 2 hours 5 minutes and won.",
    "Heavy trucks cannot safely use the bridge.",
    "He purchased three apples and some bread.",
    "In March prices went up 4.5 percent.",
    "A new wing of the museum in Vienna will open.",
    "She does not eat meat on Fridays.",
    "Our side was beaten by Ajax in the final.",
]
SECOND_REFS = [
    "The council said yes to twelve schools in Leeds last year.",
    "Lopez won in two hours and five minutes.",
    "The bridge cannot carry heavy lorries.",
    "He got three apples and bread.",
    "Prices climbed 4.5 percent in March.",
    "Vienna's museum is opening a new wing.",
    "She does not eat meat on a Friday.",
    "Ajax beat our team in the final.",
]
NAMES = [p.name for p in PERTURBATIONS]


def independent_figures(cands, refs, layers, seed, idf=False):
    """``{(perturbation, layer): (n, pass_rate, mean_drop, relative_drop)}``: every perturbation's candidates
    scored separately with ``Scorer.score`` (idf, when on, from the original references), figures by plain numpy."""
    texts = {name: perturb_all(cands, name, seed=seed) for name in NAMES}
    flat = [r for g in refs for r in ([g] if isinstance(g, str) else g)]
    out = {}
    for layer in layers:
        scorer = Scorer(layer=layer, idf_sentences=flat) if idf else Scorer(layer=layer)

        def f1(indices, which, scorer=scorer):
            if not indices:
                return np.zeros(0)
            texts_ = [cands[i] if which is None else texts[which][i] for i in indices]
            return scorer.score(texts_, [refs[i] for i in indices]).raw_f1

        original = f1(list(range(len(cands))), None)
        unrelated_idx = [i for i, t in enumerate(texts["unrelated"]) if t is not None]
        unrel = np.full(len(cands), np.nan)
        unrel[unrelated_idx] = f1(unrelated_idx, "unrelated")
        for name in NAMES:
            idx = [i for i, t in enumerate(texts[name]) if t is not None]
            p = f1(idx, name)
            o = original[idx]
            drop = o - p
            both = [j for j, i in enumerate(idx) if not np.isnan(unrel[i])]
            gap = sum(o[j] - unrel[idx[j]] for j in both) / len(both)
            rel = (sum(drop[j] for j in both) / len(both)) / gap
            out[(name, layer)] = (len(idx), float(np.mean(p < o)), float(np.mean(drop)), float(rel))
    return out


def assert_rows_match(rows, expected):
    assert len(rows) == len(expected)
    for r in rows:
        n, pass_rate, mean_drop, rel = expected[(r["perturbation"], r["layer"])]
        assert r["n"] == n, r
        assert abs(r["pass_rate"] - pass_rate) < 1e-6, r
        assert abs(r["mean_drop"] - mean_drop) < 1e-6, r
        assert abs(r["relative_drop"] - rel) < 1e-6, r


@pytest.fixture(scope="module")
def result() -> AuditResult:
    return audit(CANDS, REFS, seed=4)


def test_every_layer_equals_scoring_each_perturbation_separately(result):
    assert result.layers == tuple(range(7))
    expected = independent_figures(CANDS, REFS, result.layers, seed=4)
    assert_rows_match(result.as_rows(), expected)
    assert set(result.perturbations) == set(NAMES)
    applies = {name: n for (name, layer), (n, *_rest) in expected.items() if layer == 0}
    assert min(applies.values()) >= 1, applies  # every perturbation applies somewhere in these data


def test_per_pair_scores_equal_scoring_the_pair_alone(result):
    scorer = Scorer(layer=5)
    k = result.layer_position(5)
    np.testing.assert_allclose(result.f1_original[k], scorer.score(CANDS, REFS).raw_f1, atol=1e-6)
    s = result.perturbed("numbers")
    for j, i in enumerate(s.indices):
        alone = scorer.score([s.texts[j]], [REFS[i]]).raw_f1[0]
        assert abs(s.f1[k, j] - alone) < 1e-6
    u = result.perturbed("unrelated")
    np.testing.assert_allclose(result.f1_unrelated[k, u.indices], u.f1[k])


def test_idf_from_the_original_references_and_several_references():
    refs = [[a, b] for a, b in zip(REFS, SECOND_REFS)]
    res = audit(CANDS, refs, scorer=Scorer(idf=True), layers=[3, 6], seed=4)
    assert res.layers == (3, 6)
    assert res.references[2] == (REFS[2], SECOND_REFS[2])
    expected = independent_figures(CANDS, refs, (3, 6), seed=4, idf=True)
    assert_rows_match(res.as_rows(), expected)
    assert all("_idf_" in s for s in res.signatures)


def test_one_model_pass():
    class CountingScorer(Scorer):
        calls: list = []

        def match(self, *args, **kwargs):
            self.calls.append(kwargs.get("layers"))
            return super().match(*args, **kwargs)

        def score(self, *args, **kwargs):
            raise AssertionError("the audit must not score outside its one match() call")

    scorer = CountingScorer()
    progress = []
    res = audit(CANDS[:4], REFS[:4], scorer=scorer, seed=4, progress=lambda d, t: progress.append((d, t)))
    assert scorer.calls == ["all"]
    texts = set(CANDS[:4]) | set(REFS[:4]) | {t for s in res.sets for t in s.texts}
    assert progress[-1] == (len(texts), len(texts))  # each distinct text embedded once


def test_rescaling_changes_no_figure(result):
    rescaled = audit(CANDS, REFS, scorer=Scorer(rescale_with_baseline=True), seed=4)
    assert rescaled.as_rows() == result.as_rows()  # raw F1 is used
    assert not any("rescaled" in s for s in rescaled.signatures)


def test_audit_figures_by_hand():
    row = audit_figures("x", 3, [0.9, 0.8, 0.7], [0.85, 0.8, 0.75], [0.5, 0.6, np.nan])
    assert (row.perturbation, row.layer, row.n, row.ties, row.n_relative) == ("x", 3, 3, 1, 2)
    assert row.pass_rate == pytest.approx(1 / 3)  # the tie does not count as noticed
    assert row.mean_drop == pytest.approx(0.0, abs=1e-15)
    assert row.relative_drop == pytest.approx(((0.05 + 0.0) / 2) / ((0.4 + 0.2) / 2))
    assert row.note == ""
    empty = audit_figures("x", 0, [], [], [])
    assert empty.n == 0 and math.isnan(empty.pass_rate) and math.isnan(empty.relative_drop) and empty.note
    no_gap = audit_figures("x", 0, [0.5, 0.6], [0.4, 0.5], [0.6, 0.5])  # unrelated as good as the originals
    assert no_gap.mean_drop == pytest.approx(0.1) and math.isnan(no_gap.relative_drop)
    assert "as high as the originals" in no_gap.note
    no_unrelated = audit_figures("x", 0, [0.5], [0.4], [np.nan])
    assert math.isnan(no_unrelated.relative_drop) and "no unrelated candidate" in no_unrelated.note
    assert no_unrelated.as_dict() == {"perturbation": "x", "layer": 0, "n": 1, "pass_rate": 1.0,
                                      "mean_drop": pytest.approx(0.1), "relative_drop": None}
    with pytest.raises(InputError, match="three"):
        audit_figures("x", 0, [0.5], [0.4, 0.3], [0.1])


def test_unrelated_row_is_one_and_examples(result):
    for layer in result.layers:
        assert result.row("unrelated", layer).relative_drop == pytest.approx(1.0)
    ex = result.examples("typos", 4, limit=None)
    assert len(ex) == result.row("typos", 4).n
    drops = [e.drop for e in ex]
    assert drops == sorted(drops)  # "fooled": the smallest drops first
    e = ex[0]
    assert e.candidate == CANDS[e.index] and e.references == (REFS[e.index],)
    assert e.perturbed == perturb_all(CANDS, "typos", seed=4)[e.index]
    assert e.drop == pytest.approx(e.f1_original - e.f1_perturbed) and e.noticed == (e.f1_perturbed < e.f1_original)
    assert e.f1_unrelated == result.f1_unrelated[result.layer_position(4), e.index]
    noticed = result.examples("typos", 4, limit=2, order="noticed")
    assert [x.drop for x in noticed] == sorted(drops, reverse=True)[:2]
    assert [x.index for x in result.examples("typos", 4, order="index", limit=None)] == sorted(e.index for e in ex)
    series = result.series("pass_rate")
    assert list(series) == list(result.perturbations) and series["typos"].shape == (7,)
    with pytest.raises(InputError, match="not audited"):
        result.row("typos", 9)
    with pytest.raises(InputError, match="was not run"):
        result.examples("negation", 4)


def test_dump_rows_and_determinism(result):
    rows = result.dump_rows()
    assert rows == audit(CANDS, REFS, seed=4, layers=[0]).dump_rows()  # the texts do not depend on the layers
    assert rows != audit(CANDS, REFS, seed=5, layers=[0]).dump_rows()
    by_name: dict[str, dict[int, str]] = {}
    for r in rows:
        assert set(r) == {"perturbation", "index", "candidate", "perturbed"}
        assert r["candidate"] == CANDS[r["index"]]
        by_name.setdefault(r["perturbation"], {})[r["index"]] = r["perturbed"]
    for name in NAMES:
        expected = {i: t for i, t in enumerate(perturb_all(CANDS, name, seed=4)) if t is not None}
        assert by_name.get(name, {}) == expected, name


def test_language_and_errors():
    chosen, skipped = choose_perturbations(None, "de")
    assert [p.name for p in chosen] == ["numbers", "shuffle", "omission", "addition", "typos", "unrelated"]
    assert len(skipped) == 3 and all("not 'de'" in s for s in skipped)
    chosen, skipped = choose_perturbations("typos, numbers", "en")
    assert [p.name for p in chosen] == ["numbers", "typos", "unrelated"] and skipped == ()
    with pytest.raises(InputError, match="entities: the rules are for en"):
        choose_perturbations(["entities"], "de")
    with pytest.raises(InputError, match="Unknown perturbation"):
        audit(CANDS, REFS, perturbations=["negation"])
    with pytest.raises(InputError, match="either a scorer or scoring options"):
        audit(CANDS, REFS, scorer=Scorer(), idf=True)
    with pytest.raises(InputError, match="Unknown scoring option"):
        audit(CANDS, REFS, idff=True)
    with pytest.raises(InputError, match="Nothing to audit"):
        audit([], [])
    with pytest.raises(InputError, match="as many candidates as references"):
        audit(CANDS, REFS[:3])
    with pytest.raises(ModelError, match="Layer"):
        audit(CANDS[:2], REFS[:2], layers=[12])


def test_german_audit_skips_the_english_rules():
    res = audit(CANDS[:3], REFS[:3], lang="de", layers=4, perturbations=None)
    assert res.perturbations == ("numbers", "shuffle", "omission", "addition", "typos", "unrelated")
    assert res.layers == (4,) and len(res.skipped) == 3


def cli(argv):
    """The command's own run: errors raise (the entry turns them into exit 2)."""
    return audit_cli.run(build_parser().parse_args(["audit", *argv]))


def test_cli_json_and_dump_round_trip(tmp_path, capsys):
    """Re-scoring the dumped perturbed candidates gives the printed figures."""
    cand, ref, dump = tmp_path / "c.txt", tmp_path / "r.txt", tmp_path / "out" / "perturbed.jsonl"
    cand.write_text("\n".join(CANDS) + "\n", encoding="utf-8")
    ref.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    code = cli(["-c", str(cand), "-r", str(ref), "--layers", "2,5", "--seed", "4", "--perturbations",
                "numbers,typos,entities", "--json", "--dump", str(dump)])
    out, err = capsys.readouterr()
    assert code == 0
    rows = json.loads(out)
    assert [(r["perturbation"], r["layer"]) for r in rows] == [
        (name, layer) for name in ("numbers", "entities", "typos", "unrelated") for layer in (2, 5)]
    assert all(set(r) == {"perturbation", "layer", "n", "pass_rate", "mean_drop", "relative_drop"} for r in rows)
    records = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()]
    assert f"wrote {len(records)} perturbed candidates" in err
    expected = {}
    for layer in (2, 5):
        scorer = Scorer(layer=layer)
        original = scorer.score(CANDS, REFS).raw_f1
        scored = {}
        for r in records:
            scored.setdefault(r["perturbation"], []).append(
                (r["index"], scorer.score([r["perturbed"]], [REFS[r["index"]]]).raw_f1[0]))
        unrel = dict(scored["unrelated"])
        for name, pairs in scored.items():
            idx = np.array([i for i, _ in pairs])
            p = np.array([f for _, f in pairs])
            drop = original[idx] - p
            gap = np.mean([original[i] - unrel[i] for i in idx])
            expected[(name, layer)] = (len(idx), float(np.mean(p < original[idx])), float(np.mean(drop)),
                                       float(np.mean(drop) / gap))
    assert_rows_match(rows, expected)


def test_cli_table_and_bad_arguments(tmp_path, capsys):
    cand, ref = tmp_path / "c.txt", tmp_path / "r.txt"
    cand.write_text("\n".join(CANDS[:3]), encoding="utf-8")
    ref.write_text("\n".join(REFS[:3]), encoding="utf-8")
    assert cli(["-c", str(cand), "-r", str(ref), "--layers", "4", "--lang", "de"]) == 0
    out = capsys.readouterr().out
    assert "3 segments, seed 0, language de" in out and "all-MiniLM-L6-v2_L*_no-idf" in out
    lines = [x for x in out.splitlines() if x.split()[:1] in (["numbers"], ["typos"], ["unrelated"])]
    assert len(lines) == 3 and lines[-1].split()[:3] == ["unrelated", "4", "3"]
    assert "left out: negation_add" in out
    assert parse_layers("all") == "all" and parse_layers(" 4, 6 ") == [4, 6]
    with pytest.raises(InputError, match="--layers takes"):
        parse_layers("four")
    ref.write_text("\n".join(REFS[:2]), encoding="utf-8")
    with pytest.raises(InputError, match="Expected as many lines"):
        cli(["-c", str(cand), "-r", str(ref)])
    with pytest.raises(InputError, match="does not exist"):
        cli(["-c", str(tmp_path / "missing.txt"), "-r", str(ref)])
    with pytest.raises(OutputError, match="is a directory"):
        cli(["-c", str(cand), "-r", str(ref), "--dump", str(tmp_path)])


def test_table_notes_nan_rows():
    res = audit(CANDS[:1], REFS[:1], layers=[4], perturbations=["typos"])  # one segment: no unrelated candidate
    text = format_table(res)
    assert res.row("typos", 4).n == 1 and math.isnan(res.row("typos", 4).relative_drop)
    assert res.row("unrelated", 4).n == 0
    assert "n/a" in text and "note: typos" in text and "note: unrelated" in text


def test_registered_in_the_main_command_line(tmp_path, capsys):
    """``python -m bertscore_viz audit`` prints the same as the command's own run."""
    cand, ref = tmp_path / "c.txt", tmp_path / "r.txt"
    cand.write_text("\n".join(CANDS[:3]), encoding="utf-8")
    ref.write_text("\n".join(REFS[:3]), encoding="utf-8")
    argv = ["-c", str(cand), "-r", str(ref), "--layers", "4", "--json"]
    assert main(["audit", *argv]) == 0
    via_main = json.loads(capsys.readouterr().out)
    assert cli(argv) == 0
    assert via_main == json.loads(capsys.readouterr().out)


def test_truncated_perturbed_candidates_are_named():
    long = " ".join(f"word{i}" for i in range(150)) + "."  # fits the model; repeated, it does not
    res = audit([long, "The cat sat on the mat."], [long, "A cat sat."], layers=4, perturbations=["addition"])
    assert [w for w in res.warnings if "perturbed candidate" in w] == [
        "1 perturbed candidate(s) longer than the model's maximum length were truncated (addition: 1); their scores "
        "ignore the tail. To score long texts whole, use long_texts='window' (CLI: --long_texts window)."]
