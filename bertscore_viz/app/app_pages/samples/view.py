"""The "Many samples" page's pieces: reading the input (typed, uploaded or the example) within named limits, the
consensus computed once and kept in the session, and the views of the result (the choices of many inputs, one
input's matrix, support and pair view).

Everything the page keeps lives under one session key, :data:`WORK_KEY`: the input (``{"name", "data",
"origin"}``), the last :class:`~bertscore_viz.consensus.ConsensusResult` with the key of what it was computed
from, and the per-sentence support of the inputs opened so far. A rerun, another page and back, or another view
costs no model pass; changing the input, the utility or a sidebar setting costs one.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.shared.bounds import bound, named
from bertscore_viz.app.shared.explain_view import explain_or_raw, render_explanation
from bertscore_viz.app.shared.messages import escape_markdown, progress_callback
from bertscore_viz.consensus import ConsensusResult, GroupConsensus, consensus
from bertscore_viz.engine.scorer import BertScoreWarning
from bertscore_viz.errors import BaselineError, InputError
from bertscore_viz.figures import consensus_plots as plots
from bertscore_viz.figures.plots import PLOTLY_CONFIG
from bertscore_viz.files.export import safe_csv, to_json
from bertscore_viz.files.samples import JSON_SUFFIXES, format_jsonl, read_groups
from bertscore_viz.files.textfile import decode_text, split_lines
from bertscore_viz.locations import EXAMPLES_DIR

__all__ = ["WORK_KEY", "TEXT_KEY", "OPEN_KEY", "PAIR_A", "PAIR_B", "HEATMAP_KEY", "CHOICES_KEY", "PAIR_PREFIX",

           "EXAMPLE", "EXAMPLE_LABEL", "UTILITY_LABELS", "Inputs", "parse_typed", "parse_file", "check_limits",
           "work", "set_input", "current_input", "load_example", "read_input", "consensus_for", "sentences_for",
           "choices_frame", "samples_frame", "sentences_frame", "group_json", "downloads", "summary_line",
           "input_label", "describe", "show_choices", "open_input", "show_choice", "show_heatmap", "show_samples",
           "show_support", "show_sentences", "pair_choice", "show_pair"]

#: The session key of everything this page keeps.
WORK_KEY = "samples_work"
#: The text area's key.
TEXT_KEY = "samples_text"
#: Widget keys: the open input (a selectbox), the pair view's two samples, the heatmap (its selection opens a
#: pair), the table of choices (its selection opens an input), and the prefix of the pair view's own widgets.
OPEN_KEY = "samples_open"
PAIR_A, PAIR_B = "samples_pair_a", "samples_pair_b"
HEATMAP_KEY = "samples_heatmap"
CHOICES_KEY = "samples_choices"
PAIR_PREFIX = "samples_pair"
# The page's bounds are deployment settings (shared/bounds.py; the command line, ``bertscore-viz mbr``, takes any
# number): SAMPLES_INPUTS (inputs, 500), SAMPLES_PER_INPUT (samples of one input: its matrix is N x N, its heatmap N
# cells a side; 64), SAMPLES_TOTAL (samples over all inputs: each is embedded once, the matrices of all inputs are
# kept in the session; 2,000), SAMPLES_CHARS (characters of all samples and references together, also the text
# box's limit; 1,000,000), SAMPLES_REFERENCES (references of one input, 16) and UPLOAD_CELL_CHARS (the longest
# sample or reference, as a cell of an upload).
EXAMPLE = EXAMPLES_DIR / "samples_example.jsonl"
EXAMPLE_LABEL = "WMT16: 12 English sentences, each with 4 to 6 system translations and the reference"
UTILITY_LABELS = {"f1": "F1", "precision": "precision", "recall": "recall"}
_CLI = "the command line (`bertscore-viz mbr`, docs/MBR.md) takes larger inputs"


# --- reading the input ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Inputs:
    """The inputs read from one text or file.

    Attributes:
        name: where they came from (shown on the page).
        ids: per input, its id (the record's ``id``, else its index from 0).
        groups: per input, its samples.
        references: per input, its references (``()``: none).
    """

    name: str
    ids: tuple
    groups: tuple
    references: tuple

    def __len__(self) -> int:
        return len(self.groups)

    @property
    def has_references(self) -> bool:
        return any(self.references)

    @property
    def key(self) -> str:
        """A hash of the content (ids, samples, references): what a computed result belongs to."""
        blob = json.dumps([list(map(str, self.ids)), self.groups, self.references], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def parse_typed(text: str, name: str = "typed text") -> Inputs:
    """One sample per line, an empty line between inputs (several empty lines count as one).

    Returns:
        :class:`Inputs` with ids 0, 1, ... and no references (the command line's plain-text ids).

    Raises:
        InputError: no sample at all.
    """
    groups, current = [], []
    for line in split_lines(text):
        if line:
            current.append(line)
        elif current:
            groups.append(tuple(current))
            current = []
    if current:
        groups.append(tuple(current))
    if not groups:
        raise InputError(f"{name} has no samples: give one sample per line, an empty line between inputs.")
    return Inputs(name, tuple(range(len(groups))), tuple(groups), tuple(() for _ in groups))


def _is_json_lines(name: str, text: str) -> bool:
    """As the command line decides: a JSON Lines file name, or a first line that is an object with ``samples``."""
    if Path(name).suffix.lower() in JSON_SUFFIXES:
        return True
    first = next((line for line in split_lines(text) if line), "")
    try:
        record = json.loads(first) if first.startswith("{") else None
    except json.JSONDecodeError:
        return False
    return isinstance(record, dict) and "samples" in record


def parse_file(data: bytes, name: str, group_size: int = 0) -> Inputs:
    """An uploaded file, read as ``bertscore-viz mbr`` reads it (:func:`bertscore_viz.files.samples.read_groups`).

    Args:
        data: the file's bytes; name: its name (a ``.jsonl``/``.ndjson``/``.json`` name means JSON Lines).
        group_size: for plain text: samples per input (N consecutive lines each), or 0 for inputs separated by
            an empty line (as typed on the page).

    Raises:
        InputError: not UTF-8 text, a malformed record, a line count that is not a multiple of the group size
            (the message names the file and the line).
    """
    shown = Path(name).name or "upload"
    what = f"The file {shown}"
    text = decode_text(data, what)
    json_lines = _is_json_lines(shown, text)
    if not json_lines and group_size <= 0:
        return parse_typed(text, what)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", shown).strip("._") or "upload.txt"
    with tempfile.TemporaryDirectory(prefix="bsv-samples-") as tmp:
        path = Path(tmp) / safe  # the command line's reader takes a path; messages name the upload instead
        path.write_bytes(data)
        try:
            ids, groups, refs = read_groups(path, None if json_lines else int(group_size))
        except InputError as exc:
            raise InputError(str(exc).replace(str(path), shown).replace("--group-size", "samples per input")) \
                from None
    return Inputs(shown, tuple(ids), tuple(tuple(g) for g in groups), tuple(tuple(r) for r in refs))


def check_limits(inputs: Inputs) -> None:
    """Refuse input beyond the page's limits (the deployment's settings), naming the limit, its setting and what
    was given.

    Raises:
        InputError: too many inputs, samples or references, or too many characters.
    """
    if len(inputs) > bound("samples_inputs"):
        raise InputError(f"{inputs.name} has {len(inputs):,} inputs; this page takes at most "
                         f"{bound('samples_inputs'):,} {named('samples_inputs')}. Split it, or use {_CLI}.")
    for gid, group, refs in zip(inputs.ids, inputs.groups, inputs.references):
        if len(group) > bound("samples_per_input"):
            raise InputError(f"Input {gid} has {len(group):,} samples; this page takes at most "
                             f"{bound('samples_per_input')} per input {named('samples_per_input')}. Keep fewer, or "
                             f"use {_CLI}.")
        if len(refs) > bound("samples_references"):
            raise InputError(f"Input {gid} has {len(refs):,} references; this page takes at most "
                             f"{bound('samples_references')} per input {named('samples_references')}.")
        longest = max(len(t) for t in group + refs)
        if longest > bound("upload_cell_chars"):
            raise InputError(f"Input {gid} has a text of {longest:,} characters; this page takes at most "
                             f"{bound('upload_cell_chars'):,} per sample or reference {named('upload_cell_chars')}.")
    total = sum(len(g) for g in inputs.groups)
    if total > bound("samples_total"):
        raise InputError(f"{inputs.name} has {total:,} samples in all; this page takes at most "
                         f"{bound('samples_total'):,} {named('samples_total')}. Split it, or use {_CLI}.")
    chars = sum(len(t) for g, r in zip(inputs.groups, inputs.references) for t in g + r)
    if chars > bound("samples_chars"):
        raise InputError(f"{inputs.name} has {chars:,} characters of samples and references; this page takes at "
                         f"most {bound('samples_chars'):,} {named('samples_chars')}. Split it, or use {_CLI}.")


# --- the session's work ---------------------------------------------------------------------------------------------
def work() -> dict:
    """Everything this page keeps: ``input``; ``key`` and ``result``: the last consensus and what it was computed
    from; ``note``: why its numbers are raw; ``sentences``: per opened input, its sentence support; ``opened``:
    the input the pair view was set up for; ``upload_id``: the upload adopted last."""
    return st.session_state.setdefault(WORK_KEY, {"input": None, "key": None, "result": None, "note": None,
                                                  "sentences": {}, "opened": None})


def set_input(name: str, data: bytes, origin: str) -> None:
    """The page's input from now on (``origin``: ``typed``, ``upload`` or ``example``)."""
    work()["input"] = {"name": name, "data": data, "origin": origin}


def current_input() -> dict | None:
    """The input given last (``{"name", "data", "origin"}``), or None."""
    return work()["input"]


def load_example() -> None:
    """The shipped example (:data:`EXAMPLE`) becomes the input."""
    set_input(EXAMPLE.name, EXAMPLE.read_bytes(), "example")


def read_input(item: dict, group_size: int) -> Inputs:
    """The inputs of the current item, within this server's upload limits and the page's.

    Raises:
        InputError: a refused upload, unreadable content, or input beyond a limit.
    """
    if item["origin"] == "upload":
        refused = gateway.count_upload(item["data"], item["name"])
        if refused is not None:
            raise InputError(refused)
    if item["origin"] == "typed":
        inputs = parse_typed(item["data"].decode("utf-8"))
    else:
        inputs = parse_file(item["data"], item["name"], group_size)
    check_limits(inputs)
    return inputs


def _scorer(settings):
    """The sidebar's scorer; raw scores with a note when rescaling is on but no baseline exists."""
    try:
        return gateway.scorer(settings), None
    except BaselineError as exc:
        return gateway.scorer(settings, rescale=False), f"{exc} The numbers on this page are raw (not rescaled)."


def _settings_key(settings) -> tuple:
    """What a result depends on besides the input: the settings, and the values of a session's own baseline."""
    custom = gateway.custom_baseline(settings)
    return (settings, gateway.signature_text(settings),
            None if custom is None else hashlib.sha256(np.asarray(custom.values).tobytes()).hexdigest())


def consensus_for(settings, inputs: Inputs, utility: str) -> ConsensusResult:
    """The consensus of every input (token support included), computed once per input, settings and utility.

    Raises:
        BertScoreVizError: the engine's errors (a model that cannot be used, bad input).
    """
    w = work()
    key = (inputs.key, _settings_key(settings), utility)
    if w["key"] == key:
        return w["result"]
    scorer, note = _scorer(settings)
    n = sum(len(g) for g in inputs.groups)
    progress = progress_callback(f"Embedding {n:,} samples of {len(inputs):,} input(s)", unit="distinct texts")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BertScoreWarning)  # the result's notes say the same, per input
            result = consensus([list(g) for g in inputs.groups],
                               references=[list(r) or None for r in inputs.references], scorer=scorer,
                               utility=utility, ids=list(inputs.ids), token_support=True, progress=progress)
    finally:
        progress.bar.empty()
    if w["key"] is None or w["key"][0] != inputs.key:  # new inputs open on the first; new settings keep the view
        st.session_state[OPEN_KEY] = 0
    w.update({"key": key, "result": result, "note": note, "sentences": {}})
    return result


def sentences_for(settings, inputs: Inputs, index: int, utility: str) -> tuple:
    """Per sample of input ``index``, its per-sentence support (SelfCheckGPT's BERTScore variant), computed when
    the input is first opened and kept with the result."""
    w = work()
    if index in w["sentences"]:
        return w["sentences"][index]
    scorer, _ = _scorer(settings)
    progress = progress_callback("Embedding the sentences of this input's samples", unit="distinct texts")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BertScoreWarning)
            one = consensus([list(inputs.groups[index])], scorer=scorer, utility=utility, ids=[inputs.ids[index]],
                            token_support=False, sentence_support=True, progress=progress)
    finally:
        progress.bar.empty()
    w["sentences"][index] = one[0].sentence_support
    return w["sentences"][index]


# --- tables and downloads -------------------------------------------------------------------------------------------
def _value(x) -> float:
    """None (no references) as NaN, for a numeric column."""
    return float("nan") if x is None else float(x)


def choices_frame(result: ConsensusResult) -> pd.DataFrame:
    """One row per input: its id, samples, the chosen sample, its expected utility, and with references the
    chosen sample's score, the oracle, its score, the gap and the chosen sample's rank by reference score."""
    with_refs = any(g.reference_scores is not None for g in result.groups)
    rows = []
    for g in result.groups:
        row = {"input": str(g.id), "samples": len(g), "chosen": int(g.chosen),
               "expected utility": g.chosen_utility}
        if with_refs:
            has = g.reference_scores is not None
            row.update({"chosen score": _value(g.chosen_score), "oracle": g.oracle if has else None,
                        "oracle score": _value(g.oracle_score), "gap": _value(g.gap),
                        "reference rank": g.reference_rank if has else None})
        row["chosen sample"] = g.chosen_text
        rows.append(row)
    frame = pd.DataFrame(rows)
    for col in ("oracle", "reference rank"):
        if col in frame:
            frame[col] = frame[col].astype("Int64")
    return frame


def samples_frame(group: GroupConsensus) -> pd.DataFrame:
    """One row per sample, in the order of consensus: rank, index, expected utility, score against the references
    (the group's utility) when given, the mean support of its real tokens, and the text."""
    ref = group.reference_utility
    rows = []
    for k in group.order:
        k = int(k)
        row = {"rank": int(group.rank[k]), "sample": k, "expected utility": float(group.expected_utility[k])}
        if ref is not None:
            row["vs references"] = float(ref[k])
            row["oracle"] = k == group.oracle
        if group.token_support:
            row["token support"] = group.token_support[k].content_mean()
        row["text"] = group.samples[k]
        rows.append(row)
    return pd.DataFrame(rows)


def sentences_frame(group: GroupConsensus, support: tuple) -> pd.DataFrame:
    """One row per sentence of every sample (samples in the order of consensus): its support, SelfCheckGPT's
    inconsistency (1 - support), and whether it counts as evidence for the other samples."""
    rows = []
    for k in group.order:
        k = int(k)
        s = support[k]
        for n, sentence in enumerate(s.sentences):
            rows.append({"sample": k, "rank": int(group.rank[k]), "sentence": n + 1, "text": sentence.text,
                         "support": float(s.support[n]), "inconsistency": float(s.inconsistency[n]),
                         "evidence": bool(s.evidence[n])})
    return pd.DataFrame(rows, columns=["sample", "rank", "sentence", "text", "support", "inconsistency",
                                       "evidence"])


def group_json(group: GroupConsensus, support: tuple | None, signature: str) -> bytes:
    """One input as JSON: the choice, every sample's expected utility, the matrices, token support, the sentence
    support when computed, and the signature."""
    d = group.as_dict(matrices=True, support=True)
    if support is not None:
        d["sentence_support"] = [s.as_dict() for s in support]
    d["signature"] = signature
    return to_json(d)


def downloads(result: ConsensusResult, key: str) -> None:
    """The table of choices as CSV (safe in a spreadsheet, with the signature) and as the command line's JSON
    Lines (``bertscore-viz mbr --json``)."""
    sig = str(result.signature)
    row = st.container(horizontal=True, gap="small")
    row.download_button("Choices (CSV)", data=lambda: safe_csv(choices_frame(result), sig),
                        file_name="mbr_choices.csv", mime="text/csv", key=f"{key}_dl_csv", on_click="ignore",
                        icon=":material/download:", help="One row per input, with the signature.")
    row.download_button("Choices (JSON Lines)", data=lambda: format_jsonl(result).encode("utf-8"),
                        file_name="mbr_choices.jsonl", mime="application/x-ndjson", key=f"{key}_dl_jsonl",
                        on_click="ignore", icon=":material/download:",
                        help="As `bertscore-viz mbr --json` writes it: every sample's expected utility, the "
                             "ranking, the notes and the signature.")


def summary_line(result: ConsensusResult) -> str:
    """The means over the inputs, as a sentence (markdown-safe: numbers and fixed words only)."""
    s = result.summary()

    def num(x) -> str:
        return "n/a" if x is None else f"{x:.4f}"

    text = (f"{s['groups']:,} inputs, {s['samples']:,} samples · mean expected utility of the chosen samples "
            f"{num(s['mean_expected_utility'])} ({UTILITY_LABELS[s['utility']]})")
    if "groups_with_references" in s:
        text += (f" · against the references ({s['groups_with_references']:,} inputs): chosen "
                 f"{num(s['mean_chosen_score'])}, oracle {num(s['mean_oracle_score'])}, mean gap "
                 f"{num(s['mean_gap'])}; the chosen sample is as good as the oracle in "
                 f"{100 * s['oracle_reached']:.0f}% of inputs")
    return text


def input_label(inputs_or_result, index: int) -> str:
    """``3. input newstest2016-de-en-12``: how pickers name an input (plain text; escape it for markdown)."""
    gid = inputs_or_result.ids[index] if isinstance(inputs_or_result, Inputs) else inputs_or_result[index].id
    return f"{index + 1}. input {gid}"


def describe(item: dict, inputs: Inputs) -> str:
    """What the page is showing, as a caption (user text escaped)."""
    n = sum(len(g) for g in inputs.groups)
    refs = sum(1 for r in inputs.references if r)
    origin = {"typed": "typed text", "upload": "uploaded file", "example": "example"}[item["origin"]]
    return (f"Input: {escape_markdown(inputs.name)} ({origin}) · {len(inputs):,} input(s), {n:,} samples"
            + (f", references for {refs:,}" if refs else ""))


# --- views ----------------------------------------------------------------------------------------------------------


def _num(x) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.4f}"


def _on_row() -> None:
    """A click on a row of the table of choices opens that input (a callback: before the selectbox is drawn)."""
    state = st.session_state.get(CHOICES_KEY)
    rows = list(state.selection.rows) if state is not None else []
    if rows:
        st.session_state[OPEN_KEY] = int(rows[0])


def _on_cell() -> None:
    """A click on a cell of the matrix opens that pair in the pair view."""
    state = st.session_state.get(HEATMAP_KEY)
    pair = plots.cell_pair(state.selection.points) if state is not None else None
    if pair is not None:
        st.session_state[PAIR_A], st.session_state[PAIR_B] = pair


def show_choices(result: ConsensusResult) -> None:
    """The table of choices (a click on a row opens that input below), the means, and the downloads."""
    st.subheader("Choices")
    st.caption(summary_line(result))
    number = st.column_config.NumberColumn
    config = {"expected utility": number(format="%.4f", help="Mean utility of the chosen sample against the other "
                                                             "samples"),
              "chosen score": number(format="%.4f", help="The chosen sample against the references"),
              "oracle score": number(format="%.4f", help="The best sample against the references"),
              "gap": number(format="%.4f", help="oracle score - chosen score (0: MBR found the oracle)"),
              "chosen sample": st.column_config.TextColumn(width="large")}
    frame = choices_frame(result)
    st.dataframe(frame, hide_index=True, column_config=config, key=CHOICES_KEY, on_select=_on_row,
                 selection_mode="single-row", height=min(420, 38 + 35 * len(frame)))
    st.caption("Click a row to open that input below.")
    downloads(result, "samples_choices")


def open_input(result: ConsensusResult) -> int:
    """Which input the views below show: the selectbox (set by a click on a row of the table of choices)."""
    if len(result) == 1:
        return 0
    if st.session_state.get(OPEN_KEY) not in range(len(result)):
        st.session_state[OPEN_KEY] = 0
    return int(st.selectbox("Input", list(range(len(result))), key=OPEN_KEY,
                            format_func=lambda i: input_label(result, i)))


def show_choice(group: GroupConsensus) -> None:
    """The chosen sample with its expected utility, and with references the oracle and the gap."""
    cols = st.columns(4 if group.reference_scores is not None else 2)
    cols[0].metric("Chosen sample", f"#{group.chosen}", help="The sample of highest expected utility (MBR).")
    cols[1].metric(f"Expected utility ({UTILITY_LABELS[group.utility]})", _num(group.chosen_utility),
                   help="Mean utility of the chosen sample against every other sample.")
    if group.reference_scores is not None:
        cols[2].metric("Oracle", "n/a" if group.oracle is None else f"#{group.oracle}",
                       help=f"The sample that scores best against the references ({_num(group.oracle_score)}); "
                            f"the chosen sample scores {_num(group.chosen_score)}, rank {group.reference_rank} "
                            "among the samples.")
        cols[3].metric("Gap", _num(group.gap), help="Oracle score - chosen score (0: MBR found the oracle).")
    st.code(group.chosen_text, language=None, wrap_lines=True)


def show_heatmap(group: GroupConsensus) -> None:
    """The matrix ordered by consensus; a click on a cell opens that pair (:func:`show_pair`)."""
    fig = plots.consensus_heatmap(group)
    st.caption("Row: a sample as candidate; column: as pseudo-reference. Ordered by consensus, the chosen sample "
               "(★) first; the diagonal (a sample against itself) is left out of the expected utility. "
               "Click a cell to open that pair below.")
    with st.container(key=f"{HEATMAP_KEY}_box"):
        st.plotly_chart(fig, width="content", config=PLOTLY_CONFIG, key=HEATMAP_KEY, on_select=_on_cell,
                        selection_mode="points", theme=None)


def show_samples(group: GroupConsensus) -> None:
    """The samples in the order of consensus (:func:`samples_frame`)."""
    number = st.column_config.NumberColumn
    config = {"expected utility": number(format="%.4f"), "vs references": number(format="%.4f"),
              "token support": number(format="%.4f", help="Mean support of the sample's tokens (below)"),
              "text": st.column_config.TextColumn(width="large")}
    st.dataframe(samples_frame(group), hide_index=True, column_config=config, key="samples_table")


def show_support(group: GroupConsensus) -> None:
    """Each sample's tokens coloured by support, as a figure (no user text is rendered as HTML)."""
    st.caption("A token's support is the mean, over the other samples, of its best cosine similarity with their "
               "tokens (at the sidebar's layer; not idf-weighted, not rescaled). What only one sample says has no "
               "close token elsewhere and shows red. Special tokens (CLS, SEP) are left out.")
    with st.container(key="samples_support_box"):
        st.plotly_chart(plots.support_figure(group), width="content", config=PLOTLY_CONFIG, key="samples_support",
                        theme=None)


def show_sentences(group: GroupConsensus, support: tuple) -> None:
    """Per-sentence support of every sample (:func:`sentences_frame`)."""
    st.caption("Per sentence, as SelfCheckGPT's BERTScore variant: the mean over the other samples of the "
               "sentence's best F1 with their sentences of more than 3 tokens; inconsistency = 1 - support "
               "(SelfCheckGPT's score: higher is less supported). Sort by a column with a click on its header.")
    number = st.column_config.NumberColumn
    config = {"support": number(format="%.4f"), "inconsistency": number(format="%.4f"),
              "evidence": st.column_config.CheckboxColumn(help="Counts as evidence for the other samples "
                                                               "(more than 3 tokens)"),
              "text": st.column_config.TextColumn(width="large")}
    frame = sentences_frame(group, support)
    st.dataframe(frame, hide_index=True, column_config=config, key="samples_sentences",
                 height=min(420, 38 + 35 * max(1, len(frame))))


def pair_choice(group: GroupConsensus, opened: tuple) -> tuple[int, int]:
    """The two samples of the pair view: the chosen one and the next by consensus until the user picks (with
    the selectboxes or a click on a cell of the matrix)."""
    n = len(group)
    w = work()
    if w["opened"] != opened or st.session_state.get(PAIR_A) not in range(n) \
            or st.session_state.get(PAIR_B) not in range(n):
        st.session_state[PAIR_A] = int(group.chosen)
        st.session_state[PAIR_B] = int(group.order[1]) if n > 1 else int(group.chosen)
        w["opened"] = opened
    short = [plots.shorten_text(s, 70) for s in group.samples]
    left, right = st.columns(2)
    a = left.selectbox("Candidate", list(range(n)), key=PAIR_A, format_func=lambda k: f"#{k} · {short[k]}")
    b = right.selectbox("Reference", list(range(n)), key=PAIR_B, format_func=lambda k: f"#{k} · {short[k]}")
    return int(a), int(b)


def show_pair(settings, group: GroupConsensus, opened: tuple) -> None:
    """Two samples explained token by token, with the numbers of the matrix above (the same numbers: with idf,
    the weights come from the input's distinct samples, as in the matrix)."""
    a, b = pair_choice(group, opened)
    m = group.matrices
    st.caption(f"In the matrix: #{a} against #{b}: P {_num(m.precision[a, b])} · R {_num(m.recall[a, b])} · "
               f"F1 {_num(m.f1[a, b])}" + (" (rescaled)" if m.baseline is not None else ""))
    idf_sentences = list(dict.fromkeys(group.samples)) if settings.idf else None
    explanation, _ = explain_or_raw(settings, group.samples[a], group.samples[b], idf_sentences)
    render_explanation(explanation, settings, key=PAIR_PREFIX)
