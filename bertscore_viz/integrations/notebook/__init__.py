"""Rich display of the package's results in a Jupyter notebook: a result shown as the last line of a cell is drawn
as a compact HTML view (numbers, signature, warnings) with the app's interactive figures; docs/NOTEBOOK.md.

==========================================  =====================================================================
object                                      its view
==========================================  =====================================================================
``ScoreResult``                             P, R, F1 per candidate (rescaled when so), the means, the signature
``PairExplanation``                         the texts, P/R/F1, the signature; the heatmap and the alignment
``MultiReferenceExplanation``               each reference's P/R/F1; the figures of the reference that gave F1
``Comparison``                              the system table: rank, cluster, wins, P/R/F1, the F1 95% interval
``AuditResult`` (the stress test)           one row per perturbation at one layer; the chart by layer
``ConsensusResult``, ``GroupConsensus``     each input's MBR choice (and oracle); an input's N x N matrix
==========================================  =====================================================================

* :func:`register` tells IPython's HTML formatter about each type **by name** (module and class name), so that
  registering imports none of them and the engine never imports this layer; ``import bertscore_viz`` calls it in a
  running IPython kernel.
* :func:`to_html` is the view as a self-contained HTML fragment (plotly.js inline in it when it has a figure);
  :func:`show` displays it in the notebook.
* plotly.js is embedded, never fetched: the first figure of a kernel session carries the bundle inline, later ones
  use it (:mod:`~bertscore_viz.integrations.notebook.fragments`), so a notebook and its HTML export draw offline.

IPython is needed by :func:`show` and :func:`register` only (a missing one is a
:class:`~bertscore_viz.integrations.MissingIntegrationError`); the views need plotly and pandas, the ``[app]`` extra.
"""

from __future__ import annotations

import importlib

from bertscore_viz.errors import InputError
from bertscore_viz.integrations import missing_package
from bertscore_viz.integrations.notebook.fragments import MAX_ROWS, NOTEBOOK, FigureEmbedder

__all__ = ["MAX_ROWS", "TYPES", "register", "show", "to_html"]

#: ``(module, class name) -> (module of its view, view function)``: the types :func:`register` registers by name.
TYPES = {
    ("bertscore_viz.engine.results", "ScoreResult"): ("views", "score_view"),
    ("bertscore_viz.engine.results", "PairExplanation"): ("views", "pair_view"),
    ("bertscore_viz.engine.results", "MultiReferenceExplanation"): ("views", "multi_reference_view"),
    ("bertscore_viz.evaluation.compare", "Comparison"): ("evaluation_views", "comparison_view"),
    ("bertscore_viz.evaluation.audit", "AuditResult"): ("evaluation_views", "audit_view"),
    ("bertscore_viz.consensus.mbr", "ConsensusResult"): ("evaluation_views", "consensus_view"),
    ("bertscore_viz.consensus.mbr", "GroupConsensus"): ("evaluation_views", "group_view"),
}


def _view(obj):
    """The view function of ``obj``'s type (or of the first of its base classes that has one)."""
    for cls in type(obj).__mro__:
        found = TYPES.get((cls.__module__, cls.__name__))
        if found is not None:
            module = importlib.import_module(f"{__name__}.{found[0]}")  # a view's figures load on first use
            return getattr(module, found[1])
    names = ", ".join(name for _, name in TYPES)
    raise InputError(f"There is no notebook view of a {type(obj).__name__}: the views are of {names}. Pass one of "
                     "those (e.g. the result of score(), Scorer.explain(), audit() or consensus()).")


def _html(obj, embed: FigureEmbedder) -> str:
    return _view(obj)(obj, embed)


def to_html(obj) -> str:
    """The notebook view of ``obj`` as a self-contained HTML fragment: every text escaped, and when it has
    figures, plotly.js inline before the first (about 4.8 MB; nothing is fetched when it is opened).

    Raises:
        InputError: ``obj`` is none of the types of :data:`TYPES`.
        MissingExtraError: plotly or pandas is not installed (the ``[app]`` extra).
    """
    return _html(obj, FigureEmbedder())


def _notebook_html(obj) -> str:
    """What the registered formatter returns: the view, plotly.js only with the kernel's first figure."""
    return _html(obj, NOTEBOOK)


def show(obj) -> None:
    """Display the view of ``obj`` in the notebook (what a cell's last line shows once :func:`register` ran).

    Raises:
        InputError: ``obj`` has no view; MissingIntegrationError: IPython is not installed.
    """
    try:
        from IPython.display import HTML, display  # optional: only a notebook has it
    except ImportError as exc:
        raise missing_package("bertscore_viz.integrations.notebook.show()", "ipython", exc) from None
    display(HTML(_notebook_html(obj)))


def register(ipython=None) -> bool:
    """Register the views with IPython's HTML formatter, each type by its module and class name (nothing of them
    is imported here), and make the next figure carry plotly.js again.

    Args:
        ipython: the shell (default ``IPython.get_ipython()``, the running one).

    Returns:
        True when registered; False outside IPython (no shell, or one without a display formatter).

    Raises:
        MissingIntegrationError: IPython is not installed and no shell was given.
    """
    if ipython is None:
        try:
            from IPython import get_ipython  # optional: only a notebook has it
        except ImportError as exc:
            raise missing_package("bertscore_viz.integrations.notebook.register()", "ipython", exc) from None
        ipython = get_ipython()
    formatters = getattr(getattr(ipython, "display_formatter", None), "formatters", None)
    if not formatters or "text/html" not in formatters:
        return False
    for module, name in TYPES:
        formatters["text/html"].for_type_by_name(module, name, _notebook_html)
    NOTEBOOK.rearm()
    return True
