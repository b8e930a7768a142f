"""The thread policy: a CPU job takes one intra-op thread unless told otherwise, and a bad count
is refused before anything runs."""

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


def test_a_cpu_job_takes_every_core_one_at_a_time_or_the_threads_it_is_given(restore_threads, monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 3)
    torch.set_num_threads(2)
    _Job.seen.clear()
    LocalExecutor(ExecutorSettings(device="cpu"), progress=False).run([_Job("a")], lambda outcome: None)
    LocalExecutor(ExecutorSettings(device="cpu", threads=1), progress=False).run([_Job("b")], lambda outcome: None)
    assert _Job.seen == [3, 1]


def test_a_bad_thread_count_names_the_key():
    with pytest.raises(ConfigError, match="executor.threads: intra-op threads per CPU job, >= 1, got 0"):
        ExecutorSettings(threads=0)
