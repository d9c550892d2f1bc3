"""The CI gate of ``compare`` (issue 42): ``--fail-if-worse`` / ``--fail-if-not-better`` exit 1 with a sentence when
a system is significantly worse than (or not significantly better than) the baseline under the chosen test and
correction; ``--format markdown`` for a CI job summary, with every user-given name escaped; ``--json``'s schema
version 2 (snake_case keys, no display glyphs).

The verdicts are pinned on hand-made paired tests (direction, significance, lower-is-better), then on the real
bundled model through the command: the systems of the shipped example, a CI-style shell script that checks the exit
status and appends the Markdown to a job summary file.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bertscore_viz.cli.entry import main
from bertscore_viz.errors import InputError
from bertscore_viz.figures.markdown import markdown_text
from bertscore_viz.stats import analyse, paired_randomization
from bertscore_viz.stats.gate import FAIL_IF_NOT_BETTER, FAIL_IF_WORSE, gate, verdict_of
from bertscore_viz.stats.paired import PairedResult

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "bertscore_viz" / "examples" / "systems_example.csv"


def _test(system: str, mean: float, base: float, p: float, higher: bool = True) -> PairedResult:
    return PairedResult(system, "prod", mean, base, p, None, higher_is_better=higher)


# --- the verdict, by hand --------------------------------------------------------------------------------------------
def test_a_system_is_worse_only_when_significant_and_below_the_baseline():
    assert verdict_of(_test("a", 0.80, 0.85, 0.001), 0.05) == "worse"
    assert verdict_of(_test("a", 0.90, 0.85, 0.001), 0.05) == "better"
    assert verdict_of(_test("a", 0.80, 0.85, 0.05), 0.05) == "no significant difference"  # p < alpha, not <=
    assert verdict_of(_test("a", 0.80, 0.85, 0.049), 0.05) == "worse"
    assert verdict_of(_test("a", 0.85, 0.85, 0.001), 0.05) == "no significant difference"


def test_lower_is_better_turns_the_direction_round():
    assert verdict_of(_test("a", 40.0, 50.0, 0.002, higher=False), 0.05) == "better"  # TER fell
    assert verdict_of(_test("a", 60.0, 50.0, 0.002, higher=False), 0.05) == "worse"


def test_the_two_rules():
    tests = [_test("same", 0.851, 0.85, 0.40), _test("better", 0.90, 0.85, 0.001), _test("worse", 0.70, 0.85, 0.01)]
    worse = gate(tests, FAIL_IF_WORSE, "F1")
    assert not worse.passed and worse.failing == ("worse",)
    not_better = gate(tests, FAIL_IF_NOT_BETTER, "F1")
    assert not_better.failing == ("same", "worse")
    assert gate(tests[:2], FAIL_IF_WORSE, "F1").passed and not gate(tests[:2], FAIL_IF_NOT_BETTER, "F1").passed
    assert gate(tests[1:2], FAIL_IF_NOT_BETTER, "F1").passed
    first, *rest = worse.sentences()
    assert first.startswith("Gate failed (fail_if_worse): 1 of 3 system(s) is significantly worse than prod on F1 "
                            "(the paired bootstrap, p < 0.05, uncorrected)")
    assert rest == ["worse: F1 0.7000 vs 0.8500, worse - prod = -0.1500 (p = 0.010): worse."]
    record = worse.as_dict()
    assert record["passed"] is False and record["failing"] == ["worse"] and record["test"] == "bootstrap"
    assert [s["verdict"] for s in record["systems"]] == ["no significant difference", "better", "worse"]


def test_a_level_other_than_five_percent():
    tests = [_test("a", 0.80, 0.85, 0.02)]
    assert not gate(tests, FAIL_IF_WORSE, "F1", alpha=0.05).passed
    assert gate(tests, FAIL_IF_WORSE, "F1", alpha=0.01).passed


def test_the_gate_refuses_what_it_cannot_read():
    with pytest.raises(InputError, match="Unknown gate rule"):
        gate([_test("a", 0.8, 0.85, 0.01)], "fail_if_different", "F1")
    with pytest.raises(InputError, match="at least one system"):
        gate([], FAIL_IF_WORSE, "F1")
    other = PairedResult("b", "other", 0.8, 0.85, 0.01, None)
    with pytest.raises(InputError, match="one baseline"):
        gate([_test("a", 0.8, 0.85, 0.01), other], FAIL_IF_WORSE, "F1")


def test_the_gate_reads_the_analysis_it_is_given_bootstrap_or_randomization():
    rng = np.random.default_rng(7)
    prod = rng.uniform(0.80, 0.95, 200)
    scores = {"prod": prod, "regressed": prod - 0.02 + rng.normal(0, 0.01, 200),
              "same_mean": prod + np.tile([0.01, -0.01], 100)}  # differs per segment, not on average
    sig = analyse(scores, "prod", correction="holm")
    by_bootstrap = gate(sig.versus_baseline, FAIL_IF_WORSE, "F1")
    assert by_bootstrap.failing == ("regressed",) and by_bootstrap.correction == "holm"
    ar = paired_randomization(scores, "prod", n_trials=2000)
    by_ar = gate(ar.results, FAIL_IF_WORSE, "F1")
    assert by_ar.failing == ("regressed",) and by_ar.method == "randomization"
    assert "approximate randomization p = " in by_ar.sentences()[1]


# --- Markdown: shown as typed -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["<img src=x onerror=alert(1)>", "a|b", "**bold**", "[x](http://e.org)", "1. x",
                                  "- x", "`code`", "$x$", "a\nb", "&lt;"])
def test_markdown_text_never_lets_a_name_act(name):
    out = markdown_text(name)
    assert "\n" not in out and "|" not in out.replace("\\|", "")
    assert "<" not in out.replace("\\<", "") and "&lt;" not in out.replace("&amp;lt;", "")
    unescaped = re.sub(r"\\(.)", "", out)  # what is left once every escaped character is taken out
    assert not set(unescaped) & set("`*[]<>|$")
    assert not re.match(r"^(\d+\.|[-+#>])", out)


# --- the command, on the real model ----------------------------------------------------------------------------------
def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["compare", "--input", str(EXAMPLE), "-q", *argv])
    return code, out.getvalue(), err.getvalue()


def test_fail_if_worse_exits_one_naming_the_worse_systems_and_zero_when_none_is():
    code, out, err = cli("--fail-if-worse", "literal", "--json")
    data = json.loads(out)
    assert code == 1 and data["gate"]["passed"] is False and data["significance"]["baseline"] == "literal"
    assert set(data["gate"]["failing"]) == {"paraphrase", "drops_content", "errors"}
    assert "Gate failed (fail_if_worse): 3 of 3 system(s) are significantly worse than literal on F1" in err
    for t in data["significance"]["versus_baseline"]:  # the verdict is the tests' own, printed beside it
        assert t["p"] < 0.05 and t["difference"] < 0
    code, out, err = cli("--fail-if-worse", "paraphrase")
    assert code == 0 and "Gate passed (fail_if_worse): no system is significantly worse than paraphrase" in out


def test_fail_if_not_better_under_holm_and_randomization():
    code, out, err = cli("--fail-if-not-better", "paraphrase", "--holm", "--paired-ar", "--paired-ar-n", "2000",
                         "--json", "--no-segments")
    data = json.loads(out)
    verdicts = {s["system"]: s for s in data["gate"]["systems"]}
    ar = {r["system"]: r for r in data["paired_ar"]["versus_baseline"]}
    assert data["gate"]["test"] == "randomization" and data["gate"]["correction"] == "holm"
    for name, v in verdicts.items():  # read from the randomization p printed beside it
        assert v["p"] == ar[name]["p"]
    failing = [n for n, v in verdicts.items() if not (v["p"] < 0.05 and v["difference"] > 0)]
    assert data["gate"]["failing"] == failing and (code == 1) == bool(failing)


def test_the_gate_and_baseline_flags_must_agree_and_name_a_system():
    code, _, err = cli("--fail-if-worse", "literal", "--baseline", "errors")
    assert code == 2 and "name two baselines" in err
    code, _, err = cli("--fail-if-worse", "nosuch")
    assert code == 2 and "Unknown --fail-if-worse 'nosuch'" in err
    with pytest.raises(SystemExit) as usage:  # one rule at a time: argparse's usage error
        cli("--fail-if-worse", "literal", "--fail-if-not-better", "literal")
    assert usage.value.code == 2


def test_json_schema_version_two_has_stable_keys_and_no_glyphs():
    code, out, _ = cli("--json", "--baseline", "literal")
    data = json.loads(out)
    assert code == 0 and data["schema"] == "bertscore-viz/compare" and data["schema_version"] == 2
    names = set(data["input"]["systems"])

    def keys(value, path=""):
        if isinstance(value, dict):
            for k, v in value.items():
                user_named = k in names or path.endswith(("systems_v1[]", "mapping"))
                if not user_named:
                    assert re.fullmatch(r"[a-z0-9_]+", k), f"{path}.{k}"
                yield from keys(v, f"{path}.{k}")
        elif isinstance(value, list):
            for v in value:
                yield from keys(v, path + "[]")
        elif isinstance(value, str):
            yield value

    for text in keys({k: v for k, v in data.items() if k != "systems_v1"}):
        assert "★" not in text
    best = [r for r in data["systems"] if r["best"]]
    assert len(best) == 1 and best[0]["system"] == "literal" and best[0]["ci_metric"] == "F1"
    assert best[0]["ci_low"] <= best[0]["f1"] <= best[0]["ci_high"]
    old = {r["System"]: r for r in data["systems_v1"]}  # version 1's records, kept for one release
    for r in data["systems"]:
        assert old[r["system"]]["F1"] == r["f1"] and old[r["system"]]["F1 CI low"] == r["ci_low"]


def test_markdown_summary_of_a_hostile_upload(tmp_path):
    hostile = "<script>alert(1)</script>|**x**"
    rows = list(csv.reader(EXAMPLE.open(encoding="utf-8")))
    rows[0] = [hostile if c == "errors" else c for c in rows[0]]
    path = tmp_path / "hostile.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["compare", "--input", str(path), "-q", "--format", "markdown", "--fail-if-worse", "literal"])
    md = out.getvalue()
    assert code == 1 and "<script>" not in md and "\\<script\\>alert(1)\\</script\\>\\|\\*\\*x\\*\\*" in md
    table = [line for line in md.splitlines() if line.startswith("| ")]
    assert len(table) == 5 and all(len(re.findall(r"(?<!\\)\|", line)) == 10 for line in table)
    assert md.splitlines()[2].startswith("❌ **Gate failed")


def test_a_ci_script_checks_the_exit_status_and_writes_the_job_summary(tmp_path):
    """The workflow of docs/CI.md as a shell script: the gate's status decides, the summary is appended."""
    script = tmp_path / "gate.sh"
    script.write_text(
        "set -u\n"
        f'"{sys.executable}" -m bertscore_viz compare --input "{EXAMPLE}" -q --fail-if-worse "$1" '
        '--format markdown >> "$GITHUB_STEP_SUMMARY"\n'
        "status=$?\n"
        'if [ "$status" -eq 1 ]; then echo "REGRESSION"; elif [ "$status" -eq 0 ]; then echo "OK"; '
        'else echo "BROKEN $status"; fi\n'
        'exit "$status"\n', encoding="utf-8")
    summary = tmp_path / "summary.md"
    env = dict(os.environ, GITHUB_STEP_SUMMARY=str(summary), HF_HUB_OFFLINE="1")
    failed = subprocess.run(["bash", str(script), "literal"], capture_output=True, text=True, env=env, timeout=600)
    assert failed.returncode == 1 and failed.stdout.strip() == "REGRESSION", failed.stderr[-2000:]
    passed = subprocess.run(["bash", str(script), "paraphrase"], capture_output=True, text=True, env=env,
                            timeout=600)
    assert passed.returncode == 0 and passed.stdout.strip() == "OK", passed.stderr[-2000:]
    text = summary.read_text(encoding="utf-8")
    assert text.count("### BERTScore comparison") == 2 and "❌ **Gate failed" in text and "✅ **Gate passed" in text
