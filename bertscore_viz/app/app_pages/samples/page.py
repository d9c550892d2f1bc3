"""Many samples: minimum-Bayes-risk choice and support among the samples of one or many inputs.

Steps: input (typed, uploaded or the example; tests may call ``samples_view.set_input``) -> read within the page's
limits -> one consensus pass over every input at the sidebar's settings (kept in the session) -> with many inputs,
the table of choices and its downloads -> the open input: the chosen sample, the N x N matrix ordered by
consensus, each sample's tokens coloured by support, per-sentence support, and the pair view of any two samples.
What is computed: docs/MBR.md.
"""

from __future__ import annotations

import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.app_pages.samples import view
from bertscore_viz.app.shared.bounds import bound
from bertscore_viz.app.shared.messages import escape_markdown, show_error, show_warnings
from bertscore_viz.app.shared.settings import current_settings
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.consensus import UTILITIES
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.files.export import safe_csv

FILE_KEY = "samples_file"
GROUP_SIZE_KEY = "samples_group_size"
UTILITY_KEY = "samples_utility"
UTILITY_HELP = ("What the chosen sample maximises against the others: F1 (default), precision (how much of the "
                "sample the others cover) or recall (how much of the others the sample covers).")


def _on_typed() -> None:
    """Typed (or pasted) text becomes the input once it is submitted."""
    view.set_input("typed text", (st.session_state.get(view.TEXT_KEY) or "").encode("utf-8"), "typed")


def _adopt(up) -> None:
    """The uploader's file becomes the input, once per file: a file still in the uploader does not undo a later
    "Load example" or typed text."""
    view.set_input(up.name, up.getvalue(), "upload")
    view.work()["upload_id"] = up.file_id


def _on_upload() -> None:
    up = st.session_state.get(FILE_KEY)
    if up is not None:
        _adopt(up)


def _input() -> tuple[dict | None, int]:
    """The text box, the uploader with its group size, and the example. Returns the current input and the
    group size for plain-text files."""
    typed, other = st.columns([3, 2])
    typed.text_area("Samples: one per line, an empty line between inputs", key=view.TEXT_KEY, height=230,
                    max_chars=bound("samples_chars"), on_change=_on_typed,
                    placeholder="The cat sat on the mat.\nA cat was sitting on the mat.\nThe dog sat on the mat.\n\n"
                                "Second input, first sample\nSecond input, second sample",
                    help="Press Ctrl+Enter (or click outside) to use the text.")
    with other:
        up = st.file_uploader("Or a file: plain text, or JSON Lines with one input per line",
                              type=["txt", "jsonl", "ndjson", "json"], key=FILE_KEY, on_change=_on_upload,
                              max_upload_size=gateway.upload_widget_mb(), help=gateway.upload_help())
        size = st.number_input("Samples per input (plain-text files)", 0, bound("samples_per_input"),
                               key=GROUP_SIZE_KEY,
                               **fresh(GROUP_SIZE_KEY, value=0),
                               help="N: every N consecutive lines are one input. 0: an empty line between inputs, "
                                    "as in the text box. JSON Lines files say it themselves.")
        st.button("Load example", key="samples_example", on_click=view.load_example, icon=":material/dataset:",
                  help=view.EXAMPLE_LABEL)
    if up is not None and view.work().get("upload_id") != up.file_id:
        _adopt(up)  # a file the callback did not see
    return view.current_input(), int(size)


def _format_help() -> None:
    st.info("Type or paste samples, upload a file, or press **Load example**.", icon=":material/upload_file:")
    st.caption("A JSON Lines file has one input per line (`id` and `references` optional; references add the "
               "oracle and the gap):")
    st.code('{"id": "q1", "samples": ["first sample", "second sample", "third sample"], '
            '"references": ["a reference"]}', language=None)
    st.caption(f"Limits on this server: {bound('samples_inputs'):,} inputs, {bound('samples_per_input')} samples "
               f"and {bound('samples_references')} references per input, {bound('samples_total'):,} samples and "
               f"{bound('samples_chars'):,} characters in all, {bound('upload_cell_chars'):,} characters per sample "
               "(settings SAMPLES_INPUTS, SAMPLES_PER_INPUT, SAMPLES_REFERENCES, SAMPLES_TOTAL, SAMPLES_CHARS, "
               "UPLOAD_CELL_CHARS); the command line (`bertscore-viz mbr`) takes more.")


def _utility() -> str:
    return str(st.radio("Utility", list(UTILITIES), key=UTILITY_KEY, horizontal=True, help=UTILITY_HELP,
                        format_func=lambda u: view.UTILITY_LABELS[u]))


def _result(settings, inputs, utility):
    """The consensus of every input (kept in the session), or None after showing why it cannot be computed."""
    try:
        result = view.consensus_for(settings, inputs, utility)
    except BertScoreVizError as exc:
        show_error(exc)
        return None
    note = view.work().get("note")
    if note:
        st.warning(escape_markdown(note), icon=":material/warning:")
    st.caption(f"Signature `{result.signature}`")
    return result


def _downloads(group, support, signature: str) -> None:
    row = st.container(horizontal=True, gap="small")
    row.download_button("This input (JSON)", data=lambda: view.group_json(group, support, signature),
                        file_name="mbr_input.json", mime="application/json", key="samples_dl_input",
                        on_click="ignore", icon=":material/download:",
                        help="The choice, the matrices, the token and sentence support, and the signature.")
    row.download_button("Samples (CSV)", data=lambda: safe_csv(view.samples_frame(group), signature),
                        file_name="mbr_samples.csv", mime="text/csv", key="samples_dl_samples", on_click="ignore",
                        icon=":material/download:")


def _one_input(settings, inputs, result, index: int, utility: str) -> None:
    """The views of one input: the choice, the matrix, the samples, support, the pair view."""
    group = result[index]
    st.subheader(f"Input {escape_markdown(str(group.id))}")
    show_warnings(group.notes)
    view.show_choice(group)
    if len(group) < 2:
        st.info("This input has one sample: there is nothing to compare it with. Give two or more.",
                icon=":material/info:")
        return
    st.markdown("#### The samples, ordered by consensus")
    view.show_heatmap(group)
    view.show_samples(group)
    st.markdown("#### Support by token")
    view.show_support(group)
    st.markdown("#### Support by sentence")
    try:
        support = view.sentences_for(settings, inputs, index, utility)
    except BertScoreVizError as exc:
        show_error(exc)
        support = None
    if support is not None:
        view.show_sentences(group, support)
    _downloads(group, support, str(result.signature))
    st.markdown("#### Pair view")
    view.show_pair(settings, group, (inputs.key, index))


def main() -> None:
    st.title("Many samples")
    st.caption("Which of several samples agrees most with the others (minimum-Bayes-risk choice, best-of-n), and "
               "which parts of each sample the others support: one embedding per distinct sample and every pair "
               "matched, at the sidebar's model, layer, idf and rescaling.")
    item, group_size = _input()
    if item is None:
        _format_help()
        return
    try:
        inputs = view.read_input(item, group_size)
    except BertScoreVizError as exc:
        show_error(exc)
        return
    st.caption(view.describe(item, inputs))
    utility = _utility()
    settings = current_settings()
    result = _result(settings, inputs, utility)
    if result is None:
        return
    if len(result) > 1:
        view.show_choices(result)
        st.divider()
    index = view.open_input(result)
    _one_input(settings, inputs, result, index, utility)


main()
