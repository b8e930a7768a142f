"""Every driver of a store leaves a record of what it ran (meta ``visit:<n>``): a whole run
(no time limit) as a time-limited slice does, and a driver stopped by Ctrl-C or SIGTERM in the
middle of a chunk counts the jobs that chunk stored before it was stopped, not 0."""

from __future__ import annotations

import os
import signal
import time
from typing import Callable

import pytest

from nasrescale.executors.base import Outcome
from nasrescale.jobs.job import TrainJob
from nasrescale.pipeline.runner import RUN_FINISHED, run_pipeline
from nasrescale.pipeline.signals import INTERRUPTED, TERMINATED, Terminated
from nasrescale.pipeline.slices import run_slice, visit_records
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.store.job_status import Status

from pipeline_helpers import private_cache, tiny_pipeline  # noqa: F401  (fixtures, used by name)

ARCHS = ("3_11_111", "3_33_333", "1_11_111", "3_13_310")  # x 2 protocols x 1 seed: 8 jobs


class StopsAfter:
    """An executor that stores a made-up result for each job it is handed until it has stored
    ``stop_after`` in all, then raises ``stop`` (Ctrl-C's KeyboardInterrupt or SIGTERM's
    Terminated) in the middle of its call, as a signal to the driver would."""

    def __init__(self, stop_after: int | None = None, stop: Callable[[], BaseException] = KeyboardInterrupt) -> None:
        self.stop_after, self.stop, self.stored = stop_after, stop, 0

    def run(self, jobs: list[TrainJob], on_outcome: Callable[[Outcome], None],
            on_start: Callable[[str], None] | None = None) -> None:
        for job in jobs:
            if self.stop_after is not None and self.stored >= self.stop_after:
                raise self.stop()
            record = {"test_accuracy": 50.0 + self.stored, "train_loss_last": 1.0, "lr": job.protocol.lr,
                      "epochs": job.protocol.epochs, "diverged": False,
                      "history": [{"epoch": 1, "train_loss": 1.0, "train_loss_tail": 1.0}]}
            on_outcome(Outcome(job.key(), Status.DONE, record, None, 1))
            self.stored += 1


def _pipeline(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_pipeline("recorded", archs=ARCHS))
    return load_pipeline(path)


def test_a_whole_run_is_recorded_and_a_run_that_trains_nothing_adds_no_record(tmp_path):
    pipeline, results = _pipeline(tmp_path), tmp_path / "res"
    totals = run_pipeline(pipeline, results, progress=False, executor=StopsAfter())
    store = results / "recorded" / "store.sqlite"
    (record,) = visit_records(store)
    assert totals.ran == 8 and record["stopped"] == RUN_FINISHED
    assert (record["jobs_run"], record["stage_jobs_run"], record["jobs_done"], record["jobs_total"]) == (8, 0, 8, 8)
    assert record["cells_done"] == record["cells_total"] == 4 and record["device"].startswith("cpu (")
    assert 0 <= record["wall_s"] and record["finished_at"].endswith("Z")
    run_pipeline(pipeline, results, progress=False, executor=StopsAfter())  # nothing left to train
    assert len(visit_records(store)) == 1


@pytest.mark.parametrize("stop, words", [(KeyboardInterrupt, INTERRUPTED), (Terminated, TERMINATED)])
def test_a_whole_run_stopped_mid_chunk_records_the_jobs_it_finished(tmp_path, stop, words):
    pipeline, results = _pipeline(tmp_path), tmp_path / "res"
    with pytest.raises(stop):
        run_pipeline(pipeline, results, progress=False, executor=StopsAfter(3, stop))
    store = results / "recorded" / "store.sqlite"
    (record,) = visit_records(store)
    assert record["stopped"] == words and (record["jobs_run"], record["jobs_done"]) == (3, 3)
    run_pipeline(pipeline, results, progress=False, executor=StopsAfter())  # the next run finishes the rest
    assert [(v["jobs_run"], v["jobs_done"]) for v in visit_records(store)] == [(3, 3), (5, 8)]


def test_a_slice_stopped_mid_chunk_counts_the_jobs_that_chunk_stored(tmp_path):
    """One chunk of 2 cells (4 jobs) cut after 3 of them: the slice ran 3 jobs (it said 0 before
    the stopped call's jobs were counted), and its cells are not counted as run."""
    pipeline, results = _pipeline(tmp_path), tmp_path / "res"
    with pytest.raises(Terminated):
        run_slice(pipeline, results, max_cells=2, chunk_cells=2, deadline_s=3600, progress=False,
                  log=lambda _: None, executor=StopsAfter(3, Terminated))
    (record,) = visit_records(results / "recorded" / "store.sqlite")
    assert record["stopped"] == TERMINATED and (record["jobs_run"], record["jobs_done"]) == (3, 3)
    assert record["cells_run"] == [] and record["cells_done"] == 1


def _sigterm_then_a_library_interrupt() -> BaseException:
    """SIGTERM to this process, whose handler raises Terminated; then, as Ray's waits do, a
    plain KeyboardInterrupt in its place."""
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises within this sleep
    except Terminated:
        return KeyboardInterrupt()
    raise AssertionError("SIGTERM did not reach the run's handler")


def test_a_run_stopped_by_sigterm_is_recorded_so_when_a_library_replaced_the_exception(tmp_path, capsys):
    pipeline, results = _pipeline(tmp_path), tmp_path / "res"
    mine: list[int] = []  # a handler of the caller's, so a SIGTERM that misses the run's does not end pytest
    before = signal.signal(signal.SIGTERM, lambda signum, frame: mine.append(signum))
    try:
        with pytest.raises(KeyboardInterrupt) as raised:
            run_pipeline(pipeline, results, progress=False, executor=StopsAfter(3, _sigterm_then_a_library_interrupt))
    finally:
        signal.signal(signal.SIGTERM, before)
    assert type(raised.value) is KeyboardInterrupt and not mine
    (record,) = visit_records(results / "recorded" / "store.sqlite")
    assert record["stopped"] == TERMINATED and record["jobs_run"] == 3
