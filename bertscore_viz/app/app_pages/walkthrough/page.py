"""How BERTScore is computed: a small batch walked through the vectorized computation, step by step, with the real
tensors and their shapes, in the order the engine computes them (bertscore_viz/engine/walkthrough.py), following
the sidebar's model, layer, idf and rescaling. Tests may put a DataFrame of pairs into
``st.session_state["walk_batch"]``.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from bertscore_viz.app import gateway
from bertscore_viz.app.app_pages.walkthrough import view
from bertscore_viz.app.app_pages.walkthrough.context import context_step
from bertscore_viz.app.shared.bounds import bound, named
from bertscore_viz.app.shared.long_texts import long_text_switch
from bertscore_viz.app.shared.messages import show_error
from bertscore_viz.app.shared.settings import current_settings
from bertscore_viz.app.state.kept import KeptWalk
from bertscore_viz.app.state.widgets import fresh
from bertscore_viz.engine import walkthrough as wt
from bertscore_viz.errors import BertScoreVizError
from bertscore_viz.files.textfile import decode_text, split_lines


def _batch() -> pd.DataFrame:
    st.header("1. The batch")
    c1, c2, c3, c4 = st.columns([1.2, 1.2, 1.6, 1.2], vertical_alignment="bottom")
    if c1.button("Default batch", key="walk_default", icon=":material/restart_alt:"):
        view.set_batch(wt.DEFAULT_BATCH)
    if c2.button("Worked example", key="walk_worked", icon=":material/school:",
                 help="The reference 'alphabet' and the candidate 'writing system': recall is the larger of "
                      "alphabet·writing and alphabet·system."):
        view.set_batch([wt.WORKED_EXAMPLE])
    pair = view.inspect_pair()
    if c3.button("Use the Inspect pair", key="walk_inspect", disabled=pair is None, icon=":material/search:"):
        view.set_batch([pair])
    most = bound("walkthrough_pairs")
    n = int(c4.number_input("Segments", 1, most, key="walk_n", **fresh("walk_n", value=min(4, most)),
                            help=f"At most {most} pairs {named('walkthrough_pairs')}."))
    segs = view.compare_pairs(n)
    if st.button(f"Take {n} segment(s) from the Compare dataset", key="walk_compare", disabled=segs is None,
                 icon=":material/leaderboard:"):
        view.set_batch(segs)
    _idf_corpus()
    frame = st.data_editor(view.current_batch(), num_rows="dynamic", width="stretch", hide_index=True,
                           key=f"walk_editor_{st.session_state.get('walk_editor_version', 0)}",
                           column_config={"candidate": st.column_config.TextColumn(max_chars=2000),
                                          "reference": st.column_config.TextColumn(max_chars=2000)})
    frame = frame.fillna("").astype(str).reset_index(drop=True)
    if not frame.equals(view.current_batch().fillna("").astype(str).reset_index(drop=True)):
        view.set_batch(frame.itertuples(index=False))  # edits become the batch (kept across pages), a fresh editor
        st.rerun()
    return frame


IDF_KEY = "walk_idf_corpus_input"


def _idf_corpus() -> None:
    """An optional corpus to count idf over (with idf on), kept in the session as ``{"name", "data"}``."""
    up = st.file_uploader("Corpus for idf (optional; plain text, one sentence per line)", key="walk_idf_file",
                          max_upload_size=gateway.upload_widget_mb(bound("idf_corpus_bytes")),
                          help="With idf on, the weights are counted over these sentences instead of the batch's "
                               "references. " + gateway.upload_help(bound("idf_corpus_bytes")))
    if up is not None and st.session_state.get("_walk_idf_file_id") != up.file_id:
        st.session_state["_walk_idf_file_id"] = up.file_id
        st.session_state[IDF_KEY] = {"name": up.name, "data": up.getvalue()}


def _idf_sentences(settings) -> list[str] | None:
    item = st.session_state.get(IDF_KEY)
    if not settings.idf or item is None:
        return None
    refused = gateway.count_upload(item["data"], item["name"], bound("idf_corpus_bytes"))
    if refused is not None:
        raise BertScoreVizError(refused)
    lines = [x for x in split_lines(decode_text(item["data"], f"The corpus {item['name']}")) if x]
    if not lines:
        raise BertScoreVizError(f"The corpus {item['name']} has no sentence.")
    if len(lines) > bound("idf_corpus_lines"):
        st.warning(f"The corpus {item['name']} has {len(lines):,} sentences; idf is counted over the first "
                   f"{bound('idf_corpus_lines'):,} {named('idf_corpus_lines')}.", icon=":material/warning:")
        lines = lines[:bound("idf_corpus_lines")]
    return lines


def main() -> None:
    st.title("How BERTScore is computed")
    st.caption("A small batch through the vectorized computation, step by step, with the real tensors and their "
               "shapes, in the order the engine computes them. The numbers are the engine's (Scorer.score gives the "
               "same, to 1e-6), for the sidebar's model, layer, idf and rescaling.")
    frame = _batch()
    frame = frame[(frame["candidate"].str.strip() != "") | (frame["reference"].str.strip() != "")]
    if frame.empty:
        st.info("Add at least one pair.", icon=":material/info:")
        return
    settings = current_settings()
    try:
        scorer = gateway.scorer(settings, idf_sentences=_idf_sentences(settings))
        # one model pass per batch and settings: choosing another pair, or any rerun, redraws from the kept result
        key = (tuple(map(tuple, frame.values.tolist())), str(scorer.signature), scorer.spec.source,
               None if scorer.baseline is None else tuple(scorer.baseline))
        kept = st.session_state.get("_walk_result")
        if kept is None or kept.key != key:
            if len(frame) > bound("walkthrough_pairs"):
                raise BertScoreVizError(f"The batch has {len(frame)} pairs; the walkthrough shows at most "
                                        f"{bound('walkthrough_pairs')} {named('walkthrough_pairs')}: it prints every "
                                        "tensor. Remove pairs, or score larger sets on the Compare page.")
            kept = KeptWalk(key, wt.compute(scorer, frame["candidate"].tolist(), frame["reference"].tolist(),
                                            max_pairs=bound("walkthrough_pairs")), {})
            st.session_state["_walk_result"] = kept
        w, gradients = kept.walk, kept.gradients
    except BertScoreVizError as exc:
        show_error(exc)
        return
    st.caption(f"B = {w.batch} pair(s), layer {w.layer}, hidden size H = {w.hidden}; signature `{w.signature}`")
    enc = scorer.encoder
    cut = [t for t in enc.encode(list(w.cand.texts) + list(w.ref.texts)) if t.length > enc.max_length]
    long_text_switch(len(cut), sum(t.dropped for t in cut) if settings.long_texts == "truncate" else 0,
                     enc.max_length, settings.long_texts)
    labels = [f"pair {b}: {c[:40]}" for b, c in enumerate(w.cand.texts)]
    i = st.selectbox("Pair for the matrix and the formula", list(range(w.batch)), format_func=lambda b: labels[b],
                     key="walk_pair") or 0
    i = min(int(i), w.batch - 1)
    view.show(w, i)
    st.header("9. The code")
    st.markdown("Each step above shows the engine's kernel function that computes it. A short plain-torch script "
                "(transformers and torch only) recomputes this batch's numbers and prints them:")
    spec = scorer.spec
    script = wt.reproduction_script(w, spec.source,  # RoBERTa/GPT-2 tokenizers as the engine loads them
                                    add_prefix_space=bool(getattr(scorer.encoder.tokenizer, "add_prefix_space", False)))
    st.download_button("Download the script (Python)", script, "bertscore_walkthrough.py", "text/x-python",
                       key="walk_script", icon=":material/download:")
    if cut and settings.long_texts == "window":
        st.caption("The script embeds each text in one pass, cut at the model's maximum: it reproduces the numbers "
                   "of the pairs that fit, not of the long texts scored here in windows.")
    with st.expander("The script"):
        st.code(script, language="python")
    view.show_gradient(w, i, lambda k: gradients.setdefault(k, wt.candidate_gradient(scorer, w, k)))
    context_step(settings, list(w.cand.texts), list(w.ref.texts), i)


main()
