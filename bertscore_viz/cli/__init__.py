"""The command line: ``python -m bertscore_viz score|show|baseline|tune-layers|models`` (the ``bertscore-viz``
script), and its progress bars."""

from bertscore_viz.cli.entry import main

__all__ = ["main"]
