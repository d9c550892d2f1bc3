"""The notebook views of the engine's results: scores (a compact table with the signature and the warnings) and a
pair's explanation (the texts, P/R/F1, and the heatmap and alignment the app's Inspect page draws, with the same
functions of :mod:`bertscore_viz.figures.plots`: interactive plotly). The other objects' views are in
:mod:`bertscore_viz.integrations.notebook.evaluation_views`.
"""

from __future__ import annotations

from bertscore_viz.engine.results import MultiReferenceExplanation, PairExplanation, ScoreResult
from bertscore_viz.extras import MissingExtraError, missing_extra_message
from bertscore_viz.integrations.notebook.fragments import (
    MAX_ROWS,
    FigureEmbedder,
    block,
    scores_line,
    signature_line,
    table,
    text,
    warnings_list,
)

try:  # plotly: the [app] extra, which the figures need
    from bertscore_viz.figures import plots
except ImportError as _exc:
    raise MissingExtraError(missing_extra_message("The notebook display", _exc.name or "plotly", "app")) from _exc

__all__ = ["FIGURE_WIDTH", "multi_reference_view", "pair_view", "score_view"]

#: Width of a pair's figures in pixels: a notebook's output area (the heatmap's cells shrink to it, down to 16 px;
#: a pair too wide for that opens on its overview, as the app does).
FIGURE_WIDTH = 900


def score_view(res: ScoreResult, embed: FigureEmbedder | None = None) -> str:
    """P, R and F1 of each candidate (the reported values: rescaled when rescaling is on), the means, the
    signature and the warnings."""
    scale = "rescaled" if res.rescaled else "raw"
    shown = min(len(res), MAX_ROWS)  # only the rows shown are made: a result may have millions
    rows = [(i, res.precision[i], res.recall[i], res.f1[i]) for i in range(shown)]
    means = scores_line(res.mean(), res.rescaled, label="Means") if len(res) else "<div>No candidates.</div>"
    return block(f"BERTScore of {len(res):,} candidate(s) ({scale})", means,
                 table(["#", "P", "R", "F1"], rows, what="candidates", total=len(res)), signature_line(res.signature),
                 warnings_list(res.warnings))


def _texts(pairs: list[tuple[str, str]]) -> str:
    """A two-column table of named texts (escaped)."""
    rows = "".join(f'<tr><th class="bsv-text">{text(k)}</th><td class="bsv-text">{text(v)}</td></tr>' for k, v in pairs)
    return f'<table class="bsv-table">{rows}</table>'


def _pair_figures(pair: PairExplanation, embed: FigureEmbedder) -> str:
    """The heatmap (its overview for a pair too long to draw whole at 16 px cells) and the alignment."""
    parts = []
    if plots.needs_overview(pair, max_width=FIGURE_WIDTH):
        parts.append('<div class="bsv-note">A long pair: its overview (each cell the maximum of a block of tokens); '
                     "<code>plots.heatmap_figure(pair, rows=(a, b), cols=(c, d))</code> draws a region whole.</div>")
        parts.append(embed.figure(plots.overview_figure(pair, max_width=FIGURE_WIDTH), plots.PLOTLY_CONFIG))
    else:
        parts.append(embed.figure(plots.heatmap_figure(pair, max_width=FIGURE_WIDTH), plots.PLOTLY_CONFIG))
    parts.append(embed.figure(plots.alignment_figure(pair, max_width=FIGURE_WIDTH), plots.PLOTLY_CONFIG))
    return "".join(parts)


def pair_view(pair: PairExplanation, embed: FigureEmbedder) -> str:
    """The texts, P/R/F1 (raw beside rescaled), the signature, warnings and notes, the heatmap and the alignment."""
    raw = (pair.precision, pair.recall, pair.f1)
    notes = pair.special_best_matches()
    return block("BERTScore explanation of one pair", _texts([("Candidate", pair.candidate),
                                                             ("Reference", pair.reference)]),
                 scores_line(pair.scores, pair.rescaled is not None, raw), signature_line(pair.signature),
                 warnings_list(list(pair.warnings) + notes), _pair_figures(pair, embed))


def multi_reference_view(expl: MultiReferenceExplanation, embed: FigureEmbedder) -> str:
    """Each reference's P/R/F1 and which one gave the maximum of each, the signature, and the figures of the pair
    whose reference gave F1."""
    best = [int(b) for b in expl.best_reference]
    rows = [(k, p.reference, *(float(x) for x in p.scores),
             " ".join(m for m, b in zip(("P", "R", "F1"), best) if b == k)) for k, p in enumerate(expl.pairs)]
    raw = (expl.precision, expl.recall, expl.f1)
    candidate = expl.pairs[0].candidate if expl.pairs else ""
    figures = ""
    if expl.pairs:
        figures = (f'<div class="bsv-note">The figures of reference {best[2]}, which gave F1 '
                   f"(<code>show(explanation.pairs[k])</code> draws another's).</div>"
                   + _pair_figures(expl.pairs[best[2]], embed))
    return block(f"BERTScore explanation of one candidate against {len(expl.pairs)} references",
                 _texts([("Candidate", candidate)]), scores_line(expl.scores, expl.rescaled is not None, raw),
                 table(["#", "Reference", "P", "R", "F1", "maximum of"], rows, text_columns=("Reference",),
                       what="references"),
                 signature_line(expl.signature), warnings_list(expl.warnings), figures)
