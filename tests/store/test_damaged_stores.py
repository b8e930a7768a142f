"""Damaged and foreign stores: a truncated file, random bytes, another program's SQLite
database, a store of a newer schema version, an unreadable ``.gz``. ``run``, ``status``,
``export``, ``rank`` and ``report`` each exit 2 with one line naming the file and what to do,
and leave the file byte-identical (nothing unpacked beside a bad ``.gz``)."""

from __future__ import annotations

import gzip
import os
import sqlite3
from pathlib import Path

import pytest

from nasrescale.store.integrity import SCHEMA_VERSION
from nasrescale.store.job_status import Status
from nasrescale.store.sqlite_store import Store

from pipeline_helpers import cli, one_thread, private_cache, tiny_pipeline  # noqa: F401  (fixtures, used by name)

#: damage -> (the file it leaves, words the refusal must hold: what is wrong and what to do)
CASES = {
    "truncated": ("store.sqlite", ["malformed", "move it away"]),
    "random_bytes": ("store.sqlite", ["not a database", "move it away"]),
    "foreign_sqlite": ("store.sqlite", ["another program's SQLite database", "move it away"]),
    "foreign_jobs_table": ("store.sqlite", ["lacks the column", "move it away"]),
    "newer_schema": ("store.sqlite", [f"newer nasrescale (store schema version {SCHEMA_VERSION + 1}", "upgrade"]),
    "not_gzip": ("store.sqlite.gz", ["not a readable gzip file", "restore it"]),
    "truncated_gzip": ("store.sqlite.gz", ["not a readable gzip file", "restore it"]),
    "gzip_of_random_bytes": ("store.sqlite.gz", ["not a database", "restore it"]),
}


def _good_store(path: Path) -> bytes:
    """A real store (one finished job of ten), checkpointed into the one file; its bytes."""
    store = Store(path)
    store.bind_pipeline("dmg", {"pipeline": {"name": "dmg"}}, {"pipeline": {"name": "dmg"}})
    store.add_jobs([{"key": f"k{i}", "arch": "3_11_111", "protocol": "default", "seed": i, "job_json": "{}"}
                    for i in range(10)])
    store.finish("k0", Status.DONE, {"test_accuracy": 50.0, "history": [{"epoch": 0, "train_loss": 2.0}]})
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    data = path.read_bytes()
    for extra in ("-wal", "-shm"):
        Path(f"{path}{extra}").unlink(missing_ok=True)
    return data


def _damage(kind: str, run: Path) -> Path:
    """Leave the damaged file of ``kind`` in the run folder ``run``; return it."""
    run.mkdir(parents=True)
    good = _good_store(run.parent / "good.sqlite")
    name, _ = CASES[kind]
    path = run / name
    if kind == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif kind == "random_bytes":
        path.write_bytes(os.urandom(3 * 4096))
    elif kind in ("foreign_sqlite", "foreign_jobs_table"):
        with sqlite3.connect(path) as db:
            if kind == "foreign_sqlite":
                db.execute("CREATE TABLE songs(title TEXT)")
            elif kind == "foreign_jobs_table":
                db.execute("CREATE TABLE jobs(id INTEGER, what TEXT)")
        db.close()
    elif kind == "newer_schema":
        path.write_bytes(good)
        with sqlite3.connect(path) as db:
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        db.close()
    else:
        packed = {"not_gzip": b"\x1f\x8b" + os.urandom(200), "truncated_gzip": gzip.compress(good)[:300],
                  "gzip_of_random_bytes": gzip.compress(os.urandom(3 * 4096))}[kind]
        path.write_bytes(packed)
    return path


COMMANDS = {
    "run": lambda tmp, res: ["run", str(tmp / "dmg.toml"), "--results", res, "--quiet"],
    "status": lambda tmp, res: ["status", "dmg", "--results", res],
    "export": lambda tmp, res: ["export", "dmg", "--results", res, "--out", str(tmp / "out.csv")],
    "rank": lambda tmp, res: ["rank", "dmg:default", "dmg:rescaled", "--results", res],
    "report": lambda tmp, res: ["report", "dmg", "--results", res],
}


@pytest.mark.parametrize("kind", list(CASES))
def test_a_damaged_or_foreign_store_is_refused_by_every_command_and_left_as_it_is(capsys, tmp_path, kind):
    (tmp_path / "dmg.toml").write_text(tiny_pipeline("dmg"))
    results = tmp_path / "res"
    path = _damage(kind, results / "dmg")
    before = path.read_bytes()
    for command, argv in COMMANDS.items():
        code, out, err = cli(capsys, *argv(tmp_path, str(results)))
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1, (command, err)
        assert str(path) in lines[0] and all(w in lines[0] for w in CASES[kind][1]), (command, lines[0])
        assert path.read_bytes() == before, command
        assert not (results / "dmg" / "store.sqlite.unpacking").exists()
        if path.name.endswith(".gz"):
            assert not (results / "dmg" / "store.sqlite").exists(), command
    assert not (tmp_path / "out.csv").exists()


def test_an_empty_store_is_one_not_yet_created(capsys, tmp_path):
    """A run killed between creating the file and its first write leaves 0 bytes: readers say
    there is nothing yet, and a rerun starts the store in it."""
    path = tmp_path / "res" / "dmg" / "store.sqlite"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    code, _, err = cli(capsys, "status", "dmg", "--results", str(tmp_path / "res"))
    assert code == 2 and "holds no results" in err and "nasrescale run" in err and path.read_bytes() == b""
    store = Store(path)
    assert store.add_jobs([{"key": "k", "arch": "a", "protocol": "p", "seed": 0, "job_json": "{}"}]) == 1
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    store.close()
