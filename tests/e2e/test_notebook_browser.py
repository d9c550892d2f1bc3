"""examples/notebook.ipynb, executed headless in a real ipykernel (nbclient), then its outputs opened as one HTML page
in Debian's Chromium with the network off and every request but the file refused: the heatmap, the alignment, the
stress test's chart and the MBR matrix are drawn by the plotly.js the first figure's output carries (nothing is
fetched), and there is no script error. nbconvert is not a dependency: the page is written from the executed outputs
as a notebook shows them (each code cell's source, then its outputs: text/html as it is, text as text).

With ``BERTSCORE_VIZ_DOC_IMAGES=1`` the screenshot of the scores and the explained pair is also saved as
docs/images/notebook_view.png, the README's picture."""

from __future__ import annotations

import html

from tests.e2e.conftest import screenshot
from tests.unit.test_notebook_display import execute_notebook

STYLE = ("body{font-family:sans-serif;margin:16px;max-width:1040px} .cell{margin:0 0 18px 0}"
         " pre.in{background:#f5f5f5;border:1px solid #e0e0e0;padding:6px 8px;margin:0 0 6px 0;font-size:13px}"
         " pre.out{margin:0;font-size:13px} .md{font-size:14px;margin:12px 0 8px 0;white-space:pre-wrap}"
         " h3{margin:14px 0 6px 0} table.dataframe{border-collapse:collapse;border:none;font-size:13px}"
         " table.dataframe th,table.dataframe td{border:none;border-bottom:1px solid #ddd;padding:2px 8px}")


def _output(out) -> str:
    data = out.get("data", {})
    if "text/html" in data:
        return data["text/html"]
    if "text/plain" in data:
        return f'<pre class="out">{html.escape(data["text/plain"])}</pre>'
    if out.get("output_type") == "stream":
        return f'<pre class="out">{html.escape(out.get("text", ""))}</pre>'
    return ""


def notebook_page(nb) -> str:
    """One page of the executed notebook: markdown cells as text (a heading as a heading), code cells' source and
    outputs, each cell a ``div.cell`` with its index as ``id="cell-<k>"``."""
    cells = []
    for k, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and cell.source.startswith("#"):  # a heading
            body = f'<h3>{html.escape(cell.source.lstrip("#").strip())}</h3>'
        elif cell.cell_type == "markdown":
            body = f'<div class="md">{html.escape(cell.source)}</div>'
        else:
            body = f'<pre class="in">{html.escape(cell.source)}</pre>' + "".join(map(_output, cell.outputs))
        cells.append(f'<div class="cell" id="cell-{k}">{body}</div>')
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>notebook</title><style>{STYLE}</style>'
            f'</head><body>{"".join(cells)}</body></html>')


def test_the_executed_notebook_draws_offline(browser, tmp_path, monkeypatch):
    nb = execute_notebook(tmp_path, monkeypatch)
    path = tmp_path / "notebook.html"
    path.write_text(notebook_page(nb), encoding="utf-8")
    context = browser.new_context(viewport={"width": 1100, "height": 1000}, offline=True)
    refused: list[str] = []

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:  # a fetch from the network (a CDN): refused, and the test fails below
            refused.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(path.as_uri())
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 4", timeout=30_000)
        drawn = page.evaluate("""() => ({
            plots: document.querySelectorAll('.js-plotly-plot').length,
            svgs: document.querySelectorAll('.js-plotly-plot .main-svg').length,
            heatmaps: document.querySelectorAll('.js-plotly-plot .hm image').length,
            lines: document.querySelectorAll('.js-plotly-plot .scatterlayer path.js-line').length,
            plotly: typeof window.Plotly})""")
        assert drawn["plots"] == 4, drawn  # heatmap, alignment, the stress test's chart, the MBR matrix
        assert drawn["svgs"] >= 4 and drawn["heatmaps"] >= 2 and drawn["lines"] > 0, drawn
        assert drawn["plotly"] == "object"
        assert not refused, f"requested from the network: {refused}"
        assert not errors, errors
        explain = next(k for k, c in enumerate(nb.cells) if c.source.startswith("scorer.explain("))
        box = page.evaluate(f"""() => {{
            const a = document.getElementById('cell-{explain - 3}').getBoundingClientRect();
            const b = document.getElementById('cell-{explain}').getBoundingClientRect();
            return {{x: a.left + window.scrollX, y: a.top + window.scrollY, width: 1060,
                     height: b.bottom - a.top}}; }}""")
        screenshot(page, "notebook_view.png", clip=box, full_page=True)
    finally:
        context.close()
