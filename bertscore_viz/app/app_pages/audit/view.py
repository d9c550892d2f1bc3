"""The "Is the metric fooled?" page's pieces: where the pairs come from (the WMT16 DA example, the Compare page's
dataset, an uploaded file), bounded and sampled; the audit kept in the session; the table, the chart by layer, the
examples with both explanations one click away, and the downloads.

What is computed is :func:`bertscore_viz.evaluation.audit.audit` (docs/AUDIT.md): one model pass over the originals,
the references and every perturbed candidate at every layer, raw F1. Everything of the page lives in
``st.session_state[WORK_KEY]``: the audits (keyed by the pairs, the model, idf, long-text mode, language, seed and
perturbations: another layer, rescaling or a tab costs no model pass), the uploaded file read once, and the open
example.
"""

from __future__ import annotations

import csv
import difflib
import functools
import io
import json
import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.shared.explain_view import explain_or_raw, figure_width, render_explanation
from bertscore_viz.app.shared.messages import escape_markdown, progress_callback, show_error
from bertscore_viz.app.shared.problems import show_problems_table
from bertscore_viz.app.state.compare import STATE_KEY as COMPARE_STATE_KEY
from bertscore_viz.app.state.compare import CompareState
from bertscore_viz.app.state.kept import Keyed
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation.audit import UNRELATED, AuditResult, audit, choose_perturbations, perturb_candidates
from bertscore_viz.evaluation.perturb import PERTURBATIONS
from bertscore_viz.figures import audit_plots
from bertscore_viz.figures.plots import PLOTLY_CONFIG
from bertscore_viz.files import upload
from bertscore_viz.files.export import safe_csv
from bertscore_viz.locations import EXAMPLES_DIR

__all__ = ["AuditInput", "DEFAULT_PAIRS", "EXAMPLES_SHOWN", "EXAMPLE_LABEL", "EXAMPLE_NAME", "MAX_KEPT_AUDITS",
           "PAIR_WIDTH", "SUMMARY_HELP", "WORK_KEY", "audit_key", "choices", "compare_dataset",
           "dataset_input", "dump_jsonl", "example_input", "example_size", "examples_frame", "file_dataset",
           "kept_audit", "layer_rows_frame", "lead", "make_input", "open_example", "planned_count",
           "planned_sentences", "run_audit", "sample_indices", "show_chart", "show_downloads", "show_examples",
           "show_pair", "show_problems", "show_table", "summary_frame", "word_changes", "work"]

#: Where the page keeps its work in the session.
WORK_KEY = "audit_work"
# Most pairs one audit takes: the deployment setting AUDIT_PAIRS (500: about 10 sentences are embedded per pair at
# every layer, docs/AUDIT.md, so about 5,000 sentences, a few minutes on two CPU cores). Larger data are sampled down
# to the number asked.
#: Pairs audited unless the user asks for another number (the page says how many, of how many, with which seed).
DEFAULT_PAIRS = 200
#: Audits kept in the session at once (the oldest goes first).
MAX_KEPT_AUDITS = 4
#: Rows of each examples table (the most fooled, the most noticed).
EXAMPLES_SHOWN = 8
#: Widest figure of an explanation in its half of the page (the heatmap pans beyond it).
PAIR_WIDTH = 520
EXAMPLE_NAME = "wmt16_da_to_english.csv"
EXAMPLE_LABEL = "WMT16 DA, six language pairs into English (3,360 system outputs with references)"
#: The table's columns explained (help text of each column).
SUMMARY_HELP = {
    "n": "Pairs where the perturbation applies (negation needs a verb, numbers a number, entities a name...).",
    "pass rate": "Share of those pairs where F1(perturbed) < F1(original), strictly: a tie counts as not noticed.",
    "mean drop": "Mean of F1(original) − F1(perturbed), raw F1; negative when perturbed candidates score higher.",
    "relative drop": "Σ(F1 original − F1 perturbed) / Σ(F1 original − F1 unrelated): the mean drop in units of the "
                     "drop to another segment's candidate. 0 = not noticed, 1 = as low as an unrelated text.",
    "ties": "Pairs where F1 did not change at all (counted as not noticed).",
    "note": "Why a figure is missing (n/a), when one is.",
}


# --- the pairs ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditInput:
    """The pairs one audit runs on.

    Attributes:
        name: where they come from, in words.
        candidates: ``(n,)`` the candidates; references: ``(n,)`` tuples of each one's reference(s).
        labels: ``(n,)`` each pair's segment as its source names it (``de-en 12``, a segment id).
        total: pairs in the source before sampling.
        sample_seed: the seed of the sample when the source had more pairs than asked for, else None.
    """

    name: str
    candidates: tuple[str, ...]
    references: tuple[tuple[str, ...], ...]
    labels: tuple[str, ...]
    total: int
    sample_seed: int | None = None

    @property
    def n(self) -> int:
        return len(self.candidates)

    @property
    def sampled(self) -> bool:
        return self.n < self.total

    @cached_property
    def key(self) -> str:
        """A hash of the pairs themselves (texts and order): the same pairs from any source share their audits."""
        return upload.content_key(json.dumps([self.candidates, self.references], ensure_ascii=False).encode())

    def flat_references(self) -> list[str]:
        """Every reference in order: the corpus the audit's idf comes from (and so the explanations' idf)."""
        return [r for group in self.references for r in group]

    def describe(self) -> str:
        """``200 pairs, a random sample of the 3,360 of X (sample seed 0)`` or ``all 30 pairs of X``."""
        if self.sampled:
            return (f"{self.n:,} pairs, a random sample of the {self.total:,} of {self.name} (sample seed "
                    f"{self.sample_seed})")
        return f"all {self.n:,} pairs of {self.name}"


def sample_indices(total: int, n: int, seed: int) -> np.ndarray:
    """Which of ``total`` pairs to audit: all when ``n >= total``, else ``n`` drawn without replacement by
    ``numpy.random.default_rng(seed)``, in source order (``(min(n, total),)`` int64)."""
    if n >= total:
        return np.arange(total, dtype=np.int64)
    return np.sort(np.random.default_rng(int(seed)).choice(total, size=int(n), replace=False)).astype(np.int64)


def make_input(name: str, candidates, references, labels, n: int, seed: int) -> AuditInput:
    """The pairs to audit: every pair, or a seeded sample of ``n`` of them (``references``: one list per pair)."""
    picks = sample_indices(len(candidates), n, seed)
    sampled = len(picks) < len(candidates)
    return AuditInput(name, tuple(str(candidates[i]) for i in picks),
                      tuple(tuple(str(r) for r in references[i]) for i in picks),
                      tuple(str(labels[i]) for i in picks), len(candidates), int(seed) if sampled else None)


@functools.lru_cache(maxsize=1)
def _example_rows() -> tuple[tuple[str, ...], tuple[tuple[str], ...], tuple[str, ...]]:
    """The shipped WMT16 DA example: candidates, references and ``lp segment`` labels, read once per process."""
    text = (EXAMPLES_DIR / EXAMPLE_NAME).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    return (tuple(r["candidate"] for r in rows), tuple((r["reference"],) for r in rows),
            tuple(f"{r['lp']} {r['segment_id']}" for r in rows))


def example_size() -> int:
    """Pairs in the WMT16 DA example."""
    return len(_example_rows()[0])


def example_input(n: int, seed: int) -> AuditInput:
    """A seeded sample of ``n`` pairs of the WMT16 DA example (every candidate is English)."""
    cands, refs, labels = _example_rows()
    return make_input("the WMT16 DA example", cands, refs, labels, n, seed)


def compare_dataset() -> upload.Dataset | None:
    """The dataset the Compare page built from its input (with the user's column mapping), or None."""
    state = st.session_state.get(COMPARE_STATE_KEY)
    if not isinstance(state, CompareState) or not state.dataset:
        return None
    ds = state.dataset.value
    return ds if getattr(ds, "ok", False) else None


def dataset_input(ds: upload.Dataset, system: str, source: str, n: int, seed: int) -> AuditInput:
    """One system's outputs of a dataset against the segments' references (a seeded sample of ``n`` of them)."""
    return make_input(f"system {system} of {source}", ds.systems[system], ds.references, ds.segment_ids, n, seed)


def work() -> dict:
    """This session's work of the page (created on first use)."""
    return st.session_state.setdefault(WORK_KEY, {"audits": {}, "upload": None, "upload_id": None, "file": None,
                                                  "open": None, "planned": None})


def file_dataset(data: bytes, name: str) -> upload.Dataset:
    """An uploaded file read as the Compare page reads one (its layouts; a two-column ``candidate,reference`` CSV is
    one system), within this server's upload limits and in a worker process, once per file content. A segment
    with an empty cell is left out (listed in the problems)."""
    kept = work().get("file")
    fkey = upload.content_key(data)
    if kept and kept.key == fkey:
        return kept.value
    refused = gateway.count_upload(data, name)
    if refused is not None:
        ds = upload.Dataset({}, [], None, [], [], [upload.Problem(None, None, refused)])
    else:
        ds = gateway.build_upload(data, name, None, upload.EMPTY_SKIP)
    work()["file"] = Keyed(fkey, ds)
    return ds


def show_problems(ds: upload.Dataset) -> None:
    """What was wrong with a file: the rows left out and the guesses made (a table of plain text)."""
    if not ds.problems:
        return
    errors = len(ds.errors)
    label = (f"{errors:,} problem(s) and {len(ds.warnings):,} note(s) reading the file" if ds.ok else
             "Nothing can be audited: the file's problems")
    show_problems_table(ds.problems, "audit_problems", label, expanded=not ds.ok)


# --- the audit ----------------------------------------------------------------------------------------------------
def choices(lang: str) -> tuple[list[str], list[str]]:
    """``(perturbations offered, perturbations left out for the language)``, in registry order. ``unrelated`` is
    not offered: every audit runs it (the reference point of the relative drop)."""
    offered = [p.name for p in PERTURBATIONS if p.applies_to(lang) and p.name != UNRELATED]
    left_out = [p.name for p in PERTURBATIONS if not p.applies_to(lang)]
    return offered, left_out


def planned_sentences(inp: AuditInput, perturbations, seed: int, lang: str) -> int:
    """Distinct sentences the audit's one model pass embeds: originals, references and perturbed candidates
    (perturbing is cheap; embedding is what takes the time)."""
    chosen, _ = choose_perturbations(list(perturbations), lang)
    texts = perturb_candidates(inp.candidates, chosen, seed)
    distinct = set(inp.candidates) | set(inp.flat_references())
    distinct.update(t for values in texts.values() for t in values if t is not None)
    return len(distinct)


def planned_count(inp: AuditInput, perturbations, seed: int, lang: str) -> int:
    """:func:`planned_sentences`, once per pairs, perturbations, seed and language in the session (every rerun
    before the click shows it)."""
    key = (inp.key, tuple(perturbations), int(seed), lang)
    memo = work().get("planned")
    if not memo or memo[0] != key:
        memo = work()["planned"] = (key, planned_sentences(inp, perturbations, seed, lang))
    return memo[1]


def audit_key(settings, inp: AuditInput, perturbations, seed: int) -> tuple:
    """What an audit depends on: the pairs, the model, idf, the long-text mode, the language and the seed and
    perturbations (not the layer: every layer is audited; not rescaling: the audit is on raw F1)."""
    options = gateway.options(settings, rescale=False)
    return (inp.key, options.embedding_key(), options.idf, settings.lang, int(seed), tuple(perturbations))


def kept_audit(key: tuple) -> AuditResult | None:
    """The audit kept for ``key`` in this session, or None."""
    return work()["audits"].get(key)


def run_audit(settings, inp: AuditInput, perturbations, seed: int, key: tuple) -> AuditResult:
    """The audit at the sidebar's model, idf and long-text mode (every layer, raw F1), with a progress bar, kept.

    Raises:
        BertScoreVizError: the engine's errors (a model that cannot be loaded, bad input).
    """
    scorer = gateway.scorer(settings, rescale=False)
    progress = progress_callback(f"Embedding originals, references and perturbed candidates at every layer of "
                                 f"{scorer.spec.name} (one model pass)")
    try:
        result = audit(list(inp.candidates), [list(r) for r in inp.references], scorer=scorer,
                       perturbations=list(perturbations), layers="all", seed=int(seed), lang=settings.lang,
                       progress=progress)
    finally:
        progress.bar.empty()
    audits = work()["audits"]
    audits.pop(key, None)
    while len(audits) >= MAX_KEPT_AUDITS:
        audits.pop(next(iter(audits)))
    audits[key] = result
    return result


# --- tables -------------------------------------------------------------------------------------------------------
def _number(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def summary_frame(result: AuditResult, layer: int) -> pd.DataFrame:
    """One row per perturbation at ``layer``: perturbation, what it does, n, pass rate, mean drop, relative drop,
    ties, note (NaN figures as None)."""
    descriptions = {s.name: s.description for s in result.sets}
    rows = []
    for name in result.perturbations:
        r = result.row(name, layer)
        rows.append({"perturbation": name, "what it does": descriptions[name], "n": r.n,
                     "pass rate": _number(r.pass_rate), "mean drop": _number(r.mean_drop),
                     "relative drop": _number(r.relative_drop), "ties": r.ties, "note": r.note})
    return pd.DataFrame(rows)


def layer_rows_frame(result: AuditResult, inp: AuditInput) -> pd.DataFrame:
    """Every perturbation at every layer (the table's download): the figures, ties, the pairs the relative drop is
    over, the note, the seed, the pairs audited and the raw scores' signature of the layer."""
    signature = dict(zip(result.layers, result.signatures))
    return pd.DataFrame([{"perturbation": r.perturbation, "layer": r.layer, "n": r.n, "pass_rate": r.pass_rate,
                          "mean_drop": r.mean_drop, "relative_drop": r.relative_drop, "ties": r.ties,
                          "n_relative": r.n_relative, "note": r.note, "seed": result.seed, "pairs": inp.n,
                          "data": inp.describe(), "signature": signature[r.layer]} for r in result.rows])


def examples_frame(result: AuditResult, inp: AuditInput, name: str, layer: int, order: str,
                   limit: int = EXAMPLES_SHOWN) -> tuple[pd.DataFrame, list[int]]:
    """The pairs of one perturbation the metric was fooled by most (``order="fooled"``: smallest drops first) or
    noticed most (``"noticed"``), with raw F1 at ``layer``.

    Returns:
        ``(table, segments)``: the table shown and, per row, the audited pair's position (0-based).
    """
    examples = result.examples(name, layer, limit=limit, order=order)
    frame = pd.DataFrame([{"segment": inp.labels[e.index], "drop": e.drop, "F1 original": e.f1_original,
                           "F1 perturbed": e.f1_perturbed, "F1 unrelated": _number(e.f1_unrelated),
                           "change": word_changes(e.candidate, e.perturbed), "original": e.candidate,
                           "perturbed": e.perturbed, "reference": " | ".join(e.references)} for e in examples],
                         columns=["segment", "drop", "F1 original", "F1 perturbed", "F1 unrelated", "change",
                                  "original", "perturbed", "reference"])
    return frame, [e.index for e in examples]


def word_changes(original: str, perturbed: str, limit: int = 4) -> str:
    """What the perturbation changed, word by word: ``not added after 'is'`` is shown as ``is → is not``; at most
    ``limit`` changes, then ``…`` (a shuffle changes many). Words are whitespace-separated."""
    a, b = original.split(), perturbed.split()
    ops = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
    parts = []
    for tag, i1, i2, j1, j2 in ops[:limit]:
        old, new = " ".join(a[i1:i2]), " ".join(b[j1:j2])
        if tag == "insert" and i1 > 0:  # anchor an insertion on the word before it (at the start: after it)
            old, new = a[i1 - 1], f"{a[i1 - 1]} {new}"
        elif tag == "insert" and a:
            old, new = a[0], f"{new} {a[0]}"
        parts.append(f"{old or '(nothing)'} → {new or '(nothing)'}")
    return "; ".join(parts) + ("; …" if len(ops) > limit else "")


def dump_jsonl(result: AuditResult, inp: AuditInput) -> bytes:
    """Every perturbed candidate as JSON Lines: the command line's ``--dump`` records (``perturbation, index,
    candidate, perturbed``) with the segment's label and reference(s), enough to re-score them."""
    lines = [json.dumps({**rec, "segment": inp.labels[rec["index"]], "references": list(inp.references[rec["index"]])},
                        ensure_ascii=False) for rec in result.dump_rows()]
    return ("\n".join(lines) + "\n").encode("utf-8")


def lead(result: AuditResult, layer: int) -> str | None:
    """One sentence on what the metric notices least and most at ``layer`` (by relative drop, ``unrelated`` aside),
    or None when no relative drop is defined."""
    rows = [result.row(n, layer) for n in result.perturbations if n != UNRELATED]
    rows = [r for r in rows if r.n and np.isfinite(r.relative_drop)]
    if not rows:
        return None
    low = min(rows, key=lambda r: r.relative_drop)
    high = max(rows, key=lambda r: r.relative_drop)
    text = (f"At layer {layer}, {low.perturbation} is noticed least: it lowers F1 in {low.pass_rate:.0%} of "
            f"{low.n:,} pairs, by {low.mean_drop:.4f} on average, {low.relative_drop:.1%} of the drop to an unrelated "
            "text.")
    if high.perturbation != low.perturbation:
        text += (f" {high.perturbation} is noticed most: {high.relative_drop:.1%} of the drop to an unrelated text "
                 f"({high.mean_drop:.4f} on average).")
    return text


# --- views --------------------------------------------------------------------------------------------------------
def show_table(result: AuditResult, layer: int) -> None:
    number = st.column_config.NumberColumn
    config = {"n": number("n", help=SUMMARY_HELP["n"], format="%d"),
              "pass rate": number("pass rate", help=SUMMARY_HELP["pass rate"], format="%.3f"),
              "mean drop": number("mean drop", help=SUMMARY_HELP["mean drop"], format="%.4f"),
              "relative drop": number("relative drop", help=SUMMARY_HELP["relative drop"], format="%.3f"),
              "ties": number("ties", help=SUMMARY_HELP["ties"], format="%d"),
              "note": st.column_config.TextColumn("note", help=SUMMARY_HELP["note"]),
              "what it does": st.column_config.TextColumn("what it does", width="large")}
    frame = summary_frame(result, layer)
    st.dataframe(frame, hide_index=True, width="stretch", key="audit_table", column_config=config,
                 height=38 + 35 * len(frame))
    st.caption("Pass rate: how often F1 dropped at all. Relative drop: how much, in units of the drop to another "
               "segment's candidate (the `unrelated` row, 1 by construction). Raw F1: rescaling changes neither "
               "(it is increasing, and the relative drop is a ratio of differences); it would scale the mean drop "
               "by 1/(1 − b). Hover a column's header for its definition.")


def show_chart(result: AuditResult, layer: int) -> None:
    fig = audit_plots.layer_figure(result, layer)
    st.plotly_chart(fig, width="stretch", config=PLOTLY_CONFIG, key="audit_chart", theme=None)
    st.caption("Click a perturbation in the legend to hide it (double-click: only it). The dotted line is the "
               "sidebar's layer; the table above is at that layer.")


def _on_pick(table_key: str, segments: list[int], result_key: tuple, name: str) -> None:
    """A click on an example row opens that pair's two explanations."""
    event = st.session_state.get(table_key)
    rows = list(event.selection.rows) if event is not None else []
    if rows and rows[0] < len(segments):
        work()["open"] = (result_key, name, int(segments[rows[0]]))


def open_example(result_key: tuple) -> tuple[str, int] | None:
    """The example opened for this audit: ``(perturbation, pair position)``, or None."""
    opened = work().get("open")
    if not opened or opened[0] != result_key:
        return None
    return opened[1], opened[2]


def _examples_table(frame: pd.DataFrame, segments: list[int], table_key: str, result_key: tuple, name: str) -> None:
    number = st.column_config.NumberColumn
    config = {c: number(c, format="%.4f") for c in ("drop", "F1 original", "F1 perturbed", "F1 unrelated")}
    config.update({c: st.column_config.TextColumn(c, width="large") for c in ("original", "perturbed", "reference")})
    config["change"] = st.column_config.TextColumn("change", width="medium",
                                                   help="What changed, word by word (old → new; the first few).")
    st.dataframe(frame, hide_index=True, width="stretch", key=table_key, column_config=config,
                 height=38 + 35 * max(1, len(frame)), selection_mode="single-row",
                 on_select=functools.partial(_on_pick, table_key, segments, result_key, name))


def show_examples(result: AuditResult, inp: AuditInput, settings, layer: int, result_key: tuple) -> None:
    """Per perturbation, the pairs the metric was fooled by most and noticed most; a click opens both explanations
    (the original and the perturbed candidate against the same reference(s)) below."""
    names = [n for n in result.perturbations if len(result.perturbed(n).indices)]
    if not names:
        st.info("No perturbation applied to these pairs.", icon=":material/info:")
        return
    opened = open_example(result_key)
    if st.session_state.get("audit_example_perturbation") not in names:
        st.session_state["audit_example_perturbation"] = opened[0] if opened else names[0]
    name = st.selectbox("Perturbation", names, key="audit_example_perturbation",
                        format_func=lambda n: f"{n} ({len(result.perturbed(n).indices):,} pairs)")
    st.caption(escape_markdown(result.perturbed(name).description))
    for order, title in (("fooled", "Fooled most: the smallest drops (perturbed candidates that scored higher first)"),
                         ("noticed", "Noticed most: the largest drops")):
        frame, segments = examples_frame(result, inp, name, layer, order)
        with st.container(key=f"audit_{order}_box"):  # a stable handle for the browser tests
            st.markdown(f"**{title}**, F1 at layer {layer}")
            _examples_table(frame, segments, f"audit_{order}_{name}", result_key, name)
    st.caption("Click a row's checkbox to see the original and the perturbed candidate explained side by side.")
    if opened is not None and opened[0] == name:
        show_pair(result, inp, settings, layer, *opened)


def show_pair(result: AuditResult, inp: AuditInput, settings, layer: int, name: str, index: int) -> None:
    """The original and the perturbed candidate of one pair, each explained against the pair's reference(s) at the
    sidebar's settings (idf, when on, from the audited references, as the audit computed it)."""
    s = result.perturbed(name)
    j = int(np.searchsorted(s.indices, index))
    if j >= len(s.indices) or s.indices[j] != index:
        return
    k = result.layer_position(layer)
    refs = list(inp.references[index])
    st.subheader(escape_markdown(f"Segment {inp.labels[index]}: {name}"))
    idf_sentences = inp.flat_references() if settings.idf else None
    sides = (("Original", inp.candidates[index], result.f1_original[k, index], "audit_original"),
             ("Perturbed", s.texts[j], s.f1[k, j], "audit_perturbed"))
    for ref_no, ref in enumerate(refs, start=1):
        st.text(f"Reference{f' {ref_no}' if len(refs) > 1 else ''}: {ref}")
    explained = []
    for _title, text, _f1, _key in sides:
        try:
            explained.append(explain_or_raw(settings, text, refs, idf_sentences)[0])
        except BertScoreVizError as exc:
            explained.append(exc)
    # side by side while both heatmaps fit half the page with legible cells (issue 40: a figure is never wider than
    # its column, so a wider pair would open on the overview); else one above the other at the page's width
    side_by_side = all(isinstance(e, BertScoreVizError) or figure_width(
        e, bool(st.session_state.get(f"{key}_show_special")), bool(st.session_state.get(f"{key}_merge_words")))
        <= PAIR_WIDTH for e, (_, _, _, key) in zip(explained, sides))
    if not side_by_side:
        st.caption("Original above perturbed: a heatmap of this segment does not fit half the page with legible "
                   "cells, so each is drawn at the page's full width.")
    places = st.columns(2, gap="medium") if side_by_side else [st.container(), st.container()]
    for place, (title, text, f1, key), explanation in zip(places, sides, explained):
        with place:
            if not side_by_side and title == "Perturbed":
                st.divider()
            st.markdown(f"**{title}** · raw F1 at layer {layer} in the audit: {float(f1):.4f}")
            st.text(text)
            st.caption("Changed: " + escape_markdown(word_changes(inp.candidates[index], text)) if title == "Perturbed"
                       else "As the system wrote it.")  # one line on each side: the two columns stay aligned
            if isinstance(explanation, BertScoreVizError):
                show_error(explanation)
                continue
            render_explanation(explanation, settings, key=key, max_width=PAIR_WIDTH if side_by_side else None)


def _stem(result: AuditResult) -> str:
    model = result.signatures[0].split("_L", 1)[0] if result.signatures else "model"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", f"audit_{model}_seed{result.seed}").strip("-.")


def show_downloads(result: AuditResult, inp: AuditInput) -> None:
    row = st.container(horizontal=True, gap="small")
    row.download_button("Table, every layer (CSV)", data=lambda: safe_csv(layer_rows_frame(result, inp)),
                        file_name=f"{_stem(result)}.csv", mime="text/csv", key="audit_dl_csv",
                        icon=":material/download:", on_click="ignore",
                        help="Every perturbation at every layer: n, pass rate, mean drop, relative drop, ties, the "
                             "pairs the relative drop is over, notes, the seed and each layer's signature.")
    row.download_button("Perturbed candidates (JSON Lines)", data=lambda: dump_jsonl(result, inp),
                        file_name=f"{_stem(result)}_perturbed.jsonl", mime="application/jsonl",
                        key="audit_dl_jsonl", icon=":material/download:", on_click="ignore",
                        help="One record per perturbed candidate: perturbation, index (the pair's position in the "
                             "audit), segment, candidate, perturbed, references: re-score them to check the figures.")
