"""Is the metric fooled? The stress test of BERTScore on the example, the Compare page's dataset or a file.

Steps: the pairs (the WMT16 DA example, one system of the Compare page's dataset, or one system of an uploaded file;
at most the deployment's AUDIT_PAIRS, a seeded sample above the number asked) -> the perturbations (English rules only
when the sidebar's language is English) and their seed -> one model pass at every layer on a click, kept in the
session -> the table at the sidebar's layer, the chart by layer, the examples with both explanations one click away,
the downloads. What is computed: docs/AUDIT.md. Tests may put ``{"name", "data"}`` into
``st.session_state["audit_work"]["upload"]``.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.app_pages.audit import view
from bertscore_viz.app.shared.bounds import bound, named
from bertscore_viz.app.shared.messages import escape_markdown, show_error, show_warnings
from bertscore_viz.app.shared.settings import current_settings
from bertscore_viz.app.state.compare import compare_input
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation.perturb import PERTURBATIONS
from bertscore_viz.files import upload

SOURCE_KEY = "audit_source"
SOURCE_EXAMPLE = "The example"
SOURCE_COMPARE = "The Compare page's dataset"
SOURCE_FILE = "A file"
SOURCES = [SOURCE_EXAMPLE, SOURCE_COMPARE, SOURCE_FILE]
PERTURBATIONS_KEY = "audit_perturbations"
SYSTEM_KEY = "audit_system"
FILE_KEY = "audit_file"
MAX_SEED = 2**31 - 1


def _sample_controls(total: int) -> tuple[int, int]:
    """How many pairs, and which when the data have more (a seeded sample)."""
    left, right = st.columns(2)
    most = max(2, bound("audit_pairs"))
    n = int(left.number_input(
        "Pairs to audit", 2, most, key="audit_pairs", **fresh("audit_pairs", value=min(view.DEFAULT_PAIRS, most)),
        help=f"At most {most:,} {named('audit_pairs')}: about ten sentences are embedded per pair at every layer. "
             "Data with more pairs are sampled at random, with the sample seed."))
    seed = int(right.number_input("Sample seed", 0, MAX_SEED, key="audit_sample_seed",
                                  **fresh("audit_sample_seed", value=0), disabled=total <= n,
                                  help="Which pairs are drawn when the data have more pairs than asked for."))
    return n, seed


def _system(ds: upload.Dataset) -> str:
    """The system whose outputs are the candidates (one system: another system's output for the same segment
    would not be an unrelated text)."""
    names = ds.system_names
    if len(names) == 1:
        st.caption(f"Candidates: the outputs of {escape_markdown(names[0])}.")
        return names[0]
    if st.session_state.get(SYSTEM_KEY) not in names:
        st.session_state[SYSTEM_KEY] = names[0]
    return st.selectbox("System whose outputs are the candidates", names, key=SYSTEM_KEY,
                        help="One system at a time: the unrelated candidate of a segment is another segment's "
                             "output of the same system.")


def _uploaded() -> dict | None:
    """The uploader; a new file becomes the page's file (kept in the session after a visit to another page)."""
    up = st.file_uploader("Outputs and references: CSV, TSV or JSON Lines (the Compare page's layouts, or two columns "
                          "candidate and reference)", type=["csv", "tsv", "txt", "jsonl", "json"], key=FILE_KEY,
                          max_upload_size=gateway.upload_widget_mb(), help=gateway.upload_help(rows=True))
    work = view.work()
    if up is not None and work.get("upload_id") != up.file_id:
        work.update(upload={"name": up.name, "data": up.getvalue()}, upload_id=up.file_id)
    return work.get("upload")


def _from_dataset(ds: upload.Dataset | None, source: str) -> view.AuditInput | None:
    if ds is None:
        return None
    view.show_problems(ds)
    if not ds.ok:
        return None
    system = _system(ds)
    n, seed = _sample_controls(ds.n_segments)
    return view.dataset_input(ds, system, source, n, seed)


def _data() -> view.AuditInput | None:
    """The pairs to audit, from the chosen source; None after saying what is missing."""
    source = st.radio("Pairs from", SOURCES, key=SOURCE_KEY, horizontal=True,
                      captions=[view.EXAMPLE_LABEL, "one system of the file loaded there, as mapped there",
                                "one system of a file of yours"])
    if source == SOURCE_EXAMPLE:
        n, seed = _sample_controls(view.example_size())
        return view.example_input(n, seed)
    if source == SOURCE_COMPARE:
        ds = view.compare_dataset()
        if ds is None:
            st.info("The Compare page has no dataset in this session yet: load a file (or its example) there; its "
                    "column mapping is used here.", icon=":material/leaderboard:")
            return None
        return _from_dataset(ds, f"the Compare page's file {(compare_input() or {}).get('name', '')}".strip())
    item = _uploaded()
    if item is None:
        st.info("Upload a file: one row per segment with columns candidate and reference (or a column per system), "
                "or one row per system and segment.", icon=":material/upload_file:")
        return None
    st.caption(f"File: {escape_markdown(item['name'])} ({upload.describe_size(len(item['data']))}).")
    return _from_dataset(view.file_dataset(item["data"], item["name"]), f"the file {item['name']}")


def _choices(lang: str) -> tuple[list[str], int]:
    """The perturbations to run and their seed."""
    offered, left_out = view.choices(lang)
    kept = st.session_state.get(PERTURBATIONS_KEY)
    if kept is not None:  # English-only ones chosen earlier, then the language changed
        st.session_state[PERTURBATIONS_KEY] = [p for p in kept if p in offered]
    left, right = st.columns([4, 1])
    chosen = left.multiselect("Perturbations", offered, key=PERTURBATIONS_KEY,
                              **fresh(PERTURBATIONS_KEY, default=offered),
                              help="`unrelated` (another segment's candidate) always runs: it is the reference "
                                   "point of the relative drop.")
    seed = int(right.number_input("Perturbation seed", 0, MAX_SEED, key="audit_seed", **fresh("audit_seed", value=0),
                                  help="The same seed gives the same perturbed texts on any machine."))
    if left_out:
        st.caption(f"Not offered for the sidebar's language ({escape_markdown(lang)}): "
                   f"{escape_markdown(', '.join(left_out))}: their rules are English. Set the sidebar's language to "
                   "en if the candidates are English (the example's are).")
    with st.expander("What each perturbation does", icon=":material/help:"):
        st.dataframe(pd.DataFrame([{"perturbation": p.name, "languages": ", ".join(p.languages or ("any",)),
                                    "what it does": p.description} for p in PERTURBATIONS]),
                     hide_index=True, width="stretch", key="audit_perturbation_list")
    return chosen, seed


def _run(settings, inp: view.AuditInput, perturbations: list[str], seed: int, key: tuple):
    """The button, with what it will cost; the audit when clicked, else None."""
    n_sentences = view.planned_count(inp, perturbations, seed, settings.lang)
    st.caption(f"To audit: {escape_markdown(inp.describe())}. One model pass over {n_sentences:,} distinct sentences "
               "(originals, references and perturbed candidates) at every layer of the model.")
    if not st.button("Run the audit", key="audit_run", type="primary", icon=":material/play_arrow:"):
        return None
    return view.run_audit(settings, inp, perturbations, seed, key)


def _header(result, inp: view.AuditInput, layer: int) -> None:
    st.success(f"Audited {escape_markdown(inp.describe())}; perturbation seed {result.seed}. Raw F1 at every layer "
               "from one model pass, kept in this session.", icon=":material/task_alt:")
    st.caption("Signature at the sidebar's layer: " + escape_markdown(result.signatures[result.layer_position(layer)]))
    show_warnings(result.warnings)
    for note in result.skipped:
        st.caption(escape_markdown(f"Left out: {note}."))
    sentence = view.lead(result, layer)
    if sentence:
        st.markdown(escape_markdown(sentence))


def _views(result, inp: view.AuditInput, settings, key: tuple) -> None:
    layer = settings.resolved_layer()
    if layer not in result.layers:  # a model with fewer layers than asked: its last
        layer = result.layers[-1]
    _header(result, inp, layer)
    st.subheader(f"Each perturbation at layer {layer} (the sidebar's)")
    view.show_table(result, layer)
    st.subheader("By layer")
    view.show_chart(result, layer)
    st.subheader("Examples")
    view.show_examples(result, inp, settings, layer, key)
    st.subheader("Downloads")
    view.show_downloads(result, inp)


def main() -> None:
    st.title("Is the metric fooled?")
    st.caption("A stress test of BERTScore on your data: each candidate is made worse in named, documented ways "
               "(negation added or removed, a number or a name changed, words shuffled, half dropped, the text "
               "repeated, typos) and scored against its reference next to the original and next to an unrelated "
               "candidate. Does F1 drop, and by how much compared with a text that has nothing to do with the "
               "reference? Definitions: docs/AUDIT.md.")
    settings = current_settings()
    inp = _data()
    if inp is None:
        return
    perturbations, seed = _choices(settings.lang)
    if not perturbations:
        st.info("Choose at least one perturbation.", icon=":material/info:")
        return
    try:
        key = view.audit_key(settings, inp, perturbations, seed)
        result = view.kept_audit(key)
        if result is None:
            result = _run(settings, inp, perturbations, seed, key)
    except BertScoreVizError as exc:
        show_error(exc)
        return
    if result is not None:
        _views(result, inp, settings, key)


main()
