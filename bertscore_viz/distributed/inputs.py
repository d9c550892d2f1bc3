"""Input of a Ray job, read and validated on the driver before any worker starts: Parquet, CSV/TSV and JSON Lines
files or directories (Hive-style ``key=value`` folders read as columns), in the Compare page's layouts."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import pyarrow.fs as pafs
import pyarrow.parquet as pq

from bertscore_viz.errors import InputError
from bertscore_viz.files import upload
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.files.tables import JsonValue

__all__ = ["INPUT_KINDS", "InputFile", "list_input_files", "read_input"]

INPUT_KINDS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "csv", ".txt": "csv",
               ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}


_UNLIMITED = 1 << 62


_PARQUET_BATCH_ROWS = 8192


# --- input ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class InputFile:
    """One file to read: its file system, path, kind, and the ``key=value`` folders above it (Hive partitions)."""

    fs: object
    path: str
    kind: str
    partitions: tuple[tuple[str, str], ...] = ()


def _filesystem(path: str):

    if "://" in path:
        try:
            return pafs.FileSystem.from_uri(path)
        except Exception as exc:
            raise InputError(f"Cannot open {path}: {str(exc).splitlines()[0][:200]}.") from None
    return pafs.LocalFileSystem(), os.path.abspath(path)


def _partitions(root: str, path: str) -> tuple[tuple[str, str], ...] | None:
    """The ``key=value`` folders between ``root`` and the file (Spark, Hive), or None when any folder or the file is
    hidden (``.``) or bookkeeping (``_SUCCESS``, ``_temporary``): such files are not input."""
    rel = path[len(root):].strip("/").split("/")
    if any(part.startswith((".", "_")) for part in rel):
        return None
    return tuple((unquote(k), unquote(v)) for k, _, v in (p.partition("=") for p in rel[:-1]) if _ == "=")


def list_input_files(paths: str | Sequence[str]) -> list[InputFile]:
    """Every input file; a directory means its Parquet/CSV/TSV/JSON Lines files at any depth, sorted by path (hidden
    files and folders and names starting with ``_`` skipped, ``key=value`` folders read as columns: partitioned
    Parquet, Spark output).

    Raises:
        InputError: a path that does not exist, a directory without such files, an unknown extension.
    """

    if isinstance(paths, (str, Path)):
        paths = [paths]
    out = []
    for given in map(str, paths):
        fs, path = _filesystem(given)
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            raise InputError(f"The input {given} does not exist. Give a Parquet, CSV, TSV or JSON Lines file or a "
                             "directory of them.")
        if info.type == pafs.FileType.Directory:
            found = []
            for f in fs.get_file_info(pafs.FileSelector(path, recursive=True)):
                if f.type != pafs.FileType.File or Path(f.base_name).suffix.lower() not in INPUT_KINDS:
                    continue
                parts = _partitions(path, f.path)
                if parts is not None:
                    found.append(InputFile(fs, f.path, INPUT_KINDS[Path(f.base_name).suffix.lower()], parts))
            if not found:
                raise InputError(f"The input directory {given} holds no .parquet, .csv, .tsv or .jsonl file.")
            out.extend(sorted(found, key=lambda f: f.path))
            continue
        kind = INPUT_KINDS.get(Path(path).suffix.lower())
        if kind is None:
            raise InputError(f"Cannot tell the format of {given} from its extension; name it .parquet, .csv, .tsv, "
                             ".jsonl or .json.")
        out.append(InputFile(fs, path, kind))
    if not out:
        raise InputError("No input given: pass --input FILE_OR_DIRECTORY.")
    return out


def _cell(v):
    """A Parquet value as the Compare page's reader gives cells: text, several references as a tuple, numbers as
    written; anything else kept as a value the dataset lists (not scored as its repr)."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
        return tuple(v)  # several references in one cell, as a list
    if isinstance(v, bool):
        return JsonValue("true" if v else "false", str(v).lower())
    if isinstance(v, (int, float)):
        return str(v)
    return JsonValue(f"a {type(v).__name__}", repr(v)[:60])


def _read_parquet(fs, path: str) -> tuple[upload.Table | None, list[upload.Problem]]:
    """A Parquet file as a :class:`~bertscore_viz.files.upload.Table`, converted a batch of rows at a time (the whole
    file is never held as Arrow columns and Python lists at once). A file with no rows gives a table with no rows."""

    rows: list[tuple] = []
    try:
        with fs.open_input_file(path) as fh:
            pf = pq.ParquetFile(fh)
            columns = tuple(str(c).strip() for c in pf.schema_arrow.names)
            for batch in pf.iter_batches(batch_size=_PARQUET_BATCH_ROWS):
                cols = [[_cell(v) for v in batch.column(i).to_pylist()] for i in range(batch.num_columns)]
                rows.extend(zip(*cols))
                del cols
    except Exception as exc:  # pyarrow's errors carry the reason
        return None, [upload.Problem(None, None, f"{path} cannot be read as Parquet: "
                                                 f"{str(exc).splitlines()[0][:200]}.")]
    return upload.Table(columns, tuple(rows), tuple(range(2, len(rows) + 2)), "parquet"), []


def _read_one(f: InputFile) -> tuple[upload.Table | None, list[upload.Problem]]:
    if f.kind == "parquet":
        table, problems = _read_parquet(f.fs, f.path)
    else:
        try:
            with f.fs.open_input_stream(f.path) as fh:
                data = fh.read()
        except OSError as exc:
            return None, [upload.Problem(None, None, f"{f.path} cannot be read: {exc}.")]
        table, found = upload.read_table(data, Path(f.path).name, max_bytes=_UNLIMITED, max_rows=_UNLIMITED,
                                         max_columns=_UNLIMITED, max_cells=_UNLIMITED)
        del data
        problems = [upload.Problem(p.row, p.column, f"{Path(f.path).name}: {p.problem}", p.severity) for p in found]
    if table is not None and f.partitions:
        extra = [(k, v) for k, v in f.partitions if k not in table.columns]  # a column in the file wins
        if extra:
            values = tuple(v for _, v in extra)
            table = upload.Table(table.columns + tuple(k for k, _ in extra), tuple(r + values for r in table.rows),
                                 table.row_numbers, table.kind, table.delimiter)
    return table, problems


def _same_columns(first: tuple[str, ...], table: upload.Table) -> upload.Table | None:
    """``table`` with its columns in the order of ``first`` (JSON Lines keys and CSV headers may come in another
    order), or None when the sets of columns differ."""
    if table.columns == first:
        return table
    if len(set(first)) != len(first) or set(table.columns) != set(first) or len(table.columns) != len(first):
        return None
    order = [table.columns.index(c) for c in first]
    return upload.Table(first, tuple(tuple(r[i] for i in order) for r in table.rows), table.row_numbers,
                        table.kind, table.delimiter)


def read_input(paths: str | Sequence[str], mapping: upload.ColumnMapping | None = None,
               empty: str = upload.EMPTY_SCORE, max_cell_chars: int = upload.MAX_CELL_CHARS) -> Dataset:
    """Read and validate input files into a :class:`~bertscore_viz.files.dataset.Dataset` with the Compare page's rules.

    Several files must have the same columns (in any order); they are read as one table in path order, rows numbered
    on from one file to the next (the header is row 1). A file with no rows among others is skipped and listed.

    Raises:
        InputError: a file missing or unreadable; no data rows at all; a required column missing; nothing left to
            score. The message lists the problems found. Row-level problems with good rows left are in
            ``dataset.problems``.
    """
    files = list_input_files(paths)
    columns: tuple[str, ...] | None = None
    first_path = ""
    rows: list[tuple] = []
    numbers: list[int] = []
    problems: list[upload.Problem] = []
    empty_files: list[str] = []
    for f in files:
        table, found = _read_one(f)
        if table is None:
            raise InputError(f"The input file {f.path} cannot be used: " + " ".join(p.problem for p in found))
        problems.extend(found)
        if not table.rows and len(files) > 1:
            empty_files.append(f.path)
            continue
        if columns is None:
            columns, first_path = table.columns, f.path
        else:
            same = _same_columns(columns, table)
            if same is None:
                only_first = [c for c in columns if c not in table.columns]
                only_this = [c for c in table.columns if c not in columns]
                raise InputError(f"The input files have different columns: {first_path} has {list(columns)}, "
                                 f"{f.path} has {list(table.columns)} (only in the first: {only_first}; only in "
                                 f"this one: {only_this}). Give files of one layout, or score them separately.")
            table = same
        offset = (numbers[-1] - 1) if numbers else 0
        rows.extend(table.rows)
        numbers.extend(n + offset for n in table.row_numbers)
        del table
    if not rows:
        where = ", ".join(f.path for f in files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        raise InputError(f"The input has no data rows ({where}): nothing to score.")
    problems.extend(upload.Problem(None, None, f"{p} has no rows; skipped.", "warning") for p in empty_files)
    table = upload.Table(tuple(columns or ()), tuple(rows), tuple(numbers), files[0].kind)
    del rows, numbers
    ds = upload.build_dataset(table, mapping, empty, max_cell_chars, problems, max_systems=_UNLIMITED,
                              max_pairs=_UNLIMITED)
    del table
    if not ds.ok:
        errors = [p for p in ds.problems if p.severity == "error"] or ds.problems
        listing = " ".join(f"[{'row ' + str(p.row) + ': ' if p.row and p.row > 1 else ''}{p.problem}]"
                           for p in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise InputError(f"Nothing can be scored in {', '.join(f.path for f in files[:3])}: {listing}{more}")
    return ds
