"""The segments the Compare page, ``compare`` and a Ray job score: every system's output for the same segments,
against the same references, with what was found wrong on the way (:class:`Dataset`), and the two policies for
empty cells. Built by :func:`bertscore_viz.files.upload.parse_upload` (an uploaded table),
:mod:`bertscore_viz.files.mtme` (WMT's layout) and :func:`bertscore_viz.files.results.table.read_results` (a
results file)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bertscore_viz.files.columns import ColumnMapping
from bertscore_viz.files.score_columns import ScoreColumns
from bertscore_viz.files.tables import Problem

__all__ = ["Dataset", "EMPTY_SCORE", "EMPTY_SKIP"]

EMPTY_SCORE = "score"  # empty cells are scored as empty text (0, with a warning)
EMPTY_SKIP = "skip"  # segments with an empty cell are left out for every system


@dataclass(frozen=True)
class Dataset:
    """Segments ready to score: every system's output for the same segments, against the same references.

    Attributes:
        systems: ``{name: [output per segment]}`` in file order.
        references: one list of reference strings per segment.
        sources: one source per segment, or None without a source column.
        segment_ids: one id per segment (the ``segment_id`` column, else the row number).
        rows: the row number each segment came from (wide) or of its first row (long).
        problems: everything found wrong, errors and warnings (guessed column roles are warnings on row 1).
        mapping: the column mapping used (None when the file could not be read).
        own_scores: other metrics' scores that came with the outputs (score columns; NaN where missing, listed in
            ``problems``), aligned with the segments kept.
        doc_ids: one document id per segment ("" = none: scored without context), or None without a document
            column; a segment's context is the segments before it with the same id (docs/CONTEXT.md).
    """

    systems: dict[str, list[str]]
    references: list[list[str]]
    sources: list[str] | None
    segment_ids: list[str]
    rows: list[int]
    problems: list[Problem] = field(default_factory=list)
    mapping: ColumnMapping | None = None
    own_scores: ScoreColumns = field(default_factory=ScoreColumns)
    doc_ids: list[str] | None = None

    @property
    def n_segments(self) -> int:
        return len(self.references)

    @property
    def system_names(self) -> list[str]:
        return list(self.systems)

    @property
    def ok(self) -> bool:
        """Something can be scored: at least one system and one segment."""
        return bool(self.systems) and self.n_segments > 0

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]
