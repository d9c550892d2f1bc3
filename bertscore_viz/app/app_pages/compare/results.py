"""The Compare page's answer (the best system, its interval and lead, the clusters), the system table, and the
choice of systems A and B that the tabs share (it follows the ranking until the user picks)."""

from __future__ import annotations

import streamlit as st

from bertscore_viz.app.shared.messages import escape_markdown
from bertscore_viz.app.state.compare import compare_state
from bertscore_viz.evaluation import compare
from bertscore_viz.evaluation.significance import format_p
from bertscore_viz.figures import tables

__all__ = ["SCORE_FMT", "ranking_line", "answer", "table_height", "SURFACE_COLUMNS", "system_table_view",
           "mark_chosen", "follow_ranking", "pair_choice"]

SCORE_FMT = "%.4f"


# --- results --------------------------------------------------------------------------------------------------------
def ranking_line(sig) -> str:
    """``1. {A, B} > 2. {C}``: WMT-style clusters, best first, each system with its pairwise wins."""
    groups = []
    for c in sig.clusters:
        names = ", ".join(f"{escape_markdown(s)} ({sig.standing(s).wins})" for s in c.systems)
        groups.append(f"**{c.rank}.** {names}")
    return " > ".join(groups)


def answer(comparison: compare.Comparison, sig, scale: str) -> None:
    head = compare.headline(comparison, sig)
    best = escape_markdown(head["best"])
    text = (f"**Best: {best}** — {sig.metric} {head['score']:.4f} ({scale}; 95% CI "
            f"{head['ci_low']:.4f}–{head['ci_high']:.4f})")
    if head["runner_up"] is not None and head["margin"] == 0:
        text += f", tied with {escape_markdown(head['runner_up'])}."
    elif head["runner_up"] is not None:
        verdict = "significant" if head["significant"] else "not significant"
        text += (f", {head['margin']:.4f} above {escape_markdown(head['runner_up'])} (2nd): "
                 f"{verdict}, {head['p_text']}.")
    else:
        text += ". Only one system: nothing to compare it with."
    (st.success if head["significant"] else st.info)(text, icon=":material/trophy:")
    st.markdown(f"Ranking by {sig.metric} (clusters; pairwise wins in brackets): {ranking_line(sig)}",
                help="Clusters as the WMT findings rank systems: every system of a cluster is significantly "
                     "better (paired bootstrap, p < 0.05) than every system of each lower cluster. Inside a "
                     "cluster some pairs may still differ significantly: a boundary is drawn only where all the "
                     "systems above it beat all the systems below it. The number after a name counts the systems "
                     "it is significantly better than. Details in the Significance tab.")
    st.caption(escape_markdown(sig.comparisons_note() + " " + sig.resolution_note()))
    c1, c2, c3, c4 = st.columns(4)
    # the lead is green only when it is significant: a non-significant lead is shown without colour
    c1.metric(f"Best {sig.metric}", f"{head['score']:.4f}",
              delta=None if head["margin"] is None else f"+{head['margin']:.4f} vs 2nd",
              delta_color="normal" if head["significant"] else "off",
              help=None if head["significant"] else "The lead over the 2nd system is not significant.")
    c2.metric("95% CI (half-width)", f"±{(head['ci_high'] - head['ci_low']) / 2:.4f}")
    family = sig.family_text()
    c3.metric("p, best vs 2nd", "—" if head["p"] is None else format_p(head["p"]),
              help="The paired-bootstrap p of the best and the 2nd system" + (f" ({family})" if family else "")
                   + ": the same p this pair has in the Significance tab's sentences and matrix. "
                   + escape_markdown(sig.comparisons_note()))
    c4.metric("Systems x segments", f"{len(comparison.results)} x {len(next(iter(comparison.results.values())))}")


def table_height(rows: int) -> int:
    """Pixels that show every row of a table (no scroll box) up to 40 rows."""
    return 38 + 35 * min(max(rows, 1), 40)


#: sacrebleu's scores as sacrebleu prints them (0-100, two decimals).
SURFACE_COLUMNS = {"chrF": "sacrebleu's corpus chrF2 (0–100)", "BLEU": "sacrebleu's corpus BLEU (0–100)",
                   "TER": "sacrebleu's corpus TER (0–100+; lower is better)"}


def _system_columns(table) -> dict:
    """How each column of the system table is shown: 4 decimals for BERTScore, sacrebleu's 2 for its metrics, the
    calibration's percentile with 2."""
    config = {c: st.column_config.NumberColumn(format=SCORE_FMT)
              for c in table.columns if c in ("P", "R", "F1") or "CI" in c}
    config |= {c: st.column_config.NumberColumn(format="%.2f", help=h) for c, h in SURFACE_COLUMNS.items()
               if c in table.columns}
    config |= {"Cluster": st.column_config.NumberColumn(help="WMT-style cluster (1 = best group)"),
               "Wins": st.column_config.NumberColumn(help="systems it is significantly better than")}
    if tables.RANDOM_COLUMN in table.columns:
        config[tables.RANDOM_COLUMN] = st.column_config.NumberColumn(
            format="%.2f", width="small", help="Percentile of the system's mean raw F1 among random pairs of "
                                               "unrelated sentences (this model, layer and language).")
        config[tables.BAND_COLUMN] = st.column_config.TextColumn(
            width="medium", help="The band of outputs humans rated (bottom, middle, top third) whose F1 the mean "
                                 "is most typical of.")
    return config


def system_table_view(comparison, sig, table) -> None:
    st.dataframe(table, hide_index=True, width="stretch", key="cmp_systems", height=table_height(len(table)),
                 column_config=_system_columns(table))
    st.caption(f"Best first. {sig.metric} 95% CI: bootstrap percentile interval "
               f"({sig.n_samples:,} resamples, seed {sig.seed}).")
    st.code("signature: " + comparison.signature, language=None, wrap_lines=True)
    warns = comparison.warnings()
    if warns:
        with st.expander(f"Scoring warnings ({len(warns)})"):
            for w in warns[:200]:
                st.text(w)


def mark_chosen(key: str) -> None:
    """The user picked a value for ``key``: it stays, whatever the ranking does later."""
    compare_state().chosen.add(key)


def follow_ranking(key: str, default: str, options: list[str]) -> None:
    """Until the user picks one, a system choice follows the current ranking (idf, layer, rescaling or the
    metric can change it): the default is written before the widget is drawn. A chosen system stays while it
    exists."""
    if key not in compare_state().chosen or st.session_state.get(key) not in options:
        st.session_state[key] = default


def pair_choice(systems: list[str], fkey: str) -> tuple[str, str]:
    """System A and B, one choice shared by every tab that uses it; until the user picks them, the two best by
    F1 in the current ranking."""
    ka, kb = f"cmp_a_{fkey}", f"cmp_b_{fkey}"
    follow_ranking(ka, systems[0], systems)
    a = st.session_state[ka]
    follow_ranking(kb, next((s for s in systems if s != a), a), systems)
    c1, c2 = st.columns(2)
    a = c1.selectbox("System A", systems, key=ka, on_change=mark_chosen, args=(ka,),
                     help="Until you pick one: the best system by F1 (it follows the ranking).")
    b = c2.selectbox("System B", systems, key=kb, on_change=mark_chosen, args=(kb,),
                     help="Until you pick one: the best system by F1 other than A (it follows the ranking).")
    return a, b


