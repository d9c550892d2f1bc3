"""The Baselines page's own baseline of this session: computed from an uploaded corpus (with progress) or read from
an uploaded baseline file, used at once on every page, and kept for later sessions where the server allows.

Tests may put ``{"name", "data"}`` into ``st.session_state["baseline_corpus_input"]`` (a corpus, as the uploader
does) or ``st.session_state["baseline_file_input"]`` (an existing baseline file).
"""

from __future__ import annotations

import json

import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.shared.bounds import bound, named
from bertscore_viz.app.shared.messages import escape_markdown, show_error
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.engine.baseline import BaselineTable, parse_baseline
from bertscore_viz.errors import BaselineError, BertScoreVizError
from bertscore_viz.rescaling import baseline_compute as bc

__all__ = ["CORPUS_KEY", "FILE_KEY", "RESULT_KEY", "section_compute", "section_upload", "section_keep",
           "small_sample_note", "stored_input"]

CORPUS_KEY = "baseline_corpus_input"
FILE_KEY = "baseline_file_input"
RESULT_KEY = "_baseline_computed"
#: Largest baseline file accepted (a baseline has one short row per layer).
MAX_BASELINE_FILE_BYTES = 2**20
#: Below this many pairs a computed baseline gets a note: its means are uncertain (the shipped ones use 100,000;
#: the authors, 100,000 per language).
SMALL_SAMPLE_PAIRS = 2000


def stored_input(widget_key: str, state_key: str, label: str, types: list[str] | None, help_text: str,
                  own_limit: int) -> dict | None:
    """The file given to this uploader (kept in the session), if this server's upload limits accept it (counted
    with every other upload of the session); a refused file is said so and gives None."""
    up = st.file_uploader(label, type=types, key=widget_key, help=help_text + " " + gateway.upload_help(own_limit),
                          max_upload_size=gateway.upload_widget_mb(own_limit))
    if up is not None and st.session_state.get(f"_{widget_key}_id") != up.file_id:
        st.session_state[f"_{widget_key}_id"] = up.file_id
        st.session_state[state_key] = {"name": up.name, "data": up.getvalue()}
    item = st.session_state.get(state_key)
    if item is None:
        return None
    refused = gateway.count_upload(item["data"], item["name"], own_limit)
    if refused is not None:
        show_error(refused)
        return None
    return item


#: Set once the user types a number of pairs: a new corpus then keeps it instead of proposing N/2.
PAIRS_CHOSEN = "_bl_pairs_chosen"


def _pairs_chosen() -> None:
    st.session_state[PAIRS_CHOSEN] = True


def section_compute(settings, spec) -> None:
    st.header("Compute a baseline from a corpus")
    st.caption(
        "The authors' method: sentences of a monolingual corpus (one per line; empty lines and duplicates dropped, "
        "lines under the word limit kept) paired at random into unrelated pairs; the mean P, R and F of every "
        f"layer of {escape_markdown(spec.name)} is the baseline. Thousands of sentences give a stable baseline. "
        "The result is used at once on every page of this session, for this model and language.")
    item = stored_input("baseline_corpus_file", CORPUS_KEY, "Corpus (plain text, one sentence per line)",
                         None, "UTF-8 text, any file name (.txt, newstest's .en, …); for larger corpora use "
                               f"`python -m bertscore_viz baseline --corpus FILE -m {spec.name} --lang "
                               f"{settings.lang} -o OUT.tsv`.", bound("baseline_corpus_bytes"))
    c1, c2, c3 = st.columns(3)
    corpus = None
    with c3:
        max_words = st.number_input("Keep lines under (words)", 2, 1000, key="bl_max_words",
                                    **fresh("bl_max_words", value=bc.DEFAULT_MAX_WORDS))
    if item is not None:
        try:
            corpus = bc.prepare_corpus(item["data"], item["name"], int(max_words))
        except BertScoreVizError as exc:
            show_error(exc)
    if corpus is not None and st.session_state.get("_bl_pairs_for") != corpus.sha256:
        # a new corpus: propose the authors' grouping, every sentence once (N/2 pairs), unless the user has asked
        # for a number of pairs (5,000 asked before the corpus came must not turn into 440)
        st.session_state["_bl_pairs_for"] = corpus.sha256
        if not st.session_state.get(PAIRS_CHOSEN):
            st.session_state["bl_pairs"] = min(bound("baseline_pairs"), bc.default_pairs(len(corpus.sentences)))
    with c1:
        most = bound("baseline_pairs")
        pairs = st.number_input("Random pairs", 1, most, key="bl_pairs", **fresh("bl_pairs", value=min(5000, most)),
                                on_change=_pairs_chosen,
                                help="Proposed for each corpus: every sentence once (N/2 pairs). More pairs re-pair "
                                     f"the same sentences with new partners. At most {most:,} here "
                                     f"{named('baseline_pairs')}.")
    with c2:
        seed = st.number_input("Seed", 0, 2**31 - 1, key="bl_seed", help="Same seed, same pairs, same file.",
                               **fresh("bl_seed", value=0))
    if corpus is not None:
        st.caption(f"{escape_markdown(item['name'])}: {len(corpus.sentences):,} usable sentences of "
                   f"{corpus.lines_read:,} lines ({corpus.dropped_empty:,} empty, {corpus.dropped_duplicate:,} "
                   f"duplicates, {corpus.dropped_long:,} too long).")
    if st.button("Compute baseline", key="bl_compute", disabled=corpus is None, icon=":material/calculate:"):
        bar = st.progress(0.0, text="Scoring random pairs…")

        def progress(done: int, total: int) -> None:
            bar.progress(1.0 if not total else min(1.0, done / total),
                         text=f"Scoring random pairs at every layer: {done:,} / {total:,} pairs")

        try:
            scorer = gateway.scorer(settings, rescale=False)
            result = bc.compute_baseline(corpus, lang=settings.lang, n_pairs=int(pairs), seed=int(seed),
                                         max_words=int(max_words), progress=progress, scorer=scorer)
        except BertScoreVizError as exc:
            bar.empty()
            show_error(exc)
            return
        bar.empty()
        table = result.table()
        table = BaselineTable(table.values, f"computed from {item['name']}, {int(pairs):,} pairs, seed {int(seed)}")
        gateway.set_custom_baseline(settings.lang, spec.name, table)
        st.session_state[RESULT_KEY] = (settings.lang, spec.name, result.tsv(), result.provenance_json())
        st.rerun()
    done = st.session_state.get(RESULT_KEY)
    if done and done[:2] == (settings.lang, spec.name):
        st.success(f"Baseline computed; it is now used for {escape_markdown(spec.name)} ({settings.lang}) on every "
                   "page of this session when rescaling is on.", icon=":material/check_circle:")
        note = small_sample_note(done[3], settings.resolved_layer())
        if note:
            st.warning(escape_markdown(note), icon=":material/warning:")
        name = spec.name.replace("/", "_")
        d1, d2 = st.columns(2)
        with d1:
            st.download_button("Download baseline (TSV)", done[2], f"{name}.tsv", "text/tab-separated-values",
                               key="bl_download_tsv", icon=":material/download:")
        with d2:
            st.download_button("Download provenance (JSON)", gateway.public_provenance(done[3]) or "{}",
                               f"{name}.provenance.json",
                               "application/json", key="bl_download_json", icon=":material/download:")


def small_sample_note(provenance_json: str, layer: int) -> str | None:
    """A note when a computed baseline rests on few pairs, with the F standard error at the current layer, and the
    remedy that fits: more pairs from a corpus with sentences to spare, else a larger corpus (more pairs from a
    small corpus only re-pair the same sentences)."""
    try:
        prov = json.loads(provenance_json)
        pairs = int(prov["pairs"])
        stderr = float(prov["stderr"]["F"][layer])
        usable = int(prov.get("corpus", {}).get("usable_lines", 0))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None
    if pairs >= SMALL_SAMPLE_PAIRS:
        return None
    remedy = (f"ask for more pairs (up to {min(bound('baseline_pairs'), usable // 2):,} pair every sentence once)"
              if usable // 2 > pairs else f"use a larger corpus: this one has {usable:,} usable sentences, and more "
              "pairs would only pair the same sentences again")
    return (f"This baseline rests on {pairs:,} pairs only: its F at layer {layer} has a standard error of "
            f"{stderr:.4f}, and rescaled scores move by about that much divided by (1 − b). A stable baseline takes "
            f"thousands of pairs (the shipped ones: 100,000); {remedy}.")


def section_upload(settings, spec) -> None:
    st.header("Use an existing baseline file")
    st.caption("bert-score's format: header LAYER,P,R,F and one row per layer from 0. It is used for "
               f"{escape_markdown(spec.name)} ({settings.lang}) on every page of this session.")
    item = stored_input("baseline_file", FILE_KEY, "Baseline file (LAYER,P,R,F)", ["tsv", "csv", "txt"],
                         "One row per layer.", MAX_BASELINE_FILE_BYTES)
    if item is None or st.session_state.get("_baseline_file_used") == (item["name"], len(item["data"])):
        if gateway.custom_baseline(settings) is not None and st.button(
                "Forget this session's baseline", key="bl_forget", icon=":material/delete:"):
            st.session_state.get("custom_baselines", {}).pop((settings.lang, spec.name), None)
            st.session_state.pop(RESULT_KEY, None)
            st.session_state.pop(FILE_KEY, None)
            st.session_state.pop("_baseline_file_used", None)
            st.rerun()
        return
    try:
        try:
            text = item["data"].decode("utf-8-sig")
        except UnicodeDecodeError:
            raise BaselineError(f"The baseline file {item['name']} is not UTF-8 text.") from None
        table = parse_baseline(text, f"uploaded {item['name']}")
        n_layers = gateway.model_info(spec)["num_layers"] + 1
        if len(table.values) != n_layers:
            raise BaselineError(
                f"The baseline {item['name']} has {len(table.values)} rows (layers 0 to {len(table.values) - 1}), "
                f"but {spec.name} has {n_layers} (layers 0 to {n_layers - 1}): it is for another model. Upload "
                "the baseline of this model, or compute one above.")
    except BertScoreVizError as exc:
        show_error(exc)
        return
    gateway.set_custom_baseline(settings.lang, spec.name, table)
    st.session_state["_baseline_file_used"] = (item["name"], len(item["data"]))
    st.rerun()


def section_keep(settings, spec) -> None:
    """Where this session's baseline lives: only here (download it), or saved for later sessions."""
    table = st.session_state.get("custom_baselines", {}).get((settings.lang, spec.name))
    if table is None:
        return
    st.header("Keep this session's baseline")
    done = st.session_state.get(RESULT_KEY)
    provenance = done[3] if done and done[:2] == (settings.lang, spec.name) else None
    gateway.keep_baseline(settings.lang, spec.name, table, provenance, key="bl_keep")
