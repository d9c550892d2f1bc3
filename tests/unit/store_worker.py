"""One process of tests/unit/test_store.py: score WMT16 pairs ``start .. start + count`` of the bundled example with
the store named by ``BERTSCORE_VIZ_STORE``; save P, R, F1 to ``out`` (.npy) and print the store's counts.

    python store_worker.py OUT START COUNT [--batch N]
"""

from __future__ import annotations

import csv
import sys
import warnings

import numpy as np

from bertscore_viz import Scorer
from bertscore_viz.engine.store import default_store
from bertscore_viz.locations import EXAMPLES_DIR


def main() -> None:
    out, start, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    batch = int(sys.argv[sys.argv.index("--batch") + 1]) if "--batch" in sys.argv else 64
    with open(EXAMPLES_DIR / "wmt16_da_to_english.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))[start:start + count]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # [UNK] notes of a few WMT16 segments
        scorer = Scorer(batch_size=batch)
        res = scorer.score([r["candidate"] for r in rows], [r["reference"] for r in rows])
    np.save(out, np.stack([res.precision, res.recall, res.f1]))
    store = default_store()
    info = store.info() if store is not None else None
    print("store off" if info is None else f"hits={info.hits} misses={info.misses} written={info.written}",
          f"model_loaded={scorer.encoder.model_loaded}",
          f"model_code_imported={'transformers.models.bert.modeling_bert' in sys.modules}")


if __name__ == "__main__":
    main()
