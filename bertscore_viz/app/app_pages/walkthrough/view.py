"""The walkthrough page's pieces: the batch (editable, from Inspect or Compare), each step's tables with their
shapes (each table named by its side, padding left blank), the kernel's code beside each step, the whole
similarity matrix of one pair, the formula of one pair written out, the gradient of the loss, and the download of
a plain-torch script that reproduces the numbers. Every text is shown as text (never HTML)."""

from __future__ import annotations

import html
import inspect

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bertscore_viz.app.shared.explain_view import show_figure
from bertscore_viz.app.shared.long_texts import window_caption
from bertscore_viz.app.state.compare import compare_state
from bertscore_viz.engine import tensor_ops
from bertscore_viz.engine import walkthrough as wt
from bertscore_viz.figures.cells import window_lines
from bertscore_viz.figures.plots import COL_MAX_COLOR, ROW_MAX_COLOR, heatmap_size, x_angle

__all__ = ["BATCH_KEY", "code", "compare_pairs", "current_batch", "inspect_pair", "matrix_table", "paired", "set_batch",
           "shape", "show", "show_gradient", "show_table", "similarity_figure", "as_text", "tokens_table"]

BATCH_KEY = "walk_batch"


def code(*functions) -> None:
    """The engine's own source of these kernel functions (read from the module: it cannot drift)."""
    with st.expander("The engine's code: " + ", ".join(f"tensor_ops.{f.__name__}" for f in functions)):
        st.code("\n\n".join(inspect.getsource(f) for f in functions), language="python")


def shape(name: str, dims: str, values) -> str:
    return f"`{name}` {dims} = {list(np.shape(values))}"


# --- the batch ------------------------------------------------------------------------------------------------------
def current_batch() -> pd.DataFrame:
    if BATCH_KEY not in st.session_state:
        set_batch(wt.DEFAULT_BATCH)
    return st.session_state[BATCH_KEY]


def set_batch(pairs) -> None:
    st.session_state[BATCH_KEY] = pd.DataFrame(list(pairs), columns=["candidate", "reference"])
    st.session_state["walk_editor_version"] = st.session_state.get("walk_editor_version", 0) + 1


def inspect_pair() -> tuple[str, str] | None:
    cand = st.session_state.get("inspect_candidate") or ""
    ref = st.session_state.get("inspect_reference_0") or ""
    return (cand, ref) if cand.strip() and ref.strip() else None


def compare_pairs(n: int) -> list[tuple[str, str]] | None:
    """The first ``n`` segments of the Compare dataset, the first system's outputs against the first reference."""
    state = compare_state()
    if not state.dataset:
        return None
    ds = state.dataset.value
    if not getattr(ds, "ok", False):
        return None
    outputs = next(iter(ds.systems.values()))
    return [(c, refs[0]) for c, refs in list(zip(outputs, ds.references))[:n]]


# --- steps -----------------------------------------------------------------------------------------------------------
def tokens_table(side: wt.Side) -> pd.DataFrame:
    """``[B, T]`` as a table: one row per text, one column per position, ``token (id)``; padding empty."""
    rows = []
    for b in range(len(side.texts)):
        rows.append({f"t{t}": (f"{side.tokens[b][t]} ({int(side.ids[b, t])})" if side.mask[b, t] else "")
                     for t in range(side.ids.shape[1])})
    return pd.DataFrame(rows, index=[f"pair {b}" for b in range(len(side.texts))])


def matrix_table(values: np.ndarray, side: wt.Side, fmt: int = 4) -> pd.DataFrame:
    """``[B, T]`` values as a table, NaN on padding (see :func:`as_text` for showing it blank)."""
    out = pd.DataFrame(np.round(values.astype(float), fmt), index=[f"pair {b}" for b in range(len(side.texts))],
                       columns=[f"t{t}" for t in range(values.shape[1])])
    return out.where(side.mask)


def as_text(frame: pd.DataFrame, decimals: int = 4) -> pd.DataFrame:
    """A table for display: numbers with ``decimals`` places, padded (NaN) cells blank (Streamlit shows a missing
    value as "None", whatever a Styler says)."""
    return frame.map(lambda v: "" if pd.isna(v) else f"{v:.{decimals}f}")


def show_table(frame: pd.DataFrame, decimals: int | None = 4) -> None:
    """One ``[B, T]`` table: numbers right-aligned as text (see :func:`as_text`), or a table of text as it is."""
    if decimals is None:
        st.dataframe(frame, width="stretch")
        return
    st.dataframe(as_text(frame, decimals), width="stretch",
                 column_config={c: st.column_config.TextColumn(alignment="right") for c in frame.columns})


def paired(cand: pd.DataFrame, ref: pd.DataFrame, what: str, decimals: int | None = 4) -> None:
    """The candidate's and the reference's ``[B, T]`` tables of a step, each under its name."""
    for side, frame in (("Candidate", cand), ("Reference", ref)):
        st.caption(f"**{side}** · {what}")
        show_table(frame, decimals)


def similarity_figure(w: wt.Walkthrough, i: int) -> go.Figure:
    """Pair ``i``'s whole ``[Tc, Tr]`` slice with its padding (blank: masked out), row and column maxima marked:
    every cell and every label at a legible size (the figure grows with the pair; the page scrolls)."""
    sim = w.similarity[i]
    ct = [f"{t}:{s}" for t, s in enumerate(w.cand.tokens[i])] + [f"{t}:[PAD]" for t in range(
        len(w.cand.tokens[i]), sim.shape[0])]
    rt = [f"{t}:{s}" for t, s in enumerate(w.ref.tokens[i])] + [f"{t}:[PAD]" for t in range(
        len(w.ref.tokens[i]), sim.shape[1])]
    size = heatmap_size(sim.shape[0], sim.shape[1], max(map(len, ct), default=1), max(map(len, rt), default=1))
    cell = size["cell"]
    fig = go.Figure(go.Heatmap(z=sim, x=list(range(sim.shape[1])), y=list(range(sim.shape[0])), colorscale="Blues",
                               zmin=min(0.0, float(np.nanmin(sim))), zmax=1.0, xgap=1, ygap=1,
                               colorbar=dict(thickness=12, lenmode="pixels", len=min(300, 30 * sim.shape[0] + 60)),
                               hovertemplate="candidate %{y} · reference %{x}<br>cosine %{z:.4f}<extra></extra>"))
    rows = [t for t in range(sim.shape[0]) if w.cand.mask[i, t]]
    fig.add_trace(go.Scatter(x=[int(w.cand.best_index[i, t]) for t in rows], y=rows, mode="markers",
                             name="row max (precision)", hoverinfo="skip",
                             marker=dict(symbol="circle-open", size=max(8, int(cell * 0.8)), color=ROW_MAX_COLOR,
                                         line=dict(width=2))))
    cols = [t for t in range(sim.shape[1]) if w.ref.mask[i, t]]
    fig.add_trace(go.Scatter(x=cols, y=[int(w.ref.best_index[i, t]) for t in cols], mode="markers",
                             name="column max (recall)", hoverinfo="skip",
                             marker=dict(symbol="x-thin-open", size=max(5, int(cell * 0.42)), color=COL_MAX_COLOR,
                                         line=dict(width=2))))
    # window mode: dashed lines where a long text's vectors start coming from the next window
    col_cuts = [c - 0.5 for c in (w.ref.window_cuts[i] if w.ref.window_cuts else ())]
    row_cuts = [c - 0.5 for c in (w.cand.window_cuts[i] if w.cand.window_cuts else ())]
    shapes, traces = window_lines(col_cuts, row_cuts, "window boundary (window mode)")
    fig.add_traces(traces)
    fig.update_layout(height=size["height"] - 40, width=size["width"], plot_bgcolor="white", shapes=shapes,
                      meta={"window_cuts": {"rows": row_cuts, "cols": col_cuts}, "shape": list(sim.shape),
                            "window": list(sim.shape), "windowed": False},
                      xaxis=dict(tickvals=list(range(len(rt))), ticktext=[_esc(t) for t in rt], side="top",
                                 tickangle=x_angle(cell), tickfont=dict(size=12), range=[-0.5, sim.shape[1] - 0.5],
                                 showgrid=False, zeroline=False),
                      yaxis=dict(tickvals=list(range(len(ct))), ticktext=[_esc(t) for t in ct],
                                 tickfont=dict(size=12), range=[sim.shape[0] - 0.5, -0.5], showgrid=False,
                                 zeroline=False),
                      margin=dict(t=size["top"] - 40, l=size["left"], r=size["right"], b=size["bottom"],
                                  autoexpand=False),
                      legend=dict(orientation="h", x=0, y=0, yref="container", yanchor="bottom"))
    return fig


def _esc(text: str) -> str:

    return html.escape(str(text), quote=False)


def show(w: wt.Walkthrough, i: int) -> None:
    """Steps 2 to 8 of the walkthrough; ``i`` is the pair chosen for the matrix and the formula."""
    B, Tc, Tr, H = w.batch, w.cand.ids.shape[1], w.ref.ids.shape[1], w.hidden
    st.header("2. Tokens")
    st.markdown(f"Token ids with the special tokens, padded to the longest text of each side: "
                f"{shape('cand_ids', '[B, Tc]', w.cand.ids)}, {shape('ref_ids', '[B, Tr]', w.ref.ids)}. The "
                "attention mask is True on real tokens (the empty cells below are padding).")
    paired(tokens_table(w.cand), tokens_table(w.ref), "`token (id)` at each position", decimals=None)
    st.header("3. Embeddings")
    st.markdown(f"Hidden states at layer {w.layer}: {shape('cand', '[B, Tc, H]', w.cand.vectors)}, "
                f"{shape('ref', '[B, Tr, H]', w.ref.vectors)}. Each vector is divided by its length, so that a dot "
                "product is a cosine. Length of each token's vector before that:")
    st.caption("**Candidate** · length of each token's vector")
    show_table(matrix_table(w.cand.norms, w.cand, 2), 2)
    dims = pd.DataFrame(w.cand.vectors[i, : int(w.cand.lengths[i]), :6],
                        index=[_label(t) for t in w.cand.tokens[i]], columns=[f"dim {d}" for d in range(6)])
    st.caption(f"Pair {i}'s candidate: the first 6 of {H} dimensions of each unit vector.")
    st.dataframe(dims.round(4), width="stretch")
    code(tensor_ops.normalize)
    st.header("4. Similarity")
    st.markdown(f"One batched matrix product of unit vectors, {shape('sim', '[B, Tc, Tr]', w.similarity)} = "
                "`einsum('bch,brh->bcr', cand, ref)`: every candidate token against every reference token of its "
                "pair. Cells with a padded token are masked out (blank here, -inf before a maximum), so padding never "
                f"wins. Pair {i}:")
    sim_fig = similarity_figure(w, i)
    window_caption(sim_fig.layout.meta, first=0)  # positions are numbered from 0 on this matrix
    show_figure(sim_fig, "walk_sim")
    code(tensor_ops.similarity)
    st.header("5. Greedy matching")
    st.markdown(f"Precision side: each candidate token keeps its best reference token, `sim.max(dim=2)` "
                f"{shape('cand_best', '[B, Tc]', w.cand.best)} (with `keepdim=True`: [{B}, {Tc}, 1]). Recall side: "
                f"each reference token keeps its best candidate token, `sim.max(dim=1)` "
                f"{shape('ref_best', '[B, Tr]', w.ref.best)} (`keepdim=True`: [{B}, 1, {Tr}]). Circles and crosses "
                "in the matrix above.")
    paired(matrix_table(w.cand.best, w.cand), matrix_table(w.ref.best, w.ref), "each token's best match (cosine)", 4)
    code(tensor_ops.greedy_maxima)
    st.header("6. Token weights (idf)")
    if w.idf is None:
        st.markdown("idf is off: every real token weighs 1, the special tokens 0. `[B, T]` weight tensors:")
    else:
        st.markdown(f"idf from {w.idf['source']} (M = {w.idf['M']} documents): for each token, df = in how many "
                    "documents it occurs, and idf = ln((M + 1) / (df + 1)), the reference's plus-one smoothing: a "
                    "token in every document weighs 0 (so do CLS and SEP, which are in all), a token in none weighs "
                    f"ln(M + 1) = {w.idf['unseen']:.4f}. Computed once for the vocabulary, then read for each token.")
        table = pd.DataFrame({"token": list(w.idf["df"]), "df": list(w.idf["df"].values()),
                              "idf": [round(w.idf["weight"][t], 4) for t in w.idf["df"]]})
        st.dataframe(table, hide_index=True, width="stretch", height=min(400, 38 + 35 * len(table)))
    paired(matrix_table(w.cand.weights, w.cand), matrix_table(w.ref.weights, w.ref), "each token's weight", 4)
    st.header("7. P, R, F1 and rescaling")
    st.markdown(f"P = Σ w·cand_best / Σ w over candidate tokens, R the same over reference tokens (the weights "
                f"reshaped to broadcast against the maxima), F1 = 2PR / (P + R): {shape('P', '[B]', w.precision)}.")
    scores = pd.DataFrame({"candidate": w.cand.texts, "reference": w.ref.texts, "P": w.precision,
                           "R": w.recall, "F1": w.f1})
    if w.rescaled is not None:
        b = w.baseline
        scores["F1 rescaled"] = w.rescaled[:, 2]
        st.markdown(f"Rescaled: x' = (x − b) / (1 − b) with the baseline row of layer {w.layer}: "
                    f"b = P {b[0]:.4f}, R {b[1]:.4f}, F {b[2]:.4f}; pair {i}: F1' = ({w.f1[i]:.4f} − {b[2]:.4f}) / "
                    f"(1 − {b[2]:.4f}) = {w.rescaled[i, 2]:.4f}.")
    st.dataframe(scores, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.6f")
                                for c in ("P", "R", "F1", "F1 rescaled")})
    code(tensor_ops.weighted_mean, tensor_ops.f1_score, tensor_ops.precision_recall_f1, tensor_ops.rescale)
    st.header("8. The formula for one pair")
    terms = wt.pair_terms(w, i)
    for side, letter, name in (("precision", "P", "candidate"), ("recall", "R", "reference")):
        rows = [r for r in terms[side] if r[3] != 0]
        num = " + ".join(f"{r[3]:.3f}·{r[2]:.4f}" for r in rows)
        den = " + ".join(f"{r[3]:.3f}" for r in rows)
        st.markdown(f"**{letter}** = (1 / Σw) Σ over {name} tokens of w × (max over the other side's tokens of "
                    "the cosine):")
        st.code(f"{letter} = ({num}) / ({den}) = {terms[letter]:.6f}", language=None, wrap_lines=True)
        st.dataframe(pd.DataFrame(terms[side], columns=["token", "best match", "cosine", "weight"]),
                     hide_index=True, width="stretch")
    st.markdown(f"**F1** = 2PR / (P + R) = 2·{terms['P']:.4f}·{terms['R']:.4f} / ({terms['P']:.4f} + "
                f"{terms['R']:.4f}) = {terms['F']:.6f}")


def show_gradient(w: wt.Walkthrough, i: int, gradient) -> None:
    st.header("10. As a training signal")
    norms = gradient(i)
    st.markdown("The gradient of the loss 1 − F1 (exact maxima, as above) with respect to each candidate token's "
                "input embedding: the tokens whose change would move the score most. See docs/LOSS.md for "
                "BERTScore as a training loss.")
    st.dataframe(pd.DataFrame({"token": [_label(t) for t in w.cand.tokens[i]], "gradient norm": norms}),
                 hide_index=True, width="stretch")


def _label(token: str) -> str:
    return str(token)
