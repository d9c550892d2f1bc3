"""docs/LAYOUT.md's reading path names files and functions that exist (a rename that forgets the guide fails)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _section() -> str:
    text = (ROOT / "docs" / "LAYOUT.md").read_text(encoding="utf-8")
    return text.split("## Reading path", 1)[1]


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))}


def test_every_file_and_name_of_the_reading_path_exists():
    section = _section()
    files = re.findall(r"`((?:[a-z_]+/)+[a-z_]*\.py)`", section)
    assert len(files) >= 10, files
    names: set[str] = set()
    for rel in files:
        path = ROOT / "bertscore_viz" / rel
        assert path.is_file(), f"docs/LAYOUT.md's reading path names {rel}, which does not exist"
        names |= _defined(path)
    cited = {m.split(".")[-1] for m in re.findall(r"`([A-Za-z_][A-Za-z_.]*)(?:\(\))?`", section)
             if not m.endswith(".py") and (m[0].isupper() or "_" in m or "." in m)}
    missing = sorted(c for c in cited if c not in names and c not in {"score", "ScoringOptions.scorer"})
    assert not missing, f"named in the reading path but defined in none of its files: {missing}"
