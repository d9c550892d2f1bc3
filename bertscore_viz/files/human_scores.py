"""Reading outputs with human scores (for correlation with humans): the Compare page's file formats and layouts,
plus a human-score column. Pure functions over bytes, like :mod:`bertscore_viz.files.upload` (whose table reader,
limits and row numbering they share): every row is either kept or named by a problem.

Layouts, detected from the column names:

* **long** (or **plain**): one row per rated output: ``candidate`` (or hypothesis, output, ...), ``reference``
  (or several), the human score, and optionally ``system``, ``segment_id`` and ``group`` (e.g. a language pair).
  Without a system column every row is its own output and there is no system level.
* **wide**: one row per segment, a ``reference`` column, one column per system and, for each system ``S``, its
  human score in a column ``human_S`` (or ``S_human``).

The human-score column is ``human`` by default; ``human_score``, ``score``, ``da``, ``z``, ``z_score``, ``rating``,
``mqm`` and ``judgement`` are recognised too, or any column can be named.

A human score must be a plain decimal number: ASCII digits with at most one ``.``, an optional sign (``-`` or
U+2212) and an optional exponent (``0.5``, ``-12``, ``1.5e-3``), at most :data:`MAX_HUMAN_MAGNITUDE` in magnitude.
Python's ``float`` also reads ``1_000``, ``nan``, ``inf``, ``infinity`` and digits of other scripts; none of
those is a score here (``0,5`` is named as a decimal comma, ``0x10`` is not read as hexadecimal). A row without
a usable score is listed and left out (never counted as 0). Magnitudes are bounded so that correlations and their
bootstrap intervals are computed correctly in floating point (scores near 1e200 gave r = 0.994 with the interval
(0.0, 0.0): squared deviations overflowed); for the same reason scores that all differ by less than
:data:`MIN_HUMAN_SPREAD` (but not all equal) are refused as a whole, with how to rescale them. Cells read as text
(outputs, references, ids, groups, system names) must be text: a JSON list, object or boolean there is listed.

**Documents for context** (docs/CONTEXT.md): a column ``document`` (or ``doc``, ``doc_name``,
``context_document``), or the one named by ``document_column``, gives each output's document; with document context each
output is then encoded after the previous outputs of its system in that document, in the file's row order. It is
not the ``doc_id`` column, which (as ``segment_id``) names the item that several systems' outputs share (the
summary level). Wide layout: the document is the row's, for every system.

Other metrics' scores (``metric_columns``: e.g. a COMET column of a long or plain layout) are read as human scores
are, one number per row: a row whose cell in any of them is empty, text or not finite is listed and left out for
every metric (never scored as 0); a named column that is missing, is the human-score column or a text column, or
holds no number at all, is refused as a whole (listed) and not used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bertscore_viz.files.limits import MAX_BYTES, MAX_CELL_CHARS, MAX_CELLS, MAX_COLUMNS, MAX_ROWS
from bertscore_viz.files.tables import JsonValue, Problem, read_table

__all__ = ["HumanScored", "MAX_HUMAN_MAGNITUDE", "MIN_HUMAN_SPREAD", "parse_number", "find_human_column",
           "parse_human_scores"]

#: Largest magnitude of a human score (DA is 0-100, z-scores and MQM a few units; 1e15 leaves room for any scale
#: while squares of deviations stay far from overflow).
MAX_HUMAN_MAGNITUDE = 1e15
#: Smallest spread (largest minus smallest) of a file's human scores, unless all are equal: below it, squared
#: deviations underflow and intervals cannot be computed.
MIN_HUMAN_SPREAD = 1e-100
_PLAIN_NUMBER = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,4})?$")
_DECIMAL_COMMA = re.compile(r"^[+-]?[0-9]+,[0-9]+$")
_NUMBER_HELP = "a human score must be a plain decimal number, like 0.5, -12 or 1.5e-3"

_HUMAN_RE = re.compile(r"^(human|human[ _\-]?scores?|scores?|da|z|z[ _\-]?scores?|raw[ _\-]?da|rating|mqm|"
                       r"judge?ments?)$", re.I)  # one column of scores (upload.HUMAN_RE also knows human_<system>)
_GROUP_RE = re.compile(r"^(group|lp|lang[ _\-]?pair|language[ _\-]?pair|domain|subset)$", re.I)
_REF_RE = re.compile(r"^(references?|refs?|targets?|tgt|gold)([ _\-.]?\d+)?$", re.I)
_CAND_RE = re.compile(r"^(candidate|hypothesis|hyp|output|prediction|translation|summary|cand|mt|mt[ _\-]?system)$",
                      re.I)
_SYS_RE = re.compile(r"^(system|system[ _\-]?name|model|sys)$", re.I)
_ID_RE = re.compile(r"^(segment[ _\-]?id|seg[ _\-]?id|id|segment|doc[ _\-]?id)$", re.I)
_SRC_RE = re.compile(r"^(source|src|input)$", re.I)
_DOC_RE = re.compile(r"^(document|doc|doc[ _\-]?name|context[ _\-]?doc(ument)?)$", re.I)
_SKIP_RE = re.compile(r"^(row|index|unnamed: ?0)$", re.I)


@dataclass(frozen=True)
class HumanScored:
    """Rated outputs, one entry per (output, human score).

    Attributes:
        candidates: the rated outputs; references: one non-empty list of references per output.
        human: the human score of each output.
        systems: the system of each output, or None (no system level).
        groups: the group of each output (e.g. language pair), or None.
        segment_ids: the segment of each output (the ``segment_id`` column, else the row number).
        rows: the file row (line) each output came from, numbered as the Compare page numbers them.
        problems: rows left out and why, and warnings.
        layout: ``"long"``, ``"plain"`` or ``"wide"``; human_column: the column read as human scores.
        metrics: ``{column: [score of each output]}`` of the ``metric_columns`` read (empty when none).
        doc_ids: the document of each output for document context ("" for none), or None without a document
            column; document_column: the column read for it, or None.
    """

    candidates: list[str]
    references: list[list[str]]
    human: list[float]
    systems: list[str] | None
    groups: list[str] | None
    segment_ids: list[str]
    rows: list[int]
    problems: list[Problem] = field(default_factory=list)
    layout: str = "long"
    human_column: str | None = None
    metrics: dict = field(default_factory=dict)
    doc_ids: list[str] | None = None
    document_column: str | None = None

    def __len__(self) -> int:
        return len(self.candidates)

    @property
    def ok(self) -> bool:
        return len(self.candidates) >= 3

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


def _empty(problems, layout="long", human_column=None) -> HumanScored:
    return HumanScored([], [], [], None, None, [], [], list(problems), layout, human_column)


def parse_number(text: str) -> tuple[float | None, str]:
    """A human score from its cell text: ``(value, "")``, or ``(None, why)`` when it is empty, not a plain decimal
    number, or above :data:`MAX_HUMAN_MAGNITUDE` in magnitude (``why`` completes "The human score ...")."""
    raw = text.strip()
    if not raw:
        return None, "is empty"
    shown = repr(raw if len(raw) <= 20 else raw[:17] + "...")
    plain = raw.replace("\u2212", "-", 1) if raw.startswith("\u2212") else raw
    if len(plain) > 64 or not _PLAIN_NUMBER.match(plain):
        if _DECIMAL_COMMA.match(plain):
            return None, (f"is {shown}, with a decimal comma, not a finite number as read here: write "
                          f"{plain.replace(',', '.')}")
        return None, f"is {shown}, not a finite number: {_NUMBER_HELP}"
    x = float(plain)
    if not abs(x) <= MAX_HUMAN_MAGNITUDE:
        return None, (f"is {shown}, larger in magnitude than {MAX_HUMAN_MAGNITUDE:g}, the most read here (so that "
                      "correlations and their intervals are computed correctly in floating point); rescale the "
                      "scores")
    return x, ""


def _cell(row: dict, col: str | None):
    return row.get(col, "") if col else ""


def _describe(value) -> str:
    if isinstance(value, tuple):
        return f"a list of {len(value)} strings"
    return value.describe() if isinstance(value, JsonValue) else type(value).__name__


def _not_text(value, what: str) -> str | None:
    """Why a cell read as one text is not one (a JSON list, object or boolean), or None."""
    if isinstance(value, str):
        return None
    return f"The {what} is {_describe(value)}; it must be one string. The row is left out."


def _refs(row: dict, cols) -> list[str]:
    out = []
    for c in cols:
        v = row.get(c)
        vals = list(v) if isinstance(v, tuple) else [v] if isinstance(v, str) else []
        out.extend(x for x in vals if x.strip())
    return out


def find_human_column(columns, human_column: str | None = None) -> str | None:
    """The human-score column: the one named, else the first recognised name (``human``, ``score``, ...)."""
    if human_column:
        return human_column if human_column in columns else None
    return next((c for c in columns if _HUMAN_RE.match(c)), None)


def parse_human_scores(data: bytes, filename: str | None = None, human_column: str | None = None,
                       max_bytes: int = MAX_BYTES, max_rows: int = MAX_ROWS, max_cell_chars: int = MAX_CELL_CHARS,
                       max_columns: int = MAX_COLUMNS, max_cells: int = MAX_CELLS,
                       metric_columns=(), document_column: str | None = None) -> HumanScored:
    """Read a file of rated outputs; never raises for bad content: ``problems`` says what was wrong.

    Args:
        data: the file's bytes; filename: its name (for the extension).
        human_column: the column of human scores; None = the first recognised name.
        max_bytes, max_rows, max_columns, max_cells: limits of reading
            (:func:`bertscore_viz.files.tables.read_table`); max_cell_chars: a longer text leaves its row out.
        metric_columns: columns of other metrics' scores to read beside the human scores (long or plain layout).
        document_column: the column of each output's document for context; None = the first recognised name
            (``document``, ``doc``, ...), "" = none.

    Returns:
        A :class:`HumanScored` (``ok`` False with the reasons in ``problems`` when fewer than 3 rows are usable).
    """
    table, problems = read_table(data, filename, max_bytes, max_rows, max_columns, max_cells)
    if table is None:
        return _empty(problems)
    seen: dict[str, int] = {}
    for i, c in enumerate(table.columns):
        if c and c not in seen:
            seen[c] = i
    cols = list(seen)
    rows = [{c: r[seen[c]] if seen[c] < len(r) else "" for c in cols} for r in table.rows]
    numbers = list(table.row_numbers)
    refs = [c for c in cols if _REF_RE.match(c)]
    if not refs:
        return _empty(problems + [Problem(1, None, "No reference column was found: name it 'reference' "
                                                   "(several: reference, reference_2, ...).")])
    cand = next((c for c in cols if _CAND_RE.match(c)), None)
    seg = next((c for c in cols if _ID_RE.match(c)), None)
    group = next((c for c in cols if _GROUP_RE.match(c)), None)
    doc, doc_problem = _document_column(cols, document_column, {seg, group, cand, *refs})
    problems = problems + doc_problem
    if cand is not None:
        human = find_human_column(cols, human_column)
        if human is None:
            return _empty(problems + [_no_human(cols, human_column)])
        system = next((c for c in cols if _SYS_RE.match(c)), None)
        texts = {cand, system, seg, group, doc, *refs}
        metric_cols, refused = _metric_columns(rows, cols, metric_columns, human, texts)
        entries = [(row, number, cand, human, system) for row, number in zip(rows, numbers)]
        return _build(entries, refs, seg, group, problems + refused, "long" if system else "plain", human,
                      max_cell_chars, metric_cols, doc)
    # wide: system columns paired with human_<system> / <system>_human columns
    if metric_columns:
        problems = problems + [Problem(None, None, "Other metrics' score columns are read from a table with one "
                                                   "row per rated output (a candidate column), not from the wide "
                                                   "layout: they are not used.", "warning")]
    pairs = []
    for c in cols:
        if c in refs or c in (seg, group, doc) or _SRC_RE.match(c) or _SKIP_RE.match(c) or _HUMAN_RE.match(c):
            continue
        h = next((x for x in (f"human_{c}", f"{c}_human", f"human-{c}", f"{c}-human") if x in seen), None)
        if h is not None:
            pairs.append((c, h))
    if not pairs:
        return _empty(problems + [Problem(1, None, "No candidate column and no system with a human-score column was "
                                                   "found. Give one row per rated output with columns candidate, "
                                                   "reference and human (optionally system, segment_id, group), or "
                                                   "one column per system S with its scores in a column human_S.")])
    entries = [(row, number, s, h, s) for row, number in zip(rows, numbers) for s, h in pairs]
    return _build(entries, refs, seg, group, problems, "wide", ", ".join(h for _, h in pairs), max_cell_chars,
                  doc_col=doc)


def _document_column(cols: list[str], asked: str | None, taken: set) -> tuple[str | None, list[Problem]]:
    """The document column for context: the one asked for, else the first recognised name; a column asked for
    that is missing or already read as something else is refused (listed) and no documents are read."""
    if asked == "":
        return None, []
    if asked is None:
        return next((c for c in cols if _DOC_RE.match(c) and c not in taken), None), []
    if asked not in cols or asked in taken:
        why = "is not in the file" if asked not in cols else "is already read as another column"
        return None, [Problem(None, asked, f"The document column {asked!r} {why}: no documents are read, so "
                                           "document context cannot be used.", "warning")]
    return asked, []


def _no_human(cols, asked: str | None) -> Problem:
    if asked:
        return Problem(1, asked, f"The file has no column {asked!r} (it has {', '.join(map(repr, cols[:12]))}).")
    return Problem(1, None, "No human-score column was found: name it 'human' (or score, da, z, rating), or name "
                            f"the column to use (--human COLUMN). The columns are {', '.join(map(repr, cols[:12]))}.")


def _row_problem(row, number, cand_col, human_col, system, ref_cols, seg_col, group_col, layout,
                 max_cell) -> tuple[Problem | None, float | None]:
    """Why the row is left out (None: kept) and its human score."""
    what = f" of system {system!r}" if layout == "wide" else ""
    checks = [(cand_col, f"output{what}"), (seg_col, "segment id"), (group_col, "group")]
    if layout == "long":
        checks.append((system, "system name"))
    for col, name in checks:
        why = _not_text(_cell(row, col), name) if col else None
        if why:
            return Problem(number, col, why), None
    for col in ref_cols:
        value = _cell(row, col)
        if not isinstance(value, (str, tuple)):
            return Problem(number, col, _not_text(value, "reference")), None
    raw = _cell(row, human_col)
    score, why = parse_number(raw) if isinstance(raw, str) else (
        None, f"is {_describe(raw)}, not a finite number: {_NUMBER_HELP}")
    if score is None:
        return Problem(number, human_col, f"The human score{what} {why}; the row is left out."), None
    if not _refs(row, ref_cols):
        return Problem(number, ", ".join(ref_cols), "The reference is empty; the row is left out."), None
    if len(_cell(row, cand_col)) > max_cell or sum(map(len, _refs(row, ref_cols))) > max_cell:
        return Problem(number, cand_col, f"A cell is longer than {max_cell:,} characters; the row is left out."), None
    return None, score


def _metric_columns(rows: list[dict], cols: list[str], asked, human: str, texts: set) -> tuple[list, list]:
    """The metric columns that can be read, and a problem for each refused one."""
    usable, refused = [], []
    for col in dict.fromkeys(asked):
        if col not in cols:
            why = f"The file has no column {col!r}; it is not used as a metric."
        elif col == human or col in texts:
            why = (f"The column {col!r} is the {'human-score' if col == human else 'text'} column; it is not used "
                   "as a metric.")
        elif not any(isinstance(r.get(col), str) and parse_number(r[col])[0] is not None for r in rows):
            why = f"The column {col!r} holds no number; it is not used as a metric."
        else:
            usable.append(col)
            continue
        refused.append(Problem(None, col, why, "warning"))  # no row is left out for it
    return usable, refused


def _metric_values(row: dict, number: int, metric_cols) -> tuple[Problem | None, list[float]]:
    values = []
    for col in metric_cols:
        raw = _cell(row, col)
        score, why = parse_number(raw) if isinstance(raw, str) else (None, f"is {_describe(raw)}, not a number")
        if score is None:
            return Problem(number, col, f"The {col} score {why}; the row is left out for every metric."), []
        values.append(score)
    return None, values


def _build(entries, ref_cols, seg_col, group_col, problems, layout, human_name, max_cell,
           metric_cols=(), doc_col: str | None = None) -> HumanScored:
    problems = list(problems)
    cands, references, human, systems, groups, seg_ids, rows, docs = [], [], [], [], [], [], [], []
    metrics: dict[str, list[float]] = {c: [] for c in metric_cols}
    for row, number, cand_col, human_col, system_col in entries:
        bad, score = _row_problem(row, number, cand_col, human_col, system_col, ref_cols, seg_col, group_col, layout,
                                  max_cell)
        if bad is None:
            bad, values = _metric_values(row, number, metric_cols)
        if bad is not None:
            problems.append(bad)
            continue
        system = system_col if layout == "wide" else (_cell(row, system_col) if system_col else None)
        if system is not None and not system.strip():
            problems.append(Problem(number, system_col, "The system name is empty; the row is left out."))
            continue
        text = _cell(row, cand_col)
        if not text.strip():
            what = f" of system {system!r}" if layout == "wide" else ""
            problems.append(Problem(number, cand_col, f"Empty output{what}; scored as empty text (0).", "warning"))
        cands.append(text)
        for col, value in zip(metric_cols, values):
            metrics[col].append(value)
        references.append(_refs(row, ref_cols))
        human.append(score)
        seg_ids.append((_cell(row, seg_col).strip() if seg_col else "") or str(number))
        rows.append(number)
        systems.append((system or "").strip())
        groups.append((_cell(row, group_col).strip() or "(none)") if group_col else "")
        docs.append(_cell(row, doc_col).strip() if doc_col else "")
    if human and 0 < max(human) - min(human) < MIN_HUMAN_SPREAD:
        problems.append(Problem(None, human_name, f"The human scores all lie within {max(human) - min(human):.3g} of "
                                                  f"each other, less than {MIN_HUMAN_SPREAD:g}: their correlations "
                                                  "and intervals cannot be computed in floating point. Rescale them "
                                                  "(e.g. multiply by 1e100) and read the file again."))
        return _empty(problems, layout, human_name)
    if len(cands) < 3:
        problems.append(Problem(None, None, f"{len(cands)} rated output(s) could be read; a correlation needs at "
                                            "least 3."))
    has_systems = layout in ("long", "wide")
    return HumanScored(cands, references, human, systems if has_systems else None, groups if group_col else None,
                       seg_ids, rows, problems, layout, human_name, metrics, docs if doc_col else None, doc_col)
