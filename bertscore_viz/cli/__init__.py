"""The command line (``bertscore-viz``, ``python -m bertscore_viz``): the arguments of every command (``parser``),
the dispatcher (``entry``), one module per command with its ``run(args)``, and the progress bars (``progress``)."""

from bertscore_viz.cli.entry import main

__all__ = ["main"]
