"""The pieces every notebook view is made of: escaped text, a compact table, the signature line, the warnings, and
plotly figures that carry plotly.js once (no Plotly, no IPython needed here but for the figures' own ``to_html``).

Everything a user typed (texts, system names, tokens, warnings that quote them) goes through :func:`text`
(``html.escape``); numbers are printed by :func:`number`. A table shows at most :data:`MAX_ROWS` rows and then says
how many more there are (``to_pandas()`` has them all).

**plotly.js, once.** A figure's HTML is ``fig.to_html(include_plotlyjs=False)``: a ``<div>`` and a ``<script>`` that
calls ``Plotly.newPlot``. The first figure a :class:`FigureEmbedder` draws is preceded by one ``<script>`` holding
the whole plotly.js bundle (``plotly.offline.get_plotlyjs()``, about 4.8 MB, which sets ``window.Plotly``), inline:
nothing is fetched, so the figures draw with no internet, in the live notebook and in its HTML export alike (the
bundle is in the saved output of the first figure, above the others). :data:`NOTEBOOK` is the kernel's embedder:
only its first figure carries the bundle.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Sequence

import numpy as np

__all__ = ["MAX_ROWS", "MAX_WARNINGS", "NOTEBOOK", "STYLE", "FigureEmbedder", "block", "more_line", "number",
           "scores_line", "signature_line", "table", "text", "warnings_list"]

#: Most rows a table of a notebook view shows; the rest are counted in a line below it.
MAX_ROWS = 20
#: Most warnings a view lists; the rest are counted.
MAX_WARNINGS = 10
#: The views' CSS, scoped to their own class so that a notebook's other outputs keep their look.
STYLE = ("<style>.bsv-view{font-family:sans-serif;font-size:13px;line-height:1.4}"
         ".bsv-view table.bsv-table{border-collapse:collapse;margin:4px 0}"
         ".bsv-view table.bsv-table th,.bsv-view table.bsv-table td{padding:2px 8px;border-bottom:1px solid #ddd;"
         "text-align:right;vertical-align:top}"
         ".bsv-view table.bsv-table th.bsv-text,.bsv-view table.bsv-table td.bsv-text{text-align:left;"
         "max-width:40em;overflow-wrap:anywhere}"
         ".bsv-view .bsv-note{color:#555}.bsv-view .bsv-warn{color:#8a4b00}"
         ".bsv-view code{font-size:12px;overflow-wrap:anywhere}.bsv-view .bsv-figure{overflow:auto}</style>")


def text(value: object) -> str:
    """``value`` as HTML text: ``<``, ``>``, ``&`` and quotes escaped, so a typed ``<script>`` reads as typed."""
    return html.escape(str(value), quote=True)


def number(x, digits: int = 4) -> str:
    """A score with ``digits`` decimals; ``n/a`` for None or NaN (an undefined score); integers as they are."""
    if x is None:
        return "n/a"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else ""
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.{digits}f}" if np.isfinite(float(x)) else "n/a"
    return text(x)


def more_line(shown: int, total: int, what: str, where: str = "to_pandas() has them all") -> str:
    """``"… and 12 more rows (to_pandas() has them all)."``, or "" when every one was shown."""
    if total <= shown:
        return ""
    return f'<div class="bsv-note">… and {total - shown:,} more {text(what)} ({text(where)}).</div>'


def table(columns: Sequence[str], rows: Sequence[Sequence[object]], text_columns: Sequence[str] = (),
          what: str = "rows", limit: int = MAX_ROWS, total: int | None = None) -> str:
    """An HTML table of at most ``limit`` rows (then a line saying how many more ``what`` there are, of ``total``:
    default ``len(rows)``; a caller may pass only the first rows of a long result).

    Cells are :func:`number` for numbers and escaped text otherwise; ``text_columns`` are aligned left and wrap.
    """
    left = set(text_columns)
    head = "".join(f'<th class="bsv-text">{text(c)}</th>' if c in left else f"<th>{text(c)}</th>" for c in columns)
    body = []
    for row in itertools.islice(rows, limit):
        cells = "".join(f'<td class="bsv-text">{number(v)}</td>' if c in left else f"<td>{number(v)}</td>"
                        for c, v in zip(columns, row))
        body.append(f"<tr>{cells}</tr>")
    return (f'<table class="bsv-table"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
            + more_line(min(limit, len(rows)), len(rows) if total is None else total, what))


def scores_line(values: Sequence[float], rescaled: bool, raw: Sequence[float] | None = None,
                label: str = "BERTScore") -> str:
    """``BERTScore (rescaled): P 0.9123 · R 0.9011 · F1 0.9066 · raw …``: the reported scores, raw ones beside
    rescaled ones."""
    shown = " · ".join(f"{k} <b>{number(v)}</b>" for k, v in zip(("P", "R", "F1"), values))
    extra = "" if raw is None or not rescaled else " · raw " + " / ".join(number(v) for v in raw)
    scale = "rescaled" if rescaled else "raw"
    return f'<div>{text(label)} ({scale}): {shown}<span class="bsv-note">{extra}</span></div>'


def signature_line(signature: object) -> str:
    return f'<div class="bsv-note">Signature: <code>{text(signature)}</code></div>'


def warnings_list(warnings: Sequence[str]) -> str:
    """The warnings (at most :data:`MAX_WARNINGS`, then how many more), or "" without any."""
    if not warnings:
        return ""
    items = "".join(f"<li>{text(w)}</li>" for w in list(warnings)[:MAX_WARNINGS])
    more = more_line(min(MAX_WARNINGS, len(warnings)), len(warnings), "warnings", "the object's warnings")
    return f'<div class="bsv-warn">{len(warnings)} warning(s):<ul>{items}</ul>{more}</div>'


def block(title: str, *parts: str) -> str:
    """One view: its title (escaped) and its parts (HTML already made), in the views' styled box."""
    return f'{STYLE}<div class="bsv-view"><div><b>{text(title)}</b></div>{"".join(p for p in parts if p)}</div>'


class FigureEmbedder:
    """Turns plotly figures into HTML, the first one preceded by plotly.js inline (module docstring).

    ``FigureEmbedder()`` is for one self-contained fragment (its first figure carries plotly.js); :data:`NOTEBOOK`
    is the kernel's, so that a notebook holds plotly.js once. :meth:`rearm` makes the next figure carry it again.
    """

    def __init__(self) -> None:
        self.pending = True

    def rearm(self) -> None:
        self.pending = True

    def figure(self, fig, config: dict | None = None) -> str:
        """The figure's ``<div>`` and drawing script, after the plotly.js bundle if this is the first figure."""
        from plotly.offline import get_plotlyjs  # plotly: the [app] extra, as the figures themselves

        bundle = ""
        if self.pending:
            bundle = f'<script type="text/javascript">{get_plotlyjs()}</script>'
            self.pending = False
        body = fig.to_html(include_plotlyjs=False, full_html=False, config=config)
        return f'{bundle}<div class="bsv-figure">{body}</div>'


#: The kernel's embedder: the first figure displayed in a notebook session carries plotly.js.
NOTEBOOK = FigureEmbedder()
