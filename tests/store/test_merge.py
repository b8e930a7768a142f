"""nasrescale.store.merge: another machine's store of the same run merged into the one at home,
nothing stored lost or overwritten, new results added, a job finished in both kept as stored (the
other listed as a duplicate), each row's record (its device and precision) moved unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nasrescale.errors import DataError
from nasrescale.pipeline.slice_record import copy_store, visit_records
from nasrescale.store.job_status import Status
from nasrescale.store.merge import merge_store
from nasrescale.store.record import visit_key
from nasrescale.store.sqlite_store import Store


def _record(device: str, precision: str, acc: float) -> dict:
    return {"test_accuracy": acc, "precision": precision, "provenance": {"device": device},
            "history": [{"epoch": 1, "train_loss": 2.0, "train_acc": 0.2, "lr": 0.1}]}


def _store(path: Path, keys: list[str], identity: str = '{"a": 1}') -> Store:
    store = Store(path)
    for key, value in (("name", "run"), ("identity", identity)):
        store.set_meta(key, value)
    store.add_jobs([{"key": k, "arch": f"arch_{k}", "protocol": "p", "seed": 0, "job_json": "{}"} for k in keys])
    return store


def test_merge_adds_fills_and_keeps_and_lists_duplicates(tmp_path: Path) -> None:
    home = _store(tmp_path / "home" / "store.sqlite", ["k1", "k2", "k3", "k4"])
    home.finish("k1", Status.DONE, _record("cpu", "fp32", 60.0))
    home.set_meta(visit_key(1), json.dumps({"device": "cpu", "jobs_run": 1}))
    home.close()
    away_path = copy_store(tmp_path / "home" / "store.sqlite", tmp_path / "away" / "store.sqlite")  # a copy travels
    home = Store(tmp_path / "home" / "store.sqlite")  # home goes on: k2 finished, k4 failed
    home.finish("k2", Status.DONE, _record("cpu", "fp32", 61.0))
    home.finish("k4", Status.FAILED, None, error="boom")
    home.close()
    away = _store(away_path, ["k5"])  # away: k2 again, k3, k4 and a new job
    for key, acc in (("k2", 70.0), ("k3", 71.0), ("k4", 72.0), ("k5", 73.0)):
        away.finish(key, Status.DONE, _record("cuda:0", "fp32", acc))
    away.set_meta(visit_key(2), json.dumps({"device": "cuda (NVIDIA H100)", "jobs_run": 4}))
    away.close()
    before = {r["key"]: r for r in Store(tmp_path / "home" / "store.sqlite", readonly=True).rows()}

    report = merge_store(tmp_path / "home" / "store.sqlite", away_path)
    assert (report.added, sorted(report.filled), report.unchanged) == (["k5"], ["k3", "k4"], 1)
    (dup,) = report.duplicates
    assert (dup["key"], dup["test_accuracy"], dup["kept_test_accuracy"]) == ("k2", 70.0, 61.0)
    assert dup["record"]["provenance"]["device"] == "cuda:0"
    assert report.visits_added == 1 and report.meta_kept == [] and report.meta_added == []
    merged = Store(tmp_path / "home" / "store.sqlite", readonly=True)
    rows = {r["key"]: r for r in merged.rows()}
    assert rows["k1"] == before["k1"] and rows["k2"] == before["k2"]  # nothing stored overwritten
    assert {k: (merged.record(k) or {}).get("provenance", {}).get("device") for k in rows} == {
        "k1": "cpu", "k2": "cpu", "k3": "cuda:0", "k4": "cuda:0", "k5": "cuda:0"}
    assert [r["status"] for r in rows.values()] == [Status.DONE] * 5
    curves = merged.db.execute("SELECT key, epoch FROM curves ORDER BY key").fetchall()
    assert [tuple(c) for c in curves] == [(k, 1) for k in ("k1", "k2", "k3", "k4", "k5")]
    merged.close()
    assert [v["jobs_run"] for v in visit_records(tmp_path / "home" / "store.sqlite")] == [1, 4]
    again = merge_store(tmp_path / "home" / "store.sqlite", away_path)  # merging twice changes nothing
    assert (again.added, again.filled, again.visits_added, len(again.duplicates)) == ([], [], 0, 1)


def test_merge_into_no_store_copies_it_and_refuses_another_run(tmp_path: Path) -> None:
    away = _store(tmp_path / "away.sqlite", ["k1"])
    away.finish("k1", Status.DONE, _record("cuda:0", "bf16", 70.0))
    away.close()
    report = merge_store(tmp_path / "new" / "store.sqlite", tmp_path / "away.sqlite")
    assert report.added == ["k1"] and set(report.meta_added) >= {"name", "identity"}
    assert Store(tmp_path / "new" / "store.sqlite", readonly=True).record("k1")["precision"] == "bf16"
    other = _store(tmp_path / "other.sqlite", ["k9"], identity='{"a": 2}')
    other.finish("k9", Status.DONE, _record("cuda:0", "bf16", 70.0))
    other.close()
    with pytest.raises(DataError, match="holds another run"):
        merge_store(tmp_path / "new" / "store.sqlite", tmp_path / "other.sqlite")
    assert [r["key"] for r in Store(tmp_path / "new" / "store.sqlite", readonly=True).rows()] == ["k1"]
