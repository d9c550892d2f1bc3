"""Document context in ``compare`` and in an upload (issue 45, inputs): documents from ``--doc-ids FILE`` and from
a ``doc_id`` column; every system's segments get exactly the numbers ``Scorer(context=k).score(..., doc_ids=...)``
gives that system alone (one model pass for all systems must not lend one system's segments to another's context);
segments without a document are scored alone and counted. Texts written here; the real bundled model."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.cli.entry import main
from bertscore_viz.evaluation import compare
from bertscore_viz.files import upload

REFS = ["The council met on Monday.", "It approved the plan for the bridge.", "Work will start in May.",
        "The mayor said it was overdue.", "Rain fell all week in the valley.", "The river rose by two metres.",
        "Farmers moved their animals uphill.", "Nobody was hurt."]
DOCS = ["bridge", "bridge", "bridge", "bridge", "", "flood", "flood", "flood"]
SYSTEMS = {"A": ["The council met Monday.", "He approved the plan of the bridge.", "Works start in May.",
                 "The mayor said this was late.", "Rain fell the whole week in the valley.",
                 "The river rose two metres.", "The farmers moved animals up the hill.", "No one was hurt."],
           "B": ["Council meeting on Monday.", "It approved the bridge plan.", "The work starts in May.",
                 "The mayor called it overdue.", "It rained all week in the valley.", "The river went up two metres.",
                 "Farmers took their animals uphill.", "Nobody got hurt."]}


def cli_json(*argv: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["compare", *argv, "-q", "--json"]) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("ctx")
    (root / "refs.txt").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    (root / "docs.txt").write_text("\n".join(DOCS) + "\n", encoding="utf-8")
    for name, lines in SYSTEMS.items():
        (root / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("source", ["ref", "own"])
def test_compare_with_doc_ids_equals_each_system_scored_alone(files, source):
    got = cli_json("-r", str(files / "refs.txt"), "-s", str(files / "A.txt"), str(files / "B.txt"), "--doc-ids",
                   str(files / "docs.txt"), "--context", "2", "--context-source", source)
    assert got["signature"].endswith(f"_ctx:2-{source}")
    sc = Scorer(context=2, context_source=source)
    for name, outputs in SYSTEMS.items():
        alone = sc.score(outputs, REFS, doc_ids=DOCS)
        mine = np.array([seg["systems"][name]["f1"] for seg in got["segments"]])
        np.testing.assert_allclose(mine, alone.f1, atol=1e-6)
    plain = cli_json("-r", str(files / "refs.txt"), "-s", str(files / "A.txt"), str(files / "B.txt"))
    before = np.array([seg["systems"]["A"]["f1"] for seg in plain["segments"]])
    after = np.array([seg["systems"]["A"]["f1"] for seg in got["segments"]])
    assert after[4] == pytest.approx(before[4], abs=1e-6)  # no document: scored alone, as without context
    assert not np.allclose(after[[1, 2, 3]], before[[1, 2, 3]], atol=1e-4)  # the context changed the vectors


def test_a_doc_id_column_of_an_upload_gives_the_same_numbers():
    rows = ["system,candidate,reference,segment_id,doc_id"]
    for name, outputs in SYSTEMS.items():
        rows += [f'{name},"{c}","{r}",{i + 1},{d}' for i, (c, r, d) in enumerate(zip(outputs, REFS, DOCS))]
    ds = upload.parse_upload("\n".join(rows).encode(), "docs.csv")
    assert ds.mapping.document == "doc_id" and ds.doc_ids == DOCS
    assert not [p for p in ds.problems if "doc_id" in p.problem]  # the documented name: no guess to say
    sc = Scorer(context=1)
    cstats = compare.score_dataset(sc, ds)
    res = compare.results_for(sc, cstats, sc.layer, False, False)
    for name, outputs in SYSTEMS.items():
        np.testing.assert_allclose(res.results[name].f1, sc.score(outputs, REFS, doc_ids=DOCS).f1, atol=1e-6)
    assert compare.dataset_key(ds) != compare.dataset_key(upload.Dataset(ds.systems, ds.references, None,
                                                                         ds.segment_ids, ds.rows))


def test_doc_ids_of_the_wrong_length_are_refused(files, tmp_path):
    (tmp_path / "short.txt").write_text("a\nb\n")
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["compare", "-r", str(files / "refs.txt"), "-s", str(files / "A.txt"), str(files / "B.txt"),
                     "--doc-ids", str(tmp_path / "short.txt"), "--context", "1", "-q"])
    assert code == 2 and "has 2 lines; the segments are 8" in err.getvalue()


def test_batched_integrations_refuse_context_with_the_way_that_works():
    """A 🤗 dataset is scored batch by batch and a harness sample has no document: context there would silently
    score every segment alone, so it is refused with the API call that does it."""
    import datasets

    from bertscore_viz.errors import InputError
    from bertscore_viz.integrations.harness.pairs import options_from
    from bertscore_viz.integrations.hf_datasets import score_dataset

    with pytest.raises(InputError, match="not offered in the harness.*doc_ids=ids"):
        options_from({"context": 2})
    with pytest.raises(InputError, match="not offered for datasets.*doc_ids=ids"):
        score_dataset(datasets.Dataset.from_dict({"c": ["a cat"], "r": ["the cat"]}), "c", "r", context=1)


def test_mt_metrics_eval_documents_and_metric_scores_reach_compare(tmp_path):
    """A test set in WMT's layout: documents/LP.docs gives the documents of --context, metric-scores/ a metric of
    one's own (--mtme-scores): the numbers equal the engine with the same documents and the file's own scores."""
    root = tmp_path / "wmtx"
    for folder in ("sources", "references", "system-outputs/en-de", "documents", "metric-scores/en-de"):
        (root / folder).mkdir(parents=True)
    (root / "sources" / "en-de.txt").write_text("\n".join(f"src {i}" for i in range(len(REFS))) + "\n")
    (root / "references" / "en-de.refA.txt").write_text("\n".join(REFS) + "\n")
    (root / "documents" / "en-de.docs").write_text("\n".join(f"news {d or 'solo'}{'' if d else i}"
                                                             for i, d in enumerate(DOCS)) + "\n")
    judge = {}
    for s, outputs in SYSTEMS.items():
        (root / "system-outputs" / "en-de" / f"{s}.txt").write_text("\n".join(outputs) + "\n")
        judge[s] = [round(0.1 * i + (0.5 if s == "B" else 0.0), 3) for i in range(len(REFS))]
    (root / "metric-scores" / "en-de" / "judge-refA.seg.score").write_text(
        "\n".join(f"{s} {v}" for s in SYSTEMS for v in judge[s]) + "\n")
    got = cli_json("--mt-metrics-eval", str(root), "--lp", "en-de", "--context", "1", "--mtme-scores", "judge-refA",
                   "--metric", "judge-refA")
    docs = [d or f"solo{i}" for i, d in enumerate(DOCS)]  # the docs file names every segment's document
    sc = Scorer(context=1)
    for name, outputs in SYSTEMS.items():
        mine = np.array([seg["systems"][name]["f1"] for seg in got["segments"]])
        np.testing.assert_allclose(mine, sc.score(outputs, REFS, doc_ids=docs).f1, atol=1e-6)
        assert got["own_metrics"]["judge-refa"]["scores"][name] == pytest.approx(float(np.mean(judge[name])))
    assert got["significance"]["metric"] == "judge-refA" and got["systems"][0]["system"] == "B"
