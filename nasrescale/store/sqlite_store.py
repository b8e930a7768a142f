"""The result store of a pipeline run: one SQLite file, written only by the driving process.

``results/<pipeline>/store.sqlite`` (WAL journal, so readers such as ``nasrescale status``
never block the driver) holds the resolved pipeline, one row per job and its per-epoch
curves::

    meta(key TEXT PRIMARY KEY, value TEXT)
    jobs(key TEXT PRIMARY KEY, arch, protocol, seed, status, attempts, error, degenerate,
         test_accuracy, test_loss, train_loss_last, lr, lr_scale, epochs, wall_time_s,
         job_json, record_json, updated_at)
    curves(key, epoch, train_loss, train_acc, lr, PRIMARY KEY(key, epoch))

Every read-then-write runs in one ``BEGIN IMMEDIATE`` transaction, so a job's final outcome is
stored exactly once (a second outcome for a finished job is ignored) and a process killed at any
moment leaves either the old row or the new one. A job whose final status is ``done`` or
``diverged`` is never run again; ``pending``, ``running`` (a killed driver's) and ``failed``
jobs are what a rerun runs.

>>> import tempfile, pathlib
>>> s = Store(pathlib.Path(tempfile.mkdtemp()) / "store.sqlite")
>>> s.add_jobs([{"key": "k1", "arch": "a", "protocol": "default", "seed": 0, "job_json": "{}"}])
1
>>> s.mark_running("k1"); s.finish("k1", Status.DONE, {"test_accuracy": 91.5, "history": []})
True
>>> s.counts()[Status.DONE], s.finish("k1", Status.DONE, {"test_accuracy": 0.0})
(1, False)
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import quote

from ..errors import ConfigError, DataError
from .binding import binding_verdict, refusal
from .integrity import READ_COLUMNS, SCHEMA_VERSION, check_connection, check_store_file, unpack_gzipped
from .job_status import FINAL, RUNNABLE, Status
from .record import CREATED_KEY, IDENTITY_KEY, NAME_KEY, PIPELINE_KEY, RECORD_VERSION, VERSION_KEY

__all__ = ["Store", "SCHEMA", "unpack_gzipped"]

_STATUS_TEXTS = ",".join(f"'{s}'" for s in Status)  # as SQL literals, for the column's CHECK

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS jobs(
    key TEXT PRIMARY KEY, arch TEXT, protocol TEXT, seed INTEGER, status TEXT NOT NULL DEFAULT '{Status.PENDING}'
        CHECK(status IN ({_STATUS_TEXTS})),
    attempts INTEGER NOT NULL DEFAULT 0, error TEXT, degenerate INTEGER, test_accuracy REAL, test_loss REAL,
    train_loss_last REAL, lr REAL, lr_scale REAL, epochs INTEGER, wall_time_s REAL,
    job_json TEXT, record_json TEXT, updated_at TEXT);
CREATE TABLE IF NOT EXISTS curves(key TEXT, epoch INTEGER, train_loss REAL, train_acc REAL, lr REAL,
    PRIMARY KEY(key, epoch));
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status);
"""

#: the jobs columns the writer fills: an existing store lacking one is refused before the first write
_WRITTEN = ("key", "arch", "protocol", "seed", "status", "attempts", "error", "degenerate", "test_accuracy", "test_loss",
            "train_loss_last", "lr", "lr_scale", "epochs", "wall_time_s", "job_json", "record_json", "updated_at")

_METRICS = ("test_accuracy", "test_loss", "train_loss_last", "lr", "lr_scale", "epochs", "wall_time_s")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _finite(value: Any) -> Any:
    """NaN/inf -> ``None`` (SQLite and strict JSON have no NaN)."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


class Store:
    """A pipeline's SQLite store (see the module docstring).

    Args:
        path: the ``store.sqlite`` file; created (with its folder) unless ``readonly``.
        readonly: open an existing store for reading only (``status``, ``export``).

    Raises:
        DataError: the file is not a readable SQLite store (or, read-only, does not exist).
    """

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = unpack_gzipped(Path(path))
        self._lock = threading.RLock()  # executors may report outcomes from a helper thread
        if readonly and not self.path.is_file():
            raise DataError(f"no results at {str(self.path)!r}: run the pipeline first (nasrescale run)")
        columns = READ_COLUMNS if readonly else _WRITTEN
        if self.path.is_file() and (readonly or self.path.stat().st_size):  # judged read-only before any write
            check_store_file(self.path, columns, empty=not readonly)
        try:
            if readonly:
                self.db = sqlite3.connect(f"file:{quote(str(self.path.resolve()))}?mode=ro", uri=True,
                                          isolation_level=None, check_same_thread=False, timeout=30)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=FULL")  # a committed outcome survives power loss
                # one transaction: a reader sees no store or the whole schema, never half of it
                self.db.executescript(f"BEGIN IMMEDIATE; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
            self.db.row_factory = sqlite3.Row
            check_connection(self.db, self.path, columns, empty=not readonly)
        except sqlite3.DatabaseError as err:
            raise DataError(f"{str(self.path)!r} is not a readable nasrescale store ({err}); move it away "
                            "to start over") from None

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on error): the write lock is taken
        before the first read, so a read-then-write cannot interleave with another writer.

        Raises:
            DataError: SQLite could not write (disk full, I/O error), naming the cause; the
                transaction is rolled back, so the store keeps its last committed state.
        """
        with self._lock:
            try:
                self.db.execute("BEGIN IMMEDIATE")
                try:
                    yield self.db
                    self.db.execute("COMMIT")
                except BaseException:
                    if self.db.in_transaction:
                        self.db.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as err:  # a full disk, an I/O error: the last commit stands
                raise DataError(f"cannot write the store {str(self.path)!r}: {err}; free space (or fix the disk), "
                                "then rerun: what is stored is kept and the rest runs again") from None

    # -- meta ---------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        """A meta value, or ``None``."""
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        """Write one meta entry (e.g. ``base_lr:<protocol>`` once the LR search has chosen it)."""
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def meta(self) -> dict[str, str]:
        """Every meta entry."""
        return {r[0]: r[1] for r in self.db.execute("SELECT key, value FROM meta")}

    def bind_pipeline(self, name: str, resolved: dict[str, Any], identity: dict[str, Any],
                      extra: dict[str, str] | None = None, rename_hint: str = "--set pipeline.name=...",
                      normalize: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                      grows: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None) -> None:
        """Record the resolved pipeline, or refuse one that differs from the stored one.

        Args:
            name: the pipeline's name.
            resolved: the whole resolved pipeline (stored as ``meta.pipeline``).
            identity: the part that determines results; a rerun must match it exactly.
            extra: further meta entries (``base_lr:<protocol>``), written with it.
            normalize: applied to the stored identity before comparing (drops keys that an
                older version counted but that do not determine results).
            rename_hint: how the caller's user gives the run another name (in the refusal).
            grows: ``(stored, new) -> bool``: whether ``new`` only adds to the stored identity
                (its jobs stay jobs of the new one); the store is then rebound to it, its results kept.

        A store whose jobs are all still ``pending`` (nothing ran) is rebound to the new
        pipeline, its pending jobs dropped: a run refused or killed before its first job may
        be re-run with corrected settings.

        Raises:
            ConfigError: the store holds a pipeline of this name with another identity
                (naming the differing keys) and some of its jobs have run.
        """
        with self.transaction() as db:
            verdict, old = binding_verdict(db, identity, normalize, grows)
            if verdict == "same":
                return
            if verdict == "grows":
                entries = {PIPELINE_KEY: json.dumps(resolved, sort_keys=True), VERSION_KEY: str(RECORD_VERSION),
                           IDENTITY_KEY: json.dumps(identity, sort_keys=True), **(extra or {})}
                db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", entries.items())
                return
            if verdict == "refused":
                raise ConfigError(refusal(name, self.path.parent, old, identity, rename_hint))
            if verdict == "rebind":
                for table in ("jobs", "curves"):  # only pending jobs, nothing ran: rebind to the new settings
                    db.execute(f"DELETE FROM {table}")
                db.execute("DELETE FROM meta")
            entries = {NAME_KEY: name, CREATED_KEY: _now(), PIPELINE_KEY: json.dumps(resolved, sort_keys=True),
                       VERSION_KEY: str(RECORD_VERSION), IDENTITY_KEY: json.dumps(identity, sort_keys=True),
                       **(extra or {})}
            db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", entries.items())

    # -- jobs ---------------------------------------------------------------------------
    def add_jobs(self, rows: Iterable[dict[str, Any]]) -> int:
        """Insert jobs as ``pending`` (rows: key, arch, protocol, seed, job_json); existing
        keys are left untouched. Returns how many were new."""
        with self.transaction() as db:
            before = db.total_changes
            db.executemany(
                "INSERT OR IGNORE INTO jobs(key, arch, protocol, seed, status, attempts, job_json, updated_at) "
                "VALUES (:key, :arch, :protocol, :seed, :status, 0, :job_json, :now)",
                [{**r, "status": Status.PENDING, "now": _now()} for r in rows])
            return db.total_changes - before

    def runnable(self) -> list[str]:
        """Keys of jobs a run must (re)do: pending, running (a killed run's) and failed."""
        marks = ",".join("?" * len(RUNNABLE))
        return [r[0] for r in self.db.execute(f"SELECT key FROM jobs WHERE status IN ({marks}) ORDER BY rowid", RUNNABLE)]

    def mark_running(self, key: str) -> None:
        """Mark a job as started (attempts + 1), unless it already has a final status."""
        with self.transaction() as db:
            db.execute("UPDATE jobs SET status = ?, attempts = attempts + 1, updated_at = ? "
                       f"WHERE key = ? AND status NOT IN ({','.join('?' * len(FINAL))})",
                       (Status.RUNNING, _now(), key, *FINAL))

    def finish(self, key: str, status: Status, record: dict[str, Any] | None, error: str | None = None,
               attempts: int = 1) -> bool:
        """Store a job's outcome (and its curves) in one transaction.

        ``attempts`` is the executor's count of starts (``Outcome.attempts``); the row keeps the
        larger of it and its own count of :meth:`mark_running` calls (Ray retries a task
        without the driver seeing it start again). A job already ``done``/``diverged`` keeps
        its first outcome: the call returns ``False`` and changes nothing (a retried task
        delivering twice stores once).
        """
        with self.transaction() as db:
            row = db.execute("SELECT status FROM jobs WHERE key = ?", (key,)).fetchone()
            if row is None:
                raise DataError(f"store {str(self.path)!r} has no job {key!r}")
            if row[0] in FINAL:
                return False
            rec = record or {}
            values = {m: _finite(rec.get(m)) for m in _METRICS}
            db.execute(
                "UPDATE jobs SET status = :status, error = :error, degenerate = :degenerate, "
                "test_accuracy = :test_accuracy, test_loss = :test_loss, train_loss_last = :train_loss_last, "
                "lr = :lr, lr_scale = :lr_scale, epochs = :epochs, wall_time_s = :wall_time_s, "
                "record_json = :record_json, updated_at = :now, attempts = max(attempts, :attempts) WHERE key = :key",
                {**values, "status": status, "error": error, "key": key, "now": _now(), "attempts": max(1, attempts),
                 "degenerate": None if record is None else int(bool(rec.get("degenerate"))),
                 "record_json": None if record is None else json.dumps(record, default=_json_default)})
            db.execute("DELETE FROM curves WHERE key = ?", (key,))
            db.executemany("INSERT INTO curves(key, epoch, train_loss, train_acc, lr) VALUES (?, ?, ?, ?, ?)",
                           [(key, h["epoch"], _finite(h.get("train_loss")), _finite(h.get("train_acc")),
                             _finite(h.get("lr"))) for h in rec.get("history") or []])
            return True

    def counts(self) -> dict[Status, int]:
        """Jobs per status (every status present, zeros included)."""
        out = dict.fromkeys(Status, 0)
        for status, n in self.db.execute("SELECT status, count(*) FROM jobs GROUP BY status"):
            out[status] = n
        return out

    def rows(self) -> list[dict[str, Any]]:
        """Every job row as a dict (without the JSON blobs), in insertion order."""
        cols = ("key", "arch", "protocol", "seed", "status", "attempts", "error", "degenerate") + _METRICS + ("updated_at",)
        return [dict(zip(cols, r)) for r in self.db.execute(f"SELECT {', '.join(cols)} FROM jobs ORDER BY rowid")]

    def rows_with_tail(self) -> list[dict[str, Any]]:
        """:meth:`rows`, each finished run's with ``train_loss_tail``: the tail loss of its last
        epoch (the LR search's final loss), where its record has one."""
        tails = {}
        for key, rec in self.db.execute("SELECT key, record_json FROM jobs WHERE status = ?", (Status.DONE,)):
            history = (json.loads(rec) if rec else {}).get("history") or []
            if history and "train_loss_tail" in history[-1]:
                tails[key] = history[-1]["train_loss_tail"]
        return [{**r, "train_loss_tail": tails[r["key"]]} if r["key"] in tails else r for r in self.rows()]

    def job_json(self, key: str) -> dict[str, Any]:
        """The stored definition of a job."""
        row = self.db.execute("SELECT job_json FROM jobs WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row and row[0] else {}

    def record(self, key: str) -> dict[str, Any] | None:
        """The stored result record of a job, if any."""
        row = self.db.execute("SELECT record_json FROM jobs WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row and row[0] else None

    def integrity(self) -> str:
        """``PRAGMA integrity_check`` (``ok`` when the file is sound)."""
        return self.db.execute("PRAGMA integrity_check").fetchone()[0]


def _json_default(value: Any) -> Any:
    return str(value)
