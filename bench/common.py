"""What every benchmark script starts with: the repository on the import path, the model hub offline, and where
the shared evaluation data lives (``BERTSCORE_VIZ_DATA``, default ``data/`` in the repository)."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DATA = Path(os.environ.get("BERTSCORE_VIZ_DATA", ROOT / "data"))
WMT16 = DATA / "wmt16-da-to-english"
NEWSTEST = DATA / "newstest2017-english"
