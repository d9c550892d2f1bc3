"""The pair explained by the token-table and figure tests (fixtures ``scorer`` and ``pair`` in conftest.py), with a
made-up baseline (7 layers of the bundled model; the numbers only have to be known)."""

import numpy as np

from bertscore_viz.engine.baseline import BaselineTable

CAND = "The players were playing unbelievably well."
REF = "Players played incredibly well."
TABLE = BaselineTable(np.array([[0.30 + 0.01 * k, 0.31 + 0.01 * k, 0.32 + 0.01 * k] for k in range(7)]), "test")
