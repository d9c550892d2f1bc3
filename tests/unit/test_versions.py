"""``package_version``: versions read from the installed metadata, without importing the package."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import PackageNotFoundError

import pytest

from bertscore_viz.versions import package_version


def test_versions_as_the_packages_report_them_without_a_local_suffix():
    import torch
    import transformers

    assert package_version("transformers") == transformers.__version__
    assert package_version("torch") == torch.__version__.split("+")[0]  # 2.13.0+cpu -> 2.13.0
    assert "+" not in package_version("torch")


def test_no_import_of_the_package_and_a_missing_package_raises():
    code = ("import sys; from bertscore_viz.versions import package_version; v = package_version('torch'); "
            "print(v, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[1] == "False" and out[0][0].isdigit()
    with pytest.raises(PackageNotFoundError):
        package_version("no-such-package-bertscore-viz")
