"""The Agreement page's input: an upload (a table of rated outputs, or a zip in WMT's mt-metrics-eval layout), the
built-in WMT16 DA example, or the Compare page's file when it has a human-score column; then the choices that read
it (the human-score column of a table; test set, language pair, reference and human scores of an mt-metrics-eval
zip), and the rated outputs read within this server's limits.

A table may also name the user's own metric columns (e.g. a COMET column) and which of them are better when lower:
they are read with the human scores, a row with a bad value in one of them listed and left out for every metric.

The uploader's key changes whenever the input comes from elsewhere (the example, the Compare page's file), so that
it no longer shows a file that is not the input.
"""

from __future__ import annotations

import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.app_pages.agreement import work
from bertscore_viz.app.state.compare import compare_input
from bertscore_viz.app.state.kept import Keyed
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.errors import BertScoreVizError, InputError
from bertscore_viz.evaluation.levels import document_keys
from bertscore_viz.files import human_scores, mqm, upload
from bertscore_viz.files.human_scores import HumanScored, find_human_column
from bertscore_viz.locations import EXAMPLES_DIR
from bertscore_viz.serving import isolated

__all__ = ["AUTO", "EXAMPLE_HELP", "EXAMPLE_LABEL", "EXAMPLE_NAME", "INPUT_KEY", "choose_input",
           "compare_upload_with_human", "current_input", "header_columns", "is_mtme", "load_example", "read_rated",
           "set_input", "uploader_key", "LOWER_KEY", "METRICS_KEY"]

#: ``{"name", "data", "origin"}`` of the input (tests may set it).
INPUT_KEY = "agreement_input"
#: How many times the input came from elsewhere than the uploader (part of the uploader's key).
_UPLOADER_VERSION = "_agr_uploader_version"
_UPLOAD_ID = "_agr_file_id"
EXAMPLE_NAME = "wmt16_da_to_english.csv"
EXAMPLE_LABEL = "Load the example"
EXAMPLE_HELP = ("WMT16 direct assessment, six language pairs into English: 3,360 machine translations, each rated "
                "by humans (DA z-scores), with one reference; the language pairs are the groups.")
#: The human-score column chooser's "find it" choice.
AUTO = "(detect)"
#: Widget keys of the user's own metric columns and of those better when lower.
METRICS_KEY, LOWER_KEY = "agr_own_metrics", "agr_lower_better"
#: The document column for context (docs/CONTEXT.md): detected, none, or a column of the file.
DOCUMENT_KEY = "agr_document"
NO_DOCUMENT = "(none)"
#: An expert MQM file's reference system and the systems not scored.
MQM_REF_KEY, MQM_LEAVE_KEY = "agr_mqm_ref", "agr_mqm_leave"


def set_input(name: str, data: bytes, origin: str) -> None:
    st.session_state[INPUT_KEY] = {"name": name, "data": data, "origin": origin}


def current_input() -> dict | None:
    return st.session_state.get(INPUT_KEY)


def uploader_key() -> str:
    return f"agr_file_{st.session_state.get(_UPLOADER_VERSION, 0)}"


def _from_elsewhere() -> None:
    """The input now comes from elsewhere: a new, empty uploader."""
    st.session_state[_UPLOADER_VERSION] = st.session_state.get(_UPLOADER_VERSION, 0) + 1


def load_example() -> None:
    """The built-in example becomes the input (a button's callback: before the page draws the uploader)."""
    set_input(EXAMPLE_NAME, (EXAMPLES_DIR / EXAMPLE_NAME).read_bytes(), "example")
    _from_elsewhere()


def _use_compare_file() -> None:
    item = compare_input()
    if item:
        set_input(item["name"], item["data"], "compare")
        _from_elsewhere()


def is_mtme(item: dict) -> bool:
    """Whether the input is a zip (read in the mt-metrics-eval layout)."""
    return item["name"].lower().endswith(".zip")


def compare_upload_with_human() -> dict | None:
    """The Compare page's input when its header has a human-score column (else None)."""
    item = compare_input()
    if not item or item.get("name", "").endswith((".parquet", ".zip")):
        return None
    table, _ = upload.read_table(item["data"][:65536] + b"\n", item["name"], max_rows=2)
    if table is None or find_human_column(list(table.columns)) is None:
        return None
    return item


def header_columns(data: bytes, name: str) -> list[str]:
    table, _ = upload.read_table(data[:65536] + b"\n", name, max_rows=2)
    return [] if table is None else [c for c in table.columns if c]


def choose_input() -> dict | None:
    """The uploader, the example button and (when the Compare page's file has human scores) its button."""
    up = st.file_uploader("Rated outputs: CSV, TSV or JSON Lines with a human-score column, a zip in WMT's "
                          "mt-metrics-eval layout, or expert MQM annotations (Google's TSV)",
                          type=["csv", "tsv", "txt", "jsonl", "json", "zip"],
                          key=uploader_key(), max_upload_size=gateway.upload_widget_mb(),
                          help=gateway.upload_help(rows=True))
    if up is not None and st.session_state.get(_UPLOAD_ID) != up.file_id:
        st.session_state[_UPLOAD_ID] = up.file_id
        set_input(up.name, up.getvalue(), "upload")
    row = st.container(horizontal=True, gap="small")  # buttons at their own width: no label cut short
    row.button(EXAMPLE_LABEL, key="agr_example", icon=":material/dataset:", help=EXAMPLE_HELP,
               on_click=load_example)
    from_compare = compare_upload_with_human()
    if from_compare is not None:
        row.button("Use the Compare page's file", key="agr_from_compare", icon=":material/leaderboard:",
                   help=f"{from_compare['name']}: it has a human-score column.", on_click=_use_compare_file)
    return current_input()


def _refused(item: dict) -> str | None:
    """Why this server does not read an uploaded file (each distinct file counted once per session), or None."""
    if item.get("origin") != "upload":
        return None
    return gateway.count_upload(item["data"], item["name"])


def _parse(item: dict, human: str | None, metrics: tuple, document: str | None = None) -> HumanScored:
    """The rated outputs (and the metric columns), read in a worker process within the deployment's limits: no
    file holds the server for the other sessions."""
    if not metrics and document is None:
        return isolated.parse_human_scores(item["data"], item["name"], human_column=human,
                                           max_cell_chars=gateway.policy().upload_cell_chars,
                                           **gateway.upload_limits())
    limits = gateway.upload_limits()
    timing = {k: limits.pop(k) for k in ("max_seconds", "max_memory_bytes")}
    try:
        return isolated.run_isolated(human_scores.parse_human_scores, item["data"], item["name"], human,
                                     max_cell_chars=gateway.policy().upload_cell_chars, metric_columns=metrics,
                                     document_column=document, what=f"The file {item['name']}", **limits, **timing)
    except BertScoreVizError as exc:
        return HumanScored([], [], [], None, None, [], [], [upload.Problem(None, None, str(exc))])


def _table(item: dict, file_key: str, column, metrics: tuple = (), lower: tuple = (),
           document: str = AUTO) -> work.Rated:
    human = None if column == AUTO else column
    doc = None if document == AUTO else ("" if document == NO_DOCUMENT else document)
    key = (file_key, "table", human, metrics, lower, doc)
    kept = work.kept_rated(key)
    if kept is not None:
        return kept
    data = _parse(item, human, metrics, doc)
    return work.keep_rated(work.Rated(data, key, document_keys(data.segment_ids, data.groups), None,
                                      f"{data.layout} layout, human scores from {data.human_column}",
                                      tuple(c for c in lower if c in data.metrics)))


def _worker_limits() -> dict:
    """The deployment's time and memory limits of a worker process that reads an upload."""
    return {k: v for k, v in gateway.upload_limits().items() if k in ("max_seconds", "max_memory_bytes")}


def _keep_only(key: str, options: list) -> None:
    """Drop from a multiselect's kept value what ``options`` no longer holds (another file, another choice)."""
    if key in st.session_state and not set(st.session_state[key]) <= set(options):
        st.session_state[key] = [c for c in st.session_state[key] if c in options]


def _within_rows(data: HumanScored, advice: str) -> HumanScored:
    """``data``, or nothing with the reason when it has more rated outputs than this server reads."""
    if len(data) <= gateway.policy().upload_rows:
        return data
    return HumanScored([], [], [], None, None, [], [], [upload.Problem(None, None, (
        f"{len(data):,} rated outputs; this server reads at most {gateway.policy().upload_rows:,}. {advice}"))])


def _own_metrics(columns: list[str], human) -> tuple[tuple, tuple]:
    """The user's own metric columns and those of them better when lower (two multiselects)."""
    options = [c for c in columns if c != human]
    for key in (METRICS_KEY, LOWER_KEY):  # kept from another file: drop what this one does not have
        _keep_only(key, options)
    c1, c2 = st.columns(2)
    chosen = c1.multiselect("Your own metric columns", options, key=METRICS_KEY,
                            help="Numeric columns of scores computed elsewhere (e.g. COMET, an LLM judge): each "
                                 "joins every correlation table and the pairwise accuracy section. A row whose "
                                 "value is empty, text or not finite is listed and left out for every metric.")
    _keep_only(LOWER_KEY, chosen)
    lower = c2.multiselect("Lower is better", chosen, key=LOWER_KEY,
                           help="Columns where a lower score is better (e.g. TER, an error count): their scores "
                                "are negated for every agreement statistic and their name says '(negated)'.")
    return tuple(chosen), tuple(c for c in chosen if c in lower)


def _choice(label: str, options: list, key: str, **kwargs):
    """A selectbox whose kept value is dropped when the options no longer hold it (another file)."""
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]
    return st.selectbox(label, options, key=key, **kwargs)


def _mtme(item: dict, file_key: str) -> work.Rated:
    """Test set, language pair, reference and human scores of an mt-metrics-eval zip, read once per choice."""
    # the zip is listed and read in a worker process within the deployment's limits, as every upload is
    limits = _worker_limits()
    listed = work.extra().get("mtme_catalogue")
    if listed is None or listed.key != file_key:
        work.extra()["mtme_catalogue"] = Keyed(file_key, isolated.mtme_catalogue(item["data"], item["name"], **limits))
    zip_name, catalogue = work.extra()["mtme_catalogue"].value
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        test_set = _choice("Test set", list(catalogue), "agr_mtme_set", format_func=lambda t: t or zip_name)
    with c2:
        lp = _choice("Language pair", list(catalogue[test_set]), "agr_mtme_lp")
    kept = work.extra().get("evalset")
    if kept is None or kept.key != (file_key, test_set, lp):
        with st.spinner(f"Reading {lp} of {test_set or zip_name}…"):
            work.extra()["evalset"] = Keyed((file_key, test_set, lp),
                                            isolated.read_mtme(item["data"], item["name"], lp, test_set, **limits))
    evalset = work.extra()["evalset"].value
    humans = [k for k in evalset.human_scores if "seg" in evalset.levels(k)]
    if not humans:
        raise InputError(f"{lp} of {test_set or zip_name} has no segment-level human scores "
                         "(human-scores/LP.NAME.seg.score); the Agreement page needs them.")
    with c3:
        reference = _choice("Reference", list(evalset.references), "agr_mtme_ref",
                            help="The systems are scored against this reference; it is not scored itself.")
    with c4:
        human = _choice("Human scores", humans, "agr_mtme_human",
                        help="Segment-level scores (the level of every output); their system-level scores, when "
                             "the zip has them, are shown beside the systems' means.")
    key = (file_key, "mtme", test_set, lp, reference, human)
    kept_rated = work.kept_rated(key)
    if kept_rated is not None:
        return kept_rated
    data = _within_rows(evalset.human_scored(reference, human),
                        "Keep fewer systems or language pairs in the zip, or use the command line.")
    sys_scores = {s: float(v[0]) for s, v in evalset.human_scores[human].get("sys", {}).items()
                  if v and v[0] is not None}
    label = f"{test_set or zip_name} {lp}, reference {reference}, human scores {human}"
    return work.keep_rated(work.Rated(data, key, document_keys(data.segment_ids), sys_scores or None, label))


def _mqm(item: dict, file_key: str) -> work.Rated:
    """An expert MQM file in Google's layout (one row per marked error): its reference system and the systems not
    scored, chosen here; read once in a worker process within the deployment's limits."""
    limits = _worker_limits()
    kept = work.extra().get("mqm")
    if kept is None or kept.key != file_key:
        with st.spinner(f"Reading the MQM annotations of {item['name']}…"):
            data = isolated.run_isolated(mqm.parse_mqm_bytes, item["data"], f"The file {item['name']}",
                                         what=f"The file {item['name']}", **limits)
        work.extra()["mqm"] = Keyed(file_key, data)
    data = work.extra()["mqm"].value
    guess = mqm.guess_reference(data.systems)
    c1, c2 = st.columns(2)
    with c1:
        reference = _choice("Reference (a system of the file)", data.systems, MQM_REF_KEY,
                            **fresh(MQM_REF_KEY, index=data.systems.index(guess) if guess else 0),
                            help="Every other system's output of a segment is scored against this system's output "
                                 "of it: choose a human translation.")
    with c2:
        options = [s for s in data.systems if s != reference]
        _keep_only(MQM_LEAVE_KEY, options)
        leave = st.multiselect("Not scored", options, key=MQM_LEAVE_KEY,
                               help="Systems left out, e.g. another human translation.")
    if guess and reference == guess:
        st.caption(f"Guessed: {guess!r} is the reference (its name says a human translation); choose another above.")
    key = (file_key, "mqm", reference, tuple(leave))
    kept_rated = work.kept_rated(key)
    if kept_rated is not None:
        return kept_rated
    rated = _within_rows(data.human_scored(reference, leave),
                         "Leave out systems, or use the command line (correlate --mqm).")
    label = f"expert MQM, {len(data.systems)} systems, reference {reference}, human scores -MQM"
    return work.keep_rated(work.Rated(rated, key, document_keys(rated.segment_ids), None, label))


def read_rated(item: dict) -> work.Rated:
    """The choices that read the input (drawn here) and the rated outputs they give.

    Raises:
        InputError: an mt-metrics-eval zip that cannot be read, or that has no segment-level human scores.
    """
    file_key = upload.content_key(item["data"])
    refused = _refused(item)
    if refused is not None:
        return work.Rated(HumanScored([], [], [], None, None, [], [], [upload.Problem(None, None, refused)]),
                          (file_key, "refused"))
    if is_mtme(item):
        return _mtme(item, file_key)
    columns = header_columns(item["data"], item["name"])
    if mqm.is_mqm_header("\t".join(columns)):
        return _mqm(item, file_key)
    c1, c2 = st.columns(2)
    with c1:
        column = _choice("Human-score column", [AUTO] + columns, "agr_human")
    with c2:
        document = _choice("Document column (for context)", [AUTO, NO_DOCUMENT] + columns, DOCUMENT_KEY,
                           help="The document of each output, for document context (docs/CONTEXT.md): each output "
                                "can then be encoded after the previous outputs of its system in that document, in "
                                "the file's row order. Detected from a column named document or doc; doc_id is "
                                "not it (it names the item several systems' outputs share).")
    metrics, lower = _own_metrics(columns, column)
    return _table(item, file_key, column, metrics, lower, document)
