"""Samples of a model for consensus (MBR, best-of-n, support): read from a file as ``bertscore-viz mbr`` and the
app's "Many samples" page read them, and the choices written back.

Inputs: plain text, one sample per line, grouped by ``group_size`` consecutive lines or by a file of group ids; or
JSON Lines, one object per input, ``{"id": ..., "samples": [...], "references": [...]}`` (``id`` and
``references`` optional). Outputs: a TSV of the choices, or JSON Lines with every sample's expected utility and the
signature (docs/MBR.md).
"""

from __future__ import annotations

import json
from pathlib import Path

from bertscore_viz.consensus import ConsensusResult
from bertscore_viz.errors import InputError, shorten
from bertscore_viz.files.fileio import tsv_field
from bertscore_viz.files.limits import loads
from bertscore_viz.files.textfile import decode_text, read_bytes, read_text_lines, split_lines

__all__ = ["JSON_SUFFIXES", "read_groups", "format_tsv", "format_jsonl"]

#: File endings read as JSON Lines.
JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")


def _is_jsonl(path: Path, text: str) -> bool:
    if path.suffix.lower() in JSON_SUFFIXES:
        return True
    first = next((line for line in split_lines(text) if line), "")
    if not first.startswith("{"):
        return False
    try:
        record = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(record, dict) and "samples" in record


def _text_list(value, what: str, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}: \"{what}\" must be a list of strings, got {shorten(value)}.")
    return list(value)


def _read_jsonl(path: Path, text: str) -> tuple[list, list[list[str]], list[list[str]]]:
    ids, groups, refs = [], [], []
    for n, line in enumerate(split_lines(text), start=1):
        if not line:
            continue
        where = f"{path} line {n}"
        try:
            record = loads(line, f"{where}")
        except json.JSONDecodeError as exc:
            raise InputError(f"{where} is not JSON ({exc.msg} at column {exc.colno}): each line must be one object "
                             '{"id": ..., "samples": [...], "references": [...]}.') from None
        if not isinstance(record, dict) or "samples" not in record:
            raise InputError(f'{where}: expected an object with "samples" (a list of strings), got {shorten(line)}.')
        samples = _text_list(record["samples"], "samples", where)
        if not samples:
            raise InputError(f'{where}: "samples" is empty; each input needs at least one sample.')
        ids.append(record.get("id", len(groups)))
        groups.append(samples)
        given = record.get("references", record.get("refs"))
        refs.append([] if given is None else _text_list(given, "references", where))
    if not groups:
        raise InputError(f"{path} has no records: give one JSON object per line.")
    return ids, groups, refs


def _read_text(path: Path, text: str, group_size: int | None,
               groups_file: str | None) -> tuple[list, list[list[str]], list[list[str]]]:
    lines = split_lines(text)
    if not lines:
        raise InputError(f"The samples file {path} is empty: it has no lines. Give one sample per line.")
    if group_size is None and groups_file is None:
        raise InputError(f"{path} is plain text: say how its lines form inputs with --group-size N (N consecutive "
                         "lines per input) or --groups FILE (each line's input id), or give JSON Lines.")
    if group_size is not None:
        if group_size < 1:
            raise InputError(f"--group-size must be 1 or more, got {group_size}.")
        if len(lines) % group_size:
            raise InputError(f"{path} has {len(lines)} lines, not a multiple of --group-size {group_size}: the last "
                             f"input would have {len(lines) % group_size} samples. Check the file or the size.")
        groups = [lines[k:k + group_size] for k in range(0, len(lines), group_size)]
        return list(range(len(groups))), groups, [[] for _ in groups]
    labels = read_text_lines(groups_file, "groups file")
    if len(labels) != len(lines):
        raise InputError(f"Expected one group id per sample line: {groups_file} has {len(labels)} lines and "
                         f"{path} {len(lines)}.")
    by_id: dict[str, list[str]] = {}
    for label, sample in zip(labels, lines):
        by_id.setdefault(label, []).append(sample)
    return list(by_id), list(by_id.values()), [[] for _ in by_id]


def read_groups(samples: str | Path, group_size: int | None = None, groups_file: str | None = None,
                refs_files: list[str] | None = None) -> tuple[list, list[list[str]], list[list[str]]]:
    """The inputs of ``mbr``: ``(ids, groups of samples, references per group)``.

    Raises:
        InputError: unreadable files, a malformed record, sizes that do not fit (each message names the file and
            the line).
    """
    path = Path(samples)
    text = decode_text(read_bytes(path, "samples file"), f"The samples file {path}")
    if _is_jsonl(path, text):
        if group_size is not None or groups_file is not None:
            raise InputError(f"{path} is JSON Lines: each record is one input, so --group-size and --groups do not "
                             "apply. Remove them.")
        ids, groups, refs = _read_jsonl(path, text)
    else:
        ids, groups, refs = _read_text(path, text, group_size, groups_file)
    for ref_file in refs_files or []:
        lines = read_text_lines(ref_file, "reference file")
        if len(lines) != len(groups):
            raise InputError(f"Expected one reference per input in {ref_file}: {len(groups)} inputs, "
                             f"{len(lines)} lines.")
        for g, line in enumerate(lines):
            refs[g].append(line)
    return ids, groups, refs


def format_tsv(result: ConsensusResult) -> str:
    """One TSV row per input (header first); tabs and line breaks inside texts become spaces; an id is written
    with :func:`~bertscore_viz.files.fileio.tsv_field`'s escapes (``\\t``, ``\\n``, ``\\r``, ``\\\\``), so that it
    keeps its row whole and reads back exactly."""
    with_refs = any(g.reference_scores is not None for g in result.groups)
    head = ["id", "n_samples", "chosen", "expected_utility", "ranking"]
    if with_refs:
        head += ["chosen_score", "oracle", "oracle_score", "gap", "reference_rank"]
    rows = ["\t".join(head + ["text"])]

    def num(x) -> str:
        return "" if x is None or x != x else f"{x:.6f}"

    for g in result.groups:
        row = [tsv_field(g.id), str(len(g)), str(g.chosen), num(g.chosen_utility), ",".join(map(str, g.order.tolist()))]
        if with_refs:
            row += ([num(g.chosen_score), str(g.oracle), num(g.oracle_score), num(g.gap), str(g.reference_rank)]
                    if g.reference_scores is not None else [""] * 5)
        rows.append("\t".join(row + [" ".join(g.chosen_text.split())]))
    return "\n".join(rows) + "\n"


def format_jsonl(result: ConsensusResult, support: bool = False) -> str:
    """One JSON object per input, each with the signature."""
    sig = str(result.signature)
    lines = []
    for g in result.groups:
        d = g.as_dict()
        if support:
            d["sentence_support"] = [s.as_dict() for s in g.sentence_support]
        d["signature"] = sig
        lines.append(json.dumps(d, ensure_ascii=False))
    return "\n".join(lines) + "\n"
