"""The scoring options, resolved once: the one way every client (the CLI, the app, Ray, the loss, the drop-ins)
builds a :class:`~bertscore_viz.engine.scorer.Scorer`.

A :class:`ScoringOptions` is a frozen value of what decides a score: model, layer, idf, rescaling and its baseline,
precision and the long-text mode (with the batch size, device and token budget, which change speed, not numbers).
It is checked when made (the engine's own errors, before any model loads), resolves the model and its tuned layer
once (:attr:`ScoringOptions.spec`, :attr:`ScoringOptions.resolved_layer`), says what it resolved
(:meth:`ScoringOptions.describe`), carries its cache key and its signature, and builds the scorer
(:meth:`ScoringOptions.scorer`). What is not an option but a thing of the run (a loaded encoder, fixed idf weights, a
baseline read elsewhere, a job-queue guard) is given to :meth:`ScoringOptions.scorer`.

Built directly (``ScoringOptions(layer=6, idf=True)``), from a command line's arguments
(:meth:`ScoringOptions.from_namespace`), or by the app from its settings under the deployment policy (the model
given as the :class:`~bertscore_viz.models.spec.ModelSpec` the policy allowed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from bertscore_viz.engine.arguments import (
    DEFAULT_TOKEN_BUDGET,
    PRECISIONS,
    check_flag,
    check_lang,
    check_long_texts,
    check_model_name,
    check_path,
    check_precision,
    check_whole,
)
from bertscore_viz.engine.context import DEFAULT_CONTEXT_SOURCE, check_context, check_context_source, context_tag
from bertscore_viz.engine.results import Signature
from bertscore_viz.errors import InputError, ModelError
from bertscore_viz.models.spec import ModelSpec, resolve_model
from bertscore_viz.versions import package_version

if TYPE_CHECKING:  # the scorer imports torch: loaded when a scorer is built, not when options are
    from bertscore_viz.engine.baseline import BaselineTable
    from bertscore_viz.engine.encoder import Encoder
    from bertscore_viz.engine.idf import IdfWeights
    from bertscore_viz.engine.scorer import GuardFn, Scorer

__all__ = ["ScoringOptions", "scorer_from", "RUN_ARGUMENTS", "PRECISIONS", "DEFAULT_BATCH_SIZE", "DEFAULT_TOKEN_BUDGET",
           "FALLBACK_LAYER"]

#: Most sentences in one forward batch (bert-score's default).
DEFAULT_BATCH_SIZE = 64
#: The layer a scorer is built at when every layer is computed anyway (baselines, calibration, layer tuning) and the
#: model has no tuned layer: the layer is then only where the scorer starts.
FALLBACK_LAYER = 0


@dataclass(frozen=True)
class ScoringOptions:
    """What decides a score, checked when made and resolved once.

    Attributes:
        model: None (the bundled all-MiniLM-L6-v2), a local model directory, a Hugging Face hub name, or a resolved
            :class:`~bertscore_viz.models.spec.ModelSpec` (the app gives the one its deployment policy allowed).
        layer: ``hidden_states`` index (0 = embeddings); None: the model's tuned layer (:attr:`resolved_layer`).
        idf: weight tokens by idf (from each call's references, or from the sentences given to :meth:`scorer`).
        rescale_with_baseline: report ``(x - b) / (1 - b)`` with the baseline of model, language and layer.
        lang: the language of the baseline.
        baseline_path: a custom baseline file (bert-score's format) instead of the shipped one.
        batch_size, token_budget: most sentences, and most padded token cells, in one forward batch.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``; None: CUDA when available.
        precision: one of :data:`PRECISIONS`.
        long_texts: ``"truncate"`` (bert-score's numbers) or ``"window"`` (docs/SEMANTICS.md, section 10).
        context: previous segments of the same document encoded with each segment (docs/CONTEXT.md); 0 = none.
        context_source: ``"ref"`` (the paper's: the previous reference segments, on both sides) or ``"own"``.

    Raises:
        InputError, ModelError, BaselineError: a value of the wrong kind, an unknown precision or long-text mode, a
            malformed language, model name or path; before any model loads.
    """

    model: str | ModelSpec | None = None
    layer: int | None = None
    idf: bool = False
    rescale_with_baseline: bool = False
    lang: str = "en"
    baseline_path: str | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    device: str | None = None
    precision: str = "fp32"
    long_texts: str = "truncate"
    token_budget: int = DEFAULT_TOKEN_BUDGET
    context: int = 0
    context_source: str = DEFAULT_CONTEXT_SOURCE

    def __post_init__(self) -> None:
        check_whole(self.layer, "layer", optional=True)
        check_whole(self.batch_size, "batch_size", minimum=1)
        check_whole(self.token_budget, "token_budget", minimum=1)
        check_flag(self.idf, "idf")
        check_flag(self.rescale_with_baseline, "rescale_with_baseline")
        check_long_texts(self.long_texts)
        check_context(self.context)
        check_context_source(self.context_source)
        if self.rescale_with_baseline:
            check_lang(self.lang)
        check_path(self.baseline_path, "baseline_path")
        check_precision(self.precision)
        if not isinstance(self.model, ModelSpec):
            check_model_name(self.model)
        if self.layer is not None and self.layer < 0:
            raise ModelError(f"Layer must be 0 or more (0 = embeddings), got {self.layer}.")

    def __getstate__(self) -> dict:
        """Pickled without the resolved model: a Ray worker resolves it where it runs (the bundled model is
        wherever the package is installed on that node)."""
        state = dict(self.__dict__)
        state.pop("spec", None)
        return state

    @classmethod
    def from_namespace(cls, namespace: Any, **overrides: Any) -> ScoringOptions:
        """The options among a namespace's attributes (a command line's parsed arguments), the others at their
        defaults; ``overrides`` win over both (e.g. ``rescale_with_baseline=False`` where a command rescales
        later)."""
        given = {f.name: getattr(namespace, f.name) for f in fields(cls) if hasattr(namespace, f.name)}
        given.update(overrides)
        return cls(**given)

    @cached_property
    def spec(self) -> ModelSpec:
        """The model resolved: its name in signatures and baseline files, where it loads from, its tuned layer."""
        return self.model if isinstance(self.model, ModelSpec) else resolve_model(self.model)

    @property
    def resolved_layer(self) -> int | None:
        """The layer given, else the model's tuned layer (None when neither is known: :meth:`scorer` says why)."""
        return self.layer if self.layer is not None else self.spec.default_layer

    def layer_or(self, fallback: int = FALLBACK_LAYER) -> int:
        """:attr:`resolved_layer`, or ``fallback`` for a model with no tuned layer (where every layer is computed
        anyway and the layer is only where the scorer starts)."""
        layer = self.resolved_layer
        return fallback if layer is None else layer

    def replace(self, **changes: Any) -> ScoringOptions:
        """These options with some changed (checked again); the model, when unchanged, is not resolved again."""
        new = replace(self, **changes)
        if "model" not in changes and "spec" in self.__dict__:
            new.__dict__["spec"] = self.__dict__["spec"]
        return new

    def describe(self) -> str:
        """What these options resolved to, in one line (e.g. for ``--verbose`` or the app's sidebar)."""
        spec = self.spec
        origin = "bundled" if spec.bundled else ("local directory" if spec.local else "hub name")
        layer = self.resolved_layer
        layer_text = ("no layer known: give one" if layer is None else
                      f"layer {layer}" + ("" if self.layer is not None else " (its tuned layer)"))
        scale = (f"rescaled with the {'custom' if self.baseline_path else self.lang} baseline"
                 if self.rescale_with_baseline else "raw")
        return (f"{spec.name} ({origin}), {layer_text}, {'idf' if self.idf else 'no idf'}, {scale}, "
                f"{self.precision}, long texts: {self.long_texts}"
                + (f", context: {self.context} previous segments ({self.context_source})" if self.context else ""))

    def cache_key(self) -> tuple:
        """What changes the numbers, as a hashable key (batch size, token budget and device change only speed;
        the model by where it loads from, so two directories of one name differ)."""
        spec = self.spec
        return (spec.name, spec.source, self.resolved_layer, self.idf, self.rescale_with_baseline,
                self.lang if self.rescale_with_baseline else None, self.baseline_path, self.precision,
                self.long_texts) + self._context_key()

    def embedding_key(self) -> tuple:
        """What changes the token vectors (model, precision, long-text mode), as a hashable key: a model pass kept
        under it serves every layer, idf and rescaling choice."""
        return (self.spec.name, self.spec.source, self.precision, self.long_texts) + self._context_key()

    def _context_key(self) -> tuple:
        """The context in a key: nothing without it (keys as before), else ``(k, source)``."""
        return (self.context, self.context_source) if self.context else ()

    def signature(self, *, idf_source: str = "", custom_baseline: bool | None = None,
                  transformers_version: str | None = None) -> Signature:
        """The signature a scorer built from these options gives (``idf_source``: the corpus tag of fixed idf
        sentences; ``custom_baseline``: default, a ``baseline_path`` was given)."""
        layer = self.resolved_layer
        if layer is None:
            raise ModelError(f"No default layer is known for {self.spec.name!r}: give a layer (0 = embeddings).")
        custom = self.baseline_path is not None if custom_baseline is None else custom_baseline
        tv = package_version("transformers") if transformers_version is None else transformers_version
        return Signature(self.spec.name, layer, self.idf, self.rescale_with_baseline, custom, self.precision, tv,
                         idf_source=idf_source, long_texts=self.long_texts,
                         context=context_tag(self.context, self.context_source))

    def scorer(self, *, idf_sentences: Sequence[str] | None = None, idf_weights: IdfWeights | None = None,
               baseline_table: BaselineTable | None = None, custom_baseline: bool | None = None,
               encoder: Encoder | None = None, guard: GuardFn | None = None) -> Scorer:
        """The :class:`~bertscore_viz.engine.scorer.Scorer` of these options, with the things of this run: fixed idf
        (the sentences to count it over, or weights already counted), a baseline already read or computed, a loaded
        encoder to share, a guard held around each model pass (see the scorer for each)."""
        from bertscore_viz.engine.scorer import Scorer  # torch loads with the first scorer, not with the options

        # model None with an encoder given: the encoder's model (a pool's encoder shared by several scorers)
        model = None if self.model is None and encoder is not None else self.spec
        return Scorer(model=model, layer=self.layer, idf=self.idf, idf_sentences=idf_sentences,
                      rescale_with_baseline=self.rescale_with_baseline, lang=self.lang,
                      baseline_path=self.baseline_path, batch_size=self.batch_size, device=self.device,
                      precision=self.precision, token_budget=self.token_budget, baseline_table=baseline_table,
                      encoder=encoder, idf_weights=idf_weights, guard=guard, custom_baseline=custom_baseline,
                      long_texts=self.long_texts, context=self.context, context_source=self.context_source)

    def for_every_layer(self) -> ScoringOptions:
        """These options at the model's tuned layer, or at :data:`FALLBACK_LAYER` for a model with none: for work
        that computes every layer anyway (baselines, calibration, layer tuning), where the layer is only where the
        scorer starts."""
        return self if self.layer is not None else self.replace(layer=self.layer_or())


#: What :meth:`ScoringOptions.scorer` takes besides the options: the things of a run.
RUN_ARGUMENTS = ("idf_sentences", "idf_weights", "baseline_table", "custom_baseline", "encoder", "guard")


def scorer_from(scorer: Scorer | None, options: Mapping[str, Any]) -> Scorer:
    """The scorer given, or one built from ``options`` (keyword arguments of a scorer: the fields of
    :class:`ScoringOptions` and :data:`RUN_ARGUMENTS`); not both. For functions that take either
    (``audit(..., scorer=s)`` or ``audit(..., layer=6)``).

    Raises:
        InputError: both given, an unknown option, or a scorer that is not one.
    """
    from bertscore_viz.engine.scorer import Scorer

    if scorer is not None:
        if options:
            raise InputError(f"Give either a scorer or scoring options ({', '.join(sorted(options))}), not both: "
                             "set them on the scorer, or use scorer.replace(...).")
        if not isinstance(scorer, Scorer):
            raise InputError(f"Expected a bertscore_viz Scorer, got {type(scorer).__name__}.")
        return scorer
    own = {f.name for f in fields(ScoringOptions)}
    unknown = sorted(set(options) - own - set(RUN_ARGUMENTS))
    if unknown:
        raise InputError(f"Unknown scoring option(s): {', '.join(unknown)}. Expected: "
                         f"{', '.join(sorted(own | set(RUN_ARGUMENTS)))}.")
    run = {k: v for k, v in options.items() if k in RUN_ARGUMENTS}
    return ScoringOptions(**{k: v for k, v in options.items() if k in own}).scorer(**run)
