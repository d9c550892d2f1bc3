"""idf on the Inspect page: degenerate with one reference (explained), from a pasted corpus or from the
references of the dataset loaded on Compare, each saying where it comes from; numbers equal the engine's."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from bertscore_viz import Scorer
from bertscore_viz.app.shared.settings import Settings
from bertscore_viz.app.state.compare import CompareState
from bertscore_viz.app.state.kept import Keyed
from bertscore_viz.files import upload

from .navigation import use_settings

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "bertscore_viz" / "app" / "app_pages" / "inspect" / "page.py")
CAND, REF = "The cat sat on the mat.", "There is a cat sitting on the mat."
CORPUS = ["The cat sat on the mat.", "A dog barked at night.", "There is a cat.", "It rained all day."]


def _metrics(at):
    return [m.value for m in at.metric]


def _run(**state) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=240)
    use_settings(at, Settings(idf=True))
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def test_one_reference_explains_the_degenerate_idf_and_a_pasted_corpus_fixes_it():
    at = _run(inspect_idf_source="The reference(s) of this pair")
    assert "log((1 + 1) / (1 + 1)) = 0" in " ".join(c.value for c in at.caption)
    assert _metrics(at)[1] == "n/a" and _metrics(at)[2] == "0.0000"
    at.radio(key="inspect_idf_source").set_value("A pasted corpus").run()
    at.text_area(key="inspect_idf_corpus").set_value("\n".join(CORPUS)).run()
    assert not at.exception
    ex = Scorer(idf_sentences=CORPUS).explain(CAND, REF)
    assert _metrics(at) == [f"{ex.precision:.4f}", f"{ex.recall:.4f}", f"{ex.f1:.4f}"]
    assert any(c.value == "idf from a pasted corpus of 4 sentence(s)." for c in at.caption)
    assert ex.signature.idf_source.startswith("corpus-4-")  # issue 23: the signature says where idf came from
    assert _signatures(at) == {str(ex.signature)}


def test_idf_from_the_compare_dataset():
    data = (ROOT / "bertscore_viz" / "examples" / "systems_example.csv").read_bytes()
    ds = upload.parse_upload(data)
    at = _run(compare_state=CompareState(dataset=Keyed(("k",), ds)))
    assert at.radio(key="inspect_idf_source").value == "The references of the Compare dataset"
    refs = [r for group in ds.references for r in group]
    ex = Scorer(idf_sentences=refs).explain(CAND, REF)
    assert _metrics(at) == [f"{ex.precision:.4f}", f"{ex.recall:.4f}", f"{ex.f1:.4f}"]
    assert any(c.value == f"idf from the {len(refs)} references of the Compare dataset." for c in at.caption)
    assert _signatures(at) == {str(ex.signature)} and f"_idf-corpus-{len(refs)}-" in str(ex.signature)


def _signatures(at) -> set[str]:
    """The signatures the page shows for its numbers (its "Signature: ..." caption)."""
    return {c.value.replace("\\", "")[len("Signature: "):] for c in at.caption if c.value.startswith("Signature: ")}
