"""The Compare page's input: the file (upload, example, or kept from earlier in the session), its column mapping
(detected, correctable), the dataset built from it, the list of problems (bad rows are listed, good rows kept), and
what to do with segments whose reference is empty."""

from __future__ import annotations

import functools
from dataclasses import replace

import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.shared.messages import escape_markdown
from bertscore_viz.app.shared.problems import show_problems_table
from bertscore_viz.app.state.compare import ParsedTable, compare_input, compare_state, forget_input, set_input
from bertscore_viz.app.state.kept import Keyed
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.evaluation import compare
from bertscore_viz.files import upload
from bertscore_viz.locations import EXAMPLES_DIR

__all__ = ["EXAMPLE", "dataset", "empty_references", "format_help", "human_rating_columns", "input_file", "is_example",
           "kept_file", "mapping_control", "read_table", "show_problems"]

EXAMPLE = EXAMPLES_DIR / "systems_example.csv"
NONE = "(none)"


# --- input --------------------------------------------------------------------------------------------------------
def _adopt(up) -> None:
    """The uploader's file becomes the input, once per file (its ``file_id``): later runs with the same file in
    the uploader do not undo "Load example" or "Forget"."""
    set_input(up.name, up.getvalue(), "upload")
    compare_state().upload_id = up.file_id


def _on_upload() -> None:
    """The user added or removed a file (a callback: a revisit of the page, with an empty uploader, is not a
    removal, so the upload and its scores stay in the session)."""
    up = st.session_state.get("cmp_file")
    if up is not None:
        _adopt(up)
    elif (compare_input() or {}).get("origin") == "upload":
        forget_input()


def input_file() -> dict | None:
    left, right = st.columns([4, 1], vertical_alignment="bottom")
    kept = compare_input()
    label = ("System outputs (CSV, TSV or JSON Lines), a zip of WMT's mt-metrics-eval layout, or scores.parquet of "
             "`score --ray`" if not kept else
             f"Replace the file kept in this session ({kept['name']}) with another")  # the box is empty on return
    with left:
        up = st.file_uploader(label,
                              type=["csv", "tsv", "txt", "jsonl", "json", "parquet", "zip"],
                              key="cmp_file", on_change=_on_upload,
                              max_upload_size=gateway.upload_widget_mb(),  # this server's limits (docs/DEPLOY.md)
                              help=gateway.upload_help(rows=True))
    with right:
        if st.button("Load example", key="cmp_load_example", icon=":material/dataset:",
                     help="4 systems x 30 segments shipped with the app"):
            set_input(EXAMPLE.name, EXAMPLE.read_bytes(), "example")
    if up is not None and compare_state().upload_id != up.file_id:
        _adopt(up)  # a file the callback did not see (e.g. the widget came back with one)
    return compare_input()


def kept_file(name: str, data: bytes) -> None:
    """Which file the page is showing, and a way to forget it: after a visit to another page the uploader is
    empty, but the file and its scores are kept in the session."""
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    row.caption(f"File: {escape_markdown(name)} ({len(data):,} bytes), kept in this session.")
    row.button("Forget", key="cmp_forget", on_click=forget_input, icon=":material/delete:", type="tertiary",
               help="Forget this file and its scores (the next file starts a new model pass).")


def format_help() -> None:
    st.info("Upload a file of system outputs, or press **Load example**.", icon=":material/upload_file:")
    wide, long = st.columns(2)
    with wide:
        st.caption("Wide: one row per segment, one column per system (several references: reference, reference_2)")
        st.code("segment_id,reference,system_a,system_b\n1,The cat sat.,A cat sat.,The cat sits.", language=None)
    with long:
        st.caption("Long: one row per system and segment")
        st.code("system,segment_id,candidate,reference\nsystem_a,1,A cat sat.,The cat sat.\n"
                "system_b,1,The cat sits.,The cat sat.", language=None)
    st.caption("WMT test sets: a zip of a test set in the mt-metrics-eval layout (sources/, references/, "
               "system-outputs/: `zip -r wmt22.zip wmt22`); choose the language pair and the reference after the "
               "upload, and download our scores back as mt-metrics-eval files.")


def read_table(data: bytes, name: str, fkey: str):
    state = compare_state()
    if state.table and state.table.key == fkey:
        return state.table.table, state.table.problems
    table, problems = gateway.read_upload(data, name)  # the deployment's upload limits
    state.table = ParsedTable(fkey, table, problems)
    return table, problems


def human_rating_columns(mapping: upload.ColumnMapping, cols: list[str]) -> tuple[str, ...]:
    """The file's human-score columns that fit the layout as a metric of one's own: ``human_S`` / ``S_human`` of a
    system column (wide), a column of scores per row (long)."""
    humans = upload.human_score_columns(cols)
    taken = set(mapping.references) | set(mapping.systems) | set(mapping.scores) | {
        mapping.system, mapping.candidate, mapping.source, mapping.segment_id}
    if mapping.layout == "long":
        return tuple(c for c, system in humans.items() if not system and c not in taken)
    return tuple(c for c, system in humans.items() if system in mapping.systems and c not in taken)


def mapping_control(table: upload.Table, fkey: str) -> tuple[upload.ColumnMapping, str, list[upload.Problem]]:
    """The detected mapping, correctable in an expander (widget keys are per file)."""
    cols = [c for c in dict.fromkeys(table.columns) if c]
    found = upload.detect_columns(cols, table)  # every guess (a human-score, segment-id, reference column) is said
    detected = found.mapping
    if detected is not None:  # human ratings join as a metric of one's own (what a difference means to humans)
        detected = replace(detected, scores=detected.scores + human_rating_columns(detected, cols))
    guess = detected or upload.ColumnMapping("wide", (), tuple(cols))
    with st.expander("Column mapping and empty cells", expanded=detected is None, icon=":material/table_chart:"):
        st.caption(f"Read as {table.kind.upper()} with {len(table.rows):,} data rows. "
                   + ("Detected automatically; correct it here if needed." if detected else
                      "Could not detect the columns: pick them here."))
        if detected is not None:
            st.caption(escape_markdown(upload.mapping_line(detected, found.guesses, found.unused)))
        layout = st.radio("Layout", ["wide", "long"], **fresh(f"cmp_layout_{fkey}", index=0 if guess.layout == "wide"
                                                               else 1), horizontal=True, key=f"cmp_layout_{fkey}",
                          captions=["one row per segment, a column per system", "one row per system and segment"])
        refs = st.multiselect("Reference column(s)", cols,
                              **fresh(f"cmp_refs_{fkey}", default=[c for c in guess.references if c in cols]),
                              key=f"cmp_refs_{fkey}", help="Several columns = several references per segment.")
        opt = [NONE] + cols
        c1, c2, c0 = st.columns(3)
        source = c1.selectbox("Source column (optional)", opt, key=f"cmp_src_{fkey}",
                              **fresh(f"cmp_src_{fkey}", index=opt.index(guess.source or NONE)))
        seg = c2.selectbox("Segment id column (optional)", opt, key=f"cmp_seg_{fkey}",
                           **fresh(f"cmp_seg_{fkey}", index=opt.index(guess.segment_id or NONE)))
        doc = c0.selectbox("Document id column (optional)", opt, key=f"cmp_doc_{fkey}",
                           **fresh(f"cmp_doc_{fkey}", index=opt.index(guess.document or NONE)),
                           help="For document context: a segment's previous segments are the rows before it with "
                                "the same document id (an empty cell: scored alone).")
        systems: tuple[str, ...] = ()
        sys_col = cand_col = None
        if layout == "wide":
            default = [c for c in guess.systems if c in cols] if guess.layout == "wide" else []
            systems = tuple(st.multiselect("System columns", cols, **fresh(f"cmp_sys_{fkey}", default=default),
                                           key=f"cmp_sys_{fkey}"))
        else:
            c3, c4 = st.columns(2)
            sys_col = c3.selectbox("System name column", cols,
                                   **fresh(f"cmp_syscol_{fkey}",
                                            index=cols.index(guess.system) if guess.system in cols else 0),
                                   key=f"cmp_syscol_{fkey}")
            cand_col = c4.selectbox("Output (candidate) column", cols,
                                    **fresh(f"cmp_cand_{fkey}",
                                             index=cols.index(guess.candidate) if guess.candidate in cols else 0),
                                    key=f"cmp_cand_{fkey}")
        default_scores = [c for c in guess.scores if c in cols] if guess.layout == layout else []
        scores = tuple(st.multiselect(
            "Other metrics' score columns (optional)", cols, key=f"cmp_scores_{fkey}",
            **fresh(f"cmp_scores_{fkey}", default=default_scores),
            help="Per-segment scores of another metric (COMET, an LLM judge, human ratings), compared as BERTScore "
                 "is. Long layout: the metric is named after the column. Wide layout: one column per system, named "
                 "<metric>_<system> (comet_sysA, comet_sysB). A cell that is not a number is listed and leaves its "
                 "segment out of that metric only."))
        empty_label = st.radio("Empty cells", ["Score as empty (0, with a warning)", "Leave the segment out"],
                               horizontal=True, key=f"cmp_empty_{fkey}")
    mapping = upload.ColumnMapping(layout, tuple(refs), systems, sys_col, cand_col,
                                   None if source == NONE else source, None if seg == NONE else seg, scores,
                                   None if doc == NONE else doc)
    empty = upload.EMPTY_SCORE if empty_label.startswith("Score") else upload.EMPTY_SKIP
    guesses = [g.as_problem() for g in found.guesses] if mapping == detected else []
    return mapping, empty, (list(found.problems) if detected is None else guesses)


def dataset(data: bytes, name: str, mapping, empty, fkey) -> upload.Dataset:
    """The dataset of the file for a column mapping, read and built in a worker process within the deployment's
    limits (the read problems included); kept per file and mapping."""
    key = (fkey, mapping, empty)
    state = compare_state()
    if state.dataset and state.dataset.key == key:
        return state.dataset.value
    ds = gateway.build_upload(data, name, mapping, empty)
    state.dataset = Keyed(key, ds)
    return ds


def show_problems(problems: list[upload.Problem], ok: bool) -> None:
    if not problems:
        return
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    summary = f"The file has {len(problems)} problem(s): {errors} error(s), {warnings} warning(s)."
    if not ok:
        st.error(summary + " Nothing can be scored yet; the list below says what to fix.", icon=":material/error:")
    elif errors:
        st.warning(summary + " The good rows are scored; see the list.", icon=":material/warning:")
    else:
        st.info(summary + " Everything is scored; see the list.", icon=":material/info:")
    show_problems_table(problems, "cmp_problems", f"Problems ({len(problems):,})", expanded=not ok)


@functools.lru_cache(maxsize=1)
def _example_key() -> str:
    return upload.content_key(EXAMPLE.read_bytes())


def is_example(data: bytes) -> bool:
    """The input is the shipped example (loaded with the button, or uploaded as it is)."""
    return upload.content_key(data) == _example_key()


def empty_references(ds: upload.Dataset, fkey: str) -> tuple[upload.Dataset, str | None, bool]:
    """Segments with an empty reference: one warning for the whole dataset listing them, and the choice to leave
    them out for every system (default: scored 0, as bert-score does). Returns the dataset to score, the sentence
    about them (None when no reference is empty) and whether they were left out (the answer then says so)."""
    state = compare_state()
    positions = state.once_per_dataset("trimmed", ds, "positions",
                                        lambda: compare.empty_reference_positions(ds))
    if not positions:
        return ds, None, False
    key = f"cmp_drop_empty_{fkey}"
    left_out = bool(st.session_state.get(key, False))
    note = compare.empty_reference_note(ds, positions, left_out)
    st.warning(escape_markdown(note), icon=":material/warning:")
    st.toggle("Leave out segments with an empty reference", key=key,
              help="Off (the default): an empty reference scores 0 for every system, as bert-score does, and the "
                   "segment counts in every mean and interval. On: those segments are removed for every system "
                   "before scoring (another model pass), and the answer says so.")
    if not left_out:
        return ds, note, False
    kept = state.once_per_dataset("trimmed_to", ds, "", lambda: compare.without_segments(ds, positions))
    return kept, note, True
