"""The problems of an uploaded file, shown the same way on every page: an expander with a table of the first
:data:`MAX_SHOWN` (row, column, severity, problem) and every one of them as a CSV download. Nothing is lost, and a
file with 200,000 bad rows does not send 200,000 rows to the browser (building and drawing that table held the server
and the browser for seconds while other sessions waited)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from bertscore_viz.files.export import safe_csv

__all__ = ["MAX_SHOWN", "WRAPPED_ROW_PX", "problems_frame", "show_problems_table"]

#: Problems drawn in the table; all of them are in the download.
MAX_SHOWN = 500
#: Row height that makes the table wrap a long message (Streamlit wraps a cell only in rows taller than 4rem).
WRAPPED_ROW_PX = 72
_ONE_LINE = 90


def problems_frame(problems, severity: bool = True) -> pd.DataFrame:
    """One row per problem: Row, Column, (Severity,) Problem."""
    fields = {"Row": "row", "Column": "column", **({"Severity": "severity"} if severity else {}), "Problem": "problem"}
    return pd.DataFrame([{c: getattr(p, f) for c, f in fields.items()} for p in problems], columns=list(fields))


def show_problems_table(problems, key: str, label: str, expanded: bool, icon: str = ":material/report:",
                        severity: bool = True, file_name: str = "problems.csv") -> None:
    """The table of the first :data:`MAX_SHOWN` problems (long messages wrapped) and all of them as CSV."""
    problems = list(problems)
    if not problems:
        return
    shown = problems[:MAX_SHOWN]
    long = max(len(p.problem) for p in shown) > _ONE_LINE
    with st.expander(label, expanded=expanded, icon=icon):
        if len(problems) > MAX_SHOWN:
            st.caption(f"The first {MAX_SHOWN:,} of {len(problems):,} are listed here; the download has all of them.")
        st.dataframe(problems_frame(shown, severity), hide_index=True, width="stretch", key=key,
                     row_height=WRAPPED_ROW_PX if long else None,
                     column_config={"Row": st.column_config.NumberColumn(format="%d", width="small"),
                                    "Column": st.column_config.TextColumn(width="small"),
                                    "Severity": st.column_config.TextColumn(width="small"),
                                    "Problem": st.column_config.TextColumn(width="large")})
        st.download_button(f"All {len(problems):,} as CSV", data=lambda: safe_csv(problems_frame(problems, severity)),
                           file_name=file_name, mime="text/csv", key=f"{key}_csv", on_click="ignore",
                           icon=":material/download:", help="Every problem with its row and column, for a "
                                                            "spreadsheet (cells that look like formulas neutralised).")
