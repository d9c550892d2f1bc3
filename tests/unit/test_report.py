"""The self-contained HTML report of a comparison: what it holds (the page's numbers), that nothing a user typed is
markup, that nothing points outside the file, its size bound on the worst case we can make, and its errors.

Scored with the real bundled model on small data made here; the size bound on synthetic scores (the report's size
does not depend on where the scores came from) with real explanations of long pairs.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from plotly.offline import get_plotlyjs

from bertscore_viz import Scorer
from bertscore_viz.engine.results import ScoreResult, Signature
from bertscore_viz.errors import InputError
from bertscore_viz.evaluation import compare
from bertscore_viz.evaluation.significance import analyse
from bertscore_viz.figures import tables
from bertscore_viz.figures.report import (
    CONTENT_SECURITY_POLICY,
    DEFAULT_MAX_BYTES,
    WHOLE_TOKENS,
    build_report,
    differing_segments,
    report_html,
    scorer_explainer,
)
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.files.tables import Problem
from bertscore_viz.stats.randomization import paired_randomization

EVIL_A = '<script>alert("a")</script>'
EVIL_B = "B & <b>bold</b> 'quoted'"
REFS = ["The cat sat on the mat.", "A quick brown fox jumps over the lazy dog.", "It rained all day in the city.",
        "She bought fresh bread at the market.", "The meeting was moved to Friday.", "He plays the violin well."]
OUTPUTS = {
    "plain": ["The cat sat on a mat.", "A fast brown fox jumped over a lazy dog.", "It rained the whole day in town.",
              "She bought bread at the market.", "The meeting moved to Friday.", "He plays violin well."],
    EVIL_A: ["<script>alert(1)</script> cat", "fox </script><img src=x onerror=alert(2)>", "rain city day",
             "market bread fresh she", "Friday meeting", "violin"],
    EVIL_B: ["The cat sat on the mat.", "A quick brown fox jumps over the lazy dog.", "It rained in the city.",
             "She bought fresh bread at the market.", "The meeting was moved to Friday.", "He plays the violin."],
}
IDS = ["<i>1</i>", "2", "3 & 4", "4", "5", "6"]
ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "h4", "p", "div", "table",
                "thead", "tbody", "tr", "th", "td", "b", "br", "ul", "li", "code", "pre", "span", "details", "summary",
                "section", "script"}


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.scripts, self.text = [], [], []
        self._script = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = [dict(attrs), ""]

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.scripts.append(tuple(self._script))
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self._script[1] += data
        else:
            self.text.append(data)


def parse(document: str) -> _Tags:
    p = _Tags()
    p.feed(document)
    p.close()
    return p


@pytest.fixture(scope="module")
def scored():
    ds = Dataset({k: list(v) for k, v in OUTPUTS.items()}, [[r] for r in REFS], [f"<src> {i}" for i in range(6)],
                 list(IDS), list(range(2, 8)), [Problem(3, "<col>", "a <b>problem</b> & more", "warning")], None)
    sc = Scorer()
    comparison = compare.results_for(sc, compare.score_dataset(sc, ds))
    sig = compare.significance(comparison, None, "F1")
    return ds, comparison, sig, scorer_explainer(sc, ds, comparison)


@pytest.fixture(scope="module")
def report(scored):
    ds, comparison, sig, explain = scored
    ar = paired_randomization({s: comparison.scores()[s] for s in sig.systems}, sig.baseline, n_trials=1000)
    return build_report(ds, comparison, sig, explain=explain, pair=("plain", EVIL_A), n_segments=3,
                        randomization=ar, notes=["a note <with> markup & more"])


def _figures(document: str) -> dict[str, dict]:
    return {a["data-for"]: json.loads(body) for a, body in parse(document).scripts if "data-for" in a}


# --- nothing typed is markup; nothing points outside ---------------------------------------------------------------
def test_user_text_is_never_markup(report):
    doc = parse(report.html)
    tags = {t for t, _ in doc.tags}
    assert tags <= ALLOWED_TAGS, tags - ALLOWED_TAGS
    plain_scripts = [body for attrs, body in doc.scripts if not attrs]
    data_scripts = [(attrs, body) for attrs, body in doc.scripts if attrs and "data-for" in attrs]
    assert len(plain_scripts) == 2 and plain_scripts[0] == get_plotlyjs()  # the library, then the renderer
    assert all(a == {"type": "application/json", "data-for": a["data-for"]} for a, _ in data_scripts)
    assert [a for a, _ in doc.scripts if a and "data-for" not in a] == [{"type": "application/json",
                                                                         "id": "plotly-template"}]
    assert len(data_scripts) == report.html.count('class="fig"') == 4 + 4 * 3  # 4 charts, 4 figures a segment
    text = "".join(doc.text)
    for typed in (EVIL_A, EVIL_B, "<script>alert(1)</script> cat", "fox </script><img src=x onerror=alert(2)>",
                  "<i>1</i>", "<src> 0", "a <b>problem</b> & more", "a note <with> markup & more"):
        assert typed in text, typed  # shown as typed, as text


def test_figures_show_typed_text_escaped_for_plotly(report):
    figures = _figures(report.html)
    for attrs, body in parse(report.html).scripts:
        if attrs:
            assert "<" not in body and ">" not in body and "&" not in body  # script-safe JSON
    labels = json.dumps(list(figures.values()))
    assert "<script" not in labels and "<img" not in labels and "<b>bold" not in labels
    assert "&lt;script&gt;alert(\\\"a\\\")&lt;/script&gt;" in labels  # plotly shows the escaped name as typed


def test_no_url_outside_the_inlined_library(report):
    rest = report.html.replace(get_plotlyjs(), "")
    assert len(rest) < len(report.html) - 4_000_000
    for pattern in ("http://", "https://", "//cdn", "@import", "url("):
        assert pattern not in rest, pattern
    for tag, attrs in parse(report.html).tags:  # no element loads or links anything
        assert not set(attrs) & {"src", "href", "action", "srcset", "poster", "data"}, (tag, attrs)
    assert f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">' in rest
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY and "unsafe-eval" not in CONTENT_SECURITY_POLICY


# --- the numbers -----------------------------------------------------------------------------------------------------
def test_system_table_and_significance_are_the_pages(scored, report):
    ds, comparison, sig, _ = scored
    text = "".join(parse(report.html).text)
    table = tables.system_table(comparison, sig)
    rows = re.findall(r"<tr>(.*?)</tr>", report.html.split("<h2>Systems</h2>")[1].split("</table>")[0])
    cells = [c for c in (re.findall(r"<td[^>]*>(.*?)</td>", r) for r in rows) if c]
    assert len(cells) == len(table)
    for row, rec in zip(cells, table.to_dict(orient="records")):
        assert row[3] == _html_escape(rec["System"])
        assert row[5:10] == [f"{rec[c]:.4f}" for c in ("P", "R", "F1", "F1 CI low", "F1 CI high")]
    for r in sig.versus_baseline:
        assert r.sentence("F1", sig.alpha) in text
    assert compare.headline(comparison, sig)["sentence"] in text
    assert comparison.signature in text


def _html_escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;") \
        .replace("'", "&#x27;")


def test_drill_downs_are_the_largest_differences_with_the_tables_numbers(scored, report):
    ds, comparison, _, explain = scored
    diff = np.abs(comparison.results["plain"].f1 - comparison.results[EVIL_A].f1)
    assert report.segments == tuple(int(i) for i in np.argsort(-diff, kind="stable")[:3]) and not report.left_out
    figures = _figures(report.html)
    titles = [f["layout"]["title"]["text"] for f in figures.values() if f["data"][0].get("type") == "heatmap"
              and "P " in f["layout"].get("title", {}).get("text", "")]
    for i in report.segments:
        for name in ("plain", EVIL_A):
            res = comparison.results[name]
            header = f"P {res.precision[i]:.4f} · R {res.recall[i]:.4f} · F1 {res.f1[i]:.4f}"
            assert header in "".join(parse(report.html).text)
            pair = explain(ds.systems[name][i], ds.references[i])
            np.testing.assert_allclose(pair.scores, [res.precision[i], res.recall[i], res.f1[i]], atol=1e-6)
            assert any(t.startswith(header) for t in titles), header  # the heatmap's own title agrees


def test_randomization_notes_problems_and_charts(report, scored):
    _, comparison, sig, _ = scored
    text = "".join(parse(report.html).text)
    assert "Approximate randomization against" in text and "1,000 trials" in text
    assert "a <b>problem</b> & more" in text and "Problems of the input: 1" in text
    kinds = [f["data"][0]["type"] for f in _figures(report.html).values()]
    assert kinds[:4] == ["heatmap", "box", "scatter", "scatter"]  # p values, distribution, buckets, A vs B
    assert "scattergl" not in json.dumps(list(_figures(report.html).values()))


def test_differing_segments_largest_first_ties_in_order_no_difference_left_out():
    signature = Signature("all-MiniLM-L6-v2", 4, False)
    a = np.array([0.5, 0.9, 0.7, 0.6, 0.8, 0.4])
    b = np.array([0.5, 0.7, 0.9, 0.6, 0.7, 0.1])
    comparison = compare.Comparison({k: ScoreResult(v, v, v, v, v, v, signature) for k, v in (("A", a), ("B", b))},
                                    4, False, False)
    assert differing_segments(comparison, "A", "B", n=6) == [5, 1, 2, 4]  # |0.3|, |0.2| twice in order, |0.1|
    assert differing_segments(comparison, "A", "B", n=2) == [5, 1]


def test_multi_reference_and_long_pairs(tmp_path):
    long_ref = " ".join(["word", "cat", "dog"] * (WHOLE_TOKENS // 3 + 2))  # one token each: 66 tokens
    ds = Dataset({"A": ["The cat sat.", long_ref + " extra"], "B": ["A dog sat.", "short"]},
                 [["The cat sat on the mat.", "A cat was sitting."], [long_ref, long_ref]], None, ["1", "2"], [2, 3],
                 [], None)
    sc = Scorer()
    comparison = compare.results_for(sc, compare.score_dataset(sc, ds))
    sig = compare.significance(comparison)
    rep = build_report(ds, comparison, sig, explain=scorer_explainer(sc, ds, comparison), pair=("A", "B"))
    text = "".join(parse(rep.html).text)
    assert "Drawn against reference" in text and "of 2: the one that gives F1" in text
    assert "the heatmap is an overview, each cell the largest similarity over" in text
    overviews = [f for f in _figures(rep.html).values() if (f["layout"].get("meta") or {}).get("overview")]
    assert overviews and all(max(f["layout"]["meta"]["shape"]) > WHOLE_TOKENS for f in overviews)


# --- bounds and errors ---------------------------------------------------------------------------------------------
def test_drill_downs_stop_at_the_size_bound_and_are_named(scored):
    ds, comparison, sig, explain = scored
    one = build_report(ds, comparison, sig, explain=explain, pair=("plain", EVIL_A), n_segments=1)
    three = build_report(ds, comparison, sig, explain=explain, pair=("plain", EVIL_A), n_segments=3)
    limit = one.n_bytes + 9_000  # room for one drill-down and the note, not for two
    assert three.n_bytes > limit
    cut = build_report(ds, comparison, sig, explain=explain, pair=("plain", EVIL_A), n_segments=3, max_bytes=limit)
    assert cut.segments == three.segments[:1] and cut.left_out == three.segments[1:] and cut.n_bytes <= limit
    assert "2 more segment(s) left out to keep this file within" in "".join(parse(cut.html).text)
    with pytest.raises(InputError, match="without drill-downs is"):
        build_report(ds, comparison, sig, max_bytes=2**20)


@pytest.mark.parametrize("kwargs, match", [({"n_segments": 51}, "0 to 50 segments"), ({"n_segments": -1}, "0 to 50"),
                                           ({"n_segments": True}, "0 to 50"),
                                           ({"pair": ("plain", "plain")}, "two different systems"),
                                           ({"pair": ("plain", "nope")}, "two different systems")])
def test_bad_arguments_are_refused(scored, kwargs, match):
    ds, comparison, sig, _ = scored
    with pytest.raises(InputError, match=match):
        build_report(ds, comparison, sig, **kwargs)


def test_one_system_and_report_html(scored):
    ds, comparison, sig, _ = scored
    one = Dataset({"plain": ds.systems["plain"]}, ds.references, None, ds.segment_ids, ds.rows, [], None)
    single = compare.Comparison({"plain": comparison.results["plain"]}, comparison.layer, False, False)
    rep = build_report(one, single, compare.significance(single))
    assert rep.pair is None and rep.segments == () and "differ most" not in rep.html
    assert report_html(one, single, compare.significance(single)) == rep.html


@pytest.mark.slow
def test_the_worst_case_stays_within_the_bound():
    """100 systems (the most the Compare page takes), 4,000 segments, names and ids full of characters that need
    escaping, hundreds of warnings and problems; the pair's outputs are 60-token sentences (the longest drawn whole,
    every cell with its hover) on the 50 segments asked for: the fixed part is at most 8.1 MiB, the file at most
    16 MiB, and the drill-downs that do not fit are left out."""
    k, n = 100, 4000
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "&", "<", ">", "delta", "theta", "kappa", "'", "zeta"]  # one token each
    names = [f"system <&> {i:03d} " + "&" * 40 for i in range(k)]
    signature = Signature("all-MiniLM-L6-v2", 4, False)
    results = {}
    for j, name in enumerate(names):
        f = rng.uniform(0.5, 0.9, n)
        warns = tuple(f"row {i}: warning & <text> " * 15 for i in range(300)) if j < 2 else ()
        results[name] = ScoreResult(f, f, f, f, f, f, signature, None, None, warns)
    means = {s: float(r.f1.mean()) for s, r in results.items()}
    comparison = compare.Comparison({s: results[s] for s in sorted(results, key=lambda s: -means[s])}, 4, False, False)
    sig = analyse({s: r.f1 for s, r in comparison.results.items()}, n_samples=200)
    a, b = comparison.systems[:2]
    sentence = [" ".join(rng.choice(words, 58)) for _ in range(2 * n)]  # 58 tokens: drawn whole
    outputs = {s: ["x"] * n for s in names}
    outputs[a], outputs[b] = sentence[:n], sentence[n:]
    ds = Dataset(outputs, [[" ".join(rng.choice(words, 58))] for _ in range(n)], None,
                 ["&<" * 300 + str(i) for i in range(n)], list(range(2, n + 2)),
                 [Problem(i, "col&<", "problem & <b> " * 20) for i in range(300)], None)
    fixed = build_report(ds, comparison, sig, n_segments=0)
    assert fixed.n_bytes <= 8.1 * 2**20
    sc = Scorer()
    rep = build_report(ds, comparison, sig, explain=scorer_explainer(sc, ds, comparison), n_segments=50)
    assert rep.n_bytes <= DEFAULT_MAX_BYTES and len(rep.html.encode("utf-8")) == rep.n_bytes
    assert 3 <= len(rep.segments) < 50 and len(rep.left_out) == 50 - len(rep.segments)
    assert "overview" not in rep.html  # every pair drawn whole: the heaviest figures
