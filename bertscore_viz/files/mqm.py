"""Expert MQM annotations in Google's published layout, read into one human score per system output.

The layout is that of github.com/google/wmt-mqm-human-evaluation (Freitag et al., "Experts, Errors, and Context",
TACL 2021): a tab-separated file with the header ``system doc doc_id seg_id rater source target category
severity`` and one row per error a rater marked (a row with severity ``no-error`` for an output without any). The
``target`` carries ``<v>...</v>`` around the marked span; the same output appears once per error.

**Documents.** ``doc`` names the document (a talk, an article) and ``doc_id`` is the segment's position in it;
``seg_id`` numbers segments across the whole test set. These files are therefore the route to document-level
human scores: every output knows its document and its place in it.

**The score** (the paper's weights): a Major error weighs 5, a Minor one 1, a Minor ``Fluency/Punctuation`` error
0.1, a ``Non-translation`` 25 (five Major errors), Neutral and no-error 0. An output's MQM is the sum of its
weights for one rater, averaged over its raters; higher is worse (:attr:`MqmOutput.mqm`). Rows that cannot be
read are listed in :attr:`MqmData.problems` with their line, and the rest is read.

Pure functions, no Streamlit.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from bertscore_viz.errors import InputError
from bertscore_viz.files.human_scores import HumanScored
from bertscore_viz.files.tables import Problem
from bertscore_viz.locations import read_regular

__all__ = ["MQM_COLUMNS", "MAX_MQM_BYTES", "MqmOutput", "MqmData", "guess_reference", "is_mqm_header", "mqm_weight",
           "parse_mqm", "parse_mqm_bytes", "read_mqm"]

#: The header of a file in Google's layout, in order.
MQM_COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
#: Largest MQM file read, in bytes (the largest published file, newstest2021 en-de, is about 40 MB).
MAX_MQM_BYTES = 200 * 1024 * 1024
_SEVERITIES = {"major": 5.0, "minor": 1.0, "neutral": 0.0, "no-error": 0.0}
_MARKER = re.compile(r"</?v>")


def is_mqm_header(first_line: str) -> bool:
    """Whether a file's first line is the header of Google's MQM layout (tab-separated, any letter case)."""
    return [h.strip().lower() for h in first_line.rstrip("\r\n").split("\t")] == list(MQM_COLUMNS)


def mqm_weight(category: str, severity: str) -> float:
    """The weight of one marked error (Freitag et al. 2021): Major 5, Minor 1, Minor Fluency/Punctuation 0.1,
    Non-translation 25, Neutral and no-error 0.

    Raises:
        InputError: a severity other than Major, Minor, Neutral or no-error (any case).
    """
    sev = severity.strip().lower()
    if sev not in _SEVERITIES:
        raise InputError(f"unknown severity {severity!r}: expected Major, Minor, Neutral or no-error.")
    if sev in ("neutral", "no-error"):
        return 0.0
    if category.strip().lower().startswith("non-translation"):
        return 25.0
    if sev == "minor" and category.strip().lower() == "fluency/punctuation":
        return 0.1
    return _SEVERITIES[sev]


@dataclass(frozen=True)
class MqmOutput:
    """One system's output for one segment.

    Attributes:
        system, doc: names; position: the segment's place in its document (the file's ``doc_id``); seg_id: its
            number in the test set; target: the output with the ``<v>`` markers removed; source: the source text;
        mqm: weighted errors, averaged over raters (higher is worse); raters: how many rated it; errors: rows with
            a non-zero weight; line: the file line of its first row.
    """

    system: str
    doc: str
    position: int
    seg_id: int
    target: str
    source: str
    mqm: float
    raters: int
    errors: int
    line: int = 0


@dataclass
class MqmData:
    """What :func:`parse_mqm` read.

    Attributes:
        outputs: one per (system, seg_id), ordered by system, then document as first met, then position.
        problems: ``(line, what is wrong)`` for each row left out or each disagreement; rows: rows read.
    """

    outputs: list
    problems: list = field(default_factory=list)
    rows: int = 0

    @property
    def systems(self) -> list[str]:
        """The systems in the order first met."""
        return list(dict.fromkeys(o.system for o in self.outputs))

    def by_system(self, system: str) -> dict[int, MqmOutput]:
        """``{seg_id: output}`` of one system."""
        return {o.seg_id: o for o in self.outputs if o.system == system}

    def human_scored(self, reference: str, leave_out=()) -> HumanScored:
        """The Agreement page's rated outputs: every other system's output of each segment the ``reference`` system
        has, scored against the reference's text, human score -MQM (higher is better), its document for context;
        systems in ``leave_out`` (e.g. another human translation) are not scored. An output whose segment the
        reference lacks is left out and counted.

        Raises:
            InputError: no system named ``reference``, or an unknown name in ``leave_out``.
        """
        if reference not in self.systems:
            raise InputError(f"No system {reference!r} in the MQM file to use as the reference; its systems: "
                             f"{', '.join(self.systems)}.")
        unknown = [s for s in leave_out if s not in self.systems]
        if unknown:
            raise InputError(f"Unknown system(s) to leave out: {', '.join(unknown)}; the file's: "
                             f"{', '.join(self.systems)}.")
        ref = self.by_system(reference)
        outs = [o for o in self.outputs if o.system != reference and o.system not in leave_out]
        kept = [o for o in outs if o.seg_id in ref]
        problems = [Problem(o.line, "seg_id", f"{o.system}'s segment {o.seg_id} has no output of the reference "
                                              f"{reference!r}: left out.") for o in outs if o.seg_id not in ref]
        problems += [Problem(line, None, what) for line, what in self.problems]
        return HumanScored([o.target for o in kept], [[ref[o.seg_id].target] for o in kept], [-o.mqm for o in kept],
                           [o.system for o in kept], None, [str(o.seg_id) for o in kept], [o.line for o in kept],
                           problems, "long", "-MQM", doc_ids=[o.doc for o in kept], document_column="doc")


def parse_mqm(text: str) -> MqmData:
    """Read a file's text in Google's MQM layout (see the module).

    Raises:
        InputError: no header line naming the nine columns, or no row could be read.
    """
    lines = text.splitlines()
    if not lines:
        raise InputError("the MQM file is empty: expected a header line 'system doc doc_id seg_id rater source "
                         "target category severity' and one row per marked error.")
    if not is_mqm_header(lines[0]):
        raise InputError(f"the MQM file's header is {lines[0][:200]!r}; expected the tab-separated columns "
                         f"{' '.join(MQM_COLUMNS)} (Google's wmt-mqm-human-evaluation layout).")
    problems: list[tuple[int, str]] = []
    # (system, seg_id) -> {rater: weight}; and the output's fields as first met
    weights: dict[tuple[str, int], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    errors: dict[tuple[str, int], int] = defaultdict(int)
    first: dict[tuple[str, int], tuple[str, int, str, str, int]] = {}
    rows = 0
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(MQM_COLUMNS):
            problems.append((number, f"{len(fields)} tab-separated fields, not {len(MQM_COLUMNS)}: row left out"))
            continue
        system, doc, position, seg_id, rater, source, target, category, severity = fields
        try:
            weight = mqm_weight(category, severity)
            pos, seg = int(position), int(seg_id)
        except (InputError, ValueError) as err:
            why = (str(err) if isinstance(err, InputError)
                   else f"doc_id {position!r} or seg_id {seg_id!r} is not a whole number")
            problems.append((number, f"{why}: row left out"))
            continue
        rows += 1
        key = (system, seg)
        clean = _MARKER.sub("", target)
        if key not in first:
            first[key] = (doc, pos, clean, _MARKER.sub("", source), number)
        else:
            doc0, pos0, clean0, _, line0 = first[key]
            if (doc, pos) != (doc0, pos0):
                problems.append((number, f"{system} segment {seg} is in document {doc} at {pos} here but {doc0} at "
                                         f"{pos0} on line {line0}: the first is kept"))
            elif clean != clean0:
                problems.append((number, f"{system} segment {seg}: the output differs from line {line0}'s once the "
                                         f"<v> markers are removed: line {line0}'s is kept"))
        weights[key][rater] += weight
        errors[key] += weight > 0
    if not first:
        said = "; ".join(f"line {n}: {w}" for n, w in problems[:3])
        raise InputError(f"no row of the MQM file could be read: {said}")
    doc_order = {d: i for i, d in enumerate(dict.fromkeys(v[0] for v in first.values()))}
    system_order = {s: i for i, s in enumerate(dict.fromkeys(k[0] for k in first))}
    keys = sorted(first, key=lambda k: (system_order[k[0]], doc_order[first[k][0]], first[k][1], k[1]))
    outputs = []
    for key in keys:
        doc, pos, clean, source, line = first[key]
        per_rater = weights[key]
        outputs.append(MqmOutput(system=key[0], doc=doc, position=pos, seg_id=key[1], target=clean, source=source,
                                 mqm=sum(per_rater.values()) / len(per_rater), raters=len(per_rater),
                                 errors=errors[key], line=line))
    return MqmData(outputs=outputs, problems=problems, rows=rows)


def guess_reference(systems) -> str | None:
    """The system most likely a human translation to use as the reference: the first named ``ref...`` or
    ``human...`` (any case), else None. A guess, to be said and correctable."""
    return next((s for s in systems if s.lower().startswith(("ref", "human"))), None)


def parse_mqm_bytes(data: bytes, what: str = "The MQM file") -> MqmData:
    """:func:`parse_mqm` of a file's bytes (UTF-8, a byte-order mark allowed).

    Raises:
        InputError: not UTF-8 text, or not in the layout.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(f"{what} is not UTF-8 text ({err.reason} at byte {err.start}).") from err
    return parse_mqm(text)


def read_mqm(path: str | Path, limit: int = MAX_MQM_BYTES) -> MqmData:
    """:func:`parse_mqm` of a file (UTF-8).

    Raises:
        InputError: the file does not exist or cannot be read, is larger than ``limit`` bytes, is not UTF-8, or
            is not in the layout.
    """
    try:
        data = read_regular(path, limit + 1)
    except FileNotFoundError:
        raise InputError(f"The MQM file {path} does not exist.") from None
    except OSError as exc:
        raise InputError(f"The MQM file {path} cannot be read: {exc.strerror or exc}.") from None
    if len(data) > limit:
        raise InputError(f"{path} is larger than {limit:,} bytes (MAX_MQM_BYTES): give a smaller file or a higher "
                         "limit.")
    return parse_mqm_bytes(data, str(path))
