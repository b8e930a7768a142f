"""The thread policy: a run's CPU jobs take the cores other processes leave free when the run first
runs a job (picked once, stored, kept on resume), or the threads they are given; a bad count is
refused before anything runs."""

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


def test_an_executor_keeps_one_count_for_all_its_jobs_whatever_the_load(restore_threads, monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 3)
    load = iter([0.0, 1.8, 0.4])  # a count that followed this load would change within the run
    monkeypatch.setattr("nasrescale.executors.threads.busy_cores", lambda: next(load))
    torch.set_num_threads(2)
    _Job.seen.clear()
    jobs = [_Job("a"), _Job("b"), _Job("c")]
    LocalExecutor(ExecutorSettings(device="cpu"), progress=False).run(jobs, lambda outcome: None)
    LocalExecutor(ExecutorSettings(device="cpu", threads=1), progress=False).run([_Job("d")], lambda outcome: None)
    assert _Job.seen == [3, 3, 3, 1]  # without a run: every core, not the load; then the count given


class _Meta(dict):
    """The part of a store :func:`run_threads` uses."""

    def meta(self) -> dict:
        return self

    def set_meta(self, key: str, value: str) -> None:
        self[key] = value


def test_a_run_picks_its_threads_once_from_the_load_and_keeps_them_on_resume(monkeypatch):
    from nasrescale.pipeline.run_threads import run_threads
    from nasrescale.store.record import THREADS_KEY

    monkeypatch.setattr("os.cpu_count", lambda: 4)
    load = iter([3.0, 0.0, 0.0])
    monkeypatch.setattr("nasrescale.executors.threads.busy_cores", lambda: next(load))
    store = _Meta()
    assert run_threads(store, ExecutorSettings()).threads == 1  # three cores busy elsewhere at the start
    assert store == {THREADS_KEY: "1"}
    assert run_threads(store, ExecutorSettings()).threads == 1  # resumed on an idle machine: the same count
    assert run_threads(store, ExecutorSettings(threads=3)).threads == 3  # given: wins, not stored
    assert store == {THREADS_KEY: "1"}
    assert run_threads(_Meta({THREADS_KEY: "16"}), ExecutorSettings()).threads == 4  # stored on a bigger machine: picked again
    ray = ExecutorSettings(kind="ray", cpus_per_job=2)
    assert run_threads(_Meta(), ray) is ray  # Ray gives each task its own CPUs


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


def test_a_resumed_command_keeps_the_count_its_checkpoint_stores(tmp_path):
    """`nasrescale train` resumes with the threads stored in its checkpoint, one more than the
    machine's cores (a count no reading of the load gives); --threads wins; a file without a
    count, or unreadable, leaves the choice to the load."""
    import os

    from nasrescale.executors.threads import resume_threads
    from nasrescale.train.checkpoint import save_checkpoint, stored_threads

    cores = os.cpu_count() or 1
    state = {"fingerprint": "f", "run": "r", "seed": 0, "epochs_done": 1, "model": {}, "optimizer": {},
             "scheduler": {}, "history": [{"epoch": 1}]}
    save_checkpoint(tmp_path / "with.pt", {**state, "threads": cores + 1})
    save_checkpoint(tmp_path / "without.pt", state)
    (tmp_path / "torn.pt").write_bytes(b"torn")
    assert stored_threads(tmp_path / "with.pt") == cores + 1
    assert stored_threads(tmp_path / "without.pt") is None and stored_threads(tmp_path / "torn.pt") is None
    assert resume_threads(None, [None, tmp_path / "without.pt", tmp_path / "with.pt"]) == cores + 1
    assert resume_threads(2, [tmp_path / "with.pt"]) == 2
    assert 1 <= resume_threads(None, [tmp_path / "without.pt", tmp_path / "torn.pt"]) <= cores
