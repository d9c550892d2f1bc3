"""Where the package's own files are: the shipped rescaling baselines and layer tables, and the example data."""

from pathlib import Path

__all__ = ["PACKAGE_DIR", "BASELINE_DIR", "EXAMPLES_DIR"]

#: The installed package.
PACKAGE_DIR = Path(__file__).resolve().parent
#: ``baselines/<lang>/<model>.tsv`` and ``baselines/layers/``, inside the package (so that a wheel has them).
BASELINE_DIR = PACKAGE_DIR / "baselines"
#: Example files (the Compare page's "Load example").
EXAMPLES_DIR = PACKAGE_DIR / "examples"
