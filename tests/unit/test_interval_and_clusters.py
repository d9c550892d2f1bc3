"""Two contradictions a newcomer met on Compare (issue 40): switching Holm on changed every 95% interval (the
resamples went from 1,000 to 24,000 and the interval was read from all of them), and the clusters' help said that
systems inside a cluster "are not separated" while the page reported the top system of a 15-system cluster
significantly better than 13 of them."""

from __future__ import annotations

import numpy as np

from bertscore_viz.evaluation import significance as sg


def _scores(k: int = 15, n: int = 60, seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.normal(0.6, 0.1, n)
    return {f"sys{i:02d}": base + 0.004 * (k - i) + rng.normal(0, 0.02, n) for i in range(k)}


def test_holm_changes_the_p_values_not_the_intervals():
    scores = _scores()
    plain = sg.analyse(scores, correction=None)
    holm = sg.analyse(scores, correction="holm",
                      n_samples=sg.resamples_for(len(scores), 60, "holm"))
    assert holm.n_samples > plain.n_samples == sg.DEFAULT_SAMPLES
    for a, b in zip(plain.intervals, holm.intervals):
        assert (a.system, a.low, a.high) == (b.system, b.low, b.high)
    # and the interval is the one of the first 1,000 resamples: the same draws
    first = sg.bootstrap_means(scores, sg.DEFAULT_SAMPLES)
    for iv in holm.intervals:
        assert (iv.low, iv.high) == sg.percentile_ci(first[iv.system])


def test_a_cluster_can_hold_significant_pairs_and_the_help_says_so():
    # 0 beats 1..13 but not 14; 14 is beaten by no one: no boundary can be drawn, one cluster of 15
    names = [f"s{i:02d}" for i in range(15)]
    means = {s: 1.0 - 0.01 * i for i, s in enumerate(names)}
    p = np.ones((15, 15))
    for j in range(1, 14):
        p[0, j] = p[j, 0] = 0.001
    clusters, standings = sg.clusters(names, means, p)
    assert len(clusters) == 1 and standings[0].wins == 13
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "bertscore_viz" / "app" / "app_pages" / "compare"
            / "results.py").read_text()
    assert "are not separated" not in page and "may still differ significantly" in page
    assert "not separated" not in (sg.clusters.__doc__ or "")
