"""Column roles of an uploaded table: which column holds the references, the systems' outputs, the source, the
segment ids, and which are not scored; decided from documented names, every other decision said as a guess.

Two layouts, chosen from the names and correctable with a :class:`ColumnMapping`:

* **wide**: one row per segment; a ``reference`` column (or several: ``reference, reference_2``), one column per
  system, optional ``source`` and ``segment_id``. Every other column is a system, except the columns named as
  human scores, row numbers or metadata below, which are not scored (and said).
* **long**: one row per (system, segment); columns ``system``, ``candidate``, ``reference`` (or several),
  optional ``segment_id`` and ``source``; other columns are not used (and said).

The documented names (letter case, spaces, ``_`` and ``-`` do not matter) decide without a word: ``reference``
(``reference_2``, ...), ``source``, ``segment_id``, ``system``, ``candidate``, and ``human`` / ``human_S`` /
``S_human`` for the human scores of system ``S`` (a column of the file). Every other name that decides a role is a
:class:`Guess`, said in the column-mapping line (:func:`mapping_line`) and as a warning of the dataset, with how to
correct it: aliases (``ref``, ``gold``, ``target``, ``tgt``; ``src``, ``input``; ``id``, ``seg_id``, ``segment``;
``model``, ``sys``; ``hypothesis``, ``output``, ``translation``, ...), human-score names (``score``, ``z``,
``raw_da``, ``rating``, ``mqm``, ...), row numbers (``row``, ``index``, ``Unnamed: 0``) and metadata (``doc_id``,
``lp``, ``domain``, ...). A name that looks like a human score of a system the file does not have (``Human-B``, a
WMT system) is a system, said; so is a column holding only numbers. A system column is never dropped silently.

All patterns here are anchored alternations of literals without nested repetition: linear in the name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bertscore_viz.errors import InputError
from bertscore_viz.files.score_columns import wide_score_column
from bertscore_viz.files.tables import Problem, Table

__all__ = ["ColumnMapping", "Guess", "Detection", "HUMAN_RE", "detect_columns", "detect_mapping",
           "human_score_columns", "mapping_line", "check_mapping", "header_problems", "NUMBER_SAMPLE_ROWS",
           "mapping_from_args"]

_SEP = r"[ _\-.]?"
_REF_DOC = re.compile(rf"^references?({_SEP}\d+)?$", re.I)
_REF_RE = re.compile(rf"^(references?|refs?|targets?|tgt|gold)({_SEP}\d+)?$", re.I)
_SRC_DOC = re.compile(r"^source$", re.I)
_SRC_RE = re.compile(r"^(source|src|input)$", re.I)
_ID_DOC = re.compile(r"^segment[ _\-]?id$", re.I)
_ID_RE = re.compile(r"^(segment[ _\-]?id|seg[ _\-]?id|id|segment)$", re.I)
_SYS_DOC = re.compile(r"^system$", re.I)
_SYS_RE = re.compile(r"^(system|system[ _\-]?name|model|sys)$", re.I)
_CAND_DOC = re.compile(r"^candidate$", re.I)
_CAND_RE = re.compile(r"^(candidate|hypothesis|hyp|output|prediction|translation|summary|cand)$", re.I)
_ROW_RE = re.compile(r"^(row|index|unnamed: ?0|#)$", re.I)
_DOC_DOC = re.compile(r"^doc[ _\-]?id$", re.I)
_DOC_RE = re.compile(r"^(doc[ _\-]?id|document[ _\-]?id|document|doc|doc[ _\-]?name)$", re.I)
_META_RE = re.compile(r"^(lp|lang|lang[ _\-]?pair|language[ _\-]?pair|src[ _\-]?lang|"
                      r"tgt[ _\-]?lang|domain|group|subset|notes?|comments?)$", re.I)
#: Names that always mean one column of human scores (not a system's); ``human_S`` needs a column ``S``.
_HUMAN_ONE = re.compile(r"^(human|human[ _\-]?scores?|scores?|da|z|z[ _\-]?scores?|raw[ _\-]?da|ratings?|mqm|"
                        r"judge?ments?)$", re.I)
_HUMAN_PREFIX = re.compile(r"^human[ _\-]", re.I)
_HUMAN_SUFFIX = re.compile(r"[ _\-]human$", re.I)
#: Names that may hold human scores (a column named so on the Compare page is pointed to the Agreement page).
HUMAN_RE = re.compile(r"^(human|human[ _\-].+|.+[ _\-]human|z[ _\-]?scores?|raw[ _\-]?da|rating|mqm|"
                      r"judge?ments?)$", re.I)
_NUMBER = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$")  # unambiguous: linear
#: Rows looked at to tell a column of numbers (scores) from one of outputs.
NUMBER_SAMPLE_ROWS = 200
_FIX = {"reference": "pick the reference column(s) in the column mapping (command line: --reference-column)",
        "segment id": "set the segment id column to (none) or another column in the column mapping (command line: "
                      "--segment-id-column)",
        "source": "set the source column to (none) or another column in the column mapping (command line: "
                  "--source-column)",
        "system name": "pick the system name column in the column mapping (command line: --system-column)",
        "candidate": "pick the output (candidate) column in the column mapping (command line: --candidate-column)",
        "system": "leave it out of the system columns in the column mapping (command line: --system-columns)",
        "not scored": "add it to the system columns in the column mapping (command line: --system-columns)",
        "score": "leave it out of the score columns in the column mapping (command line: --score-columns)",
        "document id": "set the document id column to (none) or another column in the column mapping (command line: "
                       "--document-column)"}


@dataclass(frozen=True)
class ColumnMapping:
    """Which column is what.

    Attributes:
        layout: ``"wide"`` or ``"long"``.
        references: reference column(s), several = several references per segment.
        systems: (wide) one column per system, named after its column.
        system, candidate: (long) the column naming the system and the one holding its output.
        source, segment_id: optional columns.
        document: optional column of document ids (document context, docs/CONTEXT.md): a segment's previous
            segments are the rows before it with the same id, in file order.
        scores: columns of other metrics' scores (:mod:`bertscore_viz.files.score_columns`): in the long layout
            the metric is named after the column; in the wide layout each is ``<metric>_<system>``.
    """

    layout: str
    references: tuple[str, ...] = ()
    systems: tuple[str, ...] = ()
    system: str | None = None
    candidate: str | None = None
    source: str | None = None
    segment_id: str | None = None
    scores: tuple[str, ...] = ()
    document: str | None = None

    def as_dict(self) -> dict:
        return {"layout": self.layout, "references": list(self.references), "systems": list(self.systems),
                "system": self.system, "candidate": self.candidate, "source": self.source,
                "segment_id": self.segment_id, "scores": list(self.scores), "document": self.document}

    def score_metrics(self) -> dict[str, dict[str, str]]:
        """``{metric: {system: column}}`` of the score columns (long layout: ``{column: {"": column}}``, every
        system's rows); a wide column that names no system of the mapping is left out (:func:`check_mapping`
        lists it)."""
        out: dict[str, dict[str, str]] = {}
        for c in self.scores:
            if self.layout == "long":
                out[c] = {"": c}
                continue
            parts = wide_score_column(c, self.systems)
            if parts is not None:
                out.setdefault(parts[0], {})[parts[1]] = c
        return out


@dataclass(frozen=True)
class Guess:
    """A column role decided from a name that is not a documented one (or from the column's values).

    Attributes:
        column: the column.
        role: ``"reference"``, ``"segment id"``, ``"source"``, ``"system name"``, ``"candidate"``, ``"system"`` or
            ``"not scored"``.
        reason: why, in words (``"'id' is a known alias of 'segment_id'"``).
    """

    column: str
    role: str
    reason: str

    def sentence(self) -> str:
        what = {"not scored": "not scored", "system": "a system's outputs",
                "score": "another metric's scores"}.get(self.role, f"the {self.role}")
        return f"Guessed: column {self.column!r} is read as {what} ({self.reason}). If it is not, {_FIX[self.role]}."

    def as_problem(self) -> Problem:
        return Problem(1, self.column, self.sentence(), "warning")


@dataclass(frozen=True)
class Detection:
    """The detected mapping (None when no reference or no system was found), the guesses made, the columns left
    out and why (``{column: reason}``), and the problems (errors) when no mapping could be made."""

    mapping: ColumnMapping | None
    guesses: tuple[Guess, ...]
    unused: dict
    problems: tuple[Problem, ...]

    @property
    def all_problems(self) -> list[Problem]:
        """The errors, then each guess as a warning on the header row."""
        return list(self.problems) + [g.as_problem() for g in self.guesses]


def _ref_order(name: str) -> tuple[int, str]:
    digits = len(name) - len(name.rstrip("0123456789"))
    return (int(name[-digits:]) if digits else 0, name)


def _pick(cols: list[str], pattern: re.Pattern, documented: re.Pattern) -> str | None:
    """The first documented name, else the first alias."""
    return next((c for c in cols if documented.match(c)), next((c for c in cols if pattern.match(c)), None))


def _numbers_only(table: Table | None, column: str) -> bool:
    if table is None or column not in table.columns:
        return False
    i = table.columns.index(column)
    values = [r[i] for r in table.rows[:NUMBER_SAMPLE_ROWS] if i < len(r)]
    texts = [v for v in values if isinstance(v, str) and v.strip()]
    return bool(texts) and len(texts) == len(values) and all(_NUMBER.match(v) for v in texts)


def _score_like(table: Table | None, column: str) -> bool:
    """Most of the column's sampled non-empty cells (at least 80%, and at least one) are numbers: a column of
    scores with a few bad cells (listed when it is read) is still one."""
    if table is None or column not in table.columns:
        return False
    i = table.columns.index(column)
    texts = [r[i].strip() for r in table.rows[:NUMBER_SAMPLE_ROWS]
             if i < len(r) and isinstance(r[i], str) and r[i].strip()]
    numbers = sum(bool(_NUMBER.match(v)) for v in texts)
    return numbers > 0 and numbers >= 0.8 * len(texts)


def human_score_columns(columns) -> dict[str, str]:
    """The columns of human scores among ``columns`` and what each scores: ``{column: "" }`` for one column of
    scores (``human``, ``score``, ``z``, ``rating``, ...), ``{column: S}`` for ``human_S`` / ``S_human`` when
    ``S`` is itself a column. A ``human_S`` without a column ``S`` (``Human-B``, a WMT system) is not one."""
    names = [c for c in dict.fromkeys(columns) if c]
    lowered = {c.lower(): c for c in names}
    out: dict[str, str] = {}
    for c in names:
        if _HUMAN_ONE.match(c):
            out[c] = ""
            continue
        for pattern, other in ((_HUMAN_PREFIX, c[6:]), (_HUMAN_SUFFIX, c[:-6])):
            if pattern.search(c) and other.lower() in lowered and lowered[other.lower()] != c:
                out[c] = lowered[other.lower()]
                break
    return out


def _role_guesses(cols, refs, source, seg, doc=None) -> list[Guess]:
    out = [Guess(r, "reference", f"{r!r} is a known alias of 'reference'") for r in refs if not _REF_DOC.match(r)]
    if doc and not _DOC_DOC.match(doc):
        out.append(Guess(doc, "document id", f"{doc!r} is a known alias of 'doc_id'"))
    if source and not _SRC_DOC.match(source):
        out.append(Guess(source, "source", f"{source!r} is a known alias of 'source'"))
    if seg and not _ID_DOC.match(seg):
        out.append(Guess(seg, "segment id", f"{seg!r} is a known alias of 'segment_id'"))
    return out


def _unused_in_wide(cols, refs, source, seg, table) -> tuple[list[str], dict, list[Guess]]:
    """The system columns, the columns not scored (with the reason) and the guesses of the wide layout."""
    humans = human_score_columns(cols)
    systems, unused, guesses = [], {}, []
    for c in cols:
        if c in refs or c in (source, seg):
            continue
        if c in humans:
            unused[c] = f"human scores of {humans[c]!r}" if humans[c] else "human scores"
            if not (c.lower() == "human" or humans[c]):
                guesses.append(Guess(c, "not scored", f"{c!r} is a name of human scores"))
        elif _ROW_RE.match(c) or _META_RE.match(c) or _ID_RE.match(c) or _SRC_RE.match(c):
            kind = "row numbers" if _ROW_RE.match(c) else ("another id or source column" if not _META_RE.match(c)
                                                            else "metadata")
            unused[c] = kind
            guesses.append(Guess(c, "not scored", f"{c!r} is a name of {kind}"))
        else:
            systems.append(c)
            if _HUMAN_PREFIX.search(c) or _HUMAN_SUFFIX.search(c):
                guesses.append(Guess(c, "system", f"its name looks like human scores, but the file has no system "
                                                  f"column {c[6:] if _HUMAN_PREFIX.search(c) else c[:-6]!r} for them "
                                                  "to score, so it is read as a system such as WMT's Human-B"))
            elif _numbers_only(table, c):
                guesses.append(Guess(c, "system", "it holds only numbers, like scores, but its name is not one of "
                                                  "the names of scores"))
    return systems, unused, guesses


def _long_scores(candidates: list[str], table: Table | None) -> list[str]:
    """The long layout's columns of other metrics' scores: columns holding only numbers that are not named as
    human scores, row numbers or metadata."""
    humans = human_score_columns(candidates)
    return [c for c in candidates if c not in humans and not (_ROW_RE.match(c) or _META_RE.match(c) or _ID_RE.match(c))
            and _score_like(table, c)]


def _wide_scores(systems: list[str], guesses: list[Guess], table: Table | None
                 ) -> tuple[list[str], list[str], list[Guess]]:
    """The wide layout's system columns split into systems and score columns: a column of numbers named
    ``<metric>_<system>`` (or ``<system>_<metric>``) for a system column of texts is that metric's scores."""
    texts = [s for s in systems if not _score_like(table, s)]
    named = {s: wide_score_column(s, texts) for s in systems if s not in texts}
    metrics = {parts[0] for parts in named.values() if parts is not None}
    # a column named <metric>_<system> of a metric found among the columns of numbers is that metric's too, even
    # when its cells are text (bad cells, listed when read)
    for s in texts[:]:
        parts = wide_score_column(s, [t for t in texts if t != s])
        if parts is not None and parts[0] in metrics:
            named[s] = parts
            texts.remove(s)
    scores = [s for s in systems if named.get(s) is not None]
    if not scores:
        return systems, [], guesses
    kept = [g for g in guesses if g.column not in scores]
    for c in scores:
        metric, system = named[c] or ("", "")
        kept.append(Guess(c, "score", f"its name is {metric!r} with the system {system!r}, and it holds numbers"))
    return [s for s in systems if s not in scores], scores, kept


def detect_columns(columns, table: Table | None = None) -> Detection:
    """Decide the layout and the role of each column from the names (and, for the guess that a column holds
    numbers, the first :data:`NUMBER_SAMPLE_ROWS` rows of ``table``).

    Args:
        columns: the column names, in order (duplicates and empty names are ignored).
        table: the table, when its values may be looked at.

    Returns:
        A :class:`Detection`; its ``mapping`` is None (with ``problems`` saying why) when no reference column, or
        no system, is found.
    """
    cols = [c for c in dict.fromkeys(columns) if c]
    refs = sorted([c for c in cols if _REF_RE.match(c)], key=_ref_order)
    if not refs:
        return Detection(None, (), {}, (Problem(1, None, f"No reference column was found among {names(cols)}. Name "
                                                         "the reference column 'reference' (several references: "
                                                         "reference, reference_2, ...), or pick it in the column "
                                                         "mapping."),))
    source = _pick([c for c in cols if c not in refs], _SRC_RE, _SRC_DOC)
    seg = _pick([c for c in cols if c not in refs], _ID_RE, _ID_DOC)
    doc = _pick([c for c in cols if c not in refs and c not in (source, seg)], _DOC_RE, _DOC_DOC)
    sys_col = _pick(cols, _SYS_RE, _SYS_DOC)
    cand_col = _pick(cols, _CAND_RE, _CAND_DOC)
    guesses = _role_guesses(cols, refs, source, seg, doc)
    if sys_col and cand_col:
        if not _SYS_DOC.match(sys_col):
            guesses.append(Guess(sys_col, "system name", f"{sys_col!r} is a known alias of 'system'"))
        if not _CAND_DOC.match(cand_col):
            guesses.append(Guess(cand_col, "candidate", f"{cand_col!r} is a known alias of 'candidate'"))
        used = set(refs) | {sys_col, cand_col, source, seg, doc}
        scores = _long_scores([c for c in cols if c not in used], table)
        guesses += [Guess(c, "score", "it holds numbers, like a metric's score of each row's output")
                    for c in scores]
        unused = {c: "not used in the long layout" for c in cols if c not in used and c not in scores}
        return Detection(ColumnMapping("long", tuple(refs), (), sys_col, cand_col, source, seg, tuple(scores), doc),
                         tuple(guesses), unused, ())
    systems, unused, more = _unused_in_wide([c for c in cols if c != doc], refs, source, seg, table)
    systems, scores, more = _wide_scores(systems, more, table)
    if not systems:
        return Detection(None, tuple(guesses + more), unused, (Problem(1, None, f"No system column was found among "
                         f"{names(cols)}. Add one column per system (named after the system) next to the reference "
                         "column, or use the long layout with columns system, candidate, reference."),))
    return Detection(ColumnMapping("wide", tuple(refs), tuple(systems), None, None, source, seg, tuple(scores), doc),
                     tuple(guesses + more), unused, ())


def detect_mapping(columns, table: Table | None = None) -> tuple[ColumnMapping | None, list[Problem]]:
    """Guess the layout and the role of each column from the names (:func:`detect_columns`).

    Returns:
        ``(mapping, problems)``; mapping is None when no reference column (or no system) can be found; problems
        are those errors, then each guess as a warning on row 1 naming its column.
    """
    found = detect_columns(columns, table)
    return found.mapping, found.all_problems


def names(cols) -> str:
    """Up to 12 column names, quoted, for messages."""
    cols = list(cols)
    shown = ", ".join(repr(c) for c in cols[:12])
    return f"[{shown}{', ...' if len(cols) > 12 else ''}]" if cols else "no named columns"


def mapping_line(mapping: ColumnMapping, guesses=(), unused: dict | None = None) -> str:
    """The column mapping in one line, every guess marked: ``"Wide layout: reference 'ref' (guessed); 3 systems:
    'A', 'B', 'Human-B' (guessed); segment id 'id' (guessed); not scored: 'human' (human scores)."``"""
    guessed = {g.column for g in guesses}

    def q(c: str) -> str:
        return f"{c!r} (guessed)" if c in guessed else repr(c)

    parts = [f"reference{'s' if len(mapping.references) > 1 else ''} {', '.join(map(q, mapping.references))}"
             if mapping.references else "no reference"]
    if mapping.layout == "long":
        parts.append(f"system names {q(mapping.system) if mapping.system else '(none)'}")
        parts.append(f"outputs {q(mapping.candidate) if mapping.candidate else '(none)'}")
    else:
        shown = ", ".join(map(q, mapping.systems[:20])) + (", ..." if len(mapping.systems) > 20 else "")
        parts.append(f"{len(mapping.systems)} system{'s' if len(mapping.systems) != 1 else ''}: {shown}")
    parts.append(f"segment id {q(mapping.segment_id)}" if mapping.segment_id else "segment id: the row number")
    if mapping.source:
        parts.append(f"source {q(mapping.source)}")
    if mapping.document:
        parts.append(f"documents {q(mapping.document)}")
    if mapping.scores:
        parts.append("other metrics' scores: " + ", ".join(map(q, mapping.scores[:20]))
                     + (", ..." if len(mapping.scores) > 20 else ""))
    if unused:
        parts.append("not scored: " + ", ".join(f"{q(c)} ({why})" for c, why in list(unused.items())[:20]))
    return f"{mapping.layout.capitalize()} layout: " + "; ".join(parts) + "."


def check_mapping(mapping: ColumnMapping, columns: list[str]) -> list[Problem]:
    """What is wrong with a mapping for these columns (empty when it can be used)."""
    problems = []
    known = set(columns)
    named = list(mapping.references) + list(mapping.systems) + list(mapping.scores) + [
        c for c in (mapping.system, mapping.candidate, mapping.source, mapping.segment_id, mapping.document) if c]
    for c in named:
        if c not in known:
            problems.append(Problem(None, c, f"The mapping names column {c!r}, which the file does not have "
                                             f"(it has {names(columns)})."))
    if mapping.layout not in ("wide", "long"):
        problems.append(Problem(None, None, f"The layout is {mapping.layout!r}; it must be 'wide' or 'long'."))
    if not mapping.references:
        problems.append(Problem(None, None, "No reference column is selected. Pick the column holding the "
                                            "reference(s) in the column mapping."))
    if mapping.layout == "wide" and not mapping.systems:
        problems.append(Problem(None, None, "No system column is selected. Pick at least one column holding a "
                                            "system's outputs."))
    if mapping.layout == "long" and not (mapping.system and mapping.candidate):
        problems.append(Problem(None, None, "The long layout needs a column naming the system and a column with "
                                            "its output (candidate)."))
    clash = set(mapping.references) & (set(mapping.systems) | {mapping.candidate, mapping.system})
    for c in sorted(x for x in clash if x):
        problems.append(Problem(None, c, f"Column {c!r} is mapped both as a reference and as a system output."))
    taken = set(mapping.references) | set(mapping.systems) | {mapping.candidate, mapping.system, mapping.source,
                                                               mapping.segment_id}
    for c in mapping.scores:
        if c in taken:
            problems.append(Problem(None, c, f"Column {c!r} is mapped both as scores and as another role; pick one."))
        elif mapping.layout == "wide" and c in known and wide_score_column(c, mapping.systems) is None:
            problems.append(Problem(None, c, f"The score column {c!r} names no system of the mapping. In the wide "
                                             "layout name each metric's columns <metric>_<system> (e.g. "
                                             "comet_sysA, comet_sysB), one per system."))
    return problems


def header_problems(columns: tuple[str, ...]) -> tuple[list[str], list[int], list[Problem]]:
    """Usable column names and their positions; duplicate and unnamed columns reported (first kept)."""
    seen: dict[str, int] = {}
    out, positions, problems = [], [], []
    for i, c in enumerate(columns):
        if not c:
            problems.append(Problem(1, f"column {i + 1}", f"Column {i + 1} has no name in the header; it is ignored. "
                                                          "Give it a name (e.g. the system's name)."))
            continue
        if c in seen:
            problems.append(Problem(1, c, f"Column name {c!r} appears twice in the header (columns {seen[c] + 1} "
                                          f"and {i + 1}); only the first is used. Rename one of them."))
            continue
        seen[c] = i
        out.append(c)
        positions.append(i)
    lowered: dict[str, str] = {}
    for c in out:
        key = c.lower()
        if key in lowered:
            problems.append(Problem(1, c, f"Columns {lowered[key]!r} and {c!r} differ only in letter case; they are "
                                          "treated as different systems. Rename one if they are the same.",
                                    "warning"))
        lowered.setdefault(key, c)
    return out, positions, problems


def mapping_from_args(reference: Sequence[str] | None = None, candidate: str | None = None,
                      system: str | None = None, systems: Sequence[str] | None = None, source: str | None = None,
                      segment_id: str | None = None, scores: Sequence[str] | None = None,
                      document: str | None = None) -> ColumnMapping | None:
    """A column mapping from explicit column names (None when nothing is given: detected from the header).

    ``candidate`` without ``system`` is the plain layout: one system named after the candidate column.
    """
    if not (reference or candidate or system or systems or source or segment_id or scores or document):
        return None
    if not reference:
        raise InputError("Name the reference column(s) too (--reference-column) when giving columns explicitly.")
    if system:
        if not candidate:
            raise InputError("The long layout needs --candidate-column next to --system-column.")
        return ColumnMapping("long", tuple(reference), (), system, candidate, source, segment_id, tuple(scores or ()),
                             document)
    cols = tuple(systems or ()) + ((candidate,) if candidate else ())
    if not cols:
        raise InputError("Name the system output column(s): --system-columns (wide layout), --candidate-column (one "
                         "system) or --system-column with --candidate-column (long layout).")
    return ColumnMapping("wide", tuple(reference), cols, None, None, source, segment_id, tuple(scores or ()),
                         document)
