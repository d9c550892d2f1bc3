"""Reading a results file back (:func:`read_results`): the metadata checked first, the rows within the limits,
every value checked (:mod:`~bertscore_viz.files.results.values`), the inputs as a
:class:`~bertscore_viz.files.dataset.Dataset` and every system's numbers as arrays (pure; pyarrow and pandas, no
model). The format itself: :mod:`bertscore_viz.files.results.format`."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bertscore_viz.engine.idf import IdfWeights
from bertscore_viz.errors import InputError
from bertscore_viz.files import limits
from bertscore_viz.files.dataset import Dataset
from bertscore_viz.files.results import values as results_values
from bertscore_viz.files.results.format import REQUIRED_COLUMNS, parse_metadata, read_idf

__all__ = ["ResultsTable", "read_results"]


@dataclass(frozen=True)
class ResultsTable:
    """A results file read and checked once (the app keeps it per upload; every rescaling choice is built from it).

    Attributes:
        dataset: systems' outputs, references, sources, segment ids and rows, as the Compare page's
            :class:`~bertscore_viz.files.dataset.Dataset`.
        info: the file's metadata (signature, settings, baseline, input description).
        columns: ``{system: {column: array}}`` of the score columns and ``best_reference``, in segment order, plus
            ``"warnings"``: the rows' notes as ``segment ID: note``.
        has_rescaled: every row has rescaled numbers (a baseline existed for the model and layer).
        idf: the idf weights from the file's document frequencies (None: idf off, or a file of format 1).
    """

    dataset: object
    info: dict
    columns: dict
    has_rescaled: bool
    idf: IdfWeights | None = None

    @property
    def written_rescaled(self) -> bool:
        """The file's signature names rescaled numbers (``--rescale_with_baseline``)."""
        return bool(self.info["settings"].get("rescaled"))

    @property
    def references(self) -> list[str]:
        return [r for group in self.dataset.references for r in group]



def _load_table(source, max_bytes: int | None, max_rows: int | None, max_chars: int | None):
    """The file's checked metadata and its Arrow table, read within the limits (see :func:`read_results`)."""

    if isinstance(source, (str, Path)):
        try:
            size = Path(source).stat().st_size
            if max_bytes is not None and size > max_bytes:
                raise InputError(f"The results file is {size / 2**20:.1f} MB; the limit here is "
                                 f"{max_bytes / 2**20:.0f} MB.")
            data = Path(source).read_bytes()
        except OSError as exc:
            raise InputError(f"The results file {source} cannot be read: {exc.strerror}.") from None
    else:
        data = source
    if max_bytes is not None and len(data) > max_bytes:
        raise InputError(f"The results file is {len(data) / 2**20:.1f} MB; the limit here is {max_bytes / 2**20:.0f} "
                         "MB. Whoever runs the server can raise it (docs/RAY.md, \"In the app\").")
    if max_chars is None and max_bytes is not None:
        max_chars = limits.expanded_chars_limit(max_bytes)
    try:
        pf = pq.ParquetFile(io.BytesIO(data))
        info = parse_metadata(pf.schema_arrow.metadata)  # what the file is, before reading any data
        results_values.check_parquet_footer(pf.metadata, max_rows, "The results file")
        counter = results_values.ExpansionCounter(max_rows, max_chars, "The results file")
        batches = []
        for batch in pf.iter_batches(batch_size=8192):
            counter.add_batch(batch)
            batches.append(batch)
        table = pa.Table.from_batches(batches, schema=pf.schema_arrow)
        del batches
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"The file cannot be read as Parquet: {str(exc).splitlines()[0][:200]}.") from None
    del data
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        raise InputError(f"The results file lacks the column(s) {', '.join(missing)}; it was not written by this "
                         "version of bertscore-viz, or was edited.")
    if table.num_rows == 0:
        raise InputError("The results file has no rows.")
    return info, table


def read_results(source, max_bytes: int | None = None, max_rows: int | None = None,
                 max_chars: int | None = None) -> ResultsTable:
    """Read and check a results file (path or bytes), no model pass.

    Args:
        source: a path or the file's bytes.
        max_bytes: refuse larger files (the app's limit for results files, :func:`max_upload_bytes`).
        max_rows: refuse a file of more rows (systems x segments): from its footer before reading, and counted
            while reading (the app: the deployment's rows per upload).
        max_chars: refuse a file whose text expands to more characters once decompressed (default with
            ``max_bytes``: :func:`bertscore_viz.files.limits.expanded_chars_limit`).

    Raises:
        InputError: too large (in bytes, or in what it expands to), not a results file, incomplete (a system misses
            segments: the run did not finish), or empty.
    """

    info, table = _load_table(source, max_bytes, max_rows, max_chars)
    idf = read_idf(table.schema.metadata)
    results_values.check_values(table, info)  # every value, before anything is built from them
    frame = table.to_pandas()
    del table
    systems = list(info.get("systems") or dict.fromkeys(frame["system"]))
    n = int(info.get("n_segments") or frame["segment_index"].nunique())
    frame = frame.sort_values(["segment_index", "system"], kind="stable")
    groups = dict(tuple(frame.groupby("system", sort=False)))
    per_system = {}
    for name in systems:
        part = groups.get(name, frame.iloc[:0])
        idx = part["segment_index"].to_numpy()
        if len(part) != n or not np.array_equal(idx, np.arange(n)):
            raise InputError(f"System {name!r} has {part['segment_index'].nunique()} of {n} segments in the results "
                             "file: the run did not finish. Rerun the same command into the same output directory; it "
                             "completes the missing blocks.")
        per_system[name] = part
    del frame, groups
    first = per_system[systems[0]]
    has_rescaled = info.get("baseline") is not None and all(
        bool(part["rescaled_f1"].notna().all()) for part in per_system.values())
    columns = {}
    for name, part in per_system.items():
        cols = {c: part[c].to_numpy(dtype=np.float64) for c in REQUIRED_COLUMNS if c.startswith(("raw_", "rescaled_"))}
        cols["best_reference"] = (part["best_reference"].to_numpy(dtype=np.int64) if "best_reference" in part
                                  else None)
        cols["warnings"] = tuple(f"segment {sid}: {note}" for sid, note
                                 in zip(part["segment_id"], part["notes"].fillna("")) if note)
        columns[name] = cols
    sources = None
    if "source" in first and first["source"].notna().any():
        sources = [s if isinstance(s, str) else "" for s in first["source"]]
    dataset = Dataset({name: [str(c) for c in part["candidate"]] for name, part in per_system.items()},
                      [[str(r) for r in refs] for refs in first["references"]], sources,
                      [str(s) for s in first["segment_id"]], [int(r) for r in first["row"]], [], None)
    return ResultsTable(dataset, info, columns, has_rescaled, idf)

