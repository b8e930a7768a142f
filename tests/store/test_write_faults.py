"""Faults while writing (no space left on the device, injected): during a checkpoint, a store row
and ``tools/pack_store.py``. The checkpoint, the store and the packed copy keep their last good
state, the error names the cause, and the next run resumes."""

from __future__ import annotations

import errno
import gzip
import importlib.util
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from nasrescale.store.sqlite_store import Store
from nasrescale.train import checkpoint

from pipeline_helpers import cli, one_thread, private_cache, tiny_pipeline  # noqa: F401  (fixtures, used by name)

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--width", "4", "--cells", "1", "--train-subset", "100", "--test-subset", "100", "--batch-size", "50",
        "--protocol", "nb201", "--device", "cpu", "--quiet"]


class NoSpaceWriter:
    """A file that takes ``room`` bytes, then fails as a full disk does (``ENOSPC``)."""

    def __init__(self, file: Any, room: int) -> None:
        self.file, self.room = file, room

    def write(self, data: bytes) -> int:
        if len(data) > self.room:
            self.file.write(bytes(data[: self.room]))
            self.room = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), getattr(self.file, "name", None))
        self.room -= len(data)
        return self.file.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.file, name)


def test_no_space_during_a_checkpoint_keeps_the_last_one_and_the_rerun_resumes_from_it(capsys, tmp_path, monkeypatch):
    target = tmp_path / "run.pt"
    argv = ["train", "3_11_111", *TINY, "--epochs", "3", "--checkpoint", str(target)]
    real, saves = checkpoint.atomic_writer, []

    class FullAtSecondSave(real):
        def __enter__(self):  # noqa: ANN204
            saves.append(self.path)
            file = super().__enter__()
            return NoSpaceWriter(file, 100) if len(saves) == 2 else file

    monkeypatch.setattr(checkpoint, "atomic_writer", FullAtSecondSave)
    code, _, err = cli(capsys, *argv)
    assert code == 2 and "No space left on device" in err and len(err.strip().splitlines()) == 1
    assert checkpoint.load_checkpoint(target)["epochs_done"] == 1  # the first epoch's checkpoint, whole
    assert [p.name for p in tmp_path.iterdir()] == ["run.pt"]  # no half-written temporary file
    monkeypatch.setattr(checkpoint, "atomic_writer", real)
    code, out, err = cli(capsys, *argv)
    assert code == 0 and "resumed from epoch 1" in err
    assert json.loads(out)["resumed_from"] == 1 and json.loads(out)["epochs_run"] == 3


def _dump(path: Path) -> list:
    with sqlite3.connect(path) as db:
        return [db.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in ("meta", "jobs", "curves")]


def test_a_full_disk_while_storing_a_row_keeps_the_store_and_the_rerun_finishes(capsys, tmp_path, monkeypatch):
    (tmp_path / "full.toml").write_text(tiny_pipeline("full", archs=["3_11_111", "3_13_111"]))
    argv = ["run", str(tmp_path / "full.toml"), "--results", str(tmp_path / "res"), "--quiet"]
    real, calls, states = Store.finish, [], []

    def finish_on_a_full_disk(self: Store, key: str, *args: Any, **kwargs: Any) -> bool:
        calls.append(key)
        if len(calls) == 2:  # SQLite itself runs out of room: no page beyond those the file has
            states.append(_dump(self.path))
            pages = self.db.execute("PRAGMA page_count").fetchone()[0]
            self.db.execute(f"PRAGMA max_page_count = {pages}")
        return real(self, key, *args, **kwargs)

    monkeypatch.setattr(Store, "finish", finish_on_a_full_disk)
    code, _, err = cli(capsys, *argv)
    store = tmp_path / "res" / "full" / "store.sqlite"
    assert code == 2 and "database or disk is full" in err and str(store) in err and len(err.strip().splitlines()) == 1
    assert _dump(store) == states[0]  # the row that did not fit left no trace: the last commit stands
    monkeypatch.setattr(Store, "finish", real)
    code, _, err = cli(capsys, *argv)
    assert code == 0, err
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*), sum(status = 'done') FROM jobs").fetchone() == (4, 4)


def _pack_tool() -> Any:
    spec = importlib.util.spec_from_file_location("pack_store", ROOT / "tools" / "pack_store.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_space_while_packing_keeps_the_packed_copy_and_the_next_pack_works(capsys, tmp_path, monkeypatch):
    pack = _pack_tool()
    run = tmp_path / "run"
    store = Store(run / "store.sqlite")
    store.add_jobs([{"key": "a", "arch": "x", "protocol": "p", "seed": 0, "job_json": "{}"}])
    assert pack.main([str(run)]) == 0
    packed = (run / "store.sqlite.gz").read_bytes()
    store.add_jobs([{"key": f"b{i}", "arch": "y" * 500, "protocol": "p", "seed": i, "job_json": "{}"} for i in range(50)])
    real = pack.shutil.copyfileobj
    monkeypatch.setattr(pack.shutil, "copyfileobj", lambda src, dst: real(src, NoSpaceWriter(dst, 1000)))
    assert pack.main([str(run)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert (run / "store.sqlite.gz").read_bytes() == packed  # the last good copy
    assert sorted(p.name for p in run.iterdir()) == ["store.sqlite", "store.sqlite-shm", "store.sqlite-wal",
                                                     "store.sqlite.gz"]  # no temporary folder left behind
    monkeypatch.setattr(pack.shutil, "copyfileobj", real)
    assert pack.main([str(run)]) == 0
    with gzip.open(run / "store.sqlite.gz") as f:
        (tmp_path / "unpacked.sqlite").write_bytes(f.read())
    assert len(_dump(tmp_path / "unpacked.sqlite")[1]) == 51
    store.close()
