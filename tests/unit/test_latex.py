"""The LaTeX table of systems: the numbers of the comparison and the significance analysis, escaped names, clusters
as rules, marks against the baseline, the signature in a footnote; and it compiles with pdflatex (Debian's texlive).

The systems are scored with the real bundled model on real WMT16 de-en lines: the references themselves (a system
that is clearly best), the real MT outputs, and MT outputs of other segments (clearly worst), under names full of
LaTeX special characters.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz import Scorer
from bertscore_viz.evaluation import compare
from bertscore_viz.evaluation.latex import SIGNIFICANT_MARK, latex_document, latex_escape, latex_table
from bertscore_viz.evaluation.significance import format_p
from bertscore_viz.files.dataset import Dataset

DATA = Path(__file__).resolve().parents[2] / "data" / "wmt16-da-to-english"
N = 30
NAMES = {"human": r"Ref & Co_1 #1 {x}", "mt": r"50% mt~^\sys $|<>", "shifted": "naïve-shift"}
#: The TeX package that holds booktabs.sty in Debian (pdflatex comes with its dependency texlive-latex-base).
APT_PACKAGE = "texlive-latex-recommended"


def real(kind: str, start: int = 0) -> list[str]:
    return (DATA / f"DAseg-newstest2016.{kind}.de-en").read_text(encoding="utf-8").splitlines()[start:start + N]


@pytest.fixture(scope="module")
def analysed():
    refs = real("reference")
    data = Dataset({NAMES["mt"]: real("mt-system"), NAMES["human"]: real("reference"),
                    NAMES["shifted"]: real("mt-system", 300)}, [[r] for r in refs], None,
                   [str(i) for i in range(N)], list(range(2, N + 2)))
    scorer = Scorer()
    comparison = compare.results_for(scorer, compare.score_dataset(scorer, data))
    sig = compare.significance(comparison, baseline=NAMES["mt"])
    return comparison, sig


def test_escape_every_special_character():
    cases = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
             "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}", "<": r"\textless{}",
             ">": r"\textgreater{}", "|": r"\textbar{}", "plain é": "plain é", "a\nb": "a b"}
    for text, expected in cases.items():
        assert latex_escape(text) == expected
    assert latex_escape(r"\_") == r"\textbackslash{}\_"  # the backslash is not read as an escape of its own
    assert latex_escape("m_L4=x", breakable=True) == r"m\_\allowbreak{}L4=\allowbreak{}x"


def test_rows_hold_the_comparison_and_the_tests(analysed):
    comparison, sig = analysed
    assert sig.systems[0] == NAMES["human"] and sig.systems[-1] == NAMES["shifted"]
    text = latex_table(comparison, sig, digits=4)
    body = text.split(r"\midrule", 1)[1].split(r"\bottomrule")[0]
    rows = [r for r in body.splitlines() if r.endswith(r"\\")]
    assert [r.split(" & ")[1] for r in rows] == [latex_escape(s) for s in sig.systems]
    versus = {r.system: r for r in sig.versus_baseline}
    for row, name in zip(rows, sig.systems):
        cells = [c.strip() for c in row[:-2].split(" & ")]
        res = comparison.results[name]
        expected = [f"{float(np.mean(v)):.4f}" for v in (res.precision, res.recall, res.f1)]
        assert [c.replace(r"\textbf{", "").rstrip("}") for c in cells[2:5]] == expected
        assert cells[0] == str(sig.standing(name).cluster)
        iv = sig.interval(name)
        assert cells[5] == f"[{iv.low:.4f}, {iv.high:.4f}]"
        if name == sig.baseline:
            assert cells[6:] == [r"\textit{baseline}", ""]
        else:
            test = versus[name]
            assert cells[7] == format_p(test.p)
            assert cells[6].startswith(f"{test.difference:+.4f}".replace("-", "$-$").replace("+", "$+$"))
            assert cells[6].endswith(SIGNIFICANT_MARK) == (test.p < sig.alpha)
    assert r"\textbf{" in rows[0] and r"\textbf{" not in rows[-1]  # the references win every column
    assert SIGNIFICANT_MARK in rows[0] and SIGNIFICANT_MARK in rows[2]  # far better, far worse: both significant
    # one rule under the header, one between each pair of clusters
    assert len(sig.clusters) == 3
    assert body.count(r"\midrule") == len(sig.clusters) - 1


def test_signature_footnote_caption_label_and_notes(analysed):
    comparison, sig = analysed
    text = latex_table(comparison, sig, label="tab:my_systems")
    assert r"\protect\footnotemark}" in text
    footnote = re.search(r"\\footnotetext\{BERTScore signature: \\texttt\{(.*)\}\}", text).group(1)
    assert footnote.replace(r"\allowbreak{}", "") == latex_escape(comparison.signature)
    assert "all-MiniLM-L6-v2" in footnote
    assert r"\label{tab:my\_systems}" in text
    assert f"{sig.n_samples:,} resamples, seed {sig.seed}" in text
    assert f"baseline {latex_escape(sig.baseline)}" in text
    bare = latex_table(comparison, sig, caption="Mine.", label=None, notes=False)
    assert r"\label" not in bare and "resamples" not in bare and r"\caption[{Mine.}]{Mine.\protect" in bare
    holm = compare.significance(comparison, baseline=NAMES["mt"], correction="holm")
    assert "Holm-adjusted over 3 comparisons" in latex_table(comparison, holm)


def test_refuses_a_mismatched_analysis_and_bad_digits(analysed):
    comparison, sig = analysed
    other = compare.Comparison({k: v for k, v in list(comparison.results.items())[:2]}, comparison.layer,
                               comparison.idf, comparison.rescaled)
    with pytest.raises(ValueError, match="covers .* but the comparison has"):
        latex_table(other, sig)
    with pytest.raises(ValueError, match="digits"):
        latex_table(comparison, sig, digits=True)


def test_the_table_compiles_with_pdflatex(analysed, tmp_path):
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        pytest.fail(f"pdflatex is not installed: add `apt-get install -y --no-install-recommends {APT_PACKAGE}` "
                    "to the CI setup (it brings pdflatex and booktabs).")
    comparison, sig = analysed
    tex = tmp_path / "table.tex"
    tex.write_text(latex_document(latex_table(comparison, sig)), encoding="utf-8")
    run = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    log = (tmp_path / "table.log").read_text(encoding="utf-8", errors="replace")
    assert run.returncode == 0, run.stdout[-3000:]
    assert (tmp_path / "table.pdf").stat().st_size > 1000
    assert "Missing character" not in log and "Undefined control sequence" not in log


CONTROL_NAMES = ["nul\x00sys", "esc\x1b[31mred", "form\x0cfeed", "del\x7fete", "c1\x85next", "zw\u200bsp",
                 "lone\ud800half", "line\u2028sep"]


def test_control_characters_are_written_as_code_points():
    """Issue 46: NUL, ESC, form feed and DEL were kept, so the table did not compile and ``compare --latex`` sent a
    raw ESC to the terminal."""
    assert latex_escape("esc\x1b[31mred") == "esc[U+001B][31mred"
    assert latex_escape("a\x00b\x7fc\x0cd") == "a[U+0000]b[U+007F]c[U+000C]d"
    assert latex_escape("lone\ud800") == "lone[U+D800]" and latex_escape("x\u2028y") == "x y"
    for name in CONTROL_NAMES:
        escaped = latex_escape(name)
        assert all(c.isprintable() for c in escaped), repr(escaped)
        escaped.encode("utf-8")  # a lone surrogate no longer stops the file being written
    assert latex_escape("naïve é") == "naïve é"  # printable text is untouched


def test_a_table_of_control_character_names_compiles(tmp_path):
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        pytest.fail(f"pdflatex is not installed: add `apt-get install -y --no-install-recommends {APT_PACKAGE}` "
                    "to the CI setup (it brings pdflatex and booktabs).")
    rows = "\n".join(rf"{latex_escape(name)} & 0.5 \\" for name in CONTROL_NAMES)
    table = "\\begin{tabular}{lr}\n\\toprule\nSystem & F1 \\\\\n\\midrule\n" + rows + "\n\\bottomrule\n\\end{tabular}"
    tex = tmp_path / "table.tex"
    tex.write_text(latex_document(table), encoding="utf-8")
    run = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:]
    assert (tmp_path / "table.pdf").stat().st_size > 1000
