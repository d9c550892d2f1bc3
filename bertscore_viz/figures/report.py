"""A comparison of systems as ONE self-contained HTML file that opens anywhere, offline, from disk.

The report holds what the Compare page shows: the answer, the system table with 95% intervals, the significance
(tests against the baseline, clusters, the pairwise p values; approximate randomization when given), the charts,
and the segments where two systems differ most, each with both systems' heatmaps and alignments.

Offline by construction: plotly.js is inlined once, every figure is JSON in the page drawn by a small inline
script, no element or figure names a URL, and the page's content security policy (:data:`CONTENT_SECURITY_POLICY`)
forbids the browser any request. Every text from the input (system names, segments, ids) is HTML-escaped, and
inside figures it is escaped as the figures of :mod:`bertscore_viz.figures.plots` escape it, so ``<script>`` shows
as typed.

Bounded size: the file is at most ``max_bytes`` (default :data:`DEFAULT_MAX_BYTES`, 16 MiB) of UTF-8, whatever the
input. The parts besides the drill-downs are bounded by construction: plotly.js (4.6 MiB), at most 100 systems (the
Compare page's limit), the distribution chart drawing at most :data:`CHART_VALUES` scores over all systems, the
scatter at most 4,000 segments with their ids cut to a few characters, warnings and input problems listed up to
:data:`LISTED`; at most 8.1 MiB in the worst case we could make (100 systems, 4,000 segments, ids and names full of
characters that need escaping: tests/unit/test_report.py). Drill-downs, at most ``n_segments`` (default 10, at most
:data:`MAX_SEGMENTS`), are then added in order of the difference for as long as the file stays within the bound, and
the report names those left out. A drill-down is bounded too: each text cut at :data:`TEXT_CHARS` characters, the
whole heatmap up to :data:`WHOLE_TOKENS` tokens a side (about 0.8 MB), a longer pair drawn as the app draws a long
one, as its overview (at most :data:`OVERVIEW_CELLS` blocks a side), the alignment wrapped to :data:`FIGURE_WIDTH`
pixels (about 0.4 MB for 512 tokens a side): two 60-token pairs take about 1.4 MiB, so that five worst-case
drill-downs fit beside the worst fixed part (15.1 MiB measured), and ten drill-downs of sentences of 10-15 words
take about 0.8 MiB.
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from bertscore_viz.engine.results import MultiReferenceExplanation, PairExplanation
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import BertScoreVizError, InputError
from bertscore_viz.evaluation import compare
from bertscore_viz.evaluation.significance import Significance, format_p
from bertscore_viz.figures import compare_plots, plots, tables
from bertscore_viz.versions import __version__

__all__ = ["DEFAULT_SEGMENTS", "MAX_SEGMENTS", "DEFAULT_MAX_BYTES", "FIGURE_WIDTH", "WHOLE_TOKENS", "OVERVIEW_CELLS",
           "TEXT_CHARS", "LISTED", "CHART_VALUES", "CONTENT_SECURITY_POLICY", "Report", "build_report", "report_html",
           "scorer_explainer", "script_safe", "figure_json", "pair_figures", "differing_segments"]

DEFAULT_SEGMENTS = 10
MAX_SEGMENTS = 50
DEFAULT_MAX_BYTES = 16 * 2**20
#: Width in pixels the alignments wrap to: one of the two systems' columns of a drill-down.
FIGURE_WIDTH = 550
#: Up to this many tokens a side a drill-down draws the whole heatmap, every cell with its hover (a 60 x 60 pair:
#: about 0.7 MB of figure); a longer pair is drawn as the app draws a long one: its overview.
WHOLE_TOKENS = 60
#: Most cells a side of a long pair's overview (each the largest similarity over a block of tokens).
OVERVIEW_CELLS = 60
#: Characters of one text shown; a longer text is cut, saying how much is left out.
TEXT_CHARS = 5_000
#: Most warnings and input problems listed.
LISTED = 200
#: Most scores the distribution chart draws over all systems (each system sampled alike, with a fixed seed).
CHART_VALUES = 100_000
#: Segment ids are cut to this many characters in chart labels and lists, and in headings to the next.
_ID_CHARS, _HEADING_CHARS = 24, 200
#: Bytes kept free for the note that names the drill-downs left out.
_SLACK_BYTES = 8_192
#: Inline scripts and styles and data: images (plotly's PNG export) only: no request of any kind leaves the page.
CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                           "img-src data: blob:; font-src data:")
_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;color:#262730}
main{max-width:1180px;margin:0 auto;padding:1.2em 1.5em 3em}
h1{font-size:1.6em;margin:.2em 0}h2{margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}th,td{border:1px solid #ddd;padding:3px 8px}
th{background:#f3f4f6;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
.answer{padding:.8em 1em;border-radius:6px;background:#eef4fb;border:1px solid #c9dcf2}
.answer.significant{background:#eaf6ec;border-color:#b9e0c0}
.muted{color:#666;font-size:.9em}code{word-break:break-all}
pre.text{white-space:pre-wrap;word-break:break-word;background:#f8f8f8;border:1px solid #eee;padding:.5em;margin:.2em 0}
.sides{display:flex;flex-wrap:wrap;gap:1.2em}.side{flex:1 1 560px;min-width:0;overflow-x:auto}
.seg{border-top:2px solid #ddd;margin-top:1.5em;padding-top:.5em}.note{color:#8a5a00;font-size:.9em}
.charts{display:flex;flex-wrap:wrap;gap:1em}.charts>div{flex:1 1 520px;min-width:0}
"""


@dataclass(frozen=True)
class Report:
    """A report and what it holds.

    Attributes:
        html: the document. pair: the two systems of the drill-downs (None with one system).
        segments: positions (from 0) of the segments drawn; left_out: those not drawn to keep within ``max_bytes``.
        n_bytes: the document's size in UTF-8 bytes (at most ``max_bytes``).
    """

    html: str
    pair: tuple[str, str] | None
    segments: tuple[int, ...]
    left_out: tuple[int, ...]
    n_bytes: int


# --- figures ------------------------------------------------------------------------------------------------------
def script_safe(text: str) -> str:
    """JSON text that cannot end or alter the ``<script>`` holding it: ``<``, ``>``, ``&`` written as ``\\u003c``
    ... (they occur only inside JSON strings, where the escapes read back as the same characters)."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@functools.lru_cache(maxsize=1)
def _default_template() -> dict:
    return go.Figure().to_plotly_json()["layout"]["template"]


def figure_json(fig: go.Figure) -> str:
    """A figure as script-safe JSON (arrays as plotly's base64 typed arrays). WebGL traces become their SVG
    counterparts: a report must draw where WebGL is off (a locked-down or headless browser). plotly's default
    template (7 kB) is left out: the page holds it once and the renderer gives it to every figure without one."""
    data = fig.to_plotly_json()
    for trace in data.get("data", []):
        if trace.get("type") == "scattergl":
            trace["type"] = "scatter"
    layout = data.get("layout", {})
    if layout.get("template") == _default_template():
        del layout["template"]
    return script_safe(pio.json.to_json_plotly(data))


def pair_figures(pair: PairExplanation) -> tuple[str, str, str | None]:
    """A pair's heatmap and alignment for the report, as the app draws them: the whole heatmap up to
    :data:`WHOLE_TOKENS` tokens a side, else the app's overview (each cell the largest similarity over a block of
    tokens, at most :data:`OVERVIEW_CELLS` blocks a side); the whole alignment, wrapped to :data:`FIGURE_WIDTH`.

    Returns:
        ``(heatmap JSON, alignment JSON, note)``; the note says when the heatmap is an overview (else None).
    """
    note = None
    if max(pair.cand.n_words(), pair.ref.n_words()) > WHOLE_TOKENS:
        heat = plots.overview_figure(pair, blocks=OVERVIEW_CELLS)
        block = int(heat.layout.meta["block"])
        rows, cols = heat.layout.meta["shape"]
        note = (f"Long pair ({rows} × {cols} tokens): the heatmap is an overview, each cell the largest similarity "
                f"over {block} × {block} tokens. The app's drill-down, or `bertscore-viz show`, draws every token.")
    else:
        heat = plots.heatmap_figure(pair)
    return figure_json(heat), figure_json(plots.alignment_figure(pair, max_width=FIGURE_WIDTH)), note


def _plotly_js() -> str:
    js = get_plotlyjs()
    if "</script" in js.lower():  # it would end its element early (plotly's own HTML export relies on this too)
        raise ValueError("This plotly.js cannot be inlined: it contains '</script'.")
    return js


def _renderer() -> str:
    """Draws each ``<script type="application/json" data-for="ID">`` into the element ``ID`` (with the page's one
    copy of plotly's default template when the figure has none), one after another (the page stays responsive);
    then sets ``data-figures="drawn"``, ``data-drawn`` and ``data-failed`` on ``<html>``. A figure that fails shows
    its error in its place."""
    config = json.dumps(dict(plots.PLOTLY_CONFIG, responsive=True))
    return ("(function(){var cfg=" + config + ",root=document.documentElement,drawn=0,failed=0;"
            "var items=Array.prototype.slice.call(document.querySelectorAll('script[data-for]'));"
            "if(typeof Plotly==='undefined'){root.setAttribute('data-figures','no-plotly');return;}"
            "var tpl=JSON.parse(document.getElementById('plotly-template').textContent);"
            "function next(i){if(i>=items.length){root.setAttribute('data-drawn',drawn);"
            "root.setAttribute('data-failed',failed);root.setAttribute('data-figures','drawn');return;}"
            "var s=items[i],el=document.getElementById(s.getAttribute('data-for'));"
            "try{var f=JSON.parse(s.textContent),lay=f.layout||{};if(!lay.template){lay.template=tpl;}"
            "Plotly.newPlot(el,f.data,lay,cfg);drawn++;}"
            "catch(e){failed++;el.textContent='This figure could not be drawn: '+e;}"
            "setTimeout(function(){next(i+1);},0);}next(0);})();")


# --- HTML pieces ----------------------------------------------------------------------------------------------------
def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _text(text: str) -> str:
    """A text as a block, escaped, cut at :data:`TEXT_CHARS` characters (saying how many are left out)."""
    text = str(text)
    if not text:
        return '<pre class="text muted">(empty)</pre>'
    more = len(text) - TEXT_CHARS
    cut = f'<span class="muted"> … ({more:,} more characters not shown)</span>' if more > 0 else ""
    return f'<pre class="text">{_e(text[:TEXT_CHARS])}{cut}</pre>'


def _cut(text, limit: int) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _fmt(x, digits: int = 4) -> str:
    if x is None:
        return ""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return f"{int(x):,}"
    x = float(x)
    return "n/a" if not np.isfinite(x) else f"{x:.{digits}f}"


def _table(header: Sequence[str], rows: Sequence[Sequence], numeric: set[int] = frozenset(), digits: int = 4) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f'<td class="num">{_fmt(v, digits)}</td>' if i in numeric else f"<td>{_e(v)}</td>"
                                    for i, v in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class _Figures:
    """Hands out figure ids: a placeholder ``<div>`` and the figure's JSON beside it."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, fig_json: str, css: str = "fig") -> str:
        self.count += 1
        fid = f"fig-{self.count}"
        return (f'<div class="{css}" id="{fid}"></div>'
                f'<script type="application/json" data-for="{fid}">{fig_json}</script>')


def _ranking(sig: Significance) -> str:
    return " &gt; ".join(f"<b>{c.rank}.</b> " + ", ".join(f"{_e(s)} ({sig.standing(s).wins})" for s in c.systems)
                         for c in sig.clusters)


# --- sections -------------------------------------------------------------------------------------------------------
def _answer(comparison: compare.Comparison, sig: Significance) -> str:
    head = compare.headline(comparison, sig)
    scale = "rescaled" if comparison.rescaled else "raw"
    text = (f"<b>Best: {_e(head['best'])}</b> — {_e(sig.metric)} {head['score']:.4f} ({scale}; 95% CI "
            f"{head['ci_low']:.4f}–{head['ci_high']:.4f}).<br>{_e(head['sentence'])}")
    css = "answer significant" if head["significant"] else "answer"
    return (f'<div class="{css}">{text}</div><p>Ranking by {_e(sig.metric)} (WMT-style clusters; pairwise wins in '
            f"brackets): {_ranking(sig)}</p>")


def _systems(comparison: compare.Comparison, sig: Significance, surface=None) -> str:
    frame = tables.system_table(comparison, sig, surface)
    cols = list(frame.columns)
    numeric = {i for i, c in enumerate(cols) if c not in ("System", "Best")}
    rows = [[r[c] for c in cols] for r in frame.to_dict(orient="records")]
    return ("<h2>Systems</h2>" + _table(cols, rows, numeric)
            + f'<p class="muted">Best first. {_e(sig.metric)} 95% CI: bootstrap percentile interval '
              f"({sig.n_samples:,} resamples, seed {_e(sig.seed)}).</p>"
            + f"<p>Signature: <code>{_e(comparison.signature)}</code></p>")


def _randomization(sig: Significance, randomization) -> str:
    if randomization is None:
        return ""
    rows = []
    for r in randomization.results:
        boot = next((b.p for b in sig.versus_baseline if b.system == r.system and b.baseline == r.baseline), None)
        rows.append([r.system, r.system_mean, r.difference, None if boot is None else format_p(boot), f"{r.p:.4f}"])
    family = (f"Holm-adjusted over the {len(randomization.results)} tests against the baseline"
              if randomization.correction == "holm" else f"{len(randomization.results)} test(s) against the baseline")
    return (f"<h3>Approximate randomization against {_e(randomization.baseline)}</h3>"
            f'<p class="muted">As sacrebleu\'s --paired-ar: {randomization.n_trials:,} trials, seed '
            f"{_e(randomization.seed)}, p = (c + 1) / (n + 1); {family}.</p>"
            + _table(["System", randomization.metric, f"Δ vs {randomization.baseline}", "p (bootstrap)", "p (AR)"],
                     rows, {1, 2})
            + "<ul>" + "".join(f"<li>{_e(r.sentence(randomization.metric, randomization.alpha))}</li>"
                               for r in randomization.results) + "</ul>")


def _significance(sig: Significance, randomization, fig: _Figures) -> str:
    out = [f"<h2>Significance ({_e(sig.metric)})</h2>",
           f"<p>Paired bootstrap resampling as sacrebleu does it: {sig.n_samples:,} resamples, seed {_e(sig.seed)}, "
           f"p = (c + 1) / (n + 1); p &lt; {sig.alpha:g} counts as significant. {_e(sig.comparisons_note())} "
           f"{_e(sig.resolution_note())}</p>"]
    if sig.versus_baseline:
        out.append(f"<h3>Against the baseline {_e(sig.baseline)}</h3><ul>"
                   + "".join(f"<li>{_e(r.sentence(sig.metric, sig.alpha))}</li>" for r in sig.versus_baseline)
                   + "</ul>")
    out.append(_randomization(sig, randomization))
    if len(sig.systems) > 1:
        rows = [[s.cluster, s.system, s.mean, s.wins, s.losses, f"{s.rank_low}–{s.rank_high}"] for s in sig.standings]
        out.append(f"<h3>Clusters</h3><p>{_ranking(sig)}</p>"
                   + _table(["Cluster", "System", sig.metric, "Wins", "Losses", "Rank range"], rows, {0, 2, 3, 4})
                   + fig(figure_json(compare_plots.pvalue_figure(sig))))
        family = sig.family_text()
        matrix = [[a] + [format_p(p) for p in row] for a, row in zip(sig.systems, sig.matrix)]
        out.append("<details><summary>Pairwise p values as a table" + (f" ({_e(family)})" if family else "")
                   + "</summary>" + _table([""] + list(sig.systems), matrix) + "</details>")
    return "".join(out)


def _charts(ds, comparison: compare.Comparison, metric: str, pair, fig: _Figures) -> str:
    k = len(comparison.results)
    points = max(200, min(compare_plots.MAX_POINTS, CHART_VALUES // max(1, k)))
    charts = [compare_plots.distribution_figure(comparison, metric, max_points=points),
              compare_plots.bucket_figure(tables.length_buckets(ds, comparison, metric), metric)]
    if pair is not None:
        ids = [_cut(s, _ID_CHARS) for s in ds.segment_ids]
        charts.append(compare_plots.scatter_figure(comparison, pair[0], pair[1], ids, metric))
    return ('<h2>Charts</h2><div class="charts">' + "".join(f"<div>{fig(figure_json(c))}</div>" for c in charts)
            + "</div>" + ('<p class="muted">Points above the dotted diagonal: the system on the y axis scores higher '
                          "on that segment.</p>" if pair is not None else ""))


def differing_segments(comparison: compare.Comparison, a: str, b: str, metric: str = "F1",
                       n: int = DEFAULT_SEGMENTS) -> list[int]:
    """Positions of the (at most) ``n`` segments where ``a`` and ``b`` differ most on ``metric``: largest
    ``|a - b|`` first (ties in segment order, as the Compare page sorts), segments without a difference left out."""
    scores = comparison.counted_scores(metric)  # the one NaN rule: an undefined score counts as 0
    diff = np.abs(scores[a] - scores[b])
    order = np.argsort(-diff, kind="stable")
    return [int(i) for i in order[:n] if diff[i] > 0]


def _side(tag: str, system: str, res, i: int, output: str, references: list[str], explain, fig: _Figures) -> str:
    out = [f'<div class="side"><h4>{tag}: {_e(system)} — P {_fmt(res.precision[i])} · R {_fmt(res.recall[i])} · '
           f"F1 {_fmt(res.f1[i])}</h4>", _text(output)]
    if explain is None:
        return "".join(out) + "</div>"
    try:
        explanation = explain(output, references)
    except BertScoreVizError as exc:
        return "".join(out) + f'<p class="note">This pair could not be explained: {_e(exc)}</p></div>'
    pair = explanation
    if isinstance(explanation, MultiReferenceExplanation):
        k = int(explanation.best_reference[2])
        pair = explanation.pairs[k]
        out.append(f'<p class="muted">Drawn against reference {k + 1} of {len(explanation.pairs)}: the one that '
                   "gives F1 (P and R may come from others).</p>")
    heat, align, note = pair_figures(pair)
    if note:
        out.append(f'<p class="note">{_e(note)}</p>')
    out.append(fig(heat) + fig(align))
    return "".join(out) + "</div>"


def _drilldown(ds, comparison: compare.Comparison, pair, metric: str, i: int, rank: int, explain,
               fig: _Figures) -> str:
    a, b = pair
    ra, rb = comparison.results[a], comparison.results[b]
    diff = comparison.scores(metric)[a][i] - comparison.scores(metric)[b][i]
    sid = _cut(ds.segment_ids[i], _HEADING_CHARS)
    where = f"segment {sid}, row {ds.rows[i]}" if str(ds.segment_ids[i]) != str(ds.rows[i]) else f"row {ds.rows[i]}"
    out = [f'<section class="seg"><h3>{rank}. {_e(where)} — {_e(a)} − {_e(b)} = {_e(metric)} {diff:+.4f}</h3>']
    if ds.sources is not None:
        out.append("<h4>Source</h4>" + _text(ds.sources[i]))
    refs = list(ds.references[i])
    for k, ref in enumerate(refs):
        out.append(f"<h4>Reference{f' {k + 1}' if len(refs) > 1 else ''}</h4>" + _text(ref))
    out.append('<div class="sides">')
    for tag, system, res in (("A", a, ra), ("B", b, rb)):
        out.append(_side(tag, system, res, i, ds.systems[system][i], refs, explain, fig))
    return "".join(out) + "</div></section>"


def _notes(ds, comparison: compare.Comparison, notes: Sequence[str]) -> str:
    items = [_e(n) for n in notes if n]
    if comparison.note:
        items.append(_e(comparison.note) + " <b>Showing raw numbers</b> (not rescaled).")
    warns = comparison.warnings()
    problems = list(getattr(ds, "problems", ()) or ())
    out = ""
    if items:
        out += "<h2>Notes</h2><ul>" + "".join(f"<li>{t}</li>" for t in items) + "</ul>"
    if warns:
        more = f" (the first {LISTED})" if len(warns) > LISTED else ""
        out += (f"<details><summary>Scoring warnings: {len(warns):,}{more}</summary><ul>"
                + "".join(f"<li>{_e(w)}</li>" for w in warns[:LISTED]) + "</ul></details>")
    if problems:
        more = f" (the first {LISTED})" if len(problems) > LISTED else ""
        rows = [[p.row, p.column, p.severity, p.problem] for p in problems[:LISTED]]
        out += (f"<details><summary>Problems of the input: {len(problems):,}{more}</summary>"
                + _table(["Row", "Column", "Severity", "Problem"], rows) + "</details>")
    return out


def _document(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(title)}</title><style>{_STYLE}</style></head>\n<body><main>\n{body}\n</main>\n"
            '<script type="application/json" id="plotly-template">'
            + script_safe(json.dumps(_default_template())) + "</script>\n"
            f"<script>{_plotly_js()}</script>\n<script>{_renderer()}</script>\n</body></html>\n")


# --- the report -----------------------------------------------------------------------------------------------------
def build_report(dataset, comparison: compare.Comparison, sig: Significance, *,
                 explain: Callable[[str, list[str]], object] | None = None, pair: tuple[str, str] | None = None,
                 n_segments: int = DEFAULT_SEGMENTS, randomization=None, title: str | None = None,
                 notes: Sequence[str] = (), max_bytes: int = DEFAULT_MAX_BYTES,
                 progress: Callable[[int, int], None] | None = None, surface=None) -> Report:
    """The self-contained HTML report of a comparison (see the module's docstring for what it holds and its bound).

    Args:
        dataset: the :class:`~bertscore_viz.files.dataset.Dataset` scored (outputs, references, sources, ids, rows).
        comparison: its scores (:func:`bertscore_viz.evaluation.compare.results_for`).
        sig: the analysis shown (:func:`bertscore_viz.evaluation.compare.significance`, rebased as wanted): its
            metric, baseline and correction.
        explain: ``explain(candidate, references) -> PairExplanation | MultiReferenceExplanation`` for the
            drill-downs' figures (:func:`scorer_explainer`); None = texts and scores only.
        pair: systems A and B of the scatter and the drill-downs; default the two best by F1 (the page's default).
        n_segments: drill-downs wanted, 0 to :data:`MAX_SEGMENTS`.
        randomization: a :class:`~bertscore_viz.evaluation.randomization.Randomization` to show, or None.
        title: the document's title; notes: sentences shown under "Notes" (escaped).
        max_bytes: the largest document, in UTF-8 bytes.
        progress: ``progress(done, total)`` in drill-downs made.
        surface: the other metrics' scores (:class:`~bertscore_viz.evaluation.sacrebleu_metrics.SurfaceScores`,
            with the metrics of one's own): their columns in the system table. When ``sig`` is a metric of one's
            own, the charts and drill-downs show BERTScore-F1 (its segment scores are the comparison's), said.

    Returns:
        :class:`Report`.

    Raises:
        InputError: ``n_segments`` outside 0..50, an unknown system in ``pair``, or ``max_bytes`` too small for the
            report without drill-downs.
    """
    if isinstance(n_segments, bool) or not isinstance(n_segments, (int, np.integer)) \
            or not 0 <= n_segments <= MAX_SEGMENTS:
        raise InputError(f"The report shows 0 to {MAX_SEGMENTS} segments; got {n_segments!r}.")
    pair = _pair(comparison, pair)
    systems = comparison.systems
    metric = sig.metric if sig.metric in compare.METRICS else "F1"  # charts and drill-downs: BERTScore's scores
    title = title or f"BERTScore comparison: {len(systems)} systems × {dataset.n_segments:,} segments"
    fig = _Figures()
    head = (f"<h1>{_e(title)}</h1><p class=\"muted\">{len(systems)} systems × {dataset.n_segments:,} segments · "
            f"{_e(sig.metric)} · {'rescaled' if comparison.rescaled else 'raw'} · bertscore-viz {_e(__version__)} · "
            "a self-contained report: it opens offline and fetches nothing.</p>"
            + _answer(comparison, sig) + _systems(comparison, sig, surface) + _significance(sig, randomization, fig)
            + (f'<p class="note">{_e(sig.metric)} is a metric of one\'s own (its segment scores were given): the '
               "charts and the drill-downs below show BERTScore-F1.</p>" if metric != sig.metric else "")
            + _charts(dataset, comparison, metric, pair, fig))
    wanted = [] if pair is None else differing_segments(comparison, pair[0], pair[1], metric, n_segments)
    if pair is not None:
        head += (f"<h2>Where {_e(pair[0])} and {_e(pair[1])} differ most</h2><p>The segments with the largest "
                 f"|{_e(pair[0])} − {_e(pair[1])}| on {_e(metric)}, largest first"
                 + (" (all the segments where they differ)" if len(wanted) < n_segments else "")
                 + ". Each system's heatmap (candidate tokens × reference tokens, coloured by similarity; ○ the "
                   "candidate token's best match, × the reference token's) and alignment.</p>"
                 + ('<p class="note">Texts and scores only: no model was given to explain the pairs.</p>'
                    if explain is None and wanted else ""))
    tail = _notes(dataset, comparison, notes)
    fixed = len(_document(title, head + tail).encode("utf-8")) + _SLACK_BYTES
    if fixed > max_bytes:
        raise InputError(f"The report without drill-downs is {fixed / 2**20:.1f} MiB; max_bytes allows "
                         f"{max_bytes / 2**20:.1f} MiB. Raise max_bytes.")
    sections, shown = [], []
    for rank, i in enumerate(wanted, 1):
        part = _drilldown(dataset, comparison, pair, metric, i, rank, explain, fig)
        if fixed + len(part.encode("utf-8")) > max_bytes:
            break  # the next ones are left out, named below
        sections.append(part)
        shown.append(i)
        fixed += len(part.encode("utf-8"))
        if progress is not None:
            progress(len(shown), len(wanted))
    left = wanted[len(shown):]
    if left:  # at most ten ids of a few characters: within the slack kept
        listed = ", ".join(_cut(dataset.segment_ids[i], _ID_CHARS) for i in left[:10])
        sections.insert(0, f'<p class="note">{len(left)} more segment(s) left out to keep this file within '
                           f"{max_bytes / 2**20:.1f} MiB: {_e(listed)}" + (", ..." if len(left) > 10 else "")
                           + ".</p>")
    document = _document(title, head + "".join(sections) + tail)
    return Report(document, pair, tuple(shown), tuple(left), len(document.encode("utf-8")))


def _pair(comparison: compare.Comparison, pair) -> tuple[str, str] | None:
    """The drill-downs' two systems: as given (checked), else the two best by F1 (None with one system)."""
    systems = comparison.systems
    if pair is None:
        return (systems[0], systems[1]) if len(systems) > 1 else None
    if len(pair) != 2 or pair[0] == pair[1] or any(s not in comparison.results for s in pair):
        raise InputError(f"The report's pair must be two different systems of {systems}; got {list(pair)}.")
    return str(pair[0]), str(pair[1])


def report_html(dataset, comparison: compare.Comparison, sig: Significance, **kwargs) -> str:
    """The report's HTML text: :func:`build_report` (same arguments) without its details."""
    return build_report(dataset, comparison, sig, **kwargs).html


def scorer_explainer(scorer: Scorer, dataset, comparison: compare.Comparison) -> Callable[[str, list[str]], object]:
    """``explain(candidate, references)`` giving the pairs the same numbers as the comparison's table: the scorer's
    model (its loaded encoder) at the comparison's layer, idf from every reference of the dataset (as the scores
    were computed) and rescaling when the comparison is rescaled (the scorer's baseline)."""
    idf_sentences = [r for group in dataset.references for r in group] if comparison.idf else None
    sc = scorer.replace(layer=comparison.layer, idf=comparison.idf, idf_sentences=idf_sentences,
                        rescale_with_baseline=comparison.rescaled, idf_weights=None, guard=None)

    def explain(candidate: str, references: list[str]):
        refs = list(references)
        return sc.explain(candidate, refs[0] if len(refs) == 1 else refs)

    return explain
