"""The sidebar's signature is that of the numbers shown; with rescaling, only languages with a baseline."""

from bertscore_viz.app import gateway
from bertscore_viz.app.shared.settings import Settings
from bertscore_viz.engine.baseline import languages_with_baseline


def test_languages_with_a_baseline_for_the_model():
    assert languages_with_baseline("all-MiniLM-L6-v2") == ["en"]
    multi = languages_with_baseline("bert-base-multilingual-cased")
    assert multi[0] == "en" and {"de", "zh", "cs"} <= set(multi)
    assert languages_with_baseline("no-such-model") == []


def test_signature_drops_rescaled_when_no_baseline_exists():
    assert gateway.signature_text(Settings(rescale=True, lang="en")).endswith("-rescaled")
    raw = gateway.signature_text(Settings(rescale=True, lang="de"))  # no German baseline for the bundled model
    assert "rescaled" not in raw
    assert raw == gateway.signature_text(Settings(rescale=False, lang="de"))
