"""BERTScore for 🤗 evaluate, computed by bertscore-viz: the hub ``bertscore`` metric's arguments and return keys,
bert-score 0.3.13's numbers, loaded offline from this file.

    import evaluate
    from bertscore_viz.integrations import evaluate_metric_path

    bertscore = evaluate.load(evaluate_metric_path())  # instead of evaluate.load("bertscore")
    bertscore.compute(predictions=["hello there"], references=["hello there"], lang="en")

evaluate copies this script into its modules cache and imports it from there: it imports bertscore-viz absolutely.
"""

import datasets
import evaluate

from bertscore_viz.integrations.evaluate_metric import check_hub_inputs, hub_compute

__all__ = ["BERTScore"]

_CITATION = """\
@inproceedings{bert-score,
  title={BERTScore: Evaluating Text Generation with BERT},
  author={Tianyi Zhang* and Varsha Kishore* and Felix Wu* and Kilian Q. Weinberger and Yoav Artzi},
  booktitle={International Conference on Learning Representations},
  year={2020},
  url={https://openreview.net/forum?id=SkeHuCVFDr}
}
"""

_DESCRIPTION = """\
BERTScore matches each token of a candidate to its most similar token of the reference by the cosine of their
contextual embeddings, and averages the best similarities into precision (candidate side), recall (reference side)
and F1. Computed by bertscore-viz, which gives bert-score 0.3.13's numbers for the same model and layer. Without
model_type the model is bertscore-viz's bundled all-MiniLM-L6-v2 (it runs offline); bert-score's defaults
(roberta-large for English) are used when named: model_type="roberta-large".
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate sentences.
    references (list of str, or list of list of str): reference sentence(s) of each candidate.
    lang (str): language of the sentences (e.g. "en"), for the rescaling baseline; lang or model_type is required.
    model_type (str): a model name or local directory; default the bundled model.
    num_layers (int): the layer (hidden_states index, 0 = embeddings); default the model's tuned layer.
    verbose (bool): a progress bar on stderr.
    idf (bool): weight tokens by idf computed from the references of this call.
    device (str): "cpu", "cuda", "cuda:1"; default CUDA when available.
    nthreads (int): accepted, no effect.
    batch_size (int): sentences per forward batch.
    all_layers (bool): refused when True (score one layer per call).
    rescale_with_baseline (bool): rescale with the baseline of model, language and layer.
    baseline_path (str): a custom baseline file (bert-score's format).
    use_fast_tokenizer (bool): accepted; the engine's tokenizer gives bert-score's token ids either way.
    long_texts (str): "truncate" (bert-score's) or "window" (texts longer than the model's maximum scored whole).
    precision (str): "fp32" (exact, default), "fp16" (CUDA) or "bf16".

Returns:
    precision, recall, f1: one float per prediction.
    hashcode: the signature of the setting (bert-score's hash format, version bertscore-viz).

Examples:
    >>> bertscore = evaluate.load(evaluate_metric_path())
    >>> results = bertscore.compute(predictions=["hello there"], references=["hello there"], lang="en")
    >>> [round(v, 2) for v in results["f1"]]
    [1.0]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BERTScore(evaluate.Metric):
    """The hub bertscore's interface over bertscore-viz's engine."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/Tiiiger/bert_score",
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features({"predictions": datasets.Value("string", id="sequence"),
                                   "references": datasets.Sequence(datasets.Value("string", id="sequence"),
                                                                   id="references")}),
                datasets.Features({"predictions": datasets.Value("string", id="sequence"),
                                   "references": datasets.Value("string", id="sequence")}),
            ],
            codebase_urls=["https://github.com/Tiiiger/bert_score"],
            reference_urls=["https://github.com/Tiiiger/bert_score", "https://arxiv.org/abs/1904.09675"],
        )

    def compute(self, *, predictions=None, references=None, **kwargs):
        """evaluate's ``compute``, with the texts checked first (a single string, None, numbers, dicts, lone
        surrogates: an InputError naming what to give, instead of one score per character or a TypeError)."""
        if predictions is not None or references is not None:
            check_hub_inputs(predictions, references)
        return super().compute(predictions=predictions, references=references, **kwargs)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """evaluate's ``add_batch``, with the texts checked first (as :meth:`compute`)."""
        check_hub_inputs(predictions, references)
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """evaluate's ``add`` of one prediction (a string) and its reference(s), checked first."""
        check_hub_inputs([prediction], [reference])
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def _compute(self, predictions, references, lang=None, model_type=None, num_layers=None, verbose=False,
                 idf=False, device=None, batch_size=64, nthreads=4, all_layers=False, rescale_with_baseline=False,
                 baseline_path=None, use_fast_tokenizer=False, long_texts="truncate", precision="fp32"):
        if not hasattr(self, "_scorers"):
            self._scorers = {}
        return hub_compute(predictions, references, scorers=self._scorers, verbose=verbose, lang=lang,
                           model_type=model_type, num_layers=num_layers, idf=idf, device=device,
                           batch_size=batch_size, nthreads=nthreads, all_layers=all_layers,
                           rescale_with_baseline=rescale_with_baseline, baseline_path=baseline_path,
                           use_fast_tokenizer=use_fast_tokenizer, long_texts=long_texts, precision=precision)
