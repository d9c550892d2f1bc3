"""Where calibration bands apply: the lengths of the data behind a calibration (Inspect places a pair on the ladder
only within them, Compare a system's mean)."""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass

import numpy as np

from bertscore_viz.app.shared.bounded_store import BoundedStore
from bertscore_viz.evaluation.calibration import WMT16_EXAMPLE, calibration_applies
from bertscore_viz.locations import PACKAGE_DIR

__all__ = ["LENGTHS_KEPT", "LengthRange", "calibration_lengths"]


@dataclass(frozen=True)
class LengthRange:
    """The 5th-95th percentile ``low``-``high`` of the words of the references a calibration comes from, and what
    they are (``source``)."""

    low: int
    high: int
    source: str

    def caption(self) -> str:
        """``"from WMT16 DA newstest2016 translations into English, sentences of 6-40 words"``."""
        return f"from {self.source}, sentences of {self.low}-{self.high} words"

    def applies(self, words: float) -> bool:
        return calibration_applies(words, self.low, self.high)

    def reason(self, words: float, whose: str = "these texts average") -> str:
        """One line: why texts of ``words`` words are not placed on the ladder."""
        return (f"Not placed on the calibration ladder: {whose} {words:,.0f} words; the bands come {self.caption()} "
                "and do not apply.")


#: Most calibration data files whose lengths the process keeps at once (one per calibration in use).
LENGTHS_KEPT = 16
_LENGTHS: BoundedStore[tuple, tuple[int, int] | None] = BoundedStore(LENGTHS_KEPT)


def calibration_lengths(calibration) -> LengthRange | None:
    """The lengths of the data behind a calibration, from its provenance: the references of the rated file of its
    human bands (when it is there, unchanged), else the random pairs' corpus (sentences under its ``max_words``);
    None when unknown (then texts are placed whatever their length)."""
    prov = calibration.provenance
    human = prov.get("human") or {}
    path = PACKAGE_DIR.parent / str(human.get("file", ""))
    if human.get("file") and path.is_file():
        key = (str(path), human.get("sha256"))
        with _LENGTHS.locked():
            known, bounds = key in _LENGTHS, _LENGTHS.get(key)
        if not known:
            data = path.read_bytes()
            same = hashlib.sha256(data).hexdigest() == human.get("sha256")
            words = [len(str(r.get("reference") or "").split())
                     for r in (csv.DictReader(data.decode("utf-8").splitlines()) if same else [])]
            bounds = (int(round(np.percentile(words, 5))), int(round(np.percentile(words, 95)))) if words else None
            _LENGTHS.put(key, bounds)
        if bounds:
            source = ("WMT16 DA newstest2016 translations into English" if path.resolve() == WMT16_EXAMPLE.resolve()
                      else f"{calibration.human_items} of {calibration.human_source}")
            return LengthRange(*bounds, source)
    if isinstance(prov.get("max_words"), int):
        corpus = (prov.get("corpus") or {}).get("path", "a corpus")
        return LengthRange(1, prov["max_words"] - 1, f"random pairs of sentences of {corpus}")
    return None
