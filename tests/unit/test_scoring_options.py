"""The options object every client builds its scorer from: checked when made, resolved once, the same scorer and
signature as the scorer's own keywords, a cache key that changes exactly when the numbers can."""

import argparse
import pickle

import numpy as np
import pytest

from bertscore_viz.engine.options import FALLBACK_LAYER, ScoringOptions, scorer_from
from bertscore_viz.engine.scorer import Scorer
from bertscore_viz.errors import BaselineError, InputError, ModelError
from bertscore_viz.models.spec import BUNDLED_DEFAULT_LAYER, BUNDLED_MODEL_NAME, ModelSpec, resolve_model

CANDS = ["The cat sat on the mat.", "A quick brown fox."]
REFS = ["There is a cat on the mat.", "The fast brown fox jumps."]


def test_defaults_resolve_to_the_bundled_model_at_its_tuned_layer():
    o = ScoringOptions()
    assert o.spec.name == BUNDLED_MODEL_NAME and o.spec.bundled
    assert o.layer is None and o.resolved_layer == BUNDLED_DEFAULT_LAYER
    assert o.describe() == (f"{BUNDLED_MODEL_NAME} (bundled), layer {BUNDLED_DEFAULT_LAYER} (its tuned layer), "
                            "no idf, raw, fp32, long texts: truncate")
    assert ScoringOptions(layer=2, idf=True, rescale_with_baseline=True).describe() == (
        f"{BUNDLED_MODEL_NAME} (bundled), layer 2, idf, rescaled with the en baseline, fp32, long texts: truncate")


@pytest.mark.parametrize("bad, error", [
    ({"layer": -1}, ModelError), ({"layer": True}, InputError), ({"layer": 2.5}, InputError),
    ({"batch_size": 0}, InputError), ({"idf": "no"}, InputError), ({"precision": "fp64"}, ModelError),
    ({"long_texts": "cut"}, InputError), ({"rescale_with_baseline": True, "lang": "../etc"}, BaselineError),
])
def test_a_bad_value_is_refused_when_the_options_are_made(bad, error):
    with pytest.raises(error):
        ScoringOptions(**bad)


def test_the_scorer_equals_one_built_from_the_same_keywords():
    o = ScoringOptions(layer=3, idf=True, rescale_with_baseline=True)
    direct = Scorer(layer=3, idf=True, rescale_with_baseline=True)
    via = o.scorer()
    assert str(via.signature) == str(direct.signature) == str(o.signature())
    a, b = via.score(CANDS, REFS), direct.score(CANDS, REFS)
    np.testing.assert_array_equal(a.f1, b.f1)
    np.testing.assert_array_equal(a.precision, b.precision)


def test_the_signature_names_fixed_idf_and_a_custom_baseline():
    o = ScoringOptions(idf=True)
    sc = o.scorer(idf_sentences=REFS)
    assert str(sc.signature) == str(o.signature(idf_source=sc.idf_source))
    assert "idf-corpus-2-" in str(sc.signature)
    assert o.replace(rescale_with_baseline=True).signature(custom_baseline=True).custom_baseline


def test_the_cache_key_changes_with_what_changes_numbers_and_not_with_speed():
    base = ScoringOptions()
    same = [base.replace(batch_size=8), base.replace(token_budget=512), base.replace(device="cpu"),
            base.replace(layer=BUNDLED_DEFAULT_LAYER), base.replace(lang="de")]  # lang matters only when rescaled
    assert all(o.cache_key() == base.cache_key() for o in same)
    other = [base.replace(layer=2), base.replace(idf=True), base.replace(rescale_with_baseline=True),
             base.replace(precision="bf16"), base.replace(long_texts="window")]
    keys = {o.cache_key() for o in other}
    assert len(keys) == len(other) and base.cache_key() not in keys
    assert (base.replace(rescale_with_baseline=True, lang="de").cache_key()
            != base.replace(rescale_with_baseline=True).cache_key())


def test_from_a_command_line_reads_the_options_it_has_and_overrides_win():
    ns = argparse.Namespace(model=None, layer=2, idf=True, lang="en", batch_size=16, command="compare",
                            output="x.html")  # no precision, no rescaling: their defaults
    o = ScoringOptions.from_namespace(ns, rescale_with_baseline=False)
    assert (o.layer, o.idf, o.batch_size, o.precision, o.rescale_with_baseline) == (2, True, 16, "fp32", False)
    with pytest.raises(InputError):
        ScoringOptions.from_namespace(argparse.Namespace(batch_size=-3))


def test_a_model_without_a_tuned_layer_is_said_and_every_layer_work_starts_at_the_fallback(tmp_path):
    spec = ModelSpec("some-model", str(tmp_path), None, local=True)
    o = ScoringOptions(model=spec)
    assert o.resolved_layer is None and "no layer known" in o.describe()
    assert o.for_every_layer().layer == FALLBACK_LAYER
    assert ScoringOptions(model=spec, layer=5).for_every_layer().layer == 5
    with pytest.raises(ModelError, match="layer"):
        o.signature()


def test_pickled_options_resolve_their_model_again_where_they_are_unpickled():
    o = ScoringOptions(layer=2)
    assert o.spec == resolve_model(None)  # resolved once, and kept
    assert o.replace(idf=True).__dict__.get("spec") is o.spec  # not resolved again for another option
    assert "spec" not in o.replace(model=None).__dict__  # another model: resolved when asked
    copy = pickle.loads(pickle.dumps(o))
    assert "spec" not in copy.__dict__ and copy == o and copy.spec == o.spec


def test_scorer_from_takes_a_scorer_or_options_never_both():
    sc = ScoringOptions(layer=2).scorer()
    assert scorer_from(sc, {}) is sc
    built = scorer_from(None, {"layer": 2, "idf": True, "idf_sentences": REFS})
    assert built.layer == 2 and built.idf and built.idf_sentences == REFS
    with pytest.raises(InputError, match="not both"):
        scorer_from(sc, {"layer": 3})
    with pytest.raises(InputError, match="Unknown scoring option"):
        scorer_from(None, {"layers": 3})
    with pytest.raises(InputError, match="Scorer"):
        scorer_from("a scorer", {})
