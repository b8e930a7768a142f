"""Readers beside a writer: ``status``, ``export``, ``rank`` and ``report`` run as separate
processes while ``run`` writes the same store, slowed where it matters most: the transaction
that stores a finished job stays open (its rows written, not committed) while they read. No
reader meets "database is locked" or a half-written job, and the writer loses nothing."""

from __future__ import annotations

import csv
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from pipeline_helpers import private_cache, tiny_pipeline  # noqa: F401  (fixture, used by name)

ROOT = Path(__file__).resolve().parents[2]

#: the writer: ``nasrescale run`` whose write transaction that stores the second finished job
#: stays open, its changes made but not committed, from when it touches the file ``argv[1]``
#: until the file ``argv[2]`` exists
WRITER = '''
import sys, time
from contextlib import contextmanager
from pathlib import Path
from nasrescale.store.sqlite_store import Store

holding, release = Path(sys.argv[1]), Path(sys.argv[2])
transaction = Store.transaction

@contextmanager
def held(self):
    with transaction(self) as db:
        yield db
        done = db.execute("SELECT count(*) FROM jobs WHERE status = 'done'").fetchone()[0]
        if done == 2 and not holding.exists():
            holding.touch()
            deadline = time.time() + 1500
            while not release.exists() and time.time() < deadline:
                time.sleep(0.05)

Store.transaction = held
from nasrescale.cli.main import main
sys.exit(main(sys.argv[3:]))
'''


def _finished_rows_are_whole(store: Path) -> int:
    """In one read transaction: every finished job has its metrics, record and curves (as many
    epochs as it ran). Returns how many jobs are finished."""
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'curves'").fetchone():
            return 0  # the schema is created in one transaction: all of it or none
        rows = db.execute("SELECT j.key, j.test_accuracy, j.record_json, j.epochs, (SELECT count(*) FROM curves c "
                          "WHERE c.key = j.key) FROM jobs j WHERE status = 'done'").fetchall()
    for key, accuracy, record, epochs, curves in rows:
        assert accuracy is not None and record and curves == epochs == 1, key
    return len(rows)


def _start_readers(tmp_path: Path, env: dict[str, str], batch: int) -> list[tuple[list[str], subprocess.Popen]]:
    """Each reader as its own process, all at once."""
    results = str(tmp_path / "res")
    commands = [["status", "beside"], ["export", "beside", "--out", str(tmp_path / f"export{batch}.csv")],
                ["rank", "beside:default", "beside:rescaled", "--bootstrap", "0"], ["report", "beside", "--bootstrap", "0"]]
    return [(argv, subprocess.Popen([sys.executable, "-m", "nasrescale", *argv, "--results", results], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)) for argv in commands]


def _check_readers(readers: list[tuple[list[str], subprocess.Popen]], export: Path) -> None:
    """Every reader exited 0 without a lock error; the exported rows are whole."""
    for argv, proc in readers:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, (argv, err)
        assert "locked" not in err + out and "Traceback" not in err, (argv, err)
    with open(export, newline="") as f:
        for row in csv.DictReader(f):
            assert row["status"] in ("pending", "running", "done"), row
            if row["status"] == "done":
                assert row["test_accuracy"] and row["epochs"] == "1" and row["wall_time_s"], row


def test_readers_beside_a_writing_run_see_whole_jobs_and_the_writer_loses_nothing(tmp_path):
    (tmp_path / "beside.toml").write_text(tiny_pipeline("beside", archs=["3_11_111", "3_13_111"]))
    (tmp_path / "writer.py").write_text(WRITER)
    holding, release = tmp_path / "holding", tmp_path / "release"
    env = {**os.environ, "NASRESCALE_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    store = tmp_path / "res" / "beside" / "store.sqlite"
    writer = subprocess.Popen([sys.executable, str(tmp_path / "writer.py"), str(holding), str(release), "run",
                               str(tmp_path / "beside.toml"), "--results", str(tmp_path / "res"), "--quiet"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 1500
        while writer.poll() is None and time.time() < deadline and not holding.exists():
            time.sleep(0.1)  # until the writer holds the second job's outcome, written but not committed
        assert writer.poll() is None, writer.communicate()
        assert _finished_rows_are_whole(store) == 1  # the open transaction's job is not seen, not half of it
        _check_readers(_start_readers(tmp_path, env, 0), tmp_path / "export0.csv")
        with open(tmp_path / "export0.csv", newline="") as f:
            assert sorted(row["status"] for row in csv.DictReader(f)) == ["done", "pending", "pending", "running"]
        release.touch()
        out, err = writer.communicate(timeout=1500)
    finally:
        if writer.poll() is None:
            writer.kill()
    assert writer.returncode == 0, err
    assert "locked" not in err
    assert _finished_rows_are_whole(store) == 4
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*), sum(attempts) FROM jobs").fetchone() == (4, 4)  # each ran once, kept
