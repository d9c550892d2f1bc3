"""Scoring a dataset of several systems with the real bundled model: one model pass, same numbers as scoring
each system alone, settings changed without a model pass, and the tables."""

import json
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.engine.baseline import BaselineTable
from bertscore_viz.evaluation import compare
from bertscore_viz.files import upload
from bertscore_viz.files.export import to_json
from bertscore_viz.locations import EXAMPLES_DIR

EXAMPLE = EXAMPLES_DIR / "systems_example.csv"


@pytest.fixture(scope="module")
def scorer():
    return Scorer()


@pytest.fixture(scope="module")
def dataset():
    return upload.parse_upload(EXAMPLE.read_bytes(), EXAMPLE.name)


@pytest.fixture(scope="module")
def run(scorer, dataset):
    calls = []
    cstats = compare.score_dataset(scorer, dataset, progress=lambda d, t: calls.append((d, t)), layers="all")
    return cstats, calls


def test_one_pass_counts_each_distinct_sentence_once(run, dataset):
    cstats, calls = run
    texts = {t for outs in dataset.systems.values() for t in outs} | {r for refs in dataset.references for r in refs}
    assert calls[-1] == (len(texts), len(texts))
    assert all(t == len(texts) for _, t in calls)
    assert cstats.systems == tuple(dataset.systems) and cstats.layers == tuple(range(7))
    for name, stats in zip(cstats.systems, cstats.per_system):
        assert list(stats.candidates) == dataset.systems[name]
        assert len(stats.groups) == dataset.n_segments


def test_the_pass_keeps_a_few_numbers_per_pair_and_adds_a_layer_with_one_more_pass(scorer, dataset):
    """Compare keeps each pair's P/R/F (no per-token maxima); another layer is one more pass, with the same idf,
    giving what scoring each system alone gives."""
    cstats = compare.score_dataset(scorer, dataset)
    assert cstats.layers == (scorer.layer,) and not cstats.pairs.keeps_tokens and cstats.pairs.cand_best == ()
    more = compare.add_layers(scorer, dataset, cstats, [2])
    assert more.layers == (2, scorer.layer) and more.pairs.table_idf is cstats.pairs.table_idf
    assert compare.add_layers(scorer, dataset, more, [2]) is more
    comparison = compare.results_for(scorer, more, 2, True)
    alone = Scorer(layer=2, idf=True)
    for name, outputs in dataset.systems.items():
        np.testing.assert_allclose(comparison.results[name].f1, alone.score(outputs, dataset.references).f1,
                                   atol=1e-6)


@pytest.mark.parametrize("layer,idf", [(4, False), (6, True), (2, False)])
def test_results_equal_scoring_each_system_alone(scorer, run, dataset, layer, idf):
    cstats, _ = run
    comparison = compare.results_for(scorer, cstats, layer, idf)
    alone = Scorer(layer=layer, idf=idf)
    for name, outputs in dataset.systems.items():
        ref = alone.score(outputs, dataset.references)
        got = comparison.results[name]
        np.testing.assert_allclose(got.f1, ref.f1, atol=1e-6)
        np.testing.assert_allclose(got.precision, ref.precision, atol=1e-6)
        np.testing.assert_allclose(got.recall, ref.recall, atol=1e-6)
        assert str(got.signature) == str(ref.signature)


def test_changing_layer_idf_rescaling_runs_no_model_pass(scorer, run, monkeypatch):
    cstats, _ = run
    enc = scorer.encoder
    forwards = []
    original = enc._forward

    def counting(ids, depth):
        forwards.append(len(ids))
        return original(ids, depth)

    monkeypatch.setattr(enc, "_forward", counting)
    table = BaselineTable(np.tile([0.5, 0.5, 0.5], (7, 1)), "test")
    custom = Scorer(baseline_table=table)
    for layer in range(7):
        for idf in (False, True):
            compare.results_for(scorer, cstats, layer, idf)
            compare.results_for(custom, cstats, layer, idf, rescale=True)
    assert forwards == []


def test_rescaling_without_a_baseline_falls_back_to_raw_with_the_engines_message(scorer, run):
    cstats, _ = run
    no_baseline = Scorer(lang="xx")  # no baselines/xx/ for the bundled model
    comparison = compare.results_for(no_baseline, cstats, 4, False, rescale=True)
    assert not comparison.rescaled
    assert "No rescaling baseline" in comparison.note and "turn rescaling off" in comparison.note
    raw = compare.results_for(scorer, cstats, 4, False)
    for name in raw.results:
        np.testing.assert_array_equal(comparison.results[name].f1, raw.results[name].f1)
    assert "rescaled" not in comparison.signature


def test_rescaling_with_a_baseline(run):
    cstats, _ = run
    table = BaselineTable(np.tile([0.6, 0.5, 0.55], (7, 1)), "test")
    custom = Scorer(baseline_table=table)
    comparison = compare.results_for(custom, cstats, 4, False, rescale=True)
    assert comparison.rescaled and comparison.note is None
    res = comparison.results["literal"]
    np.testing.assert_allclose(res.f1, (res.raw_f1 - 0.55) / 0.45)
    assert comparison.signature.endswith("-custom-rescaled")


def test_system_table_ranks_marks_best_and_intervals(scorer, run):
    comparison = compare.results_for(scorer, run[0], 4, False)
    sig = compare.significance(comparison, "paraphrase")
    table = compare.system_table(comparison, sig)
    assert list(table["Rank"]) == [1, 2, 3, 4]
    assert table["F1"].is_monotonic_decreasing
    assert list(table["Best"]).count("★ best") == 1 and table.loc[0, "Best"] == "★ best"
    assert (table["F1 CI low"] <= table["F1"]).all() and (table["F1"] <= table["F1 CI high"]).all()
    assert set(table["System"]) == set(comparison.systems)
    # The literal system copies most of the reference: the metric puts it first, clearly.
    assert table.loc[0, "System"] == "literal"
    head = compare.headline(comparison, sig)
    assert head["best"] == "literal" and head["significant"] and head["p"] == pytest.approx(1 / 1001)
    assert head["sentence"].startswith("literal is better than")
    assert f"literal − {head['runner_up']} = +{head['margin']:.4f}" in head["sentence"]
    assert list(table["System"]) == list(sig.systems) == comparison.systems  # one rank order everywhere
    assert list(table["Cluster"]) == [s.cluster for s in sig.standings] and table.loc[0, "Wins"] >= 1


def test_segment_table_search_and_sort_by_difference(scorer, run, dataset):
    comparison = compare.results_for(scorer, run[0], 4, False)
    frame = compare.segment_table(dataset, comparison, with_pr=True)
    assert len(frame) == 30
    for name in dataset.systems:
        assert {f"F1 · {name}", f"P · {name}", f"R · {name}", f"Output · {name}"} <= set(frame.columns)
    ranked = compare.sort_by_difference(frame, comparison, "literal", "drops_content")
    col = compare.diff_column("literal", "drops_content")
    diffs = np.abs(ranked[col].to_numpy())
    assert np.all(diffs[:-1] >= diffs[1:])
    np.testing.assert_allclose(ranked[col], ranked["F1 · literal"] - ranked["F1 · drops_content"])
    first = int(ranked.index[0])  # the index is the position in the dataset, after sorting too
    assert ranked.iloc[0]["Segment"] == dataset.segment_ids[first]
    assert ranked.iloc[0]["Reference"] == dataset.references[first][0]
    found = compare.filter_segments(frame, "FROG")
    assert list(found["Segment"]) == ["s07"]
    assert len(compare.filter_segments(frame, "(.*")) == 0  # plain text, not a regular expression
    assert len(compare.filter_segments(frame, "  ")) == 30


def test_length_buckets_cover_every_segment(scorer, run, dataset):
    comparison = compare.results_for(scorer, run[0], 4, False)
    buckets = compare.length_buckets(dataset, comparison)
    for name in dataset.systems:
        part = buckets[buckets["System"] == name]
        assert part["Segments"].sum() == 30
        weighted = (part["F1"] * part["Segments"]).sum() / 30
        assert weighted == pytest.approx(float(comparison.results[name].f1.mean()))


def test_everything_as_json(scorer, run, dataset):
    comparison = compare.results_for(scorer, run[0], 4, True)
    sig = compare.significance(comparison)
    data = json.loads(to_json(compare.to_jsonable(dataset, comparison, sig)))
    assert data["signature"] == comparison.signature and "_idf_" in data["signature"]
    assert [s["System"] for s in data["systems"]][0] == "literal"
    assert len(data["segments"]) == 30 and set(data["segments"][0]["systems"]) == set(dataset.systems)
    assert data["significance"]["seed"] == 12345
    assert data["significance"]["pairwise_p"]["literal"]["literal"] == 1.0


def test_long_layout_with_several_references_and_an_empty_output(scorer):
    data = ("system,segment_id,candidate,reference,reference_2\n"
            "A,1,The cat sat on the mat.,A cat sat on the mat.,The cat was on the mat.\n"
            "B,1,,A cat sat on the mat.,The cat was on the mat.\n"
            "A,2,It rained all day.,It rained the whole day.,Rain fell all day long.\n"
            "B,2,Sun shone.,It rained the whole day.,Rain fell all day long.\n").encode()
    ds = upload.parse_upload(data)
    assert ds.references[0] == ["A cat sat on the mat.", "The cat was on the mat."]
    assert [p.severity for p in ds.problems] == ["warning"]
    comparison = compare.results_for(scorer, compare.score_dataset(scorer, ds), 4, False)
    alone = Scorer().score(ds.systems["A"], ds.references)
    np.testing.assert_allclose(comparison.results["A"].f1, alone.f1, atol=1e-6)
    assert comparison.results["B"].f1[0] == 0.0
    assert any("empty candidate" in w for w in comparison.warnings())


def test_dataset_key_changes_with_content_and_model(dataset):
    other = upload.parse_upload(EXAMPLE.read_bytes().replace(b"frog", b"toad"))
    assert compare.dataset_key(dataset, "m") == compare.dataset_key(dataset, "m")
    assert compare.dataset_key(dataset, "m") != compare.dataset_key(other, "m")
    assert compare.dataset_key(dataset, "m") != compare.dataset_key(dataset, "n")


def test_figures_sample_large_inputs_and_escape_names(scorer, run, dataset):
    from bertscore_viz.app.ui import compare_view

    comparison = compare.results_for(scorer, run[0], 4, False)
    fig = compare_view.scatter_figure(comparison, "literal", "errors", dataset.segment_ids, max_points=10)
    assert len(fig.data[0].x) == 10 and "sample of 10" in fig.layout.title.text
    box = compare_view.distribution_figure(comparison, max_points=5)
    assert [len(t.y) for t in box.data] == [5, 5, 5, 5]
    renamed = compare.Comparison({"<b>x</b>": comparison.results["literal"]}, 4, False, False)
    assert compare_view.distribution_figure(renamed).data[0].name == "&lt;b&gt;x&lt;/b&gt;"
    sig = compare.significance(comparison)
    assert compare_view.pvalue_figure(sig).data[0].z.shape == (4, 4)
    assert len(compare_view.bucket_figure(compare.length_buckets(dataset, comparison)).data) == 4


def test_without_segment_ids_only_the_row_is_shown(scorer):
    ds = upload.parse_upload(b"reference,A,B\nThe cat sat.,A cat sat.,The cat sits.\nIt rained.,Rain.,It rained.\n")
    comparison = compare.results_for(scorer, compare.score_dataset(scorer, ds), 4, False)
    frame = compare.segment_table(ds, comparison)
    assert "Segment" not in frame.columns and list(frame["Row"]) == ds.rows
    assert len(compare.filter_segments(frame, "rained")) == 1


def test_sixteen_systems_get_sixteen_colours_and_buckets_show_their_size(scorer, run, dataset):
    from bertscore_viz.app.ui import compare_view

    assert len(set(compare_view.palette(16))) == 16 and len(set(compare_view.palette(40))) == 40
    comparison = compare.results_for(scorer, run[0], 4, False)
    fig = compare_view.bucket_figure(compare.length_buckets(dataset, comparison))
    assert all("(n=" in x for x in fig.data[0].x)
    assert len({t.line.color for t in fig.data}) == 4


def test_the_headline_p_is_the_pairs_p_everywhere_with_its_family(scorer, run):
    comparison = compare.results_for(scorer, run[0], 4, False)
    sig = compare.significance(comparison, correction="holm")
    head = compare.headline(comparison, sig)
    best, second = head["best"], head["runner_up"]
    sentence = next(r for r in sig.versus_baseline if r.system == second)
    # under Holm the resamples follow the family (6 pairs: 2,000, so that 6 / 2001 < 0.05 / 10): raw 1/2001
    assert sig.n_samples == 2000
    assert head["p"] == sentence.p == sig.pair(best, second) == pytest.approx(6 / 2001)
    assert head["p_text"] == "p = 0.003, Holm-adjusted over 6 comparisons" and head["p_text"] in head["sentence"]
    assert head["p_text"] in sentence.sentence()
    data = compare.to_jsonable(upload.parse_upload(EXAMPLE.read_bytes(), EXAMPLE.name), comparison, sig,
                               with_segments=False)
    assert data["significance"]["family"] == 6 and data["headline"]["p_text"] == head["p_text"]


def test_language_report_of_a_dataset(dataset):
    assert compare.language_report(dataset, "all-MiniLM-L6-v2").message() is None  # English: nothing to say
    wmt = Path(__file__).resolve().parents[2] / "data" / "wmt16-da-to-english"
    de = (wmt / "DAseg-newstest2016.source.de-en").read_text(encoding="utf-8").splitlines()[:20]
    en = (wmt / "DAseg-newstest2016.reference.de-en").read_text(encoding="utf-8").splitlines()[:20]
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["reference", "de", "en"])
    w.writerows(zip(en, de, en))
    ds = upload.parse_upload(buf.getvalue().encode(), "mixed.csv")
    report = compare.language_report(ds, "all-MiniLM-L6-v2")
    assert report.references == {} and report.systems["en"] == {} and report.systems["de"]["German (de)"] >= 15
    assert "outputs: de: German (de) in" in report.message()
    assert compare.language_report(ds, "multilingual-e5-small").message() is None
