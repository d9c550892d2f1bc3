"""Issue 23, item 3: long progress bars say how long the work has taken and about how long is left."""

from __future__ import annotations

import pytest

from bertscore_viz.app.shared.messages import duration, progress_text


@pytest.mark.parametrize("seconds, text", [(0, "0 s"), (42.4, "42 s"), (59.6, "1 min 00 s"), (185, "3 min 05 s"),
                                           (3725, "1 h 02 min")])
def test_durations_read_as_people_say_them(seconds, text):
    assert duration(seconds) == text


def test_the_estimate_is_the_rate_so_far_applied_to_what_is_left():
    # 1,000 of 5,000 in 20 s: 50 per second, 4,000 left: 80 s
    assert progress_text("Embedding", 1000, 5000, 20.0) == \
        "Embedding: 1,000 / 5,000 sentences · 20 s, about 1 min 20 s left"


def test_no_estimate_before_two_seconds_or_any_work_and_none_when_done():
    assert progress_text("Embedding", 10, 5000, 1.0) == "Embedding: 10 / 5,000 sentences"
    assert progress_text("Embedding", 0, 5000, 9.0) == "Embedding: 0 / 5,000 sentences · 9 s"
    assert progress_text("Bootstrap", 24000, 24000, 4.0, "resamples") == "Bootstrap: 24,000 / 24,000 resamples · 4 s"
