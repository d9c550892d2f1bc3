"""BERTScore in the real evaluation harnesses, offline: lm-evaluation-harness's ``simple_evaluate`` and lighteval's
``Pipeline`` run a tiny local task (a JSON Lines file written here) with a model whose outputs are fixed, and the
BERTScore they report equals ``bertscore_viz.score`` on the same pairs (1e-6), idf and several references included.

Two things of lighteval 0.13.0 itself are worked around here, narrowly, and only what they break (docs/HARNESSES.md):

* its task registry imports every built-in task module, and ``tasks/tasks/tiny_benchmarks.py`` downloads
  tinyBenchmarks.pkl from GitHub at import (a ``requests`` ConnectionError offline): the registry is given only the
  custom task file, through lighteval's own ``create_custom_tasks_module`` and ``_extract_configs``;
* its details logger hashes ``str`` with ``xxhash.xxh64``, which xxhash 4 refuses ("Strings must be encoded before
  hashing"): while xxhash 4 is installed, the logger's ``xxhash`` encodes the string first.

Loading the tasks and the data, running the model, computing and aggregating the metrics are lighteval's own code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pytest
import torch
import xxhash
from lighteval.logging import info_loggers
from lighteval.logging.evaluation_tracker import EvaluationTracker
from lighteval.models.abstract_model import LightevalModel, ModelConfig
from lighteval.models.model_output import ModelResponse
from lighteval.pipeline import ParallelismManager, Pipeline, PipelineParameters
from lighteval.tasks.registry import Registry
from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.tasks import TaskManager

from bertscore_viz import score
from bertscore_viz.errors import InputError
from bertscore_viz.integrations.harness import lm_eval_metric
from bertscore_viz.integrations.harness.lighteval_metric import bertscore_metrics
from bertscore_viz.integrations.harness.lm_eval_metric import bertscore, bertscore_aggregate, bertscore_results

# lighteval.pipeline imports lighteval's transformers model module, which turns autograd off for the whole process at
# its top level (torch.set_grad_enabled(False)): every later test of this worker (the loss, gradchecks) would lose its
# gradients. Turned back on here, at collection, and after each test below.
torch.set_grad_enabled(True)


@pytest.fixture(autouse=True)
def _autograd_stays_on():
    yield
    torch.set_grad_enabled(True)

pytestmark = pytest.mark.slow
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "wmt16-da-to-english"
MODULE = "bertscore_viz.integrations.harness.lm_eval_metric"


def real(kind: str, n: int = 6) -> list[str]:
    return (DATA / f"DAseg-newstest2016.{kind}.de-en").read_text(encoding="utf-8").splitlines()[:n]


PROMPTS = [f"Translate sentence {i}:" for i in range(6)]
OUTPUTS = dict(zip(PROMPTS, real("mt-system")))  # the fixed model's answer to each prompt
REFS = real("reference")
EXTRA = [r.split(",")[0] for r in real("reference")]  # a second reference of each sample (its first clause)


def expected(groups, **options):
    """What the harness must report: the engine's numbers on the same pairs."""
    return score([OUTPUTS[p] for p in PROMPTS], groups, **options)


def write_rows(path: Path, with_extra: bool = False) -> Path:
    rows = [{"prompt": p, "answer": r, **({"answers": [r, e]} if with_extra else {})}
            for p, r, e in zip(PROMPTS, REFS, EXTRA)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def assert_reported(values: dict, result, key=lambda name: name) -> None:
    for name in ("precision", "recall", "f1"):
        assert abs(float(values[key(f"bertscore_{name}")]) - float(np.mean(getattr(result, name)))) < 1e-6


# --- lm-evaluation-harness -----------------------------------------------------------------------------------------
class FixedLM(LM):
    """An lm-eval model that answers each prompt with its fixed output."""

    def generate_until(self, requests):
        return [OUTPUTS[r.args[0].strip()] for r in requests]

    def loglikelihood(self, requests):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests):
        raise NotImplementedError


def lm_task(tmp_path: Path, name: str, metrics: str, target: str = "{{answer}}", extra: str = "") -> TaskManager:
    data = write_rows(tmp_path / f"{name}.jsonl", with_extra=True)
    yaml = textwrap.dedent(f"""\
        task: {name}
        dataset_path: json
        dataset_kwargs:
          data_files:
            test: {data}
        test_split: test
        output_type: generate_until
        doc_to_text: "{{{{prompt}}}}"
        doc_to_target: "{target}"
        generation_kwargs:
          until: ["\\n"]
        """) + extra + "metric_list:\n" + textwrap.indent(textwrap.dedent(metrics), "  ")
    (tmp_path / f"{name}.yaml").write_text(yaml, encoding="utf-8")
    return TaskManager(include_path=str(tmp_path), include_defaults=False)


def lm_results(tmp_path: Path, name: str, metrics: str, **kwargs) -> dict:
    manager = lm_task(tmp_path, name, metrics, **kwargs)
    out = simple_evaluate(model=FixedLM(), tasks=[name], task_manager=manager, log_samples=False)
    return out["results"][name]


def test_lm_eval_function_metric_with_options_equals_score(tmp_path):
    metrics = f"""\
        - metric: !function {MODULE}.bertscore
          aggregation: !function {MODULE}.bertscore_aggregate
          higher_is_better: true
          idf: true
          layer: 6
        """
    results = lm_results(tmp_path, "bs_function", metrics)
    assert_reported(results, expected(REFS, idf=True, layer=6), key=lambda name: f"{name},none")
    assert results["bertscore_f1_stderr,none"] == "N/A"  # lm-eval bootstraps only its own aggregations


def test_lm_eval_registered_name_as_in_issue_1302(tmp_path):
    lm_eval_metric.register()
    lm_eval_metric.register()  # again: a no-op
    results = lm_results(tmp_path, "bs_registered", "- metric: bertscore\n  higher_is_better: true\n")
    assert_reported(results, expected(REFS), key=lambda name: f"{name},none")


def test_lm_eval_several_references_through_process_results(tmp_path):
    (tmp_path / "bs_utils.py").write_text(textwrap.dedent(f"""\
        from {MODULE} import bertscore_results


        def process_results(doc, results):
            return bertscore_results(results[0], doc["answers"], idf=True)
        """), encoding="utf-8")
    metrics = "".join(f"- metric: bertscore_{name}\n  aggregation: !function {MODULE}.bertscore_aggregate\n"
                      "  higher_is_better: true\n" for name in ("precision", "recall", "f1"))
    results = lm_results(tmp_path, "bs_multi", metrics, extra="process_results: !function bs_utils.process_results\n")
    assert_reported(results, expected([[r, e] for r, e in zip(REFS, EXTRA)], idf=True),
                    key=lambda name: f"{name},none")


def test_lm_eval_list_targets_are_refused_with_what_to_do(tmp_path):
    metrics = f"""\
        - metric: !function {MODULE}.bertscore
          aggregation: !function {MODULE}.bertscore_aggregate
          higher_is_better: true
        """
    with pytest.raises(InputError, match="process_results"):
        lm_results(tmp_path, "bs_list_target", metrics, target="{{answers}}")


def test_lm_eval_items_refuse_bad_use():
    with pytest.raises(InputError, match="Unknown BERTScore option"):
        bertscore(references=["a"], predictions=["b"], layers=3)
    with pytest.raises(InputError, match="references=\\[gold\\]"):
        bertscore(references=["a", "b"], predictions=["b"])
    mixed = [bertscore_results("a", "b")["bertscore_f1"], bertscore_results("a", "b", layer=6)["bertscore_f1"]]
    with pytest.raises(InputError, match="different numbers or options"):
        bertscore_aggregate(mixed)
    with pytest.raises(InputError, match="items of bertscore"):
        bertscore_aggregate([0.5, 0.7])
    assert np.isnan(bertscore_aggregate([]))


# --- lighteval -----------------------------------------------------------------------------------------------------
class FixedConfig(ModelConfig):
    model_name: str = "fixed-outputs"


class FixedModel(LightevalModel):
    """A lighteval model that answers each prompt with its fixed output (no tokenizer, no weights)."""

    def __init__(self, config: FixedConfig):
        from lighteval.utils.cache_management import SampleCache

        self.config = config
        self._cache = SampleCache(config)

    @property
    def tokenizer(self):
        return None

    @property
    def add_special_tokens(self):
        return False

    @property
    def max_length(self):
        return 2048

    def greedy_until(self, docs):
        return [ModelResponse(text=[OUTPUTS[doc.query]]) for doc in docs]

    def loglikelihood(self, docs):
        raise NotImplementedError

    def loglikelihood_rolling(self, docs):
        raise NotImplementedError


LIGHTEVAL_TASKS = '''\
import os

from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc

from bertscore_viz.integrations.harness.lighteval_metric import bertscore_metrics


def prompt(line, task_name=None):
    return Doc(task_name=task_name, query=line["prompt"], choices=line["answers"],
               gold_index=list(range(len(line["answers"]))))


TASKS_TABLE = [LightevalTaskConfig(name="bs_tiny", prompt_function=prompt, hf_repo=os.environ["BS_TASK_DATA"],
                                   hf_subset="default", metrics=bertscore_metrics(idf=True, layer=6),
                                   evaluation_splits=["test"], few_shots_split="test", generation_size=64,
                                   stop_sequence=["\\n"])]
'''


@pytest.fixture
def lighteval_offline(monkeypatch):
    """lighteval 0.13.0 offline with xxhash 4 (the module docstring says why and what)."""
    def custom_tasks_only(custom_tasks=None, load_multilingual=False):
        return Registry._extract_configs(Registry.create_custom_tasks_module(custom_tasks))

    monkeypatch.setattr(Registry, "load_all_task_configs", staticmethod(custom_tasks_only))
    try:
        xxhash.xxh64("text")
    except TypeError:
        encoded = types.SimpleNamespace(xxh64=lambda d: xxhash.xxh64(d.encode("utf-8") if isinstance(d, str) else d))
        monkeypatch.setattr(info_loggers, "xxhash", encoded)


def test_lighteval_pipeline_reports_score_per_sample_and_for_the_task(tmp_path, monkeypatch, lighteval_offline):
    (tmp_path / "data").mkdir()
    write_rows(tmp_path / "data" / "test.jsonl", with_extra=True)
    monkeypatch.setenv("BS_TASK_DATA", str(tmp_path / "data"))
    (tmp_path / "bs_tasks.py").write_text(LIGHTEVAL_TASKS, encoding="utf-8")
    tracker = EvaluationTracker(output_dir=str(tmp_path / "out"), save_details=False)
    params = PipelineParameters(launcher_type=ParallelismManager.NONE,
                                custom_tasks_directory=str(tmp_path / "bs_tasks.py"))
    pipeline = Pipeline(tasks="bs_tiny|0", pipeline_parameters=params, evaluation_tracker=tracker,
                        model=FixedModel(FixedConfig(cache_dir=str(tmp_path / "cache"))))
    pipeline.evaluate()
    want = expected([[r, e] for r, e in zip(REFS, EXTRA)], idf=True, layer=6)
    assert_reported(pipeline.get_results()["results"]["bs_tiny:0"], want)
    details = tracker.details_logger.details["bs_tiny|0"]  # each sample's values, in lighteval's order
    assert sorted(d.doc.query for d in details) == sorted(PROMPTS)
    for name in ("precision", "recall", "f1"):
        got = {d.doc.query: d.metric[f"bertscore_{name}"] for d in details}
        np.testing.assert_allclose([got[p] for p in PROMPTS], getattr(want, name), rtol=0, atol=1e-6)


def test_lighteval_metrics_refuse_bad_options():
    with pytest.raises(InputError, match="Unknown BERTScore option"):
        bertscore_metrics(layers=3)
    assert [m.metric_name for m in bertscore_metrics()] == ["bertscore_precision", "bertscore_recall", "bertscore_f1"]


# --- optional, and not in the core ---------------------------------------------------------------------------------
def test_the_core_imports_no_framework_and_a_missing_one_is_named():
    code = textwrap.dedent("""\
        import sys
        import bertscore_viz, bertscore_viz.integrations, bertscore_viz.integrations.harness
        loaded = {"datasets", "lm_eval", "lighteval"} & set(sys.modules)
        assert not loaded, loaded
        from bertscore_viz.integrations import MissingIntegrationError
        for module, package in (("hf_datasets", "datasets"), ("harness.lm_eval_metric", "lm_eval"),
                                ("harness.lighteval_metric", "lighteval")):
            sys.modules[package] = None  # as if not installed
            try:
                __import__("bertscore_viz.integrations." + module)
            except MissingIntegrationError as exc:
                assert "pip install" in str(exc), exc
            else:
                raise AssertionError(module + " imported without " + package)
        print("ok")
        """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
