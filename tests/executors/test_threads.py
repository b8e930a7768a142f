"""The thread policy: a CPU job takes the cores other processes leave free when it starts, or the
threads it is given, and a bad count is refused before anything runs."""

from __future__ import annotations

import pytest
import torch

from nasrescale.errors import ConfigError
from nasrescale.executors.base import ExecutorSettings
from nasrescale.executors.local import LocalExecutor


class _Job:
    """A job that notes the intra-op threads it ran with."""

    seen: list[int] = []

    def __init__(self, key: str) -> None:
        self.k = key

    def key(self) -> str:
        return self.k

    def cost(self) -> float:
        return 1.0

    def run(self, options):  # noqa: ANN001, ANN201
        _Job.seen.append(torch.get_num_threads())
        return {"test_accuracy": 50.0, "diverged": False}


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_a_cpu_job_takes_the_free_cores_when_it_starts_or_the_threads_it_is_given(restore_threads, monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 3)
    load = iter([0.0, 1.8, 0.4])  # what other processes keep busy as each job starts
    monkeypatch.setattr("nasrescale.executors.threads.busy_cores", lambda: next(load))
    monkeypatch.setattr("nasrescale.executors.threads.MEASURE_EVERY_S", 0.0)  # measure as each job starts
    torch.set_num_threads(2)
    _Job.seen.clear()
    jobs = [_Job("a"), _Job("b"), _Job("c")]
    LocalExecutor(ExecutorSettings(device="cpu"), progress=False).run(jobs, lambda outcome: None)
    LocalExecutor(ExecutorSettings(device="cpu", threads=1), progress=False).run([_Job("d")], lambda outcome: None)
    assert _Job.seen == [3, 3, 3, 1]  # by default the load is not read (same seed, same result); then the count given


def test_the_free_cores_are_shared_among_the_jobs_at_once_and_unknown_load_leaves_every_core():
    from nasrescale.executors.threads import cpu_threads
    import os

    cores = os.cpu_count() or 1
    assert cpu_threads(None, busy=None) == cores
    assert cpu_threads(None, jobs_at_once=2, busy=0.0) == max(1, cores // 2)
    assert cpu_threads(None, busy=cores + 5.0) == 1
    assert cpu_threads(4, busy=float(cores)) == 4  # a given count is kept whatever the load


def test_a_bad_thread_count_names_the_key():
    with pytest.raises(ConfigError, match="executor.threads: intra-op threads per CPU job, >= 1, got 0"):
        ExecutorSettings(threads=0)


def test_the_policy_measures_at_most_once_per_interval(monkeypatch, restore_threads):
    from nasrescale.executors.threads import ThreadPolicy

    monkeypatch.setattr("os.cpu_count", lambda: 4)
    calls = []
    monkeypatch.setattr("nasrescale.executors.threads.busy_cores", lambda: calls.append(1) or 2.0)
    policy = ThreadPolicy(None, every=3600.0, measure=True)
    assert [policy.apply() for _ in range(5)] == [2] * 5 and len(calls) == 1
    assert ThreadPolicy(None, every=0.0, measure=True).apply() == 2 and len(calls) == 2
    assert ThreadPolicy(None).apply() == 4 and len(calls) == 2  # the default reads no load
