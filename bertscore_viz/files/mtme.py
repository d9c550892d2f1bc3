"""The mt-metrics-eval layout (WMT's metrics-task data), both ways: read a test set's directory or a zip of it, and
write our scores back as metric-score files that mt-metrics-eval's own tools read unchanged (docs/WMT_LAYOUT.md).

A test set (``wmt22``) holds per language pair ``LP``: ``sources/LP.txt``, ``references/LP.NAME.txt``,
``system-outputs/LP/SYSTEM.txt`` (one segment per line; ``[No translation supplied]`` is a missing output),
optionally ``documents/LP.docs`` (``DOMAIN DOCNAME`` per segment), ``human-scores/LP.NAME.LEVEL.score`` and
``metric-scores/LP/METRIC-REF.LEVEL.score`` (LEVEL ``sys``, ``domain``, ``doc`` or ``seg``; lines ``SYSTEM SCORE``,
``DOMAIN SYSTEM SCORE`` at domain level; human scores may be ``None``, metric scores may not).

Text lines are read as mt-metrics-eval reads them (universal newlines, trailing whitespace removed); score lines are
split on whitespace. What mt-metrics-eval would refuse (line counts that differ from the source, unknown systems or
domains, scores that are not numbers) is an :class:`~bertscore_viz.errors.InputError` naming the file and line.
Written scores use Python's shortest round-trip float text (``repr``), so reading them back gives the same floats.
"""

from __future__ import annotations

import fnmatch
import io
import json
import math
import posixpath
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bertscore_viz.errors import InputError, shorten
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.files.fileio import atomic_write_many
from bertscore_viz.files.human_scores import HumanScored
from bertscore_viz.files.tables import Problem
from bertscore_viz.files.textfile import decode_text

__all__ = [
    "LEVELS", "NO_TRANSLATION", "METRIC_NAME", "MAX_MEMBER_BYTES", "MtmeSource", "EvalSet", "open_mtme",
    "read_evalset", "parse_score_lines", "metric_name", "metric_files", "write_metric_scores", "metric_scores_zip",
    "score_evalset",
]

#: Granularities of score files, as mt-metrics-eval names them.
LEVELS = ("sys", "domain", "doc", "seg")
#: The line mt-metrics-eval reads as a missing output (scored here as an empty text: 0, with a warning).
NO_TRANSLATION = "[No translation supplied]"
#: Our metric's base name in metric-score files.
METRIC_NAME = "BERTScore"
#: Largest single file read from a directory or a zip (a zip member is checked before it is decompressed).
MAX_MEMBER_BYTES = 512 * 2**20
_MAX_LISTED = 8
_TEXT_EXTENSIONS = (".txt", ".jsonl")
_JSON_FIELD = {"sources": "source", "references": "target", "system-outputs": "hypothesis"}


class MtmeSource:
    """A directory or a zip in the mt-metrics-eval layout: which test sets and language pairs it holds.

    Use :func:`open_mtme`. A test set is any folder holding ``sources/``; the folder itself, one test set inside it
    (``wmt22/``) or a whole ``mt-metrics-eval-v2/`` tree with several.
    """

    def __init__(self, files: dict[str, object], label: str, name: str, zf: zipfile.ZipFile | None = None,
                 base: Path | None = None):
        self._files, self._zip, self._base = files, zf, base  # files: relative posix path -> Path, or ZipInfo
        self.label, self.name = label, name
        roots = {p.rsplit("/sources/", 1)[0] if "/sources/" in p else "" for p in files
                 if (p.startswith("sources/") or "/sources/" in p) and p.endswith(_TEXT_EXTENSIONS)}
        self.test_sets: tuple[str, ...] = tuple(sorted(roots))
        if not self.test_sets:
            raise InputError(f"{label} is not in the mt-metrics-eval layout: no sources/LP.txt file was found in it "
                             "or in a folder inside it. Expected a test set folder holding sources/, references/, "
                             "system-outputs/ (and human-scores/, documents/), as in docs/WMT_LAYOUT.md.")

    def _root(self, test_set: str | None) -> str:
        if test_set is None:
            if len(self.test_sets) > 1:
                raise InputError(f"{self.label} holds {len(self.test_sets)} test sets "
                                 f"({', '.join(map(repr, self.test_sets[:12]))}); choose one with test_set=NAME.")
            return self.test_sets[0]
        match = [t for t in self.test_sets if t == test_set or posixpath.basename(t) == test_set]
        if len(match) != 1:
            raise InputError(f"No test set {test_set!r} in {self.label}; it holds "
                             f"{', '.join(map(repr, self.test_sets[:12]))}.")
        return match[0]

    @staticmethod
    def _join(*parts: str) -> str:
        return "/".join(p for p in parts if p)

    def _list(self, folder: str, pattern: str) -> list[str]:
        """Relative paths of the files directly in ``folder`` whose name matches ``pattern``, sorted."""
        prefix = folder + "/"
        return sorted(p for p in self._files if p.startswith(prefix) and "/" not in p[len(prefix):]
                      and fnmatch.fnmatchcase(p[len(prefix):], pattern))

    def _bytes(self, path: str) -> bytes:
        entry = self._files[path]
        size = entry.file_size if isinstance(entry, zipfile.ZipInfo) else entry.stat().st_size
        if size > MAX_MEMBER_BYTES:
            raise InputError(f"{path} in {self.label} is {size:,} bytes; at most {MAX_MEMBER_BYTES:,} are read per "
                             "file. Keep only the language pairs you need.")
        return self._zip.read(entry) if isinstance(entry, zipfile.ZipInfo) else entry.read_bytes()

    def lines(self, path: str) -> list[str]:
        """A text file's lines as mt-metrics-eval reads them: universal newlines, trailing whitespace removed."""
        text = decode_text(self._bytes(path), f"{path} in {self.label}")
        return [line.rstrip() for line in io.StringIO(text, newline=None)]

    def folder(self, test_set: str | None = None) -> Path | None:
        """The test set's folder on disk (where ``metric-scores/`` goes), or None inside a zip."""
        root = self._root(test_set)
        return None if self._base is None else self._base / root if root else self._base

    def language_pairs(self, test_set: str | None = None) -> tuple[str, ...]:
        """The language pairs of a test set: one per file in ``sources/``."""
        root = self._root(test_set)
        names = [posixpath.basename(p) for p in self._list(self._join(root, "sources"), "*")]
        return tuple(sorted({n.rsplit(".", 1)[0] for n in names if n.endswith(_TEXT_EXTENSIONS)}))

    def read(self, lp: str, test_set: str | None = None, read_metric_scores: bool = True) -> EvalSet:
        """One language pair (see :func:`read_evalset`)."""
        return _read_evalset(self, self._root(test_set), lp, read_metric_scores)


def open_mtme(data: str | Path | bytes, filename: str | None = None) -> MtmeSource:
    """Open a folder (a test set, or a folder of test sets), a ``.zip`` file, or an uploaded zip's bytes (named
    ``filename`` in messages) in the mt-metrics-eval layout; InputError if it is none of these or holds no test set.
    """
    if isinstance(data, (bytes, bytearray)):
        return _open_zip(io.BytesIO(bytes(data)), f"the zip {filename}" if filename else "the uploaded zip",
                         Path(filename or "upload").stem)
    path = Path(data).expanduser()
    if path.is_dir():
        files = {f.relative_to(path).as_posix(): f for f in sorted(path.rglob("*")) if f.is_file()}
        return MtmeSource(files, f"the folder {path}", path.resolve().name, base=path)
    if path.is_file():
        return _open_zip(path, f"the zip {path}", path.stem)
    raise InputError(f"{path} does not exist. Give a folder in the mt-metrics-eval layout, or a zip of one.")


def _open_zip(handle, label: str, name: str) -> MtmeSource:
    try:
        zf = zipfile.ZipFile(handle)
    except zipfile.BadZipFile:
        raise InputError(f"{label} is not a zip file. Give a folder in the mt-metrics-eval layout, or a .zip of "
                         "one (e.g. `cd ~/.mt-metrics-eval/mt-metrics-eval-v2 && zip -r wmt22.zip wmt22`).") from None
    files = {i.filename.strip("/"): i for i in zf.infolist()
             if not i.is_dir() and not i.filename.startswith("__MACOSX/")}
    return MtmeSource(files, label, name, zf)


def read_evalset(data: str | Path | bytes, lp: str, test_set: str | None = None,
                 read_metric_scores: bool = True) -> EvalSet:
    """One language pair (``"de-en"``; ``open_mtme(data).language_pairs()`` lists them) of a folder or zip
    (:func:`open_mtme`) as an :class:`EvalSet`; ``test_set``: the test set's folder name when ``data`` holds several.

    Raises:
        InputError: a missing or malformed file, naming it and the line (all problems found, up to eight).
    """
    return open_mtme(data).read(lp, test_set, read_metric_scores)


# --- the data of one language pair ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class EvalSet:
    """One language pair of a test set.

    Attributes:
        name: the test set (its folder name); lp: the language pair.
        sources: ``(n,)`` source segments.
        references: ``{name: (n,) texts}``, names sorted.
        systems: ``{name: (n,) outputs}``, names sorted; a missing output (``[No translation supplied]``) is ``""``.
        missing_outputs: ``{system: segment indices (from 0) whose output is missing}`` (only systems with some).
        documents, domains: ``(n,)`` document and domain of each segment, or None without ``documents/LP.docs``.
        human_scores, metric_scores: ``{name: {level: {system: scores}}}``; scores per level as mt-metrics-eval
            orders them: seg ``(n,)``, doc one per document in order, domain one per domain in
            :attr:`domain_names` order, sys ``(1,)``. Human scores may hold None (not rated).
        warnings: what was read with a doubt (e.g. metric files missing systems).
    """

    name: str
    lp: str
    sources: tuple[str, ...]
    references: dict[str, tuple[str, ...]]
    systems: dict[str, tuple[str, ...]]
    missing_outputs: dict[str, tuple[int, ...]] = field(default_factory=dict)
    documents: tuple[str, ...] | None = None
    domains: tuple[str, ...] | None = None
    human_scores: dict[str, dict[str, dict[str, tuple]]] = field(default_factory=dict)
    metric_scores: dict[str, dict[str, dict[str, tuple]]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def n_segments(self) -> int:
        return len(self.sources)

    @property
    def doc_names(self) -> tuple[str, ...]:
        """Documents in order of first appearance (the order of doc-level scores); () without documents."""
        return tuple(dict.fromkeys(self.documents)) if self.documents is not None else ()

    @property
    def domain_names(self) -> tuple[str, ...]:
        """Domains sorted by name (mt-metrics-eval's order of domain-level scores); () without documents."""
        return tuple(sorted(set(self.domains))) if self.domains is not None else ()

    @property
    def human_systems(self) -> tuple[str, ...]:
        """Systems that are human translations: named like a reference."""
        return tuple(s for s in self.systems if s in self.references)

    def levels(self, name: str, human: bool = True) -> tuple[str, ...]:
        """The levels at which human (or metric) scores ``name`` exist, in :data:`LEVELS` order."""
        table = (self.human_scores if human else self.metric_scores).get(name, {})
        return tuple(lv for lv in LEVELS if lv in table)

    def scored_systems(self, reference: str | Sequence[str], include_human: bool = True) -> tuple[str, ...]:
        """The systems a metric using ``reference`` scores: all but the reference(s) themselves (as mt-metrics-eval
        expects), and without other human translations unless ``include_human``."""
        refs = self._refs(reference)
        return tuple(s for s in self.systems if s not in refs and (include_human or s not in self.references))

    def _refs(self, reference: str | Sequence[str]) -> list[str]:
        refs = [reference] if isinstance(reference, str) else list(reference)
        unknown = [r for r in refs if r not in self.references]
        if not refs or unknown:
            raise InputError(f"Unknown reference {', '.join(map(repr, unknown)) or '(none given)'} for {self.lp}; "
                             f"the references are {', '.join(map(repr, self.references)) or 'none'}.")
        return refs

    def dataset(self, reference: str | Sequence[str], systems: Sequence[str] | None = None,
                include_human: bool = True) -> Dataset:
        """The Compare page's :class:`~bertscore_viz.files.dataset.Dataset`: every scored system's outputs against
        the chosen reference(s) (several names: several references per segment, bert-score's maximum).

        Segment ids are line numbers (from 1), as are rows; missing outputs are listed as warnings.
        """
        refs = self._refs(reference)
        names = list(systems) if systems is not None else list(self.scored_systems(refs, include_human))
        unknown = [s for s in names if s not in self.systems]
        if unknown:
            raise InputError(f"Unknown system(s) {', '.join(map(repr, unknown[:8]))} for {self.lp}; the systems are "
                             f"{', '.join(map(repr, list(self.systems)[:20]))}.")
        problems = [Problem(i + 1, s, f"{s}: no translation supplied; scored as an empty text (0).", "warning")
                    for s in names for i in self.missing_outputs.get(s, ())]
        n = self.n_segments
        return Dataset({s: list(self.systems[s]) for s in names},
                       [[self.references[r][i] for r in refs] for i in range(n)], list(self.sources),
                       [str(i + 1) for i in range(n)], list(range(1, n + 1)), problems, None)

    def human_scored(self, reference: str | Sequence[str], human: str, systems: Sequence[str] | None = None,
                     include_human: bool = False) -> HumanScored:
        """The Agreement page's :class:`~bertscore_viz.files.human_scores.HumanScored` from segment-level human
        scores ``human`` (e.g. ``"wmt-z"``, ``"mqm"``): one entry per (system, segment) that was rated, groups the
        segments' domains, doc_ids their documents (None without documents). Unrated segments are left out, counted."""
        refs = self._refs(reference)
        seg = self.human_scores.get(human, {}).get("seg")
        if seg is None:
            have = [f"{k} ({', '.join(self.levels(k))})" for k in self.human_scores]
            raise InputError(f"No segment-level human scores {human!r} for {self.lp}; have "
                             f"{', '.join(have) or 'none'}.")
        names = list(systems) if systems is not None else [
            s for s in self.scored_systems(refs, include_human) if s in seg]
        rated = [(s, i, float(h)) for s in names for i, h in enumerate(seg.get(s, (None,) * self.n_segments))
                 if h is not None]
        unrated = len(names) * self.n_segments - len(rated)
        problems = []
        if unrated:
            problems.append(Problem(None, human, f"{unrated:,} (system, segment) pairs have no {human} score "
                                                 "(None) and are left out.", "warning"))
        if len(rated) < 3:
            problems.append(Problem(None, None, f"{len(rated)} rated output(s); a correlation needs at least 3."))
        docs, domains = [None if v is None else [v[i] for _, i, _ in rated] for v in (self.documents, self.domains)]
        return HumanScored([self.systems[s][i] for s, i, _ in rated],
                           [[self.references[r][i] for r in refs] for _, i, _ in rated], [h for _, _, h in rated],
                           [s for s, _, _ in rated], domains, [str(i + 1) for _, i, _ in rated],
                           [i + 1 for _, i, _ in rated], problems, "long", human, doc_ids=docs,
                           document_column=None if docs is None else f"documents/{self.lp}.docs")


# --- reading -------------------------------------------------------------------------------------------------------
def _text_file(source: MtmeSource, path: str, kind: str, problems: list[str]) -> list[str]:
    """A text file's segments (``.jsonl``: its ``source``/``target``/``hypothesis`` field per line)."""
    lines = source.lines(path)
    if not path.endswith(".jsonl"):
        return lines
    key, out = _JSON_FIELD[kind], []
    for k, line in enumerate(lines, 1):
        try:
            value = json.loads(line).get(key) if line.strip() else None
        except (ValueError, AttributeError):
            value = None
        if not isinstance(value, str):
            problems.append(f"{path} line {k}: expected a JSON object with a string field {key!r}, got "
                            f"{shorten(line)}.")
            value = ""
        out.append(value)
    return out


def parse_score_lines(lines: Sequence[str], level: str, where: str, systems: Sequence[str],
                      counts: Mapping[str, int], allow_none: bool, domains: Sequence[str] = ()
                      ) -> tuple[dict[str, tuple], list[str]]:
    """Parse a score file's lines as mt-metrics-eval does, checking what its reader checks.

    Args:
        lines: the file's lines; level: one of :data:`LEVELS`; where: the file, for messages; systems: the known
            system names; counts: scores expected per system at each level; domains: the domain names in order.
        allow_none: ``None`` marks a missing score (human scores) instead of being an error (metric scores).

    Returns:
        ``({system: scores in order}, problems)``; a domain-level system's scores follow ``domains`` (None where a
        domain has no line).
    """
    problems, values, fields = [], {}, 3 if level == "domain" else 2
    known, want = set(systems), counts[level]
    for k, line in enumerate(lines, 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != fields:
            problems.append(f"{where} line {k}: expected {fields} fields ({'DOMAIN ' if fields == 3 else ''}SYSTEM "
                            f"SCORE) separated by whitespace, got {len(parts)}: {shorten(line)}.")
            continue
        system, raw = parts[-2], parts[-1]
        score = None
        if raw != "None" or not allow_none:
            try:
                score = float(raw)
            except ValueError:
                score = math.nan
            if not math.isfinite(score):
                missing = " or None (not rated)" if allow_none else " (metric scores may not be None)"
                problems.append(f"{where} line {k}: the score {raw!r} is not a finite number{missing}.")
                continue
        if system not in known:
            problems.append(f"{where} line {k}: unknown system {system!r} (no system-outputs file for it).")
            continue
        if level == "domain":
            if parts[0] not in domains:
                problems.append(f"{where} line {k}: unknown domain {parts[0]!r}; the documents file names "
                                f"{', '.join(map(repr, domains)) or 'no domains'}.")
                continue
            row = values.setdefault(system, [None] * len(domains))
            row[list(domains).index(parts[0])] = score
        else:
            values.setdefault(system, []).append(score)
    for system, scores in values.items():
        if level != "domain" and len(scores) != want:
            problems.append(f"{where}: system {system!r} has {len(scores):,} scores; expected {want:,} (one per "
                            f"{ {'seg': 'segment', 'doc': 'document', 'sys': 'system'}[level] }).")
        if not allow_none and any(s is None for s in scores):
            problems.append(f"{where}: system {system!r} has no score for some domains.")
    return {s: tuple(v) for s, v in values.items()}, problems


def _documents(source: MtmeSource, root: str, lp: str, n: int, problems: list[str]):
    path = source._join(root, "documents", f"{lp}.docs")
    if path not in source._files:
        return None, None
    lines = source.lines(path)
    if len(lines) != n:
        problems.append(f"{path} has {len(lines):,} lines; the source has {n:,} (one DOMAIN DOCNAME per segment).")
        return None, None
    problems.extend(f"{path} line {k}: expected DOMAIN DOCNAME, got {shorten(line)}."
                    for k, line in enumerate(lines, 1) if len(line.split()) < 2)
    domains, docs = [(line.split() + ["", ""])[0] for line in lines], [(line.split() + ["", ""])[1] for line in lines]
    seen, last = set(), None
    for k, doc in enumerate(docs, 1):
        if doc != last and doc in seen:
            problems.append(f"{path} line {k}: document {doc!r} starts again after other documents; a "
                            "document must be one contiguous block of segments.")
            break
        seen.add(doc)
        last = doc
    return tuple(docs), tuple(domains)


def _named_texts(source: MtmeSource, paths: list[str], strip: int, kind: str, n: int, problems: list[str]):
    """``{name: lines}`` of reference or system-output files; ``strip`` leading characters of the file name."""
    out: dict[str, list[str]] = {}
    for path in paths:
        base = posixpath.basename(path)
        name = base[strip:].rsplit(".", 1)[0]
        if name in out:
            problems.append(f"{path}: a second file for {name!r} (.txt and .jsonl); keep one.")
            continue
        lines = _text_file(source, path, kind, problems)
        if len(lines) != n:
            problems.append(f"{path} has {len(lines):,} lines; the source has {n:,}. Every reference and system "
                            "output needs one line per source segment.")
        out[name] = lines
    return out


def _score_files(source: MtmeSource, paths: list[str], human: bool, lp: str, known: dict, problems: list[str],
                 warnings: list[str]) -> dict:
    """Read human (``LP.NAME.LEVEL.score``) or metric (``NAME-REF.LEVEL.score``) files into name -> level ->
    system -> scores."""
    out: dict[str, dict[str, dict]] = {}
    for path in paths:
        base = posixpath.basename(path)
        parts = base[len(lp) + 1:].split(".") if human else base.split(".")
        name, level = ".".join(parts[:-2]), parts[-2] if len(parts) >= 3 else ""
        if level not in LEVELS or not name or (not human and "-" not in name):
            form = "LP.NAME.LEVEL.score" if human else "NAME-REF.LEVEL.score"
            problems.append(f"{path}: the file name is not {form} with LEVEL one of {', '.join(LEVELS)}.")
            continue
        scores, bad = parse_score_lines(source.lines(path), level, path, known["systems"], known["counts"],
                                        allow_none=human, domains=known["domains"])
        if level in ("domain", "doc") and not known["counts"][level]:
            bad = [f"{path}: {level}-level scores need documents/{lp}.docs (it is missing)."]
        problems.extend(bad)
        if not human:
            refs = set(name.rsplit("-", 1)[1].split("."))
            lacking = [s for s in known["systems"] if s not in scores and s not in refs]
            if lacking:
                warnings.append(f"{path} has no scores for {len(lacking)} system(s): "
                                f"{', '.join(map(repr, lacking[:8]))} (mt-metrics-eval fills them with 0 unless "
                                "strict).")
        out.setdefault(name, {})[level] = scores
    return out


def _raise(problems: list[str], lp: str, label: str) -> None:
    if problems:
        more = f" (and {len(problems) - _MAX_LISTED} more)" if len(problems) > _MAX_LISTED else ""
        raise InputError(f"{len(problems)} problem(s) in {lp} of {label}{more}:\n- "
                         + "\n- ".join(problems[:_MAX_LISTED])
                         + "\nFix the files so that every reference, output and score file matches the source "
                           "(docs/WMT_LAYOUT.md).")


def _read_evalset(source: MtmeSource, root: str, lp: str, read_metric_scores: bool) -> EvalSet:
    src_paths = [source._join(root, "sources", lp + ext) for ext in _TEXT_EXTENSIONS]
    src_path = next((p for p in src_paths if p in source._files), None)
    if src_path is None:
        have = source.language_pairs(root)
        raise InputError(f"No language pair {lp!r} in {source.label}: there is no {src_paths[0]}. The language "
                         f"pairs are {', '.join(have) or 'none'}.")
    problems: list[str] = []
    sources = _text_file(source, src_path, "sources", problems)
    n = len(sources)
    documents, domains = _documents(source, root, lp, n, problems)
    ref_paths = [p for ext in _TEXT_EXTENSIONS for p in source._list(source._join(root, "references"), f"{lp}.*{ext}")]
    references = _named_texts(source, ref_paths, len(lp) + 1, "references", n, problems)
    for name in references:
        if "." in name or "-" in name or name in ("all", "src"):
            problems.append(f"references/{lp}.{name}: a reference name may not contain '.' or '-', nor be 'all' "
                            "or 'src' (mt-metrics-eval reserves them).")
    sys_paths = [p for ext in _TEXT_EXTENSIONS for p in source._list(source._join(root, "system-outputs", lp),
                                                                        f"*{ext}")]
    raw_systems = _named_texts(source, sys_paths, 0, "system-outputs", n, problems)
    missing = {s: tuple(i for i, t in enumerate(v) if t == NO_TRANSLATION) for s, v in raw_systems.items()}
    systems = {s: tuple("" if t == NO_TRANSLATION else t for t in v) for s, v in sorted(raw_systems.items())}
    bad_names = [s for s in systems if not s or any(c.isspace() for c in s)]
    if bad_names:
        problems.append(f"system name(s) {', '.join(map(repr, bad_names[:8]))} hold whitespace, which score "
                        "files cannot represent; rename the system-outputs files.")
    doc_names = tuple(dict.fromkeys(documents)) if documents is not None else ()
    domain_names = tuple(sorted(set(domains))) if domains is not None else ()
    known = {"systems": list(systems), "domains": domain_names,
             "counts": {"seg": n, "doc": len(doc_names), "domain": len(domain_names), "sys": 1}}
    warnings: list[str] = []
    human = _score_files(source, source._list(source._join(root, "human-scores"), f"{lp}.*.score"), True, lp, known,
                         problems, warnings)
    metrics = {}
    if read_metric_scores:
        metrics = _score_files(source, source._list(source._join(root, "metric-scores", lp), "*.score"), False,
                               lp, known, problems, warnings)
    _raise(problems, lp, source.label)
    return EvalSet(posixpath.basename(root) or source.name, lp, tuple(sources),
                   {k: tuple(v) for k, v in sorted(references.items())}, systems,
                   {s: v for s, v in missing.items() if v}, documents, domains, human, metrics, tuple(warnings))


# --- writing -------------------------------------------------------------------------------------------------------
def metric_name(evalset: EvalSet, reference: str | Sequence[str], metric: str = METRIC_NAME) -> str:
    """``METRIC-REF`` as mt-metrics-eval names a metric variant: ``BERTScore-refA``, ``BERTScore-refA.refB`` for
    several references, ``BERTScore-all`` when every one of three or more is used (its own convention)."""
    refs = evalset._refs(reference)
    if not metric or any(c.isspace() or c in "/\\" for c in metric) or metric.endswith("-"):
        raise InputError(f"The metric name {metric!r} cannot be a file name: use letters, digits, '_', '-' or '.' "
                         "(e.g. 'BERTScore' or 'BERTScore-F1').")
    tag = "all" if set(refs) == set(evalset.references) and len(refs) >= 3 else ".".join(sorted(refs))
    return f"{metric}-{tag}"


def _check_scores(evalset: EvalSet, scores: Mapping[str, Sequence[float]], refs: list[str]) -> dict[str, np.ndarray]:
    arrays = {s: np.asarray(v, dtype=np.float64) for s, v in scores.items()}
    unknown = [s for s in arrays if s not in evalset.systems]
    lacking = [s for s in evalset.systems if s not in arrays and s not in refs]
    wrong = [f"{s} ({a.shape})" for s, a in arrays.items() if a.shape != (evalset.n_segments,)]
    bad = [s for s, a in arrays.items() if a.shape == (evalset.n_segments,) and not np.isfinite(a).all()]
    problems = [text for found, text in (
        (unknown, f"unknown system(s) {', '.join(map(repr, unknown[:8]))}"),
        (lacking, f"no scores for {', '.join(map(repr, lacking[:8]))} (mt-metrics-eval needs every system but the "
                  "reference used: score them all, e.g. score_evalset(..., include_human=True))"),
        (wrong, f"expected ({evalset.n_segments},) segment scores per system, got {', '.join(wrong[:8])}"),
        (bad, f"NaN or infinite scores for {', '.join(map(repr, bad[:8]))} (precision or recall under degenerate "
              "idf: write F1, or turn idf off), which metric files may not hold")) if found]
    if problems:
        raise InputError(f"Cannot write metric scores for {evalset.lp}: " + "; ".join(problems) + ".")
    return arrays


def _mean_lines(arrays: dict[str, np.ndarray], keys: Sequence[str], labels: Sequence[str], domain: bool) -> str:
    """One line per system and group (``keys[i]`` is segment i's group), the mean of its segments' scores."""
    keys = np.asarray(keys, dtype=object)
    masks = [keys == g for g in labels]
    lines = [f"{g} {s} {float(a[m].mean())!r}" if domain else f"{s} {float(a[m].mean())!r}"
             for s, a in arrays.items() for g, m in zip(labels, masks)]
    return "".join(line + "\n" for line in lines)


def metric_files(evalset: EvalSet, scores: Mapping[str, Sequence[float]], reference: str | Sequence[str],
                 metric: str = METRIC_NAME, levels: Sequence[str] | None = None) -> dict[str, str]:
    """The text of ``metric-scores/LP/METRIC-REF.LEVEL.score`` files, as mt-metrics-eval reads them.

    Args:
        evalset: the language pair scored; scores: ``{system: (n,) segment scores}`` (e.g. ``result.f1`` per
            system) for every system except the reference(s) used.
        reference: the reference name(s) the scores were computed against (named in the file names).
        metric: the base name (``BERTScore``; e.g. ``BERTScore-P`` for precision).
        levels: any of :data:`LEVELS`; default ``seg`` and ``sys``, and ``doc`` and ``domain`` when the documents
            are known. A system's doc, domain and sys score is the mean of its segments' scores (BERTScore's
            corpus score).

    Returns:
        ``{file name: text}``: lines ``SYSTEM SCORE`` (``DOMAIN SYSTEM SCORE``), systems sorted, shortest
        round-trip floats.

    Raises:
        InputError: unknown or missing systems, wrong lengths, non-finite scores, doc/domain without documents.
    """
    refs = evalset._refs(reference)
    name = metric_name(evalset, refs, metric)
    arrays = dict(sorted(_check_scores(evalset, scores, refs).items()))
    has_docs = evalset.documents is not None
    levels = tuple(levels) if levels is not None else ("seg", "sys") + (("doc", "domain") if has_docs else ())
    unknown = [lv for lv in levels if lv not in LEVELS]
    if unknown or (not has_docs and {"doc", "domain"} & set(levels)):
        raise InputError(f"Cannot write levels {', '.join(map(repr, levels))} for {evalset.lp}: levels are "
                         f"{', '.join(LEVELS)}, and doc and domain need documents/{evalset.lp}.docs.")
    out = {}
    for level in levels:
        if level == "seg":
            text = "".join(f"{s} {float(x)!r}\n" for s, a in arrays.items() for x in a)
        elif level == "sys":
            text = _mean_lines(arrays, ["*"] * evalset.n_segments, ["*"], False)
        elif level == "doc":
            text = _mean_lines(arrays, evalset.documents, evalset.doc_names, False)
        else:
            text = _mean_lines(arrays, evalset.domains, evalset.domain_names, True)
        out[f"{name}.{level}.score"] = text
    return out


def write_metric_scores(directory: str | Path, evalset: EvalSet, scores: Mapping[str, Sequence[float]],
                        reference: str | Sequence[str], metric: str = METRIC_NAME,
                        levels: Sequence[str] | None = None, overwrite: bool = False) -> list[Path]:
    """Write :func:`metric_files` into ``directory/metric-scores/LP/`` (``directory``: the test set's folder, or
    any folder to collect them in), as mt-metrics-eval's ``EvalSet.AddMetricsFromDir`` reads them.

    Raises:
        InputError: as :func:`metric_files`; a file that exists already, unless ``overwrite``.
        OutputError: the folder cannot be made or written (nothing is written then).
    """
    files = metric_files(evalset, scores, reference, metric, levels)
    folder = Path(directory).expanduser() / "metric-scores" / evalset.lp
    existing = [f for f in files if (folder / f).exists()]
    if existing and not overwrite:
        raise InputError(f"{folder} already holds {', '.join(existing)}; pass overwrite=True (--overwrite on the "
                         "command line) to replace them, or choose another metric name.")
    return atomic_write_many([(folder / f, text.encode("utf-8")) for f, text in files.items()])  # all or none


def metric_scores_zip(evalset: EvalSet, scores: Mapping[str, Sequence[float]], reference: str | Sequence[str],
                      metric: str = METRIC_NAME, levels: Sequence[str] | None = None) -> bytes:
    """:func:`metric_files` as a zip (``<test set>/metric-scores/LP/...``): unzip it beside the test set folder."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for fname, text in metric_files(evalset, scores, reference, metric, levels).items():
            zf.writestr(f"{evalset.name}/metric-scores/{evalset.lp}/{fname}", text)
    return buffer.getvalue()


def score_evalset(scorer, evalset: EvalSet, reference: str | Sequence[str], systems: Sequence[str] | None = None,
                  include_human: bool = True) -> dict:
    """Score every system (default: all but the reference(s) used) against the reference(s), one
    ``scorer.score`` call per system, so idf (when on) comes from the references exactly as when bert-score scores
    each system; the encoder's cache embeds each reference once.

    ``scorer``: a :class:`~bertscore_viz.engine.scorer.Scorer` (anything with ``score(candidates, references)``).
    Returns ``{system: ScoreResult}``; ``{s: r.f1 for s, r in ...items()}`` is what :func:`metric_files` writes.
    A scorer with document context (docs/CONTEXT.md) gets ``documents/LP.docs``'s documents as ``doc_ids``."""
    data = evalset.dataset(reference, systems, include_human)
    docs = {"doc_ids": evalset.documents} if getattr(scorer, "context", 0) else {}
    return {name: scorer.score(outputs, data.references, **docs) for name, outputs in data.systems.items()}
