"""The package's layout shows its architecture: each module's surface is what others import, no import runs in a
circle or back up the layers, and no module or function grows past a size a reader can hold.

The layers, from the ground up (a module may import its own sub-package and anything below it):

0. ``errors``, ``versions``, ``locations``, ``extras``, ``progress``: what everything shares;
1. ``models``: names, catalog and offline installs;
2. ``engine``: tokenizer, the one model runner, the kernels, scoring and explanations;
3. ``files``, ``loss``, ``consensus``, ``rescaling``, ``stats``: inputs and outputs, the training loss, consensus
   among samples, baselines, the statistics of comparing systems (numpy only);
4. ``evaluation``, ``figures``: statistics, comparisons, agreement with humans, reports; plotly and matplotlib;
5. ``distributed``, ``serving``, ``integrations``: Ray, the server's policies, the evaluate/torchmetrics drop-ins;
6. ``cli``, ``app``: the clients.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "bertscore_viz"
LAYERS = {
    "errors": 0, "versions": 0, "locations": 0, "extras": 0, "progress": 0,
    "models": 1,
    "engine": 2,
    "files": 3, "loss": 3, "consensus": 3, "rescaling": 3, "stats": 3,
    "evaluation": 4, "figures": 4,
    "distributed": 5, "serving": 5, "integrations": 5,
    "cli": 6, "app": 6,
}
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _imports(path: Path) -> list[tuple[int, str, str | None]]:
    """``(line, module imported from, name)`` of every import of the package in ``path`` (relative imports
    resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = here.split(".")[: -node.level]
                module = ".".join(base + ([module] if module else []))
            if module == "bertscore_viz" or module.startswith("bertscore_viz."):
                out += [(node.lineno, module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names if a.name.startswith("bertscore_viz")]
    return out


def _target(module: str, name: str | None) -> str:
    """The module an import names: ``from bertscore_viz.engine import tensor_ops`` is ``engine.tensor_ops``."""
    if name and f"{module}.{name}" in MODULES:
        return f"{module}.{name}"
    return module


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


def test_every_sub_package_has_a_layer():
    top = {".".join(m.split(".")[:2]).split(".")[-1] for m in MODULES if m != "bertscore_viz"}
    top -= {"__main__"}
    assert top <= set(LAYERS), sorted(top - set(LAYERS))


def test_no_module_imports_another_modules_private_names():
    found = [f"{path.relative_to(ROOT)}:{line} imports {name} from {module}"
             for path in MODULES.values() for line, module, name in _imports(path)
             if name and name.startswith("_") and not name.startswith("__")]
    assert not found, "\n".join(found)


def _package(module: str) -> str:
    return module.rsplit(".", 1)[0]


def _declared_all(path: Path) -> list[str] | None:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return None


def test_modules_used_from_another_package_declare_their_surface():
    """A module imported from outside its own sub-package says what its surface is (``__all__``), and every name
    the package's other modules import from it is in that surface."""
    used: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        for _, source, name in _imports(path):
            target = _target(source, name)
            if target in MODULES and _package(target) != _package(module) and MODULES[target].name != "__init__.py":
                used.setdefault(target, set()).update({name} if name and target == source else set())
    missing = [t for t in used if _declared_all(MODULES[t]) is None]
    assert not missing, f"no __all__ in {sorted(missing)}"
    outside = [f"{t}.{n}" for t, names in used.items() for n in names if n not in _declared_all(MODULES[t])]
    assert not outside, f"imported from outside their package but not in __all__: {sorted(outside)}"


def test_no_import_runs_back_up_the_layers():
    found = []
    for module, path in MODULES.items():
        mine = _layer(module)
        if mine is None:
            continue
        for line, imported, name in _imports(path):
            target = _target(imported, name)
            theirs = _layer(target)
            if theirs is not None and theirs > mine:
                found.append(f"{path.relative_to(ROOT)}:{line} ({module}, layer {mine}) imports {target} "
                             f"(layer {theirs})")
            if {module.split(".")[1], target.split(".")[1:2][0] if "." in target else ""} == {"app", "cli"}:
                found.append(f"{path.relative_to(ROOT)}:{line} ({module}) imports {target}: the two clients share "
                             "code through the library, not each other")
            if target == "bertscore_viz" and module != "bertscore_viz":
                found.append(f"{path.relative_to(ROOT)}:{line} imports the package's face; import from the "
                             "module that defines the name")
    assert not found, "\n".join(found)


def test_no_import_circle():
    graph = {m: {_target(mod, name) for _, mod, name in _imports(p)} & set(MODULES) for m, p in MODULES.items()}
    for m in graph:
        graph[m].discard(m)
    # a module's import of its own package's __init__ is how Python loads it; the face imports downwards
    state: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not circles, "\n".join(" -> ".join(c) for c in circles)


@pytest.mark.parametrize("path", [p for p in MODULES.values()] + [ROOT / "app.py"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_and_functions_stay_readable(path):
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_MODULE_LINES, f"{path.name}: {len(text.splitlines())} lines"
    lines = text.splitlines()
    long = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            size = node.end_lineno - node.lineno + 1
            reason = any("long:" in lines[k] for k in range(node.lineno - 1, min(node.lineno + 2, len(lines))))
            if size > MAX_FUNCTION_LINES and not reason:
                long.append(f"{node.name} ({size} lines; cut it into named steps, or say why not in a "
                            "'# long: ...' comment on its def line)")
    assert not long, "\n".join(long)


#: The modules allowed to call ``Scorer(...)``: the scorer itself (``score()``, ``Scorer.replace``) and the options
#: object that every client builds its scorer from.
SCORER_BUILDERS = {"bertscore_viz.engine.scorer", "bertscore_viz.engine.options"}


def _scorer_calls(path: Path) -> list[int]:
    """Lines of ``path`` that call ``Scorer(...)`` (by that name or as ``module.Scorer(...)``)."""
    calls = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else (f.attr if isinstance(f, ast.Attribute) else None)
            if name == "Scorer":
                calls.append(node.lineno)
    return calls


def test_every_client_builds_its_scorer_from_the_options_object():
    """No module but the scorer and the options object spells the scorer's keywords: clients (the CLI, the app,
    Ray, the loss, the drop-ins, evaluation) build a scorer with ``ScoringOptions(...).scorer()`` or derive one with
    ``scorer.replace(...)``, so options are resolved in one place."""
    found = [f"{path.relative_to(ROOT)}:{line} calls Scorer(...): build it with ScoringOptions(...).scorer()"
             for module, path in MODULES.items() if module not in SCORER_BUILDERS for line in _scorer_calls(path)]
    assert not found, "\n".join(found)


def test_the_scorer_check_finds_a_direct_construction(tmp_path):
    """The check above can fail: a client module that builds a Scorer directly is found."""
    client = tmp_path / "client.py"
    client.write_text("from bertscore_viz.engine.scorer import Scorer\n\n\ndef f(args):\n"
                      "    return Scorer(model=args.model, layer=args.layer)\n", encoding="utf-8")
    aliased = tmp_path / "aliased.py"
    aliased.write_text("from bertscore_viz.engine import scorer\nx = scorer.Scorer(layer=3)\n", encoding="utf-8")
    assert _scorer_calls(client) == [5]
    assert _scorer_calls(aliased) == [2]
