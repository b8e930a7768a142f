"""The job statuses: one vocabulary, stored as the text a store of any version holds."""

from __future__ import annotations

import sqlite3

from nasrescale.store.job_status import FINAL, RUNNABLE, Status
from nasrescale.store.sqlite_store import Store


def test_every_status_is_stored_as_its_text_and_read_back_as_it(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    store.add_jobs([{"key": s.value, "arch": "a", "protocol": "p", "seed": 0, "job_json": "{}"} for s in Status])
    for status in (Status.DONE, Status.DIVERGED, Status.FAILED):
        store.finish(status.value, status, {} if status in FINAL else None)
    store.mark_running(Status.RUNNING.value)
    store.close()
    raw = dict(sqlite3.connect(tmp_path / "store.sqlite").execute("SELECT key, status FROM jobs"))
    assert raw == {s.value: s.value for s in Status}
    assert all(type(v) is str for v in raw.values())


def test_a_store_written_with_plain_text_reads_as_statuses(tmp_path):
    db = sqlite3.connect(tmp_path / "store.sqlite")
    db.execute("CREATE TABLE jobs(key TEXT PRIMARY KEY, arch TEXT, protocol TEXT, seed INTEGER, status TEXT, "
               "attempts INTEGER DEFAULT 0, error TEXT, degenerate INTEGER, test_accuracy REAL, test_loss REAL, "
               "train_loss_last REAL, lr REAL, lr_scale REAL, epochs INTEGER, wall_time_s REAL, job_json TEXT, "
               "record_json TEXT, updated_at TEXT)")
    db.executemany("INSERT INTO jobs(key, status) VALUES (?, ?)",
                   [("a", "done"), ("b", "diverged"), ("c", "failed"), ("d", "pending"), ("e", "running")])
    db.commit()
    db.close()
    store = Store(tmp_path / "store.sqlite", readonly=True)
    assert store.counts() == {Status.PENDING: 1, Status.RUNNING: 1, Status.DONE: 1, Status.DIVERGED: 1,
                              Status.FAILED: 1}
    assert store.runnable() == ["c", "d", "e"]
    assert {r["key"] for r in store.rows() if r["status"] in FINAL} == {"a", "b"}


def test_final_and_runnable_split_the_statuses():
    assert sorted(FINAL + RUNNABLE) == sorted(Status)
    assert not set(FINAL) & set(RUNNABLE)
