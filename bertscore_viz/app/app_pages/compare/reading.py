"""How to read the Compare page's numbers: each system's mean on the calibration ladder (random pairs, human bands),
what the test set can detect (statistical power of the page's paired test), and why the shipped example ranks its
faithful paraphrase last."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import streamlit as st
from streamlit.errors import StreamlitAPIException

from bertscore_viz.app.app_pages.compare.results import pair_choice
from bertscore_viz.app.shared.calibration_lengths import calibration_lengths
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.app.state.compare import compare_state
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.errors import BaselineError, BertScoreVizError
from bertscore_viz.evaluation import compare
from bertscore_viz.evaluation.calibration import (
    CalibrationReading,
    find_calibration,
    missing_calibration_message,
)
from bertscore_viz.evaluation.significance import Significance
from bertscore_viz.stats.power import paired_differences, power_analysis

__all__ = ["AUDIT_PAGE", "AUDIT_SCRIPT", "DEFAULT_DELTA", "EXAMPLE_NOTE", "answer_notes", "audit_link",
           "calibration_line", "power_section", "readings_for", "test_alpha", "upload_words"]

#: The stress test page ("Is the metric fooled?"): its URL path, and its script in the app's navigation.
AUDIT_PAGE = "/audit"
AUDIT_SCRIPT = Path(__file__).resolve().parents[1] / "audit" / "page.py"
#: The difference the power section asks about until the user types another.
DEFAULT_DELTA = 0.01
EXAMPLE_NOTE = (
    "**Why is “paraphrase” last, significantly below “errors”?** Not a fault of the page: a real property of the "
    "metric. In this example “errors” keeps the reference's words and word order and changes a few that carry the "
    "meaning (postponed → cancelled, rain → snow, profit → loss), while “paraphrase” keeps the meaning in other "
    "words and another order. BERTScore matches every token with its most similar token of the other text in "
    "context: a swapped word still has a close match (a verb for a verb, a number for a number), so an output that "
    "copies the reference's wording scores high even when its facts are wrong, and rewording costs more than a "
    "wrong fact. chrF and BLEU, which count shared characters and words, also put “errors” above “paraphrase”. How "
    "much the metric misses negation, swapped numbers and names, and how much it penalises paraphrase, on your own "
    "data: the stress test, below.")


def upload_words(comparison: compare.Comparison) -> float | None:
    """The median length in words of the texts (references and every system's outputs) of the dataset loaded on
    Compare, when it is the one ``comparison`` scores; else None. Computed once per dataset."""
    state = compare_state()
    ds = state.dataset.value if state.dataset else None
    if ds is None or not getattr(ds, "ok", False) or not set(comparison.systems) <= set(ds.systems):
        return None
    def median() -> float | None:  # once per dataset: a million texts take a second to split
        texts = [r for group in ds.references for r in group] + [t for outs in ds.systems.values() for t in outs]
        return float(np.median([len(str(t).split()) for t in texts])) if texts else None

    return state.once_per_dataset("words", ds, "", median)


def readings_for(comparison: compare.Comparison, lang: str) -> tuple[dict[str, CalibrationReading] | None, str]:
    """Each system's mean F1 on the calibration of the comparison's model and ``lang``; without one (none computed,
    idf on, a layer it does not cover) or when the dataset's texts are far longer or shorter than the calibration's
    (:class:`LengthRange`), None and the reason (with how to compute one)."""
    model = next(iter(comparison.results.values())).signature.model
    try:
        calibration = find_calibration(model, lang, comparison.idf)
        if calibration is None:
            return None, missing_calibration_message(model, lang, comparison.idf)
        lengths, words = calibration_lengths(calibration), upload_words(comparison)
        if lengths is not None and words is not None and not lengths.applies(words):
            return None, lengths.reason(words, "the texts of this upload have a median length of")
        return compare.calibration_readings(comparison, calibration), ""
    except BaselineError as exc:
        return None, str(exc)


def calibration_line(comparison: compare.Comparison, readings: dict[str, CalibrationReading]) -> str:
    """``"literal's mean F1 0.9551 is higher than 99.7% of random pairs ...; typical of ..."``: where the best
    system's mean stands (every system's is in the system table)."""
    best = comparison.systems[0]
    reading = readings[best]
    raw = " (raw)" if comparison.rescaled else ""
    others = " Every system's in the table (above random pairs, typical of)." if len(readings) > 1 else ""
    return f"{best}'s mean F1{raw} {reading.value:.4f} is {reading.sentence()}.{others}"


def _source_caption(comparison: compare.Comparison, lang: str) -> str | None:
    """Where the calibration's data come from (``"Bands from WMT16 DA ..., sentences of 6-40 words."``)."""
    model = next(iter(comparison.results.values())).signature.model
    try:
        calibration = find_calibration(model, lang, comparison.idf)
    except BaselineError:
        return None
    lengths = calibration_lengths(calibration) if calibration is not None else None
    return None if lengths is None else f"Bands {lengths.caption()}; texts far outside that are not placed."


def answer_notes(comparison: compare.Comparison, readings, calibration_note: str, empty_note: str | None,
                 example: bool, lang: str | None = None) -> None:
    """Under the answer: where the means stand (with where the calibration's data come from, ``lang`` its language:
    the sidebar's by default) or why that is unknown, the segments with an empty reference, and the example's
    explanation."""
    if readings:
        st.markdown("**On the calibration ladder:** " + escape_markdown(calibration_line(comparison, readings)),
                    help="A system's mean raw F1 placed among the F1 of random pairs of unrelated sentences "
                         "(and, where rated data exists, among outputs humans rated in the bottom, middle and top "
                         "third), for this model, layer and language. Rescaling does not move a percentile.")
        source = _source_caption(comparison, lang or str(st.session_state.get("lang", "en")))
        if source:
            st.caption(escape_markdown(source))
    else:
        st.caption(escape_markdown(calibration_note))
    if empty_note:
        st.caption(escape_markdown(empty_note))
    if example:
        st.info(EXAMPLE_NOTE, icon=":material/lightbulb:")
        audit_link()


def audit_link() -> None:
    """A link to the stress test page: within the app (this session, its work kept) where the navigation has the
    page, else its URL."""
    try:
        st.page_link(str(AUDIT_SCRIPT), label="Is the metric fooled? The stress test of the metric",
                     icon=":material/psychology_alt:")
    except StreamlitAPIException:  # the page is not in this app's navigation
        st.markdown(f"[Is the metric fooled? The stress test of the metric]({AUDIT_PAGE})")


def test_alpha(sig: Significance) -> float:
    """The level the power analysis uses: the page's alpha, or under Holm alpha / the family (Holm's first step,
    the strictest threshold a pair can face: a conservative answer)."""
    return sig.alpha / sig.family if sig.correction == "holm" and sig.family > 1 else sig.alpha


def power_section(comparison: compare.Comparison, sig: Significance, fkey: str, systems: list[str],
                  scores: dict | None = None) -> None:
    """For systems A and B: the smallest difference this test set detects with 80% power with the page's paired
    bootstrap, and the segments a difference the user types would need
    (:func:`bertscore_viz.stats.power.power_analysis`). ``scores``: a metric of one's own's kept segment scores
    (default: the comparison's scores of ``sig.metric``)."""
    st.markdown(f"**Statistical power** ({sig.metric}, systems A and B)")
    a, b = pair_choice(systems, fkey)
    if a == b:
        st.caption("Choose two different systems A and B.")
        return
    scores = comparison.counted_scores(sig.metric) if scores is None else scores
    alpha = test_alpha(sig)
    try:
        analysis = power_analysis(paired_differences(scores[a], scores[b]), alpha=alpha, n_samples=sig.n_samples)
    except BertScoreVizError as exc:
        show_error(exc)
        return
    holm = (f" Under Holm the level is {sig.alpha:g} / {sig.family} = {alpha:.2g} (Holm's first step: a "
            "conservative answer).") if alpha != sig.alpha else ""
    observed = (f" Here {a} − {b} = {analysis.mean_difference:+.4f}" + (
        f", which this test set detects with {analysis.power_at(analysis.mean_difference):.0%} power if it is the "
        "true difference." if math.isfinite(analysis.sd) and analysis.n >= 2 else "."))
    st.markdown(escape_markdown(analysis.sentence(sig.metric) + observed + holm))
    key = f"cmp_power_delta_{fkey}"
    delta = st.number_input(f"Difference in {sig.metric} to detect", min_value=0.0001, max_value=100.0,
                            step=0.001, format="%.4f", key=key, **fresh(key, value=DEFAULT_DELTA),
                            help="How many segments (drawn like these) the paired test needs to detect a true "
                                 "difference of this size with 80% power.")
    st.markdown(escape_markdown(analysis.segments_needed(delta).sentence(sig.metric)))
    st.caption("Normal approximation of the page's paired bootstrap, validated by simulation "
               "(bertscore_viz/stats/power.py): the spread of the segment differences is this test set's.")
