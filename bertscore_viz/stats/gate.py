"""A regression gate for continuous integration: does any system do significantly worse than a baseline (or fail to
do significantly better)?

The gate reads the paired tests already made against the baseline (:class:`~bertscore_viz.stats.paired.PairedResult`,
from the paired bootstrap or approximate randomization, corrected or not): it runs no test of its own, so its
verdict is the one the tables and sentences of the same run print. A system is *worse* when its test is significant
at ``alpha`` and its difference to the baseline goes the wrong way for the metric (below the baseline where higher
is better, above it where lower is better, as for TER); *better* the other way round. A difference that is not
significant is neither.

Two rules, as a CI job asks them:

* ``fail_if_worse``: fail when any system is significantly worse than the baseline (guard a production model
  against regressions; a new system that is not significantly different passes).
* ``fail_if_not_better``: fail unless every system is significantly better than the baseline (a change must earn
  its place).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bertscore_viz.errors import InputError
from bertscore_viz.stats.paired import BOOTSTRAP, PairedResult

__all__ = ["FAIL_IF_WORSE", "FAIL_IF_NOT_BETTER", "RULES", "GateResult", "gate", "verdict_of"]

FAIL_IF_WORSE = "fail_if_worse"
FAIL_IF_NOT_BETTER = "fail_if_not_better"
#: The rules, with the words a sentence uses for a system that fails each.
RULES = {FAIL_IF_WORSE: "significantly worse than", FAIL_IF_NOT_BETTER: "not significantly better than"}


def verdict_of(result: PairedResult, alpha: float) -> str:
    """``"better"``, ``"worse"`` or ``"no significant difference"`` of one system against the baseline, in the
    metric's direction."""
    if not result.significant(alpha) or result.difference == 0:
        return "no significant difference"
    better = result.difference > 0 if result.higher_is_better else result.difference < 0
    return "better" if better else "worse"


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict on every system tested against the baseline.

    Attributes:
        rule: :data:`FAIL_IF_WORSE` or :data:`FAIL_IF_NOT_BETTER`; baseline, metric: what was compared.
        alpha: the significance level; method: the test (``"bootstrap"`` or ``"randomization"``); correction: None
            or ``"holm"``.
        results: the tests read, in their order; failing: the systems that fail the rule, in that order.
    """

    rule: str
    baseline: str
    metric: str
    alpha: float
    method: str
    correction: str | None
    results: tuple[PairedResult, ...]
    failing: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failing

    def _test_words(self) -> str:
        test = "the paired bootstrap" if self.method == BOOTSTRAP else "approximate randomization"
        corrected = "Holm-corrected" if self.correction == "holm" else "uncorrected"
        return f"{test}, p < {self.alpha:g}, {corrected}"

    def sentences(self) -> list[str]:
        """One sentence with the verdict, then one per failing system with its difference and p."""
        what = RULES[self.rule]
        if self.passed:
            if self.rule == FAIL_IF_WORSE:
                head = f"no system is {what} {self.baseline} on {self.metric}"
            else:
                head = f"every system is significantly better than {self.baseline} on {self.metric}"
            return [f"Gate passed ({self.rule}): {head} ({self._test_words()}; {len(self.results)} tested)."]
        n = len(self.failing)
        out = [f"Gate failed ({self.rule}): {n} of {len(self.results)} system(s) {'is' if n == 1 else 'are'} {what} "
               f"{self.baseline} on {self.metric} ({self._test_words()})."]
        for r in self.results:
            if r.system in self.failing:
                out.append(f"{r.system}: {self.metric} {r.system_mean:.4f} vs {r.baseline_mean:.4f}, "
                           f"{r.system} - {r.baseline} = {r.difference:+.4f} ({r.p_text()}): "
                           f"{verdict_of(r, self.alpha)}.")
        return out

    def as_dict(self) -> dict:
        return {"rule": self.rule, "baseline": self.baseline, "metric": self.metric, "alpha": self.alpha,
                "test": self.method, "correction": self.correction, "passed": self.passed,
                "failing": list(self.failing),
                "systems": [{"system": r.system, "difference": r.difference, "p": r.p,
                             "verdict": verdict_of(r, self.alpha)} for r in self.results],
                "sentences": self.sentences()}


def gate(results: Sequence[PairedResult], rule: str, metric: str, alpha: float = 0.05) -> GateResult:
    """The gate's verdict on ``results`` (every system's paired test against one baseline).

    Raises:
        InputError: an unknown rule, no test to read, or tests against different baselines or by different methods.
    """
    if rule not in RULES:
        raise InputError(f"Unknown gate rule {rule!r}; the rules are {', '.join(RULES)}.")
    results = tuple(results)
    if not results:
        raise InputError("The gate needs at least one system tested against the baseline.")
    baselines = {r.baseline for r in results}
    methods = {r.method for r in results}
    corrections = {r.correction for r in results}
    if len(baselines) > 1 or len(methods) > 1 or len(corrections) > 1:
        raise InputError("The gate reads tests against one baseline, by one test and correction; got baselines "
                         f"{sorted(baselines)}, tests {sorted(methods)}.")
    fails = "worse" if rule == FAIL_IF_WORSE else None
    failing = tuple(r.system for r in results
                    if (verdict_of(r, alpha) == fails if fails else verdict_of(r, alpha) != "better"))
    return GateResult(rule, results[0].baseline, metric, alpha, results[0].method, results[0].correction, results,
                      failing)
