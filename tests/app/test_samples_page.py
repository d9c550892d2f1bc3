"""The "Many samples" page (issue 34, item 4) in Streamlit's AppTest with the real model: its numbers are
``consensus(...)``'s, and independently the plain BERTScore of every explicit pair (``Scorer.score``) and a numpy
computation of token support; the pair view shows the matrix's numbers (also with idf); inputs are read as the
command line reads them, within named limits; nothing typed is rendered as HTML or as a live spreadsheet formula.

The page is run on its own (``AppTest.from_file`` of the page, settings in ``st.session_state["settings"]`` as
``tests/app/test_inspect_page.py`` does) until the navigation lists it. The parsing and figure helpers are tested
directly too (no model).
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from bertscore_viz import Scorer
from bertscore_viz.app.app_pages.samples import view
from bertscore_viz.app.shared.settings import Settings
from bertscore_viz.cli.entry import main as cli
from bertscore_viz.consensus import consensus
from bertscore_viz.engine.baseline import shipped_baseline_path
from bertscore_viz.errors import InputError
from bertscore_viz.figures import consensus_plots as plots
from bertscore_viz.files.export import safe_csv
from bertscore_viz.files.samples import read_groups
from bertscore_viz.models.spec import resolve_model
from bertscore_viz.serving import config

from .navigation import texts, use_settings

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "bertscore_viz" / "app" / "app_pages" / "samples" / "page.py")
EXAMPLE = ROOT / "bertscore_viz" / "examples" / "samples_example.jsonl"
DATA = ROOT / "data" / "wmt16-da-to-english"
TIMEOUT = 300
LPS = ("cs-en", "de-en", "fi-en", "ro-en", "ru-en", "tr-en")
TYPED = ["The cat sat on the mat.", "A cat was sitting on the mat.", "The cat sat on a mat today.",
         "Stock markets fell sharply this morning."]


# --- helpers ------------------------------------------------------------------------------------------------------
def run_page(settings: Settings | None = None, **state) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    if settings is not None:
        use_settings(at, settings)
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def with_example(settings: Settings | None = None) -> AppTest:
    at = run_page(settings)
    at.button(key="samples_example").click().run()
    assert not at.exception, at.exception
    return at


def type_text(at: AppTest, text: str) -> AppTest:
    at.text_area(key=view.TEXT_KEY).input(text).run()
    assert not at.exception, at.exception
    return at


def decode(value):
    """A plotly array as JSON gives it: a list, or plotly's typed array ``{"dtype", "bdata", "shape"}``."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        if shape:
            arr = arr.reshape([int(s) for s in str(shape).split(",")])
        return arr.astype(np.float64)
    return np.array([np.nan if v is None else v for v in np.ravel(value)] if np.ndim(value) == 1 else
                    [[np.nan if v is None else v for v in row] for row in value], dtype=np.float64)


def chart(at: AppTest, key: str) -> dict:
    (el,) = [c for c in at.get("plotly_chart") if c.key == key]
    return json.loads(el.proto.spec)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def frame_with(at: AppTest, column: str) -> pd.DataFrame:
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no table with a {column!r} column")


def build_example(data_dir: Path, min_samples: int = 4, n_inputs: int = 12) -> list[dict]:
    """The example file from the WMT16 DA data: English sentences of newstest2016 that occur as the reference of
    several language pairs or segments, each with its distinct system translations (in order of language pair and
    line) as samples; the inputs with the most samples first, ties in order of first appearance."""
    by_ref: dict[str, dict] = {}
    for lp in LPS:
        refs = (data_dir / f"DAseg-newstest2016.reference.{lp}").read_text(encoding="utf-8").splitlines()
        outs = (data_dir / f"DAseg-newstest2016.mt-system.{lp}").read_text(encoding="utf-8").splitlines()
        for line, (ref, out) in enumerate(zip(refs, outs), start=1):
            entry = by_ref.setdefault(ref, {"id": f"newstest2016-{lp}-{line}", "samples": [], "origins": []})
            if out not in entry["samples"]:
                entry["samples"].append(out)
                entry["origins"].append(f"{lp}:{line}")
    kept = sorted(((ref, e) for ref, e in by_ref.items() if len(e["samples"]) >= min_samples),
                  key=lambda kv: -len(kv[1]["samples"]))
    return [{"id": e["id"], "samples": e["samples"], "references": [ref], "origins": e["origins"]}
            for ref, e in kept[:n_inputs]]


@pytest.fixture(scope="module")
def scorer() -> Scorer:
    return Scorer()


@pytest.fixture(scope="module")
def example(scorer):
    ids, groups, refs = read_groups(EXAMPLE)
    return consensus(groups, references=refs, scorer=scorer, ids=ids)


# --- the example file ---------------------------------------------------------------------------------------------
def test_the_example_is_derived_from_the_shipped_wmt16_data():
    records = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    assert records == build_example(DATA)
    assert len(records) == 12 and all(4 <= len(r["samples"]) <= 6 for r in records)
    for r in records:  # every sample is a system output whose reference is the record's reference
        for origin, sample in zip(r["origins"], r["samples"]):
            lp, line = origin.split(":")
            outs = (DATA / f"DAseg-newstest2016.mt-system.{lp}").read_text(encoding="utf-8").splitlines()
            refs = (DATA / f"DAseg-newstest2016.reference.{lp}").read_text(encoding="utf-8").splitlines()
            assert outs[int(line) - 1] == sample and refs[int(line) - 1] == r["references"][0]


# --- numbers ------------------------------------------------------------------------------------------------------
def test_the_example_shows_consensus_numbers(example):
    at = with_example()
    shown = frame_with(at, "chosen sample")
    assert list(shown["input"]) == [str(g.id) for g in example]
    assert list(shown["chosen"]) == [g.chosen for g in example]
    np.testing.assert_allclose(shown["expected utility"], [g.chosen_utility for g in example], atol=1e-6)
    np.testing.assert_allclose(shown["gap"], [g.gap for g in example], atol=1e-6)
    assert list(shown["oracle"]) == [g.oracle for g in example]
    assert list(shown["reference rank"]) == [g.reference_rank for g in example]
    assert list(shown["chosen sample"]) == [g.chosen_text for g in example]
    g = example[0]
    got = metrics(at)
    assert got["Chosen sample"] == f"#{g.chosen}" and got["Expected utility (F1)"] == f"{g.chosen_utility:.4f}"
    assert got["Gap"] == f"{g.gap:.4f}" and got["Oracle"] == f"#{g.oracle}"
    s = example.summary()
    assert f"mean gap {s['mean_gap']:.4f}" in texts(at) and f"chosen {s['mean_chosen_score']:.4f}" in texts(at)
    # the heatmap: the F1 matrix in the order of consensus, the diagonal blank, the chosen sample first
    spec = chart(at, view.HEATMAP_KEY)
    assert spec["layout"]["meta"]["order"] == g.order.tolist() and g.order[0] == g.chosen
    z = decode(spec["data"][0]["z"])
    want = g.matrices.f1[np.ix_(g.order, g.order)].copy()
    np.fill_diagonal(want, np.nan)
    np.testing.assert_allclose(z, want, atol=1e-6)
    samples = frame_with(at, "token support")
    assert list(samples["sample"]) == g.order.tolist() and list(samples["rank"]) == list(range(1, len(g) + 1))
    np.testing.assert_allclose(samples["expected utility"], g.expected_utility[g.order], atol=1e-6)
    np.testing.assert_allclose(samples["vs references"], g.reference_utility[g.order], atol=1e-6)


def test_expected_utility_is_the_mean_f1_over_explicit_pairs(scorer):
    """Independent of the consensus module: every ordered pair scored by ``Scorer.score``."""
    at = type_text(run_page(), "\n".join(TYPED))
    n = len(TYPED)
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    f1 = scorer.score([TYPED[i] for i, _ in pairs], [TYPED[j] for _, j in pairs]).f1
    eu = np.array([np.mean([f for (a, _), f in zip(pairs, f1) if a == i]) for i in range(n)])
    samples = frame_with(at, "token support").set_index("sample")
    np.testing.assert_allclose(samples.loc[range(n), "expected utility"], eu, atol=1e-5)
    assert metrics(at)["Chosen sample"] == f"#{int(np.argmax(eu))}"
    assert not [d for d in at.dataframe if "chosen sample" in d.value.columns]  # one input: no table of choices
    assert samples.loc[3, "rank"] == n  # the unrelated sentence agrees least


def test_token_support_is_the_mean_best_cosine_in_the_other_samples(scorer):
    at = type_text(run_page(), "\n".join(TYPED))
    vecs = [v[0].double().numpy() for v in scorer.encoder.embed_layers(TYPED, [scorer.layer])]
    special = [scorer.encoder.is_special(t.ids) for t in scorer.encode(TYPED)]
    spec = chart(at, "samples_support")
    order = spec["layout"]["meta"]["samples"]
    shown = decode(spec["data"][0]["marker"]["color"])
    want = []
    for k in dict.fromkeys(s for s in order if s is not None):
        best = [np.max(vecs[k] @ vecs[j].T, axis=1) for j in range(len(TYPED)) if j != k]
        want += list(np.mean(best, axis=0)[~special[k]])
    np.testing.assert_allclose(shown, want, atol=1e-5)


def test_sentence_support_and_the_pair_view_are_the_engines(example, scorer):
    at = with_example()
    g = example[0]
    direct = consensus([list(g.samples)], scorer=scorer, token_support=False, sentence_support=True)[0]
    table = frame_with(at, "inconsistency")
    want = [(k, n + 1, s.text, direct.sentence_support[k].support[n]) for k in g.order
            for n, s in enumerate(direct.sentence_support[k].sentences)]
    assert [tuple(r) for r in table[["sample", "sentence", "text"]].itertuples(index=False)] == \
        [w[:3] for w in want]
    np.testing.assert_allclose(table["support"], [w[3] for w in want], atol=1e-6)
    np.testing.assert_allclose(table["inconsistency"], 1 - table["support"], atol=1e-12)
    a, b = g.chosen, int(g.order[1])  # the pair view opens on the chosen sample and the next by consensus
    assert (at.selectbox(key=view.PAIR_A).value, at.selectbox(key=view.PAIR_B).value) == (a, b)
    plain = scorer.score([g.samples[a]], [g.samples[b]])
    got = metrics(at)
    assert [got["Precision"], got["Recall"], got["F1"]] == \
        [f"{x:.4f}" for x in (plain.precision[0], plain.recall[0], plain.f1[0])]
    assert f"F1 {g.matrices.f1[a, b]:.4f}" in texts(at)
    at.selectbox(key=view.PAIR_A).set_value(3).run()
    at.selectbox(key=view.PAIR_B).set_value(5).run()
    assert metrics(at)["F1"] == f"{scorer.score([g.samples[3]], [g.samples[5]]).f1[0]:.4f}"


def test_with_idf_the_pair_view_uses_the_inputs_weights():
    at = type_text(run_page(Settings(idf=True)), "\n".join(TYPED))
    idf = Scorer(idf=True, idf_sentences=list(dict.fromkeys(TYPED)))
    res = consensus([TYPED], scorer=Scorer(idf=True))[0]
    a, b = res.chosen, int(res.order[1])
    plain = idf.score([TYPED[a]], [TYPED[b]])
    assert res.matrices.f1[a, b] == pytest.approx(plain.f1[0], abs=1e-6)
    assert metrics(at)["F1"] == f"{plain.f1[0]:.4f}"
    assert "idf-samples" in texts(at)  # the signature names where idf came from


def test_utility_and_rescaling_follow_the_page_and_the_sidebar(example):
    at = with_example()
    at.radio(key="samples_utility").set_value("precision").run()
    ids, groups, refs = read_groups(EXAMPLE)
    by_p = consensus(groups, references=refs, utility="precision", ids=ids)
    shown = frame_with(at, "chosen sample")
    assert list(shown["chosen"]) == [g.chosen for g in by_p]
    np.testing.assert_allclose(shown["expected utility"], [g.chosen_utility for g in by_p], atol=1e-6)
    assert "Expected utility (precision)" in metrics(at)
    if not shipped_baseline_path("en", resolve_model(None).name).is_file():
        pytest.skip("no shipped baseline for the bundled model")
    use_settings(at, Settings(rescale=True))
    at.run()
    scaled = consensus(groups, references=refs, utility="precision", ids=ids, rescale_with_baseline=True)
    np.testing.assert_allclose(frame_with(at, "chosen sample")["expected utility"],
                               [g.chosen_utility for g in scaled], atol=1e-6)
    assert "-rescaled" in texts(at)


def test_another_input_and_reruns_cost_no_model_pass(example):
    at = with_example()
    result = at.session_state[view.WORK_KEY]["result"]
    at.selectbox(key=view.OPEN_KEY).set_value(5).run()
    assert not at.exception, at.exception
    g = example[5]
    assert metrics(at)["Chosen sample"] == f"#{g.chosen}"
    assert chart(at, view.HEATMAP_KEY)["layout"]["meta"]["order"] == g.order.tolist()
    assert (at.selectbox(key=view.PAIR_A).value, at.selectbox(key=view.PAIR_B).value) == (g.chosen, g.order[1])
    at.run()
    assert at.session_state[view.WORK_KEY]["result"] is result
    assert set(at.session_state[view.WORK_KEY]["sentences"]) == {0, 5}
    # another layer: a new model pass, the same input and pair stay open
    at.selectbox(key=view.PAIR_B).set_value(int(g.order[-1])).run()
    use_settings(at, Settings(layer=2))
    at.run()
    assert at.session_state[view.WORK_KEY]["result"] is not result
    ids, groups, refs = read_groups(EXAMPLE)
    at2 = consensus(groups, references=refs, ids=ids, layer=2)[5]
    assert at.selectbox(key=view.OPEN_KEY).value == 5 and metrics(at)["Chosen sample"] == f"#{at2.chosen}"
    assert at.selectbox(key=view.PAIR_B).value == int(g.order[-1])
    assert f"F1 {at2.matrices.f1[g.chosen, g.order[-1]]:.4f}" in texts(at)
    # new inputs open on their first
    type_text(at, "a\nb\n\nc\nd")
    assert at.selectbox(key=view.OPEN_KEY).value == 0


def test_downloads_match_the_command_line(tmp_path, capsys):
    ids, groups, refs = read_groups(EXAMPLE)
    groups[0] = ["=HYPERLINK(\"x\")"] + groups[0][1:]  # a formula-like sample
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"id": i, "samples": g, "references": r}) + "\n"
                            for i, g, r in zip(ids, groups, refs)), encoding="utf-8")
    result = consensus(groups, references=refs, ids=ids)
    csv = pd.read_csv(io.StringIO(safe_csv(view.choices_frame(result), str(result.signature)).decode("utf-8-sig")))
    assert cli(["mbr", "--samples", str(path)]) == 0
    tsv = pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t")
    assert list(csv["chosen"]) == list(tsv["chosen"]) and list(csv["oracle"]) == list(tsv["oracle"])
    np.testing.assert_allclose(csv["expected utility"], tsv["expected_utility"], atol=1e-6)
    np.testing.assert_allclose(csv["gap"], tsv["gap"], atol=1e-6)
    assert csv["signature"].iloc[0] == str(result.signature)
    assert not csv["chosen sample"].astype(str).str.startswith("=").any()


# --- input --------------------------------------------------------------------------------------------------------
def test_typed_blocks_and_uploads_are_read_as_the_command_line_reads_them(tmp_path):
    typed = view.parse_typed("\n a \nb\n\n\n\nc\nd\ne\n\n")
    assert typed.groups == (("a", "b"), ("c", "d", "e")) and typed.ids == (0, 1) and not typed.has_references
    data = "\n".join(f"s{i}" for i in range(6)).encode()
    assert view.parse_file(data, "x.txt", 3).groups == (("s0", "s1", "s2"), ("s3", "s4", "s5"))
    assert view.parse_file(data, "x.txt", 0).groups == (tuple(f"s{i}" for i in range(6)),)
    jl = EXAMPLE.read_bytes()
    got = view.parse_file(jl, "example.jsonl", 5)  # the group size does not apply to JSON Lines
    ids, groups, refs = read_groups(EXAMPLE)
    assert got.ids == tuple(ids) and got.groups == tuple(map(tuple, groups))
    assert got.references == tuple(map(tuple, refs))
    assert view.parse_file(b'{"samples": ["a", "b"]}\n', "noext").groups == (("a", "b"),)
    with pytest.raises(InputError, match=r"mine\.txt has 6 lines, not a multiple of samples per input 4") as exc:
        view.parse_file(data, "mine.txt", 4)
    assert "bsv-samples" not in str(exc.value)  # names the upload, not the server's temporary file
    with pytest.raises(InputError, match=r"bad\.jsonl line 2 is not JSON"):
        view.parse_file(b'{"samples": ["a"]}\n{oops\n', "bad.jsonl")
    with pytest.raises(InputError, match="not UTF-8"):
        view.parse_file("é".encode("latin-1") + b"\n", "latin.txt")


_P = config.Policy()


@pytest.mark.parametrize("groups, refs, limit", [
    ([("a",)] * (_P.samples_inputs + 1), None, "BERTSCORE_VIZ_SAMPLES_INPUTS"),
    ([tuple("x" for _ in range(_P.samples_per_input + 1))], None, "BERTSCORE_VIZ_SAMPLES_PER_INPUT"),
    ([tuple("x" for _ in range(_P.samples_per_input))] * (_P.samples_total // _P.samples_per_input + 1), None,
     "BERTSCORE_VIZ_SAMPLES_TOTAL"),
    ([("x" * (_P.upload_cell_chars + 1),)], None, "BERTSCORE_VIZ_UPLOAD_CELL_CHARS"),
    ([("x" * _P.upload_cell_chars,)] * (_P.samples_chars // _P.upload_cell_chars + 1), None,
     "BERTSCORE_VIZ_SAMPLES_CHARS"),
    ([("a", "b")], [tuple("r" for _ in range(_P.samples_references + 1))], "BERTSCORE_VIZ_SAMPLES_REFERENCES"),
])
def test_each_limit_is_refused_by_name(groups, refs, limit):
    inputs = view.Inputs("mine.txt", tuple(range(len(groups))), tuple(groups),
                         tuple(refs) if refs else tuple(() for _ in groups))
    with pytest.raises(InputError, match=limit):
        view.check_limits(inputs)


def test_each_limit_follows_the_deployment_setting(monkeypatch):
    monkeypatch.setattr(config, "_POLICY", config.load_policy({"BERTSCORE_VIZ_SAMPLES_PER_INPUT": "3"}))
    inputs = view.Inputs("mine.txt", (0,), (("a", "b", "c", "d"),), ((),))
    with pytest.raises(InputError, match=r"at most 3 per input \(server setting BERTSCORE_VIZ_SAMPLES_PER_INPUT\)"):
        view.check_limits(inputs)


def test_the_page_refuses_too_many_samples_before_any_model_pass():
    at = type_text(run_page(), "\n".join(f"sample {i}" for i in range(_P.samples_per_input + 1)))
    assert any("SAMPLES_PER_INPUT" in e.value.replace("\\", "") for e in at.error)  # escaped markdown
    assert not at.metric and not at.get("plotly_chart") and at.session_state[view.WORK_KEY]["result"] is None


def test_an_upload_with_a_group_size_and_one_sample_inputs():
    at = run_page()
    at.number_input(key="samples_group_size").set_value(2).run()
    at.file_uploader(key="samples_file").set_value(("pairs.txt", "\n".join(TYPED).encode(), "text/plain")).run()
    assert not at.exception, at.exception
    shown = frame_with(at, "chosen sample")
    assert list(shown["samples"]) == [2, 2] and "pairs.txt (uploaded file)" in texts(at).replace("\\", "")
    type_text(at, "only one sample")  # typed text replaces the upload
    assert "one sample: there is nothing to compare" in texts(at) and metrics(at)["Chosen sample"] == "#0"


def test_user_text_is_never_html_or_markup():
    nasty = ["<b>bold</b> $x$ **no**", "<script>alert(1)</script> is here", "<b>bold</b> $x$ **yes**"]
    at = type_text(run_page(), "\n".join(nasty))
    hover = " ".join(chart(at, view.HEATMAP_KEY)["data"][1]["hovertext"])
    assert "&lt;script&gt;" in hover and "<script>" not in hover and "<b>bold" not in hover
    support = chart(at, "samples_support")["data"][0]
    assert all("<" not in t for t in support["text"]) and "&lt;" in "".join(support["text"])
    assert not [m for m in at.markdown if "<script>" in m.value]


# --- figures ------------------------------------------------------------------------------------------------------
def test_support_layout_wraps_as_the_text_reads():
    text = "ab cd\nef ghij"
    spans = ((-1, -1), (0, 2), (3, 5), (6, 8), (9, 13), (-1, -1))
    tokens = ("[CLS]", "ab", "cd", "ef", "ghij", "[SEP]")
    special = np.array([True, False, False, False, False, True])
    support = np.array([1.0, 0.1, 0.2, 0.3, 0.4, 1.0])
    laid = plots.support_layout(text, tokens, special, spans, support, line_chars=10)
    assert [(t.line, t.x, t.width, t.text, t.support) for t in laid] == [
        (0, 0, 2, "ab", 0.1), (0, 3, 2, "cd", 0.2), (1, 0, 2, "ef", 0.3), (1, 3, 4, "ghij", 0.4)]
    narrow = plots.support_layout("ab cd ef", tokens[:4], special[:4], spans[:4], support[:4], line_chars=5)
    assert [(t.line, t.x) for t in narrow] == [(0, 0), (0, 3), (1, 0)]
    assert plots.cell_pair([{"x": 1, "y": 2, "customdata": [4, 0]}]) == (4, 0)
    assert plots.cell_pair([]) is None and plots.cell_pair([{"x": 1}]) is None
