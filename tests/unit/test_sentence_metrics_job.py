"""chrF, BLEU and TER of a Compare upload as a background job (issue 40): the numbers equal sacrebleu's in-process
scores exactly, progress counts every output once and ends at the total, a metric over its bound is left out with
the reason and the setting, a job stopped half-way resumes to the same numbers, and a small job runs inline."""

from __future__ import annotations

import time

import numpy as np
import pytest

from bertscore_viz.evaluation import sacrebleu_metrics as sm
from bertscore_viz.serving import sentence_metrics as jobs
from bertscore_viz.serving.sentence_metrics import SentenceMetricsJob

WORDS = ("the committee said on tuesday that the new rules would take effect next year after a long debate in "
         "parliament about costs and the effect on small firms across the country").split()


def _data(n_systems: int = 3, n: int = 24, seed: int = 0):
    rng = np.random.default_rng(seed)
    refs = [" ".join(rng.choice(WORDS, size=int(rng.integers(12, 30)))) for _ in range(n)]
    systems = {}
    for k in range(n_systems):
        outs = []
        for r in refs:
            words = [w for w in r.split() if rng.random() > 0.2]
            rng.shuffle(words[: len(words) // 3])
            outs.append(" ".join(words) + " .")
        systems[f"sys{k}"] = outs
    return systems, [[r] for r in refs]


def _same(a: sm.SurfaceScores, b: sm.SurfaceScores) -> None:
    assert list(a.metrics) == list(b.metrics)
    for m in a.metrics:
        x, y = a.metrics[m], b.metrics[m]
        assert x.corpus == y.corpus
        assert x.corpus_signature == y.corpus_signature and x.sentence_signature == y.sentence_signature
        for s in x.corpus:
            np.testing.assert_array_equal(x.sentence[s], y.sentence[s])
            np.testing.assert_array_equal(x.statistics[s], y.statistics[s])
    assert a.identical == b.identical and a.n_segments == b.n_segments


def _finish(job: SentenceMetricsJob, timeout: float = 240.0) -> list:
    seen = []
    job.ensure_running()
    end = time.monotonic() + timeout
    while not job.finished and time.monotonic() < end:
        job.touch()
        seen.append(job.progress())
        time.sleep(0.05)
    assert job.finished, job.progress()
    seen.append(job.progress())
    return seen


def test_the_job_in_worker_processes_equals_sacrebleu_in_process():
    systems, refs = _data()
    systems["copy"] = list(systems["sys0"])  # identical outputs: their tests give p = 1
    job = SentenceMetricsJob(systems, refs)
    assert job.surface() is None and job.todo == list(sm.METRICS)
    seen = _finish(job)
    done = [p.done for p in seen]
    assert done == sorted(done) and seen[-1].done == seen[-1].total == 4 * 24 * 3
    _same(job.surface(), sm.surface_scores(systems, refs))
    assert job.surface() is job.surface()  # one object while nothing changes: the page keeps its bootstrap by it


def test_inline_equals_the_workers():
    systems, refs = _data(2, 10, seed=3)
    job = SentenceMetricsJob(systems, refs)
    assert job.estimated_seconds <= jobs.INLINE_SECONDS
    job.run_inline()
    assert job.finished and not job.running
    _same(job.surface(), sm.surface_scores(systems, refs))


def test_a_metric_over_the_bound_is_left_out_with_the_reason_and_the_setting():
    long_ref = " ".join(WORDS * 3)  # about 100 words: TER's shift search costs about 0.8 s an output
    systems = {"a": [long_ref[::-1]] * 40, "b": [long_ref] * 40}
    refs = [[long_ref]] * 40
    job = SentenceMetricsJob(systems, refs, max_seconds=5.0,
                             bound_name="this server's (server setting BERTSCORE_VIZ_SENTENCE_METRICS_SECONDS)")
    assert job.todo == ["chrF", "BLEU"] and job.estimate["TER"] > 5.0
    why = job.surface().skipped["TER"]
    assert "BERTSCORE_VIZ_SENTENCE_METRICS_SECONDS" in why and "cube of the length" in why and "-m ter" in why
    _finish(job)
    assert list(job.surface().metrics) == ["chrF", "BLEU"]


def test_work_past_the_bound_is_stopped_and_said():
    systems, refs = _data(2, 30)
    job = SentenceMetricsJob(systems, refs, max_seconds=100.0)
    job.max_seconds = 1e-6  # the estimate let it in; the time it takes does not
    _finish(job)
    surface = job.surface()
    assert not surface.metrics and set(surface.skipped) == set(sm.METRICS)
    assert all("was stopped after" in why for why in surface.skipped.values())
    assert job.progress().done == job.progress().total


def test_a_stopped_job_resumes_to_the_same_numbers():
    systems, refs = _data(4, 40, seed=7)
    job = SentenceMetricsJob(systems, refs)
    job.ensure_running()
    while job.progress().done == 0:
        time.sleep(0.02)
    job._cancel.set()  # noqa: SLF001 - as Forget does, but resumable below
    job.wait(60)
    assert not job.running
    stopped_at = job.progress().done
    assert stopped_at < job.total or job.finished
    job._cancel.clear()  # noqa: SLF001
    _finish(job)
    _same(job.surface(), sm.surface_scores(systems, refs))


def test_an_abandoned_job_stops(monkeypatch):
    monkeypatch.setattr(jobs, "ABANDON_SECONDS", 0.0)
    systems, refs = _data(3, 40)
    job = SentenceMetricsJob(systems, refs)
    job.ensure_running()
    job.wait(60)
    assert not job.running and not job.finished


def test_the_estimate_grows_with_the_cube_of_the_length_for_ter_only():
    short = {"a": [" ".join(WORDS[:20])]}
    long = {"a": [" ".join(WORDS[:20] * 4)]}
    ratio = {m: sm.estimated_seconds(m, long, [[long["a"][0]]]) / sm.estimated_seconds(m, short, [[short["a"][0]]])
             for m in sm.METRICS}
    assert ratio["TER"] > 30 and ratio["chrF"] < 5 and ratio["BLEU"] < 5


@pytest.mark.parametrize("seconds, text", [(12, "12 s"), (560, "9 min 20 s"), (7500, "2 h 5 min"), (120, "2 min")])
def test_durations_read_as_people_say_them(seconds, text):
    assert sm.duration(seconds) == text


def test_a_copy_keeps_the_finished_work_and_resumes_alone():
    """A kept session or a read-only link copies the Compare state (deepcopy): the job's thread and lock stay
    behind, the finished metrics come along, and the copy finishes on its own to the same numbers."""
    import copy
    import pickle

    systems, refs = _data(3, 30, seed=11)
    job = SentenceMetricsJob(systems, refs)
    job.ensure_running()
    while "chrF" not in job.completed():
        time.sleep(0.02)
    job.cancel()
    job.wait(60)
    for twin in (copy.deepcopy(job), pickle.loads(pickle.dumps(job))):
        assert "chrF" in twin.completed() and not twin.running
        _finish(twin)
        _same(twin.surface(), sm.surface_scores(systems, refs))


def test_sacrebleus_detokenize_warning_stays_out_of_the_log(caplog):
    """150 outputs ending in " ." made sacrebleu log three lines per chunk ("It looks like you forgot to detokenize
    your test data") into the server's terminal (issue 40); the scores are unchanged."""
    import logging

    hyps = [f"the committee met on day {i} ." for i in range(150)]
    refs = [f"the committee met on day {i}." for i in range(150)]
    with caplog.at_level(logging.WARNING):
        stats, _ = sm.chunk_statistics("BLEU", hyps, [refs])
    assert not [r for r in caplog.records if "detokenize" in r.getMessage()]
    assert len(stats) == 150 and logging.getLogger("sacrebleu").level != logging.ERROR  # restored after
    with caplog.at_level(logging.WARNING):  # sacrebleu itself does say it: the test can fail
        sm.corpus_metric("BLEU")._extract_corpus_statistics(hyps, [refs])
    assert [r for r in caplog.records if "detokenize" in r.getMessage()]


def test_a_cheap_metric_of_many_systems_is_one_worker_call_and_ter_is_many():
    """Each worker call costs a fork: chrF of 16 systems x 100 summaries (about a second in all) took 32 calls and
    38 s on a loaded machine; grouped into calls of about CHUNK_SECONDS it is one or two."""
    text = " ".join(WORDS[:35] * 2)  # 70 words
    systems = {f"s{k}": [text] * 100 for k in range(16)}
    refs = [[text]] * 100
    for metric, most in (("chrF", 2), ("BLEU", 1)):
        pieces = [(name, a, b, est) for name, outs in systems.items()
                  for a, b, est in jobs.plan_chunks(metric, outs, refs)]
        assert len(jobs.group_calls(pieces)) <= most
    ter = [(name, a, b, est) for name, outs in systems.items() for a, b, est in jobs.plan_chunks("TER", outs, refs)]
    calls = jobs.group_calls(ter)
    assert len(calls) > 50 and all(sum(p[3] for p in c[:-1]) < jobs.CHUNK_SECONDS for c in calls)
