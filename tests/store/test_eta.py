"""`nasrescale status` times the jobs left by the most recent jobs and says so (issue 63): the run in
progress, else the last slice, else every finished job; a store of known job times gives known ETAs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from nasrescale.store.eta import estimate_eta, eta_text
from nasrescale.store.read import reading
from nasrescale.store.record import visit_key
from nasrescale.store.status import status_text
from nasrescale.store.sqlite_store import Store


def _job(epochs: int, cost: float = 1.0) -> str:
    return json.dumps({"protocol": {"epochs": epochs}, "cost": cost})


def _store(path: Path, finished: list[tuple[str, float, int, str]], left: list[int]) -> None:
    """A store whose finished jobs took ``(key, seconds, epochs, finished at HH:MM:SS)`` and whose
    jobs left have the given epochs; plus one degenerate job, finished at once, and one failed."""
    store = Store(path)
    store.set_meta("name", "timed")
    rows = [(k, _job(e)) for k, _, e, _ in finished] + [(f"left{i}", _job(e)) for i, e in enumerate(left)]
    rows += [("degenerate", _job(6, 0.0)), ("failed", _job(6))]
    store.add_jobs([{"key": k, "arch": "3_11_111", "protocol": "p", "seed": i, "job_json": j}
                    for i, (k, j) in enumerate(rows)])
    for key, seconds, _, _ in finished:
        store.finish(key, "done", {"wall_time_s": seconds, "test_accuracy": 50.0})
    store.finish("degenerate", "done", {"wall_time_s": 0.01, "degenerate": True, "test_accuracy": 10.0})
    store.finish("failed", "failed", None, "RuntimeError: boom")
    store.close()
    with sqlite3.connect(path) as db:  # the finishing times the test knows
        db.executemany("UPDATE jobs SET updated_at = ? WHERE key = ?",
                       [(f"2026-11-27T{at}+00:00", key) for key, _, _, at in finished])


def _slice(path: Path, n: int, finished_at: str, wall_s: float) -> None:
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO meta(key, value) VALUES (?, ?)",
                   (visit_key(n), json.dumps({"finished_at": f"2026-11-27T{finished_at}Z", "wall_s": wall_s})))


# slice 1 (10:00-10:10) ran two fast jobs; slice 2 (11:00-11:30) three slow ones, median 140 s
SLICES = [("a", 20.0, 6, "10:05:00"), ("b", 22.0, 6, "10:09:00"),
          ("c", 130.0, 6, "11:10:00"), ("d", 140.0, 6, "11:20:00"), ("e", 900.0, 6, "11:29:00")]


def test_the_eta_reads_the_last_slice_and_says_so(tmp_path):
    path = tmp_path / "store.sqlite"
    _store(path, SLICES, left=[6] * 11)
    _slice(path, 1, "10:10:00", 600)
    _slice(path, 2, "11:30:00", 1800)
    with reading(path.parent) as store:
        eta = estimate_eta(store, driver=False)
    assert (eta.jobs, eta.epochs, eta.uniform) == (11, 66, True)
    assert eta.seconds == pytest.approx(11 * 140.0)  # not the mean (390 s), not slice 1's 21 s
    assert eta_text(eta) == "0:25:40 of sequential job time: 11 jobs x 140 s, the median job time of slice 2 (3 jobs)"
    assert "  ETA: 0:25:40 of sequential job time: 11 jobs x 140 s" in status_text(tmp_path, driver=False)


def test_jobs_after_the_last_slice_are_the_run_in_progress(tmp_path):
    path = tmp_path / "store.sqlite"
    _store(path, SLICES + [("f", 60.0, 6, "12:01:00"), ("g", 50.0, 6, "12:02:00")], left=[6] * 4)
    _slice(path, 1, "10:10:00", 600)
    _slice(path, 2, "11:30:00", 1800)
    with reading(path.parent) as store:
        running, after = estimate_eta(store, driver=True), estimate_eta(store, driver=False)
    assert running.seconds == after.seconds == pytest.approx(4 * 55.0)
    assert running.basis == "the median job time of the run in progress (2 jobs)"
    assert after.basis == "the median job time of the run after slice 2 (2 jobs)"


def test_without_slices_every_finished_job_counts_and_epochs_scale_it(tmp_path):
    path = tmp_path / "store.sqlite"
    _store(path, [("a", 60.0, 6, "10:00:00"), ("b", 240.0, 12, "10:05:00"), ("c", 90.0, 6, "10:08:00")],
           left=[6, 24])
    with reading(path.parent) as store:
        eta = estimate_eta(store)
    assert eta.per_epoch == 15.0 and eta.seconds == 30 * 15.0 and not eta.uniform  # exact: 90 / 6  # median of 10, 20, 15 s an epoch
    assert eta_text(eta) == ("0:07:30 of sequential job time: 2 jobs, 30 epochs x 15 s, the median time per epoch "
                             "of the 3 jobs finished")


def test_no_timed_job_and_nothing_left(tmp_path):
    path = tmp_path / "store.sqlite"
    _store(path, [], left=[6, 6])
    with reading(path.parent) as store:
        assert eta_text(estimate_eta(store)) == "unknown (2 jobs left, no job finished yet)"
    done = tmp_path / "done"
    done.mkdir()
    _store(done / "store.sqlite", [("a", 60.0, 6, "10:00:00")], left=[])
    with reading(done) as store:
        assert eta_text(estimate_eta(store)) == "0:00:00 (no job left to train)"
