"""Inspect: one candidate against one or more references, explained token by token."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from bertscore_viz.app.shared.bounds import bound, named
from bertscore_viz.app.shared.calibration_lengths import calibration_lengths
from bertscore_viz.app.shared.explain_view import explain_or_raw, render_explanation
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.app.shared.settings import current_settings
from bertscore_viz.app.state.compare import dataset_references
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation.calibration import find_calibration, missing_calibration_message

KEY = "inspect"
#: name -> (candidate, [references]); the first fills the page on arrival.
EXAMPLES = {
    "Paraphrase": ("The cat sat on the mat.", ["There is a cat sitting on the mat."]),
    "Unrelated sentences": ("The stock market fell sharply this morning.",
                            ["My grandmother grows tomatoes in her garden."]),
    "Cause and effect swapped": ("The match was cancelled because it rained.",
                                 ["It rained because the match was cancelled."]),
    "Paper: paraphrase without shared words": ("consumers prefer imported cars", ["people like foreign cars"]),
    "Paper: shared words, other meaning": ("people like visiting places abroad", ["people like foreign cars"]),
    "Paper: two references": ("people like foreign cars",
                              ["consumers prefer imported cars", "people like visiting places abroad"]),
}
# Bounds (deployment settings, shared/bounds.py): references of a pair (INSPECT_REFERENCES); the longest candidate or
# reference typed, as a cell of an upload (UPLOAD_CELL_CHARS: the model reads at most 512 tokens anyway); the
# pasted idf corpus (IDF_CORPUS_MB, IDF_CORPUS_LINES).


def _ref_key(i: int) -> str:
    return f"{KEY}_reference_{i}"


def _load_example(name: str) -> None:
    cand, refs = EXAMPLES[name]
    st.session_state[f"{KEY}_candidate"] = cand
    for i, ref in enumerate(refs):
        st.session_state[_ref_key(i)] = ref
    st.session_state[f"{KEY}_n_refs"] = len(refs)


def _on_example() -> None:
    name = st.session_state.get(f"{KEY}_example")
    if name in EXAMPLES:
        _load_example(name)


def _on_edit() -> None:
    """Typed text is no longer the example: the picker stops naming it."""
    name = st.session_state.get(f"{KEY}_example")
    if name in EXAMPLES:
        cand, refs = EXAMPLES[name]
        n = st.session_state.get(f"{KEY}_n_refs", 1)
        typed = (st.session_state.get(f"{KEY}_candidate"), [st.session_state.get(_ref_key(i)) for i in range(n)])
        if typed != (cand, list(refs)):
            st.session_state[f"{KEY}_example"] = None


def _add_reference() -> None:
    n = st.session_state[f"{KEY}_n_refs"]
    st.session_state[_ref_key(n)] = ""
    st.session_state[f"{KEY}_n_refs"] = min(bound("inspect_references"), n + 1)


def _remove_reference() -> None:
    st.session_state[f"{KEY}_n_refs"] = max(1, st.session_state[f"{KEY}_n_refs"] - 1)


def _init() -> None:
    if f"{KEY}_n_refs" not in st.session_state:
        _load_example(next(iter(EXAMPLES)))


def _inputs() -> tuple[str, list[str]]:
    """The text areas: one candidate, one or more references."""
    st.selectbox("Example pair", list(EXAMPLES), index=None, key=f"{KEY}_example", on_change=_on_example,
                 placeholder="Pick an example to fill the fields…")
    n = st.session_state[f"{KEY}_n_refs"]
    cols = st.columns(2)
    with cols[0]:
        cand = st.text_area("Candidate", key=f"{KEY}_candidate", height=100, on_change=_on_edit,
                            max_chars=bound("upload_cell_chars"),
                            help="The text being evaluated (precision is over its tokens).")
    refs = []
    with cols[1]:
        for i in range(n):
            refs.append(st.text_area("Reference" if i == 0 else f"Reference {i + 1}", key=_ref_key(i),
                                     on_change=_on_edit, max_chars=bound("upload_cell_chars"),
                                     height=100 if n == 1 else 68,
                                     help="What the candidate should say (recall is over its tokens)."))
        row = st.container(horizontal=True, gap="small")
        row.button("Add reference", key=f"{KEY}_add_ref", on_click=_add_reference, icon=":material/add:",
                   disabled=n >= bound("inspect_references"),
                   help=f"At most {bound('inspect_references')} references {named('inspect_references')}.")
        if n > 1:
            row.button("Remove last", key=f"{KEY}_remove_ref", on_click=_remove_reference,
                       icon=":material/remove:")
    return cand or "", [r or "" for r in refs]


def _validate(candidate: str, references: list[str]) -> str | None:
    """A message for input that cannot be explained, else None."""
    if not candidate.strip() and not any(r.strip() for r in references):
        return "Type a candidate and a reference (or pick an example) to see how they match."
    if not candidate.strip():
        return "The candidate is empty: type the text to evaluate in “Candidate”."
    if not any(r.strip() for r in references):
        return "The reference is empty: type what the candidate should say in “Reference”."
    return None


IDF_PAIR = "The reference(s) of this pair"
IDF_PASTED = "A pasted corpus"
IDF_COMPARE = "The references of the Compare dataset"


def _idf_source(n_refs: int) -> tuple[list[str] | None, str]:
    """Where idf comes from when it is on: the pair's references, a pasted corpus, or the Compare dataset.

    Returns:
        ``(sentences or None for the pair's references, a sentence saying where idf comes from)``.
    """
    compare_refs = dataset_references()
    options = [IDF_PAIR, IDF_PASTED] + ([IDF_COMPARE] if compare_refs else [])
    if st.session_state.get(f"{KEY}_idf_source") not in options:
        # what is used: the pair's references, unless one reference and a Compare dataset to take idf from (a
        # pasted corpus preselected with nothing pasted named a source that was not the one used)
        st.session_state[f"{KEY}_idf_source"] = IDF_COMPARE if n_refs == 1 and compare_refs else IDF_PAIR
    with st.expander("idf: where the document frequencies come from", expanded=True, icon=":material/functions:"):
        if n_refs == 1:
            st.caption("With one reference, idf from the pair is degenerate: every reference token occurs in "
                       "all (one) reference sentences, so its idf is log((1 + 1) / (1 + 1)) = 0, recall is "
                       "undefined and F1 is 0. Take idf from a corpus: paste one, or use the references of the "
                       "dataset loaded on the Compare page.")
        source = st.radio("idf from", options, key=f"{KEY}_idf_source", horizontal=True)
        if source == IDF_PASTED:
            text = st.text_area("Corpus for idf (one sentence per line)", key=f"{KEY}_idf_corpus", height=120,
                                max_chars=bound("idf_corpus_bytes"),
                                placeholder="Paste the references of your test set, one per line.")
            lines = [x.strip() for x in (text or "").splitlines() if x.strip()]
            if len(lines) > bound("idf_corpus_lines"):
                st.warning(f"The corpus has {len(lines):,} sentences; idf is computed from the first "
                           f"{bound('idf_corpus_lines'):,} {named('idf_corpus_lines')}.", icon=":material/warning:")
                lines = lines[:bound("idf_corpus_lines")]
            if not lines:
                st.info("Paste at least one sentence; until then idf comes from the pair's reference(s).",
                        icon=":material/info:")
                return None, "idf from the reference(s) of this pair"
            return lines, f"idf from a pasted corpus of {len(lines):,} sentence(s)"
        if source == IDF_COMPARE and compare_refs:
            return compare_refs, f"idf from the {len(compare_refs):,} references of the Compare dataset"
    return None, "idf from the reference(s) of this pair"


def main() -> None:
    st.title("Inspect a pair")
    st.caption("Why did this pair score what it scored? Which candidate token matched which reference token, "
               "how much each counted, and what rescaling does.")
    _init()
    settings = current_settings()
    candidate, references = _inputs()
    problem = _validate(candidate, references)
    if problem:
        st.info(problem, icon=":material/info:")
        return
    while len(references) > 1 and not references[-1].strip():
        references = references[:-1]  # a reference box just added and not filled yet
    idf_sentences, idf_note = _idf_source(len(references)) if settings.idf else (None, "")
    if settings.idf:
        st.caption(idf_note + ".")
    cand_context, ref_context = _context_inputs()
    if ref_context or cand_context:  # the signature names the context the pair was encoded with
        settings = replace(settings, context=max(len(ref_context), len(cand_context)),
                           context_source="ref" if cand_context == ref_context else "own")
    try:
        explanation, _ = explain_or_raw(settings, candidate, references, idf_sentences, cand_context, ref_context)
    except BertScoreVizError as exc:
        show_error(exc)
        return
    st.divider()
    _where_it_stands(explanation, settings, pair_words(candidate, references))
    render_explanation(explanation, settings, key=KEY, long_switch=True)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def _context_inputs() -> tuple[list[str], list[str]]:
    """The document context typed for the pair (docs/CONTEXT.md): the sentences before the reference, and before
    the candidate (default: the reference's, as the paper encodes both sides); empty: the pair alone."""
    with st.expander("Document context (optional)", icon=":material/article:"):
        st.caption("The sentences before the pair in its document, one per line, oldest first. Each side is "
                   "encoded after them and only the pair's own tokens are matched (Vernikos et al., WMT 2022); "
                   "the explanation shows them greyed and which matches they changed.")
        ref_ctx = _lines(st.text_area("Sentences before the reference", key=f"{KEY}_ref_context", height=80,
                                      max_chars=bound("upload_cell_chars")))
        own = st.text_area("Sentences before the candidate (empty: the reference's, the paper's choice)",
                           key=f"{KEY}_cand_context", height=80, max_chars=bound("upload_cell_chars"))
    return (_lines(own) or ref_ctx), ref_ctx


def pair_words(candidate: str, references: list[str]) -> float:
    """The mean length in words of a pair's texts (the candidate and every reference)."""
    texts = [candidate] + list(references)
    return sum(len(t.split()) for t in texts) / len(texts)


def _where_it_stands(explanation, settings, words: float) -> None:
    """The pair's raw F1 on the calibration ladder of the model, layer and language: among random pairs of
    unrelated sentences, and among outputs humans rated (docs/CALIBRATION.md), with where the calibration's data
    come from; where no calibration exists, why and how to compute one; texts (``words``: their mean length) far
    longer or shorter than the calibration's are not placed, and the page says why in one line."""
    model = explanation.signature.model
    try:
        calibration = find_calibration(model, settings.lang, settings.idf)
        if calibration is None:
            st.caption(escape_markdown(missing_calibration_message(model, settings.lang, settings.idf)))
            return
        lengths = calibration_lengths(calibration)
        if lengths is not None and not lengths.applies(words):
            st.caption(escape_markdown(lengths.reason(words)))
            return
        reading = calibration.reading(explanation.f1, settings.resolved_layer())
    except BertScoreVizError as exc:  # a layer the calibration does not cover
        st.caption(escape_markdown(str(exc)))
        return
    st.markdown(f"**Where F1 {explanation.f1:.4f} stands:** {escape_markdown(reading.sentence())}.",
                help="The pair's raw F1 placed among the F1 of random pairs of unrelated sentences (the pairs the "
                     "baseline is computed from) and, where rated data exists, among outputs humans rated in the "
                     "bottom, middle and top third, for this model, layer and language. Rescaling does not move a "
                     "percentile.")
    if lengths is not None:
        st.caption(escape_markdown(f"Bands {lengths.caption()}; texts far outside that are not placed."))


main()
