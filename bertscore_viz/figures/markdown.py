"""A comparison as GitHub-flavoured Markdown, fit for a CI job's summary (``compare --format markdown >>
$GITHUB_STEP_SUMMARY``): the gate's verdict when one was asked, the headline, the system table with intervals,
clusters and each system's test against the baseline, and the signature.

Names come from users (system files, columns): every one is escaped so that it shows as typed, never as Markdown or
HTML (GitHub renders HTML in Markdown): :func:`markdown_text`.
"""

from __future__ import annotations

import unicodedata

from bertscore_viz.evaluation.compare import Comparison, headline
from bertscore_viz.figures.tables import system_table
from bertscore_viz.stats.analysis import Significance
from bertscore_viz.stats.gate import GateResult
from bertscore_viz.stats.paired import PairedResult
from bertscore_viz.stats.randomization import Randomization

__all__ = ["markdown_text", "markdown_summary"]

#: What Markdown (GitHub's, with its math and strike-through) or HTML would act on anywhere in a line.
_INLINE = set("\\`*_[]<>|~!$")
#: What starts a block (a heading, a list, a quote, a rule) at the start of a line.
_LINE_START = set("#+-=>")


def markdown_text(text: object) -> str:
    """``text`` as literal Markdown: shown as typed, never as formatting, a link, a table cell break or HTML.
    Characters Markdown acts on get a backslash (at the start: also those that open a block), ``&`` is ``&amp;``,
    line breaks and control or format characters are spaces."""
    out = []
    for i, ch in enumerate(str(text)):
        if ch == "&":
            out.append("&amp;")
        elif ch in _INLINE or (i == 0 and ch in _LINE_START):
            out.append("\\" + ch)
        elif ch in "\r\n\t" or unicodedata.category(ch) in {"Cc", "Cf", "Zl", "Zp"}:
            out.append(" ")
        else:
            out.append(ch)
    text = "".join(out)
    head = text.split(".", 1)[0] if "." in text else ""
    if head.isdigit():  # "1. x" would start an ordered list
        text = head + "\\" + text[len(head):]
    return text


def _p_cell(result: PairedResult | None, alpha: float) -> str:
    if result is None:
        return "baseline"
    digits = 4 if result.method == "randomization" else 3
    return f"{result.p:.{digits}f}" + ("\\*" if result.p < alpha else "")


def _table(comparison: Comparison, sig: Significance, tests: dict[str, PairedResult]) -> list[str]:
    frame = system_table(comparison, sig)
    m = sig.metric
    own = m not in ("P", "R", "F1")  # a metric of one's own: its mean is a column too
    lines = [f"| Rank | Cluster | System | P | R | F1 | {(markdown_text(m) + ' | ') if own else ''}{markdown_text(m)} "
             f"95% CI | Δ {markdown_text(m)} vs baseline | p |",
             "|---:|---:|---|---:|---:|---:|" + ("---:|" if own else "") + "---|---:|---:|"]
    for row in frame.to_dict(orient="records"):
        name = row["System"]
        label = markdown_text(name) + (" **(best)**" if row["Best"] else "")
        test = tests.get(name)
        delta = "" if test is None else f"{test.difference:+.4f}"
        mine = f"{row[m]:.4f} | " if own else ""
        lines.append(f"| {row['Rank']} | {row['Cluster']} | {label} | {row['P']:.4f} | {row['R']:.4f} | "
                     f"{row['F1']:.4f} | {mine}[{row[f'{m} CI low']:.4f}, {row[f'{m} CI high']:.4f}] | {delta} | "
                     f"{_p_cell(test, sig.alpha)} |")
    return lines


def markdown_summary(title: str, comparison: Comparison, sig: Significance, ar: Randomization | None = None,
                     gate: GateResult | None = None) -> str:
    """The comparison as Markdown: verdict, headline, table (p from approximate randomization when ``ar`` is
    given, else the bootstrap's), how the tests were made, the signature."""
    tests = {r.system: r for r in (ar.results if ar is not None else sig.versus_baseline)}
    lines = [f"### {markdown_text(title)}", ""]
    if gate is not None:
        mark = "✅" if gate.passed else "❌"
        first, *rest = gate.sentences()
        lines += [f"{mark} **{markdown_text(first)}**", ""] + [f"- {markdown_text(s)}" for s in rest]
        lines += [""] if rest else []
    lines += [markdown_text(headline(comparison, sig)["sentence"]), ""]
    lines += _table(comparison, sig, tests)
    how = (f"approximate randomization, {ar.n_trials:,} trials" if ar is not None
           else f"paired bootstrap, {sig.n_samples:,} resamples")
    fam = sig.family_text() if ar is None else ("Holm-adjusted over the tests against the baseline"
                                                if ar.correction == "holm" else "")
    scale = "rescaled" if comparison.rescaled else "raw"
    tested = f"{how}, seed {sig.seed}" + (f", {fam}" if fam else "")
    lines += ["", f"Baseline: {markdown_text(sig.baseline)}. p against the baseline: {tested}; "
              f"\\* p < {sig.alpha:g}. Clusters by {markdown_text(sig.metric)}, WMT style. {scale.capitalize()} "
              "scores; 95% bootstrap percentile intervals.", "",
              f"Signature: {markdown_text(comparison.signature)}", ""]
    return "\n".join(lines)
