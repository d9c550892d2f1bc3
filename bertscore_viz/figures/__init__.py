"""Figures of an explanation: interactive plotly (plots) and static matplotlib images (static_figures), from the
same token axes and cell values (cells).

From Python, a pair explained by ``Scorer.explain`` is drawn with the three functions of this package (the engine
draws nothing: plotly and matplotlib come with ``bertscore-viz[app]``, loaded when a function is called)::

    from bertscore_viz import Scorer
    from bertscore_viz.figures import alignment, heatmap, save_heatmap

    pair = Scorer().explain("people like foreign cars", "consumers prefer imported cars")
    heatmap(pair).write_html("pair.html")      # plotly Figure: plots.heatmap_figure's options as keywords
    alignment(pair).write_html("align.html")   # plotly Figure: plots.alignment_figure's options
    save_heatmap(pair, "pair.png")             # PNG, SVG or PDF by the suffix (matplotlib, no browser)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bertscore_viz.engine.results import MultiReferenceExplanation, PairExplanation
from bertscore_viz.errors import InputError
from bertscore_viz.extras import MissingExtraError, extra_for, missing_extra_message
from bertscore_viz.files.fileio import atomic_write_bytes

__all__ = ["heatmap", "alignment", "save_heatmap"]


@contextmanager
def _plotting(what: str) -> Iterator[None]:
    """Around the import of a plotting module: a missing plotting package is said as the extra that installs it."""
    try:
        yield
    except ModuleNotFoundError as exc:
        extra = extra_for(exc.name)
        if extra is None:
            raise
        raise MissingExtraError(missing_extra_message(what, exc.name, extra)) from None


def _one_pair(pair, what: str) -> PairExplanation:
    if isinstance(pair, MultiReferenceExplanation):
        raise InputError(f"{what} draws one candidate/reference pair; this explanation has {len(pair.pairs)} "
                         "references: draw one of its .pairs (best_reference gives the index of the reference that "
                         "gave P, R and F1).")
    if not isinstance(pair, PairExplanation):
        raise InputError(f"{what} draws a PairExplanation (Scorer.explain(candidate, reference)); got "
                         f"{type(pair).__name__}.")
    return pair


def heatmap(pair: PairExplanation, **kwargs):
    """The similarity heatmap of a pair, candidate tokens as rows and reference tokens as columns, each row's and
    column's best match marked: a ``plotly.graph_objects.Figure`` (``fig.show()``, ``fig.write_html(path)``).

    Keywords are those of :func:`bertscore_viz.figures.plots.heatmap_figure` (``show_special``, ``merge_words``,
    ``rescaled``, ``title``, ``rows``, ``cols``, ``max_width``).

    Raises:
        MissingExtraError: plotly is not installed (``pip install 'bertscore-viz[app]'``).
        InputError: not one pair (a MultiReferenceExplanation: draw one of its ``pairs``).
    """
    pair = _one_pair(pair, "heatmap()")
    with _plotting("bertscore_viz.figures.heatmap()"):
        from bertscore_viz.figures.plots import heatmap_figure  # plotly, loaded on first use
    return heatmap_figure(pair, **kwargs)


def alignment(pair: PairExplanation, **kwargs):
    """The two sentences as rows of tokens with a line from each token to its best match on the other side: a
    ``plotly.graph_objects.Figure``.

    Keywords are those of :func:`bertscore_viz.figures.plots.alignment_figure` (``show_special``,
    ``merge_words``, ``rescaled``, ``n_bins``, ``max_width``).

    Raises:
        MissingExtraError: plotly is not installed (``pip install 'bertscore-viz[app]'``).
        InputError: not one pair (a MultiReferenceExplanation: draw one of its ``pairs``).
    """
    pair = _one_pair(pair, "alignment()")
    with _plotting("bertscore_viz.figures.alignment()"):
        from bertscore_viz.figures.plots import alignment_figure  # plotly, loaded on first use
    return alignment_figure(pair, **kwargs)


def save_heatmap(pair: PairExplanation, path: str | Path, **kwargs) -> Path:
    """Write the heatmap of a pair as an image, PNG, SVG or PDF by the suffix of ``path``, each cell's value
    printed (as ``bert-score-show`` draws it), atomically (an earlier file stays whole if anything fails).

    Keywords are those of :func:`bertscore_viz.figures.static_figures.heatmap_image` (``show_special``,
    ``merge_words``, ``max_tokens``).

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        MissingExtraError: matplotlib is not installed (``pip install 'bertscore-viz[app]'``).
        InputError: a suffix other than .png, .svg, .pdf; not one pair; a pair too long for a static figure
            (``FigureTooLarge``).
        OutputError: the file cannot be written.
    """
    pair = _one_pair(pair, "save_heatmap()")
    path = Path(path)
    with _plotting("bertscore_viz.figures.save_heatmap()"):
        from bertscore_viz.figures.static_figures import FORMATS, heatmap_image  # matplotlib, loaded on first use
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise InputError(f"save_heatmap() writes {', '.join('.' + f for f in FORMATS)} files, chosen by the suffix "
                         f"of the path; got {str(path)!r}.")
    return atomic_write_bytes(path, heatmap_image(pair, fmt=fmt, **kwargs))
