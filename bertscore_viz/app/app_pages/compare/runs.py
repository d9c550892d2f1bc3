"""The Compare page's runs that last (docs/RUNS.md): "Earlier runs", kept runs whose systems join the uploaded ones
by their kept scores (when the signature and the references agree, else the reasons are shown), with their systems'
F1 across runs; and "Save this run" after the results.

Where runs are kept: the operator's ``runs_dir`` setting (shared by every user of the server, and the page says
so); on a local, single-user app (the server listens on this machine only) ``$BERTSCORE_VIZ_RUNS`` or
``~/.cache/bertscore-viz/runs`` when the setting is empty; on a shared server without the setting there are no
runs, so that no session sees another's.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.shared.bounded_store import BoundedStore
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.evaluation.runs import run_problems, save_comparison, with_runs
from bertscore_viz.figures.runs_plots import history_figure
from bertscore_viz.files.runs import MAX_RUNS_LISTED, Run, RunList, default_runs_dir, history, list_runs

__all__ = ["PICK_KEY", "NAME_KEY", "SAVE_KEY", "MERGED_KEY", "LISTS_KEPT", "runs_folder", "earlier_runs",
           "save_control"]

#: The widgets' keys: the runs picked, the name typed, the save button.
PICK_KEY = "cmp_earlier_runs"
NAME_KEY = "cmp_run_name"
SAVE_KEY = "cmp_save_run"
#: The session's last dataset and comparison with earlier runs added.
MERGED_KEY = "_cmp_runs_merged"
#: Folder listings kept in memory (each re-read when a file in it changes).
LISTS_KEPT = 4
_LISTS: BoundedStore = BoundedStore(LISTS_KEPT)


def runs_folder() -> tuple[Path | None, bool]:
    """The runs folder and whether it is the operator's, shared by every user; ``(None, False)``: no runs here."""
    given = gateway.policy().runs_dir.strip()
    if given:
        return Path(given).expanduser(), True
    if gateway.local_server():
        return default_runs_dir(), False
    return None, False


def _listing(folder: Path) -> RunList:
    """The folder's runs, read again only when one of its files changed (name, size or time)."""
    try:
        with os.scandir(folder) as entries:
            stamp = tuple(sorted((e.name, e.stat().st_mtime_ns, e.stat().st_size) for e in entries
                                 if e.name.endswith(".json")))[-MAX_RUNS_LISTED:]
    except OSError:
        return RunList()
    key = (str(folder), stamp)
    kept = _LISTS.get(key)
    if kept is None:
        kept = list_runs(folder)
        _LISTS.put(key, kept)
    return kept


def _where(folder: Path, shared: bool) -> str:
    if shared:
        return ("Runs are kept in this server's shared runs folder, set by its operator: every user of this server "
                "sees and can add to them.")
    return f"Runs are kept in {escape_markdown(str(folder))} on this machine."


def _history(runs: list[Run], chosen: list[Run], signature: str) -> None:
    """The chosen runs' systems: their F1 in every kept run of the same signature."""
    alike = [r for r in runs if r.signature == signature]
    systems = list(dict.fromkeys(s for r in chosen for s in r.systems))[:10]
    histories = {s: history(alike, s) for s in systems}
    if any(len(h) > 1 for h in histories.values()):
        st.plotly_chart(history_figure(histories), key="cmp_runs_history")
        st.caption("Corpus F1 of the chosen runs' systems in every kept run with this signature.")


def earlier_runs(ds, comparison):
    """The "Earlier runs" picker: the dataset and comparison with the chosen runs' systems added
    (``<system> @ <run>``), each run that cannot be compared left out with its reasons shown."""
    folder, shared = runs_folder()
    if folder is None:
        st.caption("Earlier runs: not offered on this shared server (its operator has not set a runs folder).")
        return ds, comparison
    listed = _listing(folder)
    if not listed.runs:
        return ds, comparison
    by_path = {str(r.path): r for r in listed.runs}
    picked = st.multiselect("Earlier runs", list(by_path), key=PICK_KEY, format_func=lambda p: by_path[p].label,
                            help="Add the systems of kept runs beside these, by their kept scores (no model pass). "
                                 "A run can be added when it was scored with the same signature on the same "
                                 "references.")
    st.caption(_where(folder, shared) + (f" {len(listed.skipped)} file(s) there could not be read."
                                         if listed.skipped else ""))
    chosen = [by_path[p] for p in picked if p in by_path]
    usable = []
    for run in chosen:
        problems = run_problems(run, ds, comparison)
        if problems:
            st.warning(escape_markdown(" ".join(problems)), icon=":material/history:")
        else:
            usable.append(run)
    if not usable:
        return ds, comparison
    _history(listed.runs, usable, comparison.signature)
    return _merged(ds, comparison, usable)


def _merged(ds, comparison, runs: list[Run]):
    """:func:`~bertscore_viz.evaluation.runs.with_runs`, the same objects again while the scores and the runs are
    unchanged (the page keys its bootstrap and its chrF/BLEU/TER job on them)."""
    key = tuple((str(r.path), r.created) for r in runs)
    kept = st.session_state.get(MERGED_KEY)
    if kept is not None and kept[0] is ds and kept[1] is comparison and kept[2] == key:
        return kept[3], kept[4]
    try:
        merged_ds, merged = with_runs(ds, comparison, runs)
    except BertScoreVizError as exc:
        show_error(exc)
        return ds, comparison
    st.session_state[MERGED_KEY] = (ds, comparison, key, merged_ds, merged)
    return merged_ds, merged


def save_control(ds, comparison) -> None:
    """"Save this run": the uploaded systems' scores kept under a name (the earlier runs' systems are not saved
    again)."""
    folder, shared = runs_folder()
    if folder is None:
        return
    st.subheader("Save this run")
    name = st.text_input("Run name", key=NAME_KEY, max_chars=120, placeholder="e.g. checkpoint-5",
                         help="Keep these systems' scores, signature and the hashes of the inputs, to compare "
                              "later uploads with them (Earlier runs).")
    if st.button("Save this run", key=SAVE_KEY, icon=":material/save:", disabled=not (name or "").strip()):
        try:
            save_comparison(folder, name, ds, comparison)
        except BertScoreVizError as exc:
            show_error(exc)
            return
        st.success(f"Saved the run **{escape_markdown(' '.join(name.split()))}** "
                   f"({len(comparison.systems)} systems).", icon=":material/save:")
    st.caption(_where(folder, shared))
