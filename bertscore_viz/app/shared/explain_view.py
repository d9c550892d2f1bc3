"""Drawing one explanation (a pair, or a candidate against several references) on any page.

Public and stable (the Compare page's drill-down uses both):

- :func:`explain_pair` builds the explanation through the cached scorer and raises the engine's errors;
- :func:`render_explanation` draws it: P/R/F1 raw and rescaled with the baselines used, warnings, which
  reference gave P/R/F1, heatmap, alignment view, token table and downloads. Every widget key starts with ``key``.

Figures show the whole pair at a legible size and fit the column they are drawn in: the heatmap's cells shrink to
the column's width down to 16 px (:func:`bertscore_viz.figures.plots.heatmap_size`); a pair with more reference
tokens than that fits, or longer than the deployment's FIGURE_TOKENS (200) a side, opens on the overview of its
matrix (fitted to the column), with a region picker that draws any part of it that fits at full resolution. Each
figure is drawn at its own pixel size (:func:`show_figure`), never squeezed nor cropped.

All user text is shown through ``st.dataframe``/``st.code``/escaped markdown, and inside figures HTML-escaped
with math typesetting off, so ``<script>``, ``**bold**`` and ``$x$`` show as typed.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.shared.bounds import bound, named
from bertscore_viz.app.shared.context_view import context_view
from bertscore_viz.app.shared.long_texts import long_text_switch, window_caption
from bertscore_viz.app.shared.messages import escape_markdown, show_warnings
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.engine import explain_table
from bertscore_viz.engine.languages import baseline_language_message
from bertscore_viz.engine.messages import WINDOW_HINT
from bertscore_viz.engine.results import MultiReferenceExplanation, PairExplanation
from bertscore_viz.errors import BaselineError, BertScoreVizError
from bertscore_viz.figures import plots, static_figures
from bertscore_viz.figures.cells import shown_positions
from bertscore_viz.files import export

__all__ = ["COLUMN_GAP", "MAX_WIDTH", "METRICS", "REGION_TOKENS", "SIDE_BY_SIDE_WIDTH", "TABLE_ROWS", "VIEWS",
           "app_warnings", "download_stem", "explain_or_raw", "explain_pair", "figure_width", "render_explanation",
           "show_figure", "table_height", "total_sentence"]

METRICS = ("Precision", "Recall", "F1")
#: The views of a pair, as tabs (the open one is kept in the session under ``<key>_view``).
VIEWS = ["Heatmap", "Alignment", "Token table"]
#: Width figures fit on a full-width page, in pixels (the main column of the wide layout on a 1,400 px window, with
#: the sidebar open): the alignment wraps its sentences to it, the heatmap's cells shrink to it (down to 16 px).
MAX_WIDTH = 940
#: Gap between two ``st.columns`` (Streamlit's "small" gap, 1rem).
COLUMN_GAP = 16
#: Width of one of two explanations side by side (Compare's drill-down): half the page, less the gap between the
#: columns; a pair whose heatmap does not fit it at 16 px cells stacks them.
SIDE_BY_SIDE_WIDTH = (MAX_WIDTH - COLUMN_GAP) // 2
#: The token table shows up to this many rows at once (then it scrolls).
TABLE_ROWS = 30
#: Tokens a side of the region a long pair's overview opens on (at most the deployment's ``FIGURE_TOKENS``).
REGION_TOKENS = 128
#: The scroll box of a figure: at most this high (CSS), so that its horizontal scroll bar stays in view.
BOX_MAX_HEIGHT = "90vh"
METRIC_HELP = {
    "Precision": "Over candidate tokens: each takes its most similar reference token (greedy), weighted mean.",
    "Recall": "Over reference tokens: each takes its most similar candidate token (greedy), weighted mean.",
    "F1": "Harmonic mean of precision and recall.",
}


def explain_pair(settings, candidate: str, references, idf_sentences: list[str] | None = None,
                 cand_context=(), ref_context=()):
    """Explain a candidate against one reference (a string) or several (a list) with the cached scorer.

    A list of one reference gives a :class:`PairExplanation`, a longer list a
    :class:`MultiReferenceExplanation`. The model pass is cached by the engine, so calling this again with
    another layer, idf or rescaling setting costs no model pass.

    ``cand_context``, ``ref_context``: the previous segments of the pair's document each side is encoded after
    (docs/CONTEXT.md), as its score had them.

    Raises:
        BertScoreVizError: the engine's errors, e.g. ``BaselineError`` when rescaling is on and no baseline
            exists for the model and layer, ``InputError`` for bad input.
    """
    refs = [references] if isinstance(references, str) else list(references)
    sc = gateway.scorer(settings, idf_sentences=idf_sentences)
    context = {"cand_context": list(cand_context), "ref_context": list(ref_context)} if (
        cand_context or ref_context) else {}
    return sc.explain(candidate, refs[0] if len(refs) == 1 else refs, **context)


def explain_or_raw(settings, candidate: str, references, idf_sentences: list[str] | None = None,
                   cand_context=(), ref_context=()):
    """:func:`explain_pair`, falling back to raw scores when rescaling is on but no baseline exists.

    Returns:
        ``(explanation, baseline_error or None)``. Other engine errors are raised.
    """
    try:
        return explain_pair(settings, candidate, references, idf_sentences, cand_context, ref_context), None
    except BaselineError as exc:
        return explain_pair(replace(settings, rescale=False), candidate, references, idf_sentences, cand_context,
                            ref_context), exc


def _baseline_problem(settings) -> str | None:
    """The engine's message when rescaling is asked for but impossible with these settings."""
    try:
        gateway.scorer(settings)
    except BaselineError as exc:
        return str(exc)
    except BertScoreVizError:
        return None
    return None


def _fmt(x: float) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.4f}"


def _scores_header(explanation, settings) -> None:
    """The three metrics on top (the reported values), then raw and rescaled with the baselines used."""
    rescaled = explanation.rescaled is not None
    best = getattr(explanation, "best_reference", None)
    if best is not None and len(explanation.pairs) == 1:
        best = None  # one reference: nothing to say about which one
    cols = st.columns(3)
    raw = (explanation.precision, explanation.recall, explanation.f1)
    for k, (col, name) in enumerate(zip(cols, METRICS)):
        label = f"{name} (rescaled)" if rescaled else name
        col.metric(label, _fmt(float(explanation.scores[k])), help=METRIC_HELP[name])
        parts = []
        if rescaled:
            parts.append(f"raw {_fmt(raw[k])} · baseline {_fmt(float(explanation.baseline[k]))}")
        if best is not None:
            parts.append(f"from reference {int(best[k]) + 1}")
        if parts:
            col.caption(" · ".join(parts))
    st.caption("Signature: " + escape_markdown(str(explanation.signature)))
    if settings.rescale and not rescaled:
        problem = _baseline_problem(settings)
        if problem:
            st.error(escape_markdown(problem) + "  \n" + escape_markdown(
                "The scores above are raw (not rescaled). To rescale, compute a baseline on the Baselines page "
                "or with the command above, or turn “Rescale with baseline” off."), icon=":material/error:")
    elif rescaled:
        st.caption("Rescaled as (x − b) / (1 − b) with separate P, R and F baselines; raw values and the "
                   "baselines used are under each number.")


def _notes(pair: PairExplanation) -> None:
    notes = pair.special_best_matches()
    if notes:
        with st.expander(f"{len(notes)} token(s) match best with a special token (CLS/SEP take part in the "
                         "matching)", expanded=False):
            for n in notes:
                st.text(n)


def show_figure(fig, key: str) -> None:
    """A Plotly figure at its own pixel size (``fig.layout.width``), in a box that scrolls when the figure is wider
    than the column or taller than :data:`BOX_MAX_HEIGHT`: never squeezed (Streamlit fits a chart to its column,
    which crushed the heatmap's cells and the alignment's labels) and never cropped. A figure without a width
    takes the column's. The chart's key is ``key``; its boxes are ``<key>_box`` and ``<key>_fig``."""
    width = fig.layout.width
    if width is None:
        st.plotly_chart(fig, width="stretch", config=plots.PLOTLY_CONFIG, key=key, theme=None)
        return
    name = re.sub(r"[^A-Za-z0-9_-]", "-", key)  # the boxes' CSS classes (st-key-<key>): code's keys only
    st.html(f"<style>.st-key-{name}_box{{overflow:auto;max-height:{BOX_MAX_HEIGHT}}}"
            f".st-key-{name}_fig{{width:{int(width)}px !important;min-width:{int(width)}px;flex:0 0 auto}}</style>")
    with st.container(key=f"{name}_box"), st.container(key=f"{name}_fig"):
        st.plotly_chart(fig, width="content", config=plots.PLOTLY_CONFIG, key=key, theme=None)


def figure_width(explanation, show_special: bool = False, merge_words: bool = False) -> int:
    """Pixels the widest heatmap of this explanation takes (every pair of a multi-reference one) fitted to
    :data:`SIDE_BY_SIDE_WIDTH`; a pair that does not fit it whole at 16 px cells (it would open on the overview
    there) counts as a full page (:data:`MAX_WIDTH`). For choosing between side by side and stacked."""
    pairs = explanation.pairs if isinstance(explanation, MultiReferenceExplanation) else (explanation,)
    widest = 0
    for pair in pairs:
        if plots.needs_overview(pair, show_special, bound("figure_tokens"), max_width=SIDE_BY_SIDE_WIDTH,
                                merge_words=merge_words):
            return MAX_WIDTH
        rows, cols = shown_positions(pair.cand, show_special), shown_positions(pair.ref, show_special)
        size = plots.heatmap_size(len(rows), len(cols), max((len(pair.cand.display[i]) for i in rows), default=1),
                                  max((len(pair.ref.display[j]) for j in cols), default=1), SIDE_BY_SIDE_WIDTH)
        widest = max(widest, size["width"])
    return widest


def app_warnings(warnings, folded: bool) -> list[str]:
    """The engine's warnings as the app shows them: without the advice for the Python API and the command line
    (the page has the switch for long texts); with ``folded``, without the truncation warnings themselves (the
    switch's box says what was cut: one box instead of three)."""
    out = []
    for w in warnings:
        if WINDOW_HINT in w:
            if folded:
                continue
            w = w.replace(WINDOW_HINT, "").strip()
        out.append(w)
    return out


def _truncation_detail(pairs) -> str:
    """Which texts of an explanation were cut, and by how much, in words (for the switch's box)."""
    parts = []
    if pairs[0].cand.truncated:
        parts.append(f"the candidate lost {pairs[0].cand.dropped:,} tokens")
    several = len(pairs) > 1
    for k, p in enumerate(pairs):
        if p.ref.truncated:
            parts.append(f"the reference{f' {k + 1}' if several else ''} lost {p.ref.dropped:,}")
    return ("(" + ", ".join(parts) + ")") if parts else ""


def table_height(n_rows: int) -> int:
    """Pixels of a token table showing all of its ``n_rows`` rows up to :data:`TABLE_ROWS` (35 px a row and the
    header, as Streamlit draws them), then scrolling."""
    return 35 * (min(max(1, int(n_rows)), TABLE_ROWS) + 1) + 3


def total_sentence(pair: PairExplanation, side: str, total_of_contributions: float) -> str:
    """``"**Candidate tokens** — contributions add up to P = 0.6844"``; with rescaling, that they add up to the raw
    score, and the rescaled one (rescaling is affine and is not spread over tokens)."""
    k, name = (0, "P") if side == "candidate" else (1, "R")
    raw = pair.precision if k == 0 else pair.recall
    head = f"**{side.capitalize()} tokens** — contributions add up to "
    if pair.rescaled is not None:
        text = head + f"raw {name} = {_fmt(raw)}; rescaled with the baseline: {_fmt(float(pair.rescaled[k]))}"
    else:
        text = head + f"{name} = {_fmt(raw)}"
    return text + ("" if np.isfinite(total_of_contributions) else " (undefined: this side's weights sum to 0)")


def _token_tables(pair: PairExplanation, show_special: bool, merge: bool, key: str) -> None:
    number = st.column_config.NumberColumn
    config = {"idf weight": number("idf weight", format="%.4f", help="raw weight: idf, or 1; 0 for CLS/SEP"),
              "normalized weight": number("normalized weight", format="%.4f"),
              "similarity": number("similarity", format="%.4f", help="cosine with the best match"),
              "contribution": number("contribution", format="%.5f", help="normalised weight × similarity")}
    config["best match"] = st.column_config.TextColumn(
        "best match", help="the token of the other side it matches best, with its position (#, as in that side's "
                           "table and the CSV's “best match position”)")
    for side in explain_table.SIDES:
        frame = explain_table.reading_table(pair, side, show_special=show_special, merge_words=merge)
        contrib = frame["contribution"].sum(min_count=1)
        st.markdown(total_sentence(pair, side, contrib))  # numbers and fixed words only
        st.dataframe(frame, hide_index=True, column_config=config, key=f"{key}_table_{side}",
                     height=table_height(len(frame)))


def download_stem(pair: PairExplanation) -> str:
    """``bertscore_<model>_L<layer>_<first words of the candidate>``: a file name that says what it holds (safe
    characters only)."""
    words = "-".join(str(pair.candidate).split()[:4])[:40] or "empty"
    raw = f"bertscore_{pair.signature.model}_L{pair.signature.layer}_{words}"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-.")


def _downloads(explanation, pair: PairExplanation, view: tuple[bool, bool], key: str) -> None:
    """Figures (HTML, PNG, SVG), token table (CSV), explanation (JSON).

    Built only when clicked; the figures at full size (every token), with the page's special/merge choices.
    PNG and SVG come from matplotlib (installed with the app), the value printed in each heatmap cell.
    """

    sig = str(pair.signature)
    name = download_stem(pair)

    def heatmap():
        return plots.heatmap_figure(pair, show_special=view[0], merge_words=view[1])

    def alignment():
        return plots.alignment_figure(pair, show_special=view[0], merge_words=view[1])

    light = st.toggle("Light HTML (plotly.js from the internet)", key=f"{key}_html_light",
                      help="A few kB instead of about 4.8 MB: the page loads plotly.js from its CDN when opened, so "
                           "it needs internet access then. Off: plotly.js embedded, opens offline.")
    row = st.container(horizontal=True, gap="small", key=f"{key}_downloads")
    most = bound("download_figure_tokens")
    refused = static_figures.refusal(pair, show_special=view[0], max_tokens=most)  # asked first: no click fails
    for name, build, image, stem in (("Heatmap", heatmap, static_figures.heatmap_image, "heatmap"),
                                     ("Alignment", alignment, static_figures.alignment_image, "alignment")):
        row.download_button(
            f"{name} (HTML)", data=lambda b=build, n=name: plots.figure_html(b(), f"BERTScore {n.lower()}", pair,
                                                                             light=light),
            file_name=f"{name}_{stem}.html", mime="text/html", key=f"{key}_dl_{stem}_html", icon=":material/download:",
            on_click="ignore", help="Interactive figure with the texts, scores and signature.")
        for fmt, mime in ((("png", "image/png"), ("svg", "image/svg+xml"), ("pdf", "application/pdf"))
                          if refused is None else ()):
            row.download_button(
                f"{name} ({fmt.upper()})",
                data=lambda im=image, f=fmt: im(pair, f, show_special=view[0], merge_words=view[1],
                                                max_tokens=most),
                file_name=f"{name}_{stem}.{fmt}", mime=mime, key=f"{key}_dl_{stem}_{fmt}", icon=":material/download:",
                on_click="ignore")
    if refused is not None:
        st.caption(escape_markdown(f"{refused} {named('download_figure_tokens')}"))
    row.download_button(
        "Token table (CSV)", data=lambda: export.safe_csv(explain_table.token_table(pair, "both"), sig),
        file_name=f"{name}_tokens.csv", mime="text/csv", key=f"{key}_dl_csv", icon=":material/download:",
        on_click="ignore", help="Both sides, every token, with the signature.")
    row.download_button(
        "Explanation (JSON)", data=lambda: export.to_json(explain_table.explanation_dict(explanation)),
        file_name=f"{name}_explanation.json", mime="application/json", key=f"{key}_dl_json",
        icon=":material/download:", on_click="ignore",
        help="Tokens, similarity matrix, best matches, scores, baselines, warnings and signature.")


def render_explanation(explanation: PairExplanation | MultiReferenceExplanation, settings, key: str,
                       max_width: int | None = None, long_switch: bool = False) -> None:
    """Draw an explanation (every widget key starts with ``key``).

    Args:
        explanation: from :func:`explain_pair` or ``Scorer.explain``.
        settings: the sidebar's settings (for the rescaling message and the default of special tokens).
        key: prefix of every widget key, unique on the page.
        max_width: the width figures fit in pixels (default :data:`MAX_WIDTH`; :data:`SIDE_BY_SIDE_WIDTH` in
            side-by-side columns): the alignment wraps its lines to it; the heatmap's cells shrink to it down to
            16 px, a longer pair's heatmap keeps 16 px cells in a box that scrolls.
        long_switch: draw the switch between truncating long texts and window mode after the warnings (once per
            page: Inspect draws it); the engine's truncation warnings are then folded into the switch's box.
    """
    max_width = MAX_WIDTH if max_width is None else int(max_width)
    _scores_header(explanation, settings)
    show_warnings(app_warnings(explanation.warnings, folded=long_switch))
    if long_switch:
        pairs = explanation.pairs if isinstance(explanation, MultiReferenceExplanation) else (explanation,)
        sides = [p.ref for p in pairs] + [pairs[0].cand]
        n_long = sum(bool(s.truncated or s.windows) for s in sides)
        max_length = gateway.model_info(gateway.resolve_model(settings.model))["max_length"]
        long_text_switch(n_long, sum(s.dropped for s in sides), max_length, settings.long_texts,
                         detail=_truncation_detail(pairs))
    if explanation.rescaled is not None:  # the baseline's language against the text's (a Japanese pair, "en")

        refs = [p.reference for p in explanation.pairs] if isinstance(explanation, MultiReferenceExplanation) \
            else [explanation.reference]
        note = baseline_language_message(refs, getattr(settings, "lang", "en"))
        if note:
            st.warning(escape_markdown(note), icon=":material/translate:")
    if isinstance(explanation, MultiReferenceExplanation) and len(explanation.pairs) == 1:
        pair = explanation.pairs[0]
    elif isinstance(explanation, MultiReferenceExplanation):
        n = len(explanation.pairs)
        default = int(explanation.best_reference[2])
        choice = st.selectbox(
            "Reference to inspect", list(range(n)), **fresh(f"{key}_which_ref", index=default),
            key=f"{key}_which_ref",
            format_func=lambda i: f"Reference {i + 1}" + (" (gives F1)" if i == default else ""),
            help="P, R and F1 are maxima over the references, each taken separately.")
        pair = explanation.pairs[int(choice)]
        p, r, f = (float(x) for x in pair.scores)
        st.caption(f"This reference alone: P {_fmt(p)} · R {_fmt(r)} · F1 {_fmt(f)}")
    else:
        pair = explanation
    _notes(pair)
    context_view(pair, lambda: explain_pair(replace(settings, context=0), pair.candidate, pair.reference), key)
    row = st.container(horizontal=True, gap="medium")  # the labels' own width: narrow columns cut them ("Sho...")
    # a default only for a new widget: with a kept (or restored) value too, Streamlit logs a warning and a stack trace
    special_default = bool(getattr(settings, "show_special", False))
    show_special = row.toggle("Show special tokens", **fresh(f"{key}_show_special", value=special_default),
                              key=f"{key}_show_special",
                              help="CLS and SEP have weight 0 but take part in the matching: a token may match one.")
    merge = row.toggle("Merge word pieces", **fresh(f"{key}_merge_words", value=False), key=f"{key}_merge_words",
                       help="Label words instead of pieces (pieces stay on hover and in the cells).")
    # The open view is part of the session (its key is kept by state/widgets.py): it is still open after a visit to
    # another page. Only the open view is drawn.
    tab_map, tab_align, tab_table = st.tabs(VIEWS, key=f"{key}_view", on_change="rerun")
    if tab_map.open:
        with tab_map:
            _heatmap_view(pair, show_special, merge, max_width, key)
    if tab_align.open:
        with tab_align:
            _alignment_view(pair, show_special, merge, max_width, key)
    if tab_table.open:
        with tab_table:
            _token_tables(pair, show_special, merge, key)
    _downloads(explanation, pair, (show_special, merge), key)


def _alignment_view(pair: PairExplanation, show_special: bool, merge: bool, width: int, key: str) -> None:
    align = plots.alignment_figure(pair, show_special=show_special, merge_words=merge, max_width=width)
    lines = align.layout.meta["lines"]
    st.caption("Lines link each token to its best match, coloured by similarity (blue high, red low); the weakest "
               "fifth of each side's matches are labelled in red. Hover a token for its match and contribution."
               + (f" The sentences wrap onto {lines} bands, the candidate's line above the reference's; a dotted "
                  "line goes to a token on another band." if lines > 1 else "")
               + ("" if merge else " “Merge word pieces” labels whole words."))
    show_figure(align, f"{key}_alignment")


def _heatmap_view(pair: PairExplanation, show_special: bool, merge: bool, width: int, key: str) -> None:
    rescaled = pair.baseline is not None
    st.caption("Rows: candidate tokens; columns: reference tokens. ○ marks each row's maximum (the candidate "
               "token's best match: precision), × each column's maximum (the reference token's best match: "
               "recall). Hover a cell for both tokens, the similarity and the idf weights. A token the model "
               "does not know is labelled →[UNK]; one the tokenizer read as another letter, →(what it read)."
               + (" Cells rescaled with the F baseline, as bert-score-show does." if rescaled else ""))
    if plots.needs_overview(pair, show_special, bound("figure_tokens"), max_width=width, merge_words=merge):
        _overview(pair, show_special, merge, width, key)
        return
    heatmap = plots.heatmap_figure(pair, show_special=show_special, merge_words=merge, max_width=width)
    window_caption(heatmap.layout.meta)
    show_figure(heatmap, f"{key}_heatmap")
    if heatmap.layout.meta["hover"] == "positions":
        st.caption(plots.MINIMAL_HOVER_NOTE)


def _region_picker(label: str, n: int, key: str, fit: int | None = None) -> tuple[int, int]:
    """A range of tokens (numbered from 1) of one side, at most the deployment's ``FIGURE_TOKENS`` long (and at most
    ``fit``: the columns that fit the page's width); ``(start, stop)`` from 0."""
    most = bound("figure_tokens") if fit is None else max(1, min(bound("figure_tokens"), int(fit)))
    kept = st.session_state.get(key)
    if st.session_state.get(f"_{key}_of") != n or not (isinstance(kept, tuple) and 1 <= kept[0] <= kept[1] <= n):
        # another pair (or another length): its first tokens, not a range Streamlit would reset to all of them
        st.session_state[key] = (1, min(n, REGION_TOKENS, most))
        st.session_state[f"_{key}_of"] = n
    why = ("the page's width at 16 px cells" if fit is not None and most < bound("figure_tokens")
           else named("figure_tokens"))
    lo, hi = st.slider(label, 1, n, key=key, help=f"At most {most} tokens of this side are drawn at full "
                                                  f"resolution ({why}).")
    if hi - lo + 1 > most:
        hi = lo + most - 1
        st.caption(f"Drawn: tokens {lo:,}–{hi:,} (at most {most} at full resolution: {why}).")
    return lo - 1, hi


def _overview(pair: PairExplanation, show_special: bool, merge: bool, width: int, key: str) -> None:
    """A pair too large to draw whole legibly in a column ``width`` px wide: the overview of its matrix, a region
    picker, the region whole (its columns as many as fit the width at 16 px cells)."""
    n_r, n_c = len(shown_positions(pair.cand, show_special)), len(shown_positions(pair.ref, show_special))
    fit = plots.fit_columns(width, plots.longest_labels(pair, show_special, merge)[0])
    top = st.container()
    cols = st.columns(2)
    with cols[0]:
        rows = _region_picker(f"Candidate tokens (rows, of {n_r:,})", n_r, f"{key}_zoom_rows")
    with cols[1]:
        cols_ = _region_picker(f"Reference tokens (columns, of {n_c:,})", n_c, f"{key}_zoom_cols", fit=fit)
    overview = plots.overview_figure(pair, show_special=show_special, region=(rows, cols_), max_width=width)
    block = overview.layout.meta["block"]
    each = (f"each cell the largest similarity over a block of {block} × {block} tokens (the block maximum, so "
            "that strong matches stay visible)" if block > 1 else "one cell a token pair, unlabelled")
    with top:
        st.caption(f"A pair of {n_r:,} × {n_c:,} tokens is too large to draw whole in this column with legible "
                   f"cells (16 px, at most {fit:,} reference tokens): the whole matrix at a glance, {each}. The "
                   "region outlined in red is drawn below at full resolution, every token labelled: pick another "
                   "with the sliders. The HTML download has the whole matrix, every cell labelled.")
        window_caption(overview.layout.meta)
        show_figure(overview, f"{key}_heatmap")
    region = plots.heatmap_figure(pair, show_special=show_special, merge_words=merge, rows=rows, cols=cols_,
                                  max_width=width)
    show_figure(region, f"{key}_region")
