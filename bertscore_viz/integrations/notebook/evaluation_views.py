"""The notebook views of the evaluation's results: a comparison of systems (the system table with intervals and
clusters), the stress test (one row per perturbation, the chart by layer) and MBR consensus (each input's choice; an
input's N x N matrix). The figures are the app's (:mod:`bertscore_viz.figures`).

A comparison's intervals and clusters are :func:`bertscore_viz.evaluation.compare.significance` with the Compare
page's defaults (1,000 bootstrap resamples, seed 12345, no correction), its table
:func:`bertscore_viz.figures.tables.system_table`: the numbers of ``bertscore-viz compare``.
"""

from __future__ import annotations

from bertscore_viz.extras import MissingExtraError, missing_extra_message
from bertscore_viz.integrations.notebook.fragments import (
    MAX_ROWS,
    FigureEmbedder,
    block,
    number,
    signature_line,
    table,
    text,
    warnings_list,
)

try:  # plotly, pandas and scipy: the [app] extra, which the figures, the tables and the statistics need
    from bertscore_viz.consensus.mbr import ConsensusResult, GroupConsensus
    from bertscore_viz.evaluation import compare
    from bertscore_viz.evaluation.audit import UNRELATED, AuditResult
    from bertscore_viz.figures import audit_plots, consensus_plots, plots, tables
    from bertscore_viz.models.known import BUNDLED_DEFAULT_LAYER, BUNDLED_MODEL_NAME, MODEL_LAYERS
except ImportError as _exc:
    raise MissingExtraError(missing_extra_message("The notebook display", _exc.name or "plotly", "app")) from _exc

__all__ = ["audit_layer", "audit_view", "comparison_view", "consensus_view", "group_view"]


def comparison_view(comparison: compare.Comparison, embed: FigureEmbedder | None = None) -> str:
    """The system table (rank, cluster, wins, P, R, F1, the F1 95% interval, segments), the headline, the
    settings, the signature and the warnings."""
    sig = compare.significance(comparison)
    frame = tables.system_table(comparison, sig)
    m = sig.metric
    columns = ["Rank", "Cluster", "Wins", "System", "Best", "P", "R", "F1", f"{m} CI low", f"{m} CI high",
               "Segments"]
    rows = [tuple(rec[c] for c in columns) for rec in frame.to_dict(orient="records")]
    settings = (f"layer {comparison.layer}, idf {'on' if comparison.idf else 'off'}, "
                f"{'rescaled' if comparison.rescaled else 'raw'}")
    method = (f"{m} 95% CI: bootstrap percentile interval ({sig.n_samples:,} resamples, seed {sig.seed}); systems "
              f"in one cluster are not significantly different (p ≥ {sig.alpha:g}).")
    note = f'<div class="bsv-warn">{text(comparison.note)}</div>' if comparison.note else ""
    return block(f"Comparison of {len(comparison.results)} systems ({settings})",
                 f"<div>{text(compare.headline(comparison, sig)['sentence'])}</div>", note,
                 table(columns, rows, text_columns=("System", "Best"), what="systems"),
                 f'<div class="bsv-note">{text(method)}</div>', signature_line(comparison.signature),
                 warnings_list(comparison.warnings()))


def audit_layer(result: AuditResult) -> int:
    """The layer an audit's table is shown at: the model's default layer when it was audited, else the last one
    audited (the chart shows every layer; ``to_pandas()`` has every row)."""
    tag = f"_L{result.layers[0]}_"
    model = result.signatures[0].split(tag)[0] if tag in result.signatures[0] else ""
    default = BUNDLED_DEFAULT_LAYER if model == BUNDLED_MODEL_NAME else MODEL_LAYERS.get(model)
    return default if default in result.layers else result.layers[-1]


def audit_view(result: AuditResult, embed: FigureEmbedder) -> str:
    """One row per perturbation at :func:`audit_layer` (pairs, pass rate, mean drop, relative drop, note), the
    chart by layer when several were audited, the signature, what was skipped and the warnings."""
    layer = audit_layer(result)
    rows = [(r.perturbation, r.n, r.pass_rate, r.mean_drop, r.relative_drop, r.note)
            for r in (result.row(name, layer) for name in result.perturbations)]
    chart = ""
    if len(result.layers) > 1:
        chart = embed.figure(audit_plots.layer_figure(result, layer), plots.PLOTLY_CONFIG)
    skipped = "".join(f'<div class="bsv-note">Skipped: {text(s)}</div>' for s in result.skipped)
    k = result.layer_position(layer)
    return block(f"Stress test of {len(result.candidates):,} candidate(s), raw F1 at layer {layer}",
                 table(["Perturbation", "Pairs", "Pass rate", "Mean drop", "Relative drop", "Note"], rows,
                       text_columns=("Perturbation", "Note"), what="perturbations"),
                 f'<div class="bsv-note">Pass rate: share of pairs whose F1 dropped; relative drop: 0 = not noticed, '
                 f"1 = as low as an {UNRELATED} text.</div>", chart, signature_line(result.signatures[k]), skipped,
                 warnings_list(result.warnings))


def _group_rows(result: ConsensusResult) -> tuple[list[str], list[tuple]]:
    with_refs = any(g.reference_scores is not None for g in result.groups)
    columns = ["Input", "Samples", "Chosen", "Chosen text", "Expected utility"]
    columns += ["Chosen score", "Oracle", "Gap"] if with_refs else []
    rows = []
    for g in result.groups[:MAX_ROWS]:
        row = (g.id, len(g), g.chosen, g.chosen_text, g.chosen_utility)
        rows.append(row + ((g.chosen_score, g.oracle, g.gap) if with_refs else ()))
    return columns, rows


def consensus_view(result: ConsensusResult, embed: FigureEmbedder) -> str:
    """Each input's MBR choice and its expected utility (with references: its score, the oracle and the gap), the
    means over the inputs, the signature, the warnings, and the first input's matrix."""
    summary = result.summary()
    means = f"Mean expected utility of the chosen samples: {number(summary['mean_expected_utility'])}"
    if "mean_gap" in summary:
        means += (f" · against the references: chosen {number(summary['mean_chosen_score'])}, oracle "
                  f"{number(summary['mean_oracle_score'])}, gap {number(summary['mean_gap'])}, oracle reached in "
                  f"{summary['oracle_reached']:.0%} of {summary['groups_with_references']} input(s)")
    columns, rows = _group_rows(result)
    first = next((g for g in result.groups if len(g) > 1), None)
    figure = "" if first is None else (
        f'<div class="bsv-note">The matrix of input {text(first.id)} (<code>show(result[k])</code> draws another '
        "input's).</div>" + embed.figure(consensus_plots.consensus_heatmap(first), plots.PLOTLY_CONFIG))
    return block(f"MBR consensus of {len(result):,} input(s), utility {result.utility}", f"<div>{means}</div>",
                 table(columns, rows, text_columns=("Input", "Chosen text"), what="inputs", total=len(result)),
                 signature_line(result.signature), warnings_list(result.warnings), figure)


def group_view(group: GroupConsensus, embed: FigureEmbedder) -> str:
    """One input's samples in consensus order (rank, expected utility, with references the score and the oracle)
    and its N x N matrix."""
    ref = group.reference_utility
    columns = ["Rank", "Sample", "Text", "Expected utility"] + (["Reference score", "Oracle"] if ref is not None
                                                                  else [])
    rows = [(int(group.rank[i]), int(i), group.samples[i], float(group.expected_utility[i]))
            + ((float(ref[i]), "★" if group.oracle == i else "") if ref is not None else ())
            for i in group.order]
    figure = embed.figure(consensus_plots.consensus_heatmap(group), plots.PLOTLY_CONFIG) if len(group) > 1 else ""
    notes = "".join(f'<div class="bsv-note">{text(n)}</div>' for n in group.notes)
    return block(f"MBR consensus of input {group.id}: sample {group.chosen} chosen of {len(group)} "
                 f"(utility {group.utility})", table(columns, rows, text_columns=("Text", "Oracle"), what="samples"),
                 notes, figure)
