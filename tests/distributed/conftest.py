"""One local Ray session (num_cpus=2) for every distributed test, and real WMT16 inputs written as files."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WMT16 = ROOT / "data" / "wmt16-da-to-english"
LANGUAGE_PAIRS = ("cs-en", "de-en", "fi-en", "ro-en", "ru-en", "tr-en")


def wmt16(kind: str) -> list[str]:
    """Lines of one kind (``reference``, ``mt-system``) over the six language pairs, 3,360 in all."""
    out: list[str] = []
    for lp in LANGUAGE_PAIRS:
        out += (WMT16 / f"DAseg-newstest2016.{kind}.{lp}").read_text(encoding="utf-8").splitlines()
    return out


def write_long_csv(path: Path, n: int) -> Path:
    """Long layout, two systems x ``n`` segments, two references per segment (real WMT16 outputs and references):
    system A is the MT output of segment i, B that of segment n + i; the references are those of i and n + i."""
    refs, mts = wmt16("reference"), wmt16("mt-system")
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["system", "segment_id", "candidate", "reference", "reference_2"])
        for name, off in (("A", 0), ("B", n)):
            for i in range(n):
                w.writerow([name, f"seg{i}", mts[i + off], refs[i], refs[i + n]])
    return path


def wide_rows(n: int, start: int = 0) -> dict[str, list[str]]:
    """Wide layout columns: segment_id, reference, two systems (MT outputs of other segments for the second)."""
    refs, mts = wmt16("reference"), wmt16("mt-system")
    idx = range(start, start + n)
    return {"segment_id": [f"w{i}" for i in idx], "reference": [refs[i] for i in idx],
            "sys_mt": [mts[i] for i in idx], "sys_other": [mts[(i + 1000) % len(mts)] for i in idx]}


@pytest.fixture(scope="session")
def ray_session():
    import ray

    from bertscore_viz.distributed.jobs import connect

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    connect()
    yield ray
    ray.shutdown()
