"""The Compare page's paper-ready downloads beside the tables: the booktabs LaTeX table
(:func:`bertscore_viz.evaluation.latex.latex_table` of the answer's analysis), the self-contained HTML report
(:func:`bertscore_viz.figures.report.build_report`, made on request: it explains a few segments with the model), and
our scores as mt-metrics-eval files for a test set read from that layout."""

from __future__ import annotations

import streamlit as st

from bertscore_viz.app.app_pages.compare.mtme import mtme_download
from bertscore_viz.app.shared.messages import progress_callback, show_error
from bertscore_viz.app.state.compare import KeptReport, compare_state
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation import compare
from bertscore_viz.evaluation.latex import latex_table
from bertscore_viz.evaluation.significance import Significance
from bertscore_viz.figures import report

__all__ = ["REPORT_SEGMENTS", "latex_bytes", "paper_downloads", "report_key"]

#: Segments where A and B differ most that the report draws with both heatmaps (the report's default).
REPORT_SEGMENTS = report.DEFAULT_SEGMENTS


def latex_bytes(comparison: compare.Comparison, sig: Significance) -> bytes:
    """The LaTeX download: :func:`latex_table` of the scores and the analysis the answer shows, UTF-8."""
    return latex_table(comparison, sig).encode("utf-8")


def report_key(comparison: compare.Comparison, sig: Significance, pair, notes) -> tuple:
    """What a made report depends on (the scores object is this session's own: identity says it is unchanged)."""
    return (id(comparison), sig.metric, sig.baseline, sig.correction, sig.n_samples, tuple(pair or ()),
            tuple(notes))


def _made_report(ds, comparison, sig, explain, pair, notes, surface=None):
    """The report, made on the button's press with a progress bar (its drill-downs run the model) and kept for
    these scores; None until then."""
    state = compare_state()
    key = report_key(comparison, sig, pair, notes)
    kept = state.report
    if kept is not None and kept.key == key and kept.comparison is comparison:
        return kept.report
    if not st.button("Make the HTML report", key="cmp_make_report", icon=":material/description:",
                     help=f"One self-contained HTML file (opens offline): the answer, the system table, the "
                          f"significance, the charts and the {REPORT_SEGMENTS} segments where A and B differ most "
                          "with both heatmaps and alignments."):
        return None
    progress = progress_callback("Report: the segments where A and B differ most", "segments")
    try:
        made = report.build_report(ds, comparison, sig, explain=explain, pair=pair, notes=list(notes),
                                   n_segments=REPORT_SEGMENTS, progress=progress, surface=surface)
    except BertScoreVizError as exc:
        show_error(exc)
        return None
    finally:
        progress.bar.empty()
    state.report = KeptReport(key, comparison, made)
    return made


def paper_downloads(ds, comparison: compare.Comparison, sig: Significance, stem: str, *, explain=None,
                    pair=None, notes=(), evalset=None, reference: str | None = None, surface=None) -> None:
    """LaTeX, the HTML report and (for a test set read from mt-metrics-eval) the metric-score files.

    Args:
        ds, comparison, sig: what the page shows (``sig``: the answer's analysis, F1 against the best system).
        stem: the file names' start.
        explain: ``explain(candidate, references)`` for the report's heatmaps (None: texts and scores only).
        pair: systems A and B of the report's drill-downs; notes: sentences the report repeats.
        evalset, reference: the mt-metrics-eval language pair and reference the dataset came from, if it did.
        surface: the other metrics shown (chrF, BLEU, TER, one's own): their columns in the report.
    """
    c1, c2, c3 = st.columns(3)
    c1.download_button("LaTeX table (booktabs)", data=latex_bytes(comparison, sig), file_name=f"{stem}.tex",
                       mime="text/x-tex", key="cmp_dl_latex", on_click="ignore", icon=":material/download:",
                       help="A table float for a paper: P, R, F1, the 95% CI, clusters separated by rules, Δ and p "
                            "against the best system; the signature in a footnote. Needs \\usepackage{booktabs}.")
    with c2:
        made = _made_report(ds, comparison, sig, explain, pair, notes, surface)
        if made is not None:
            st.download_button("Download report (HTML)", data=made.html.encode("utf-8"),
                               file_name=f"{stem}_report.html", mime="text/html", key="cmp_dl_report",
                               on_click="ignore", icon=":material/download:")
            st.caption(f"{made.n_bytes / 2**20:.1f} MB, {len(made.segments)} segments drawn"
                       + (f", {len(made.left_out)} left out to stay within the size bound" if made.left_out else "")
                       + "; kept while these scores are shown.")
    if evalset is not None and reference is not None:
        mtme_download(c3, evalset, reference, ds, comparison)
