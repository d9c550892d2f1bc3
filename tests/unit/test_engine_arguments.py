"""Issue 19, class 5: every argument of score()/Scorer is checked before any work, with the engine's own errors.

Each case here raised TypeError / ValueError / a raw torch error, or was silently read as something else
(``rescale_with_baseline="no"`` rescaled; ``layers=[1.5]`` computed layer 1), before engine/arguments.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from bertscore_viz import BaselineError, InputError, ModelError, Scorer, score
from bertscore_viz.engine.arguments import check_lang, check_texts, normalize_inputs

C, R = ["The cat sat on the mat."], ["A cat was sitting on the mat."]


@pytest.mark.parametrize("cands, refs", [
    (None, R), (5, R), (C, None), (C, 5), (b"bytes", R), (C, [5]), ([None], R), (C, [b"x"]),
])
def test_texts_that_are_not_lists_of_strings_are_input_errors(cands, refs):
    with pytest.raises(InputError, match="Expected|expected"):
        score(cands, refs)


def test_a_lone_surrogate_is_refused_naming_the_index_and_position():
    with pytest.raises(InputError, match=r"candidate at index 1 .*position 2"):
        check_texts(["fine", "ab\ud800c"], "candidate")
    with pytest.raises(InputError, match="lone surrogate"):
        score(C, ["x\udcff"])
    with pytest.raises(InputError, match="lone surrogate"):
        Scorer().explain("x\ud800", "y")


def test_numpy_and_generator_inputs_are_lists_of_python_strings():
    cands, groups = normalize_inputs(np.array(["a", "b"]), (r for r in ["x", ["y", "z"]]))
    assert cands == ["a", "b"] and groups == [["x"], ["y", "z"]]
    assert all(type(c) is str for c in cands)


@pytest.mark.parametrize("name", ["idf", "rescale_with_baseline"])
@pytest.mark.parametrize("value", ["no", "yes", None, 1, 0.0, [True]])
def test_flags_must_be_bools(name, value):
    with pytest.raises(InputError, match=f"{name} must be True or False"):
        Scorer(**{name: value})


def test_numpy_bools_are_flags():
    assert Scorer(idf=np.bool_(True)).idf is True


@pytest.mark.parametrize("kwargs, error, pattern", [
    (dict(layer=4.5), InputError, "layer must be a whole number"),
    (dict(layer=True), InputError, "layer must be a whole number"),
    (dict(layer="4"), InputError, "layer must be a whole number"),
    (dict(layer=-1), ModelError, "0 or more"),
    (dict(batch_size=0), InputError, "at least 1"),
    (dict(batch_size=2.0), InputError, "whole number"),
    (dict(token_budget=0), InputError, "at least 1"),
    (dict(device="bogus"), ModelError, "Unknown device"),
    (dict(device=5), ModelError, "device must be a string"),
    (dict(precision="fp64"), ModelError, "Unknown precision"),
    (dict(model=5), ModelError, "model must be a model name"),
    (dict(model=["a"]), ModelError, "model must be a model name"),
    (dict(baseline_path=5, rescale_with_baseline=True), InputError, "baseline_path must be a file path"),
    (dict(baseline_path="", rescale_with_baseline=True), InputError, "empty"),
])
def test_scorer_arguments_are_refused_at_construction(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        Scorer(**kwargs)


def test_a_directory_as_baseline_path_is_named_a_directory(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        Scorer(rescale_with_baseline=True, baseline_path=tmp_path)


@pytest.mark.parametrize("lang", [None, 5, "", "../../etc", "en/../../x", "e n", "/abs"])
def test_rescaling_needs_a_language_code_that_cannot_name_a_path(lang):
    with pytest.raises(BaselineError, match="lang must be a language code"):
        Scorer(rescale_with_baseline=True, lang=lang)


def test_language_codes_of_the_shipped_folders_pass():
    for lang in ("en", "zh", "en-sci", "pt_BR"):
        assert check_lang(lang) == lang


def test_language_is_not_checked_when_not_rescaling():
    assert Scorer(lang=None).score(C, R).f1.shape == (1,)


def test_a_model_name_that_is_a_path_never_reads_a_baseline_outside_the_folder(tmp_path, monkeypatch):
    from bertscore_viz.engine import baseline

    outside = tmp_path / "evil.tsv"
    outside.write_text("LAYER,P,R,F\n0,0.5,0.5,0.5\n", encoding="utf-8")
    rel = "../" * 12 + str(outside.with_suffix(""))[1:]
    with pytest.raises(BaselineError, match="No rescaling baseline"):
        baseline.find_baseline(rel, "en")
    assert rel not in baseline.languages_with_baseline(rel)


def test_an_unknown_model_is_called_unknown_not_a_missing_layer():
    with pytest.raises(ModelError) as info:
        Scorer(model="no-such-model-xyz")
    message = str(info.value)
    assert "No model 'no-such-model-xyz' is known here" in message and "models list" in message
    assert "No default layer" not in message


@pytest.mark.parametrize("layers, error, pattern", [
    ("most", InputError, "'all' or a list"),
    ([1.5], InputError, "whole number"),
    ([True], InputError, "whole number"),
    ([], InputError, "empty"),
    ([0, 99], ModelError, "99 do not exist"),
    (7, InputError, "'all' or a list"),
])
def test_match_layers_are_checked(layers, error, pattern):
    with pytest.raises(error, match=pattern):
        Scorer().match(C, R, layers=layers)


def test_repeated_layers_are_computed_once():
    stats = Scorer().match(C, R, layers=[2, 2, 3])
    assert stats.layers == (2, 3)


def test_explain_refuses_a_non_text_reference():
    with pytest.raises(InputError, match="Expected a list of reference strings"):
        Scorer().explain("a", 5)


def test_an_empty_idf_corpus_is_refused_rather_than_read_as_degenerate():
    with pytest.raises(InputError, match="idf_sentences is empty"):
        Scorer(idf_sentences=[])
