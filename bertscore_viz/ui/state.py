"""What a browser session keeps across pages and reruns.

Streamlit drops a widget's value when a run does not draw the widget (another page, a tab not open): typed
text on Inspect would be gone after a visit to Compare. :func:`keep_widget_values` runs at the top of every run
(``app.py``, before the page) and writes each page widget's value back into ``st.session_state``, which turns
it into session state that outlives the widget; when the page is drawn again its widgets start from it.

Values that are not widgets (the Compare upload and its model pass, custom baselines) live in plain session
keys and are kept anyway. Widgets whose value cannot be written (buttons, file uploaders, downloads, a table's
row selection) are left out: their effect is already stored by the page in plain keys.
"""

from __future__ import annotations

import re

import streamlit as st

#: Widget keys of the pages (the sidebar is drawn on every run and needs nothing).
KEPT = re.compile(r"^(inspect_|cmp_|bl_)")
#: Widgets whose value Streamlit does not let a program set.
NOT_SETTABLE = re.compile(r"(_dl_|_download|_add_ref$|_remove_ref$|_file$|_load_example$|_compute$|_forget$|"
                          r"^cmp_segments$|_use_corpus$|_idf_apply$)")


def kept_keys(keys) -> list[str]:
    """The keys of ``keys`` whose widget values are carried over (pure, for tests)."""
    return [k for k in keys if isinstance(k, str) and KEPT.match(k) and not NOT_SETTABLE.search(k)]


def keep_widget_values() -> None:
    """Write every page widget's current value back, so it survives runs that do not draw the widget."""
    for k in kept_keys(list(st.session_state.keys())):
        st.session_state[k] = st.session_state[k]
