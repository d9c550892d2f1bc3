"""Scoring a dataset of several systems with the real bundled model: one model pass, same numbers as scoring
each system alone, settings changed without a model pass, and the tables."""

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
import sacrebleu

from bertscore_viz import Scorer
from bertscore_viz.engine.baseline import BaselineTable
from bertscore_viz.evaluation import compare, sacrebleu_metrics
from bertscore_viz.evaluation.calibration import random_pair_calibration
from bertscore_viz.figures import compare_plots, tables
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
    table = tables.system_table(comparison, sig)
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
    frame = tables.segment_table(dataset, comparison, with_pr=True)
    assert len(frame) == 30
    for name in dataset.systems:
        assert {f"F1 · {name}", f"P · {name}", f"R · {name}", f"Output · {name}"} <= set(frame.columns)
    ranked = tables.sort_by_difference(frame, comparison, "literal", "drops_content")
    col = tables.diff_column("literal", "drops_content")
    diffs = np.abs(ranked[col].to_numpy())
    assert np.all(diffs[:-1] >= diffs[1:])
    np.testing.assert_allclose(ranked[col], ranked["F1 · literal"] - ranked["F1 · drops_content"])
    first = int(ranked.index[0])  # the index is the position in the dataset, after sorting too
    assert ranked.iloc[0]["Segment"] == dataset.segment_ids[first]
    assert ranked.iloc[0]["Reference"] == dataset.references[first][0]
    found = tables.filter_segments(frame, "FROG")
    assert list(found["Segment"]) == ["s07"]
    assert len(tables.filter_segments(frame, "(.*")) == 0  # plain text, not a regular expression
    assert len(tables.filter_segments(frame, "  ")) == 30


def test_length_buckets_cover_every_segment(scorer, run, dataset):
    comparison = compare.results_for(scorer, run[0], 4, False)
    buckets = tables.length_buckets(dataset, comparison)
    for name in dataset.systems:
        part = buckets[buckets["System"] == name]
        assert part["Segments"].sum() == 30
        weighted = (part["F1"] * part["Segments"]).sum() / 30
        assert weighted == pytest.approx(float(comparison.results[name].f1.mean()))


def test_everything_as_json(scorer, run, dataset):
    comparison = compare.results_for(scorer, run[0], 4, True)
    sig = compare.significance(comparison)
    data = json.loads(to_json(tables.to_jsonable(dataset, comparison, sig)))
    assert data["signature"] == comparison.signature and "_idf_" in data["signature"]
    assert [s["system"] for s in data["systems"]][0] == "literal" and data["schema_version"] == 2
    assert len(data["segments"]) == 30 and set(data["segments"][0]["systems"]) == set(dataset.systems)
    assert data["significance"]["seed"] == 12345
    assert data["significance"]["pairwise_p"]["literal"]["literal"] == 1.0


def test_long_layout_with_several_references_and_an_empty_output(scorer):
    data = (b"system,segment_id,candidate,reference,reference_2\n"
            b"A,1,The cat sat on the mat.,A cat sat on the mat.,The cat was on the mat.\n"
            b"B,1,,A cat sat on the mat.,The cat was on the mat.\n"
            b"A,2,It rained all day.,It rained the whole day.,Rain fell all day long.\n"
            b"B,2,Sun shone.,It rained the whole day.,Rain fell all day long.\n")
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
    comparison = compare.results_for(scorer, run[0], 4, False)
    fig = compare_plots.scatter_figure(comparison, "literal", "errors", dataset.segment_ids, max_points=10)
    assert len(fig.data[0].x) == 10 and "sample of 10" in fig.layout.title.text
    box = compare_plots.distribution_figure(comparison, max_points=5)
    assert [len(t.y) for t in box.data] == [5, 5, 5, 5]
    renamed = compare.Comparison({"<b>x</b>": comparison.results["literal"]}, 4, False, False)
    assert compare_plots.distribution_figure(renamed).data[0].name == "&lt;b&gt;x&lt;/b&gt;"
    sig = compare.significance(comparison)
    assert compare_plots.pvalue_figure(sig).data[0].z.shape == (4, 4)
    assert len(compare_plots.bucket_figure(tables.length_buckets(dataset, comparison)).data) == 4


def test_without_segment_ids_only_the_row_is_shown(scorer):
    ds = upload.parse_upload(b"reference,A,B\nThe cat sat.,A cat sat.,The cat sits.\nIt rained.,Rain.,It rained.\n")
    comparison = compare.results_for(scorer, compare.score_dataset(scorer, ds), 4, False)
    frame = tables.segment_table(ds, comparison)
    assert "Segment" not in frame.columns and list(frame["Row"]) == ds.rows
    assert len(tables.filter_segments(frame, "rained")) == 1


def test_sixteen_systems_get_sixteen_colours_and_buckets_show_their_size(scorer, run, dataset):
    assert len(set(compare_plots.palette(16))) == 16 and len(set(compare_plots.palette(40))) == 40
    comparison = compare.results_for(scorer, run[0], 4, False)
    fig = compare_plots.bucket_figure(tables.length_buckets(dataset, comparison))
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
    data = tables.to_jsonable(upload.parse_upload(EXAMPLE.read_bytes(), EXAMPLE.name), comparison, sig,
                               with_segments=False)
    assert data["significance"]["family"] == 6 and data["headline"]["p_text"] == head["p_text"]


def test_language_report_of_a_dataset(dataset):
    assert compare.language_report(dataset, "all-MiniLM-L6-v2").message() is None  # English: nothing to say
    wmt = Path(__file__).resolve().parents[2] / "data" / "wmt16-da-to-english"
    de = (wmt / "DAseg-newstest2016.source.de-en").read_text(encoding="utf-8").splitlines()[:20]
    en = (wmt / "DAseg-newstest2016.reference.de-en").read_text(encoding="utf-8").splitlines()[:20]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["reference", "de", "en"])
    w.writerows(zip(en, de, en))
    ds = upload.parse_upload(buf.getvalue().encode(), "mixed.csv")
    report = compare.language_report(ds, "all-MiniLM-L6-v2")
    assert report.references == {} and report.systems["en"] == {} and report.systems["de"]["German (de)"] >= 15
    assert "outputs: de: German (de) in" in report.message()
    assert compare.language_report(ds, "multilingual-e5-small").message() is None


# --- empty references, length buckets with intervals, sacrebleu's metrics, the calibration ladder ------------------
EMPTY_REF = (b"reference,sysA,sysB\nThe cat sat on the mat.,A cat sat on the mat.,The cat sat.\n"
             b",It is cold.,Cold today.\nHe went home.,He left.,He went home early.\n"
             b"  ,Rain.,It rained.\nShe sings well.,She sings.,She is a good singer.\n")


def test_an_empty_reference_is_one_warning_for_every_system_and_can_be_left_out(scorer):
    ds = upload.parse_upload(EMPTY_REF, "empty.csv")
    positions = compare.empty_reference_positions(ds)
    assert positions == [1, 3]
    comparison = compare.results_for(scorer, compare.score_dataset(scorer, ds), 4, False,
                                     labels=compare.segment_labels(ds))
    warns = comparison.warnings()
    assert warns == ["every system (2): 2 empty reference(s), scored 0: row 3, row 5."], warns
    for name in ds.systems:
        assert comparison.results[name].f1[positions].tolist() == [0.0, 0.0]  # counted in the mean, as bert-score
    note = compare.empty_reference_note(ds, positions, left_out=False)
    assert note.startswith("2 of 5 segments have an empty reference (row 3, row 5): every system scores 0")
    kept = compare.without_segments(ds, positions)
    assert kept.n_segments == 3 and kept.rows == [2, 4, 6] and ds.n_segments == 5  # the input is not modified
    assert compare.without_segments(ds, []) is ds
    trimmed = compare.results_for(scorer, compare.score_dataset(scorer, kept), 4, False)
    for name, outputs in kept.systems.items():  # as if the file had only the other segments
        np.testing.assert_allclose(trimmed.results[name].f1, Scorer().score(outputs, kept.references).f1, atol=1e-6)
    assert "left out for every system, so every mean, interval and test is over the other 3 segments" in \
        compare.empty_reference_note(ds, positions, left_out=True)


def test_small_length_buckets_are_merged_and_every_bucket_has_the_pages_interval(scorer, dataset):
    """The example's first 12 segments: 5 references of 1-10 words, 6 of 11-20 and one of 21: that one joins its
    neighbour ("11–30 words", 7 segments); every bucket carries the page's bootstrap interval."""
    small = compare.without_segments(dataset, range(12, 30))
    comparison = compare.results_for(scorer, compare.score_dataset(scorer, small), 4, False)
    lengths = np.array([len(r[0].split()) for r in small.references])
    assert sorted(lengths[lengths > 20]) == [21]  # the premise: a bucket of one segment
    buckets = tables.length_buckets(small, comparison)
    sizes = dict(zip(buckets["Bucket"], buckets["Segments"]))
    assert sizes == {"1–10 words": 5, "11–30 words": 7}
    row = buckets[(buckets["Bucket"] == "11–30 words") & (buckets["System"] == "errors")].iloc[0]
    values = comparison.results["errors"].f1[lengths >= 11]
    idx = np.random.default_rng(12345).choice(7, size=(1000, 7), replace=True)
    means = np.sort(values[idx].mean(axis=1))  # the page's interval, computed here with plain numpy
    assert row["F1"] == pytest.approx(float(values.mean()))
    assert (row["CI low"], row["CI high"]) == (means[25], means[974])
    tiny = compare.without_segments(dataset, range(3, 30))  # 7, 13 and 7 words: below the bound, one bucket
    one = tables.length_buckets(tiny, compare.results_for(scorer, compare.score_dataset(scorer, tiny), 4, False))
    assert set(one["Bucket"]) == {"1–20 words"} and set(one["Segments"]) == {3}
    fig = compare_plots.bucket_figure(buckets)
    trace = next(t for t in fig.data if t.name == "errors")
    assert trace.error_y.array[1] == pytest.approx(row["CI high"] - row["F1"])
    assert fig.layout.legend.x > 1 and "95% CI" in fig.layout.title.text  # the legend beside the plot, not on it


@pytest.fixture(scope="module")
def surface(dataset):
    return sacrebleu_metrics.surface_scores(dataset.systems, dataset.references)


def test_tables_carry_sacrebleus_scores(scorer, run, dataset, surface):
    comparison = compare.results_for(scorer, run[0], 4, False)
    sig = compare.significance(comparison)
    table = tables.system_table(comparison, sig, surface)
    assert list(table.columns)[-4:] == ["chrF", "BLEU", "TER", "Segments"]
    refs = [r[0] for r in dataset.references]
    for row in table.to_dict(orient="records"):
        assert row["chrF"] == sacrebleu.corpus_chrf(dataset.systems[row["System"]], [refs]).score
        assert row["TER"] == sacrebleu.corpus_ter(dataset.systems[row["System"]], [refs]).score
    frame = tables.segment_table(dataset, comparison, surface=surface)
    assert frame["BLEU · errors"].tolist() == [sacrebleu.sentence_bleu(h, [r]).score
                                               for h, r in zip(dataset.systems["errors"], refs)]
    data = json.loads(to_json(tables.to_jsonable(dataset, comparison, sig, surface=surface)))
    assert data["sacrebleu"]["chrf"]["corpus_signature"].startswith("chrF2|nrefs:1|")
    assert data["segments"][0]["systems"]["literal"]["ter"] == surface.metrics["TER"].sentence["literal"][0]


def test_versus_baseline_table_reads_each_analysis(scorer, run, surface):
    comparison = compare.results_for(scorer, run[0], 4, False)
    chrf = sacrebleu_metrics.metric_significance(surface, "chrF",
                                                 sacrebleu_metrics.resampled_scores(surface.metrics["chrF"]))
    sigs = {"F1": compare.significance(comparison), "chrF": chrf}
    frame = tables.versus_baseline_table(sigs, "errors")
    assert frame["System"].tolist()[0] == "errors" and np.isnan(frame["chrF p"].iloc[0])
    row = frame[frame["System"] == "paraphrase"].iloc[0]
    expected = next(r for r in chrf.rebase("errors").versus_baseline if r.system == "paraphrase")
    assert row["chrF p"] == expected.p and row["chrF Δ"] == pytest.approx(
        surface.metrics["chrF"].corpus["paraphrase"] - surface.metrics["chrF"].corpus["errors"])
    assert row["F1"] == pytest.approx(float(comparison.results["paraphrase"].f1.mean()))


def test_rank_table_marks_the_systems_the_metrics_rank_differently(scorer):
    """An output in capitals: the bundled model lowercases (F1 1 against the reference), chrF is case-sensitive
    (near 0): first by BERTScore, last by chrF; the two others move up one place."""
    refs = ["The meeting was postponed until next week.", "Heavy rain caused flooding in several villages.",
            "She thanked her colleagues for their support.", "Police are still looking for the driver."]
    systems = {"copy_error": ["The meeting was cancelled until next week.",
                              "Heavy snow caused flooding in several villages.",
                              "She blamed her colleagues for their support.",
                              "Police are still looking for the passenger."],
               "capitals": [r.upper() for r in refs],
               "paraphrase": ["The meeting has been moved to next week.",
                              "Several villages were flooded after heavy rain.",
                              "She expressed gratitude to her colleagues for supporting her.",
                              "The police have not yet found the driver."]}
    ds = upload.parse_upload(("reference," + ",".join(systems) + "\n" + "".join(
        ",".join([r] + [systems[s][i] for s in systems]) + "\n" for i, r in enumerate(refs))).encode(), "r.csv")
    comparison = compare.results_for(scorer, compare.score_dataset(scorer, ds), 4, False)
    surface = sacrebleu_metrics.surface_scores(ds.systems, ds.references)
    frame = tables.rank_table(comparison, surface, "chrF")
    f1 = {s: float(comparison.results[s].f1.mean()) for s in systems}
    chrf = surface.metrics["chrF"].corpus
    for row in frame.to_dict(orient="records"):
        assert row["F1 rank"] == 1 + sum(v > f1[row["System"]] for v in f1.values())
        assert row["chrF rank"] == 1 + sum(v > chrf[row["System"]] for v in chrf.values())
        assert row["Shift"] == row["F1 rank"] - row["chrF rank"]
    assert frame["System"].tolist() == ["capitals", "copy_error", "paraphrase"]  # by F1
    assert frame["Shift"].tolist() == [-2, 1, 1], frame
    fig = compare_plots.rank_figure(frame, "chrF")
    moved = {t.name for t in fig.data if t.line.color == compare_plots.MOVED_COLOUR}
    assert moved == set(frame.loc[frame["Shift"] != 0, "System"])


def test_each_mean_on_the_calibration_ladder_is_its_raw_mean(scorer, run):
    rng = np.random.default_rng(0)
    calibration = random_pair_calibration(rng.uniform(0.2, 0.8, size=(400, 7, 3)), "all-MiniLM-L6-v2", "en")
    table = BaselineTable(np.tile([0.5, 0.5, 0.5], (7, 1)), "test")
    rescaled = compare.results_for(Scorer(baseline_table=table), run[0], 4, False, rescale=True)
    raw = compare.results_for(scorer, run[0], 4, False)
    readings = compare.calibration_readings(rescaled, calibration)
    for name, reading in readings.items():
        mean = float(raw.results[name].f1.mean())
        assert reading.value == pytest.approx(mean, abs=1e-12) and reading.layer == 4
        assert reading.percentile_random == calibration.percentile(mean, 4, "f1")
    frame = tables.system_table(raw, compare.significance(raw), readings=readings)
    assert frame[tables.RANDOM_COLUMN].tolist() == [readings[s].percentile_random for s in frame["System"]]
    assert set(frame[tables.BAND_COLUMN]) == {"—"}  # no human bands in this calibration
