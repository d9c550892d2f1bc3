"""What a browser session keeps across pages and reruns.

Streamlit drops a widget's value when a run does not draw the widget (another page, a tab not open): typed
text on Inspect would be gone after a visit to Compare. :func:`keep_widget_values` runs at the top of every run
(``app.py``, before the page) and writes each kept page widget's value back into ``st.session_state``, which turns
it into session state that outlives the widget; when the page is drawn again its widgets start from it.

Which widgets are kept is an explicit list (:data:`KEPT_EXACT`, :data:`KEPT_PATTERNS`), not "every key but some":
Streamlit refuses (``StreamlitValueAssignmentNotAllowedError``) a written value for buttons, download buttons, file
uploaders, forms and chart selections, so a new button on any page must not be written back by accident. A widget
is kept only when it is listed here; ``tests/app/test_session_state.py`` checks the list against every widget the
pages draw (a settable widget that is not listed, or a listed one Streamlit does not let a program set, fails).

Values that are not widgets (the Compare upload and its model pass, custom baselines, whether a choice was made
by the user) live in plain session keys and are kept anyway.
"""

from __future__ import annotations

import re

import streamlit as st

__all__ = ["KEPT_EXACT", "KEPT_PATTERNS", "is_kept", "kept_keys", "keep_widget_values", "fresh"]

#: Kept page widgets with a fixed key.
KEPT_EXACT = frozenset({
    # Inspect: the pair, the example picker, where idf comes from
    "inspect_candidate", "inspect_example", "inspect_idf_source", "inspect_idf_corpus",
    # Inspect: the document context typed for the pair
    "inspect_ref_context", "inspect_cand_context",
    # Compare: the open tab of the results; the earlier runs picked and the name of the run to save (runs.py)
    "cmp_tab", "cmp_earlier_runs", "cmp_run_name",
    # Compare: the metric of the LaTeX table and the report
    "cmp_paper_metric",
    # Baselines: the corpus sampling settings
    "bl_max_words", "bl_pairs", "bl_seed",
    # Agreement with humans: the human column, the bootstrap, the scatter's metric and colours, the figure format
    "agr_human", "agr_resamples", "agr_seed", "agr_metric", "agr_colour", "agr_fig_fmt",
    # Agreement with humans: the mt-metrics-eval choices, the disagreements' comparison, rows, filters and scope
    "agr_mtme_set", "agr_mtme_lp", "agr_mtme_ref", "agr_mtme_human",
    "agr_dis_pair", "agr_dis_n", "agr_dis_groups", "agr_dis_systems", "agr_dis_within",
    # Agreement with humans: what a difference means (the metric and the difference typed)
    "agr_delta_metric", "agr_delta_value",
    # Agreement with humans: the user's own metric columns and those better when lower
    "agr_own_metrics", "agr_lower_better", "agr_document", "agr_context", "agr_context_src",
    "agr_mqm_ref", "agr_mqm_leave",
    # How BERTScore is computed: the pair shown, the number of Compare segments to take
    "walk_pair", "walk_n",
    # Inspect, Compare and the walkthrough: long texts truncated or scored whole in windows (read by the sidebar)
    "long_texts_window",
    # Many samples: the text, the group size of plain-text files, the utility, the open input, the pair
    "samples_text", "samples_group_size", "samples_utility", "samples_open", "samples_pair_a", "samples_pair_b",
    # Is the metric fooled?: the source, the sample, the system, the perturbations and their seed, the examples shown
    "audit_source", "audit_pairs", "audit_sample_seed", "audit_system", "audit_perturbations", "audit_seed",
    "audit_example_perturbation",
})
#: Kept page widgets whose key has a per-pair or per-file part (``fkey`` = 16 hex digits of the file's hash).
KEPT_PATTERNS = (
    re.compile(r"inspect_reference_\d+"),
    # an explanation drawn by shared/explain_view.py: on Inspect, and A and B of Compare's drill-down
    re.compile(r"(inspect|compare_a|compare_b|samples_pair|audit_original|audit_perturbed|agr_pair)_"
               r"(show_special|merge_words|which_ref|html_light|view|zoom_rows|zoom_cols)"),
    # Compare, per file: column mapping, Holm, significance choices, A/B, the segment table's search and toggles,
    # the drill-down's segment, the results file's raw/rescaled switch
    re.compile(r"cmp_(layout|refs|src|seg|sys|syscol|cand|empty|holm|baseline|metric|a|b|query|pr|bydiff|"
               r"drill_seg|drill_pos|rf_other|surface|drop_empty|power_delta|rank_metric|mtme_ts|mtme_lp|mtme_ref|"
               r"scores|doc|context|context_src)_[0-9a-f]{16}"),
    # Compare, per file and metric of one's own: its direction
    re.compile(r"cmp_own_dir_[0-9a-f]{16}_\d+"),
)


def is_kept(key: object) -> bool:
    """Whether the widget with this key is carried over between runs (pure, for tests)."""
    return isinstance(key, str) and (key in KEPT_EXACT or any(p.fullmatch(key) for p in KEPT_PATTERNS))


def kept_keys(keys) -> list[str]:
    """The keys of ``keys`` whose widget values are carried over (pure, for tests)."""
    return [k for k in keys if is_kept(k)]


def keep_widget_values() -> None:
    """Write every kept page widget's current value back, so it survives runs that do not draw the widget."""
    for k in kept_keys(list(st.session_state.keys())):
        st.session_state[k] = st.session_state[k]


def fresh(key: str, **default) -> dict:
    """A widget's default (``value=``, ``index=``, ``default=``) only while the session holds no value for its key:
    given both, Streamlit logs a warning with a stack trace ("created with a default value but also had its value
    set via the Session State API") on every run after a kept value was written back. Use as
    ``st.number_input("Seed", 0, 99, key="seed", **fresh("seed", value=0))``."""
    return {} if key in st.session_state else default
