"""A booktabs table of systems for a paper: P, R, F1, the bootstrap interval, WMT-style clusters and the paired tests
against a baseline system, with the signature in a footnote (pure text, no TeX needed to build it).

Built from :class:`bertscore_viz.evaluation.compare.Comparison` (every system's scores at one setting) and
:class:`bertscore_viz.evaluation.significance.Significance` (intervals, tests, clusters; the metric tested is its
``metric``). Rows are in the significance order (best first); a ``\\midrule`` separates clusters, so every system
above a rule is significantly better than every system below it. The best P, R and F1 are bold. System names and
the signature are escaped (``& % $ # _ { } ~ ^ \\ < > |``; control, format and private-use characters and lone
surrogates are written as their code point, ``[U+001B]``), so any name compiles and prints on a terminal as text.
Needs ``\\usepackage{booktabs}``; :func:`latex_document` wraps a table in a document that compiles with pdflatex.
"""

from __future__ import annotations

import math
import unicodedata

from bertscore_viz.errors import InputError
from bertscore_viz.evaluation.compare import Comparison
from bertscore_viz.evaluation.significance import Significance, format_p

__all__ = ["latex_escape", "latex_table", "latex_document", "SIGNIFICANT_MARK"]

_SPECIALS = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
             "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
             ">": r"\textgreater{}", "|": r"\textbar{}", "\n": " ", "\r": " ", "\t": " "}
#: Marks a difference to the baseline that is significant at the analysis' alpha.
SIGNIFICANT_MARK = r"$^{\dagger}$"


def latex_escape(text: str, breakable: bool = False) -> str:
    """``text`` with every LaTeX special character written so that it prints as itself.

    Args:
        breakable: allow a line break after ``_``, ``=``, ``(`` and ``/`` (for long identifiers such as a
            signature set in ``\\texttt``).

    >>> latex_escape("A&B_50% {x}")
    'A\\\\&B\\\\_50\\\\% \\\\{x\\\\}'
    """
    out = "".join(_SPECIALS.get(c) or _invisible(c) or c for c in str(text))
    if breakable:
        for c in (r"\_", "=", "(", "/"):
            out = out.replace(c, c + r"\allowbreak{}")
    return out


def _invisible(c: str) -> str | None:
    """A character TeX cannot set or a terminal would act on (control characters such as NUL, ESC, form feed and
    DEL, lone surrogates, format and private-use characters), written as its code point (``[U+001B]``); a line or
    paragraph separator as a space; None for any other character."""
    category = unicodedata.category(c)
    if category in ("Zl", "Zp"):
        return " "
    if category in ("Cc", "Cs", "Cf", "Co", "Cn"):
        return f"[U+{ord(c):04X}]"
    return None


def _number(x: float, digits: int, signed: bool = False) -> str:
    if x is None or not math.isfinite(x):
        return "--"
    text = f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"
    return text.replace("-", "$-$", 1).replace("+", "$+$", 1)


def _rows(comparison: Comparison, sig: Significance, digits: int) -> list[str]:
    """One tabular row per system, with ``\\midrule`` between clusters."""
    per_metric = [comparison.means(metric) for metric in ("P", "R", "F1")]  # the one NaN rule (compare.counted)
    if _is_other(sig):  # a metric of one's own: its mean is a column too
        per_metric.append({name: sig.interval(name).mean for name in sig.systems})
    means = {name: tuple(m[name] for m in per_metric) for name in sig.systems}
    pick = [max] * 3 + ([max if sig.higher_is_better else min] if _is_other(sig) else [])
    best = [pick[k]((m[k] for m in means.values() if math.isfinite(m[k])), default=math.nan)
            for k in range(len(pick))]
    versus = {r.system: r for r in sig.versus_baseline}
    rows, last_cluster = [], None
    for name in sig.systems:
        cluster = sig.standing(name).cluster if sig.standings else 1
        if last_cluster is not None and cluster != last_cluster:
            rows.append(r"\midrule")
        last_cluster = cluster
        cells = [str(cluster), latex_escape(name)]
        for k in range(len(pick)):
            value = _number(means[name][k], digits)
            cells.append(rf"\textbf{{{value}}}" if means[name][k] == best[k] else value)
        iv = sig.interval(name)
        cells.append(f"[{_number(iv.low, digits)}, {_number(iv.high, digits)}]")
        if name == sig.baseline:
            cells += [r"\textit{baseline}", ""]
        else:
            test = versus[name]
            mark = SIGNIFICANT_MARK if test.significant(sig.alpha) else ""
            cells += [_number(test.difference, digits, signed=True) + mark, format_p(test.p)]
        rows.append(" & ".join(cells) + r" \\")
    return rows


def _is_other(sig: Significance) -> bool:
    """The metric tested is not one of BERTScore's (a metric of one's own: its mean gets a column)."""
    return sig.metric not in ("P", "R", "F1")


def _notes(comparison: Comparison, sig: Significance) -> str:
    """The explanation under the table: what the intervals, rules, marks and p values are."""
    family = sig.family_text()
    parts = [
        f"Systems ordered by mean {latex_escape(sig.metric)}; horizontal rules separate significance clusters "
        f"(every system above a rule is significantly better than every system below it, $p < {sig.alpha:g}$).",
        f"CI: 95\\% bootstrap interval of the mean {latex_escape(sig.metric)} ({sig.n_samples:,} resamples"
        + (f", seed {sig.seed}" if sig.seed is not None else "") + ").",
        f"$\\Delta$: difference in {latex_escape(sig.metric)} to the baseline {latex_escape(sig.baseline)}; "
        f"{SIGNIFICANT_MARK} $p < {sig.alpha:g}$, paired bootstrap resampling as in sacrebleu"
        + (f" ({latex_escape(family)})" if family else "") + ".",
    ]
    if not sig.higher_is_better:
        parts.append(f"Lower {latex_escape(sig.metric)} is better.")
    if _is_other(sig):
        parts.append(f"{latex_escape(sig.metric)}: the mean of the given segment scores; P, R, F1: BERTScore.")
    if comparison.rescaled:
        parts.append("Scores rescaled with a baseline: $(x - b) / (1 - b)$.")
    elif comparison.note:
        parts.append("Rescaling was asked for but not done: no baseline for this model and layer.")
    return " ".join(parts)


def latex_table(comparison: Comparison, sig: Significance, caption: str | None = None,
                label: str | None = "tab:bertscore", digits: int = 4, notes: bool = True) -> str:
    """A ``table`` float with a booktabs ``tabular`` of every system, best first.

    Args:
        comparison: every system's scores (:func:`bertscore_viz.evaluation.compare.results_for`).
        sig: the analysis of those scores (:func:`bertscore_viz.evaluation.compare.significance`), whose metric,
            baseline, intervals, tests and clusters the table shows.
        caption: the caption text (LaTeX; not escaped); default names the metric and the setting.
        label: ``\\label`` of the table, or None.
        digits: decimals of every score.
        notes: explain the rules, interval, marks and p values under the table.

    Returns:
        LaTeX source: the ``table`` environment followed by ``\\footnotetext`` with the signature (its mark sits in
        the caption), for a document that loads ``booktabs``.

    Raises:
        InputError: the analysis and the comparison name different systems, or ``digits`` is not 0 to 10.
    """
    if set(sig.systems) != set(comparison.results):
        raise InputError(f"The significance analysis covers {sorted(sig.systems)} but the comparison has "
                         f"{sorted(comparison.results)}: compute both from the same scores.")
    if not isinstance(digits, int) or isinstance(digits, bool) or not 0 <= digits <= 10:
        raise InputError(f"digits must be a whole number from 0 to 10, got {digits!r}.")
    metric = latex_escape(sig.metric)
    if caption is None:
        caption = (f"BERTScore of {len(sig.systems)} systems (layer {comparison.layer}, "
                   f"{'idf' if comparison.idf else 'no idf'}{', rescaled' if comparison.rescaled else ''}).")
    own = rf" & {metric}" if _is_other(sig) else ""
    header = rf"\# & System & P & R & F1{own} & 95\% CI & $\Delta$ {metric} & $p$ \\"
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        r"\setlength{\tabcolsep}{4pt}",
        rf"\caption[{{{caption}}}]{{{caption}\protect\footnotemark}}",
    ]
    if label:
        lines.append(rf"\label{{{latex_escape(label)}}}")
    spec = "rlrrr" + ("r" if own else "") + "crr"
    lines += [rf"\begin{{tabular}}{{{spec}}}", r"\toprule", header, r"\midrule", *_rows(comparison, sig, digits),
              r"\bottomrule", r"\end{tabular}"]
    if notes:
        lines += [r"\par\smallskip", r"\parbox{\linewidth}{\footnotesize " + _notes(comparison, sig) + "}"]
    lines += [r"\end{table}",
              r"\footnotetext{BERTScore signature: \texttt{" + latex_escape(comparison.signature, True) + "}}"]
    return "\n".join(lines) + "\n"


def latex_document(table: str) -> str:
    """A complete article around ``table`` (from :func:`latex_table`) that compiles with pdflatex: UTF-8 input,
    T1 fonts (accented Latin names), booktabs."""
    return "\n".join([r"\documentclass{article}", r"\usepackage[T1]{fontenc}", r"\usepackage[utf8]{inputenc}",
                      r"\usepackage{booktabs}", r"\begin{document}", table.rstrip("\n"), r"\end{document}", ""])
