"""Read-only access to a pipeline's result store (``results/<pipeline>/store.sqlite``): the one
read API (:func:`read_store`: the jobs as a table, for ranking and reports; :func:`reading`: the
row-level :class:`~nasrescale.store.sqlite_store.Store` methods, read-only, for status, export and the
LR-validation report).

The store is written only by the pipeline's driving process; ranking and reports read it here,
read-only, so they work on a partial run while it is still being written (SQLite WAL lets a
reader see the last committed state). The schema (shared with the pipeline)::

    meta(key, value)    -- 'pipeline' (resolved pipeline as JSON), 'name', 'created_at', ...
    jobs(key, arch, protocol, seed, status, attempts, error, degenerate, test_accuracy,
         test_loss, train_loss_last, lr, lr_scale, epochs, wall_time_s, job_json,
         record_json, updated_at)
    curves(key, epoch, train_loss, train_acc, lr)

This module reads that schema defensively: a column it does not find is treated as missing,
not as an error, so stores written by older or newer versions still read. The meta is read
once into the run's typed :class:`~nasrescale.store.record.RunRecord` (:attr:`StoreData.record`),
an older layout migrated on the way (:mod:`nasrescale.store.migration`).
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import quote

import pandas as pd

from ..config import read_toml_file
from ..errors import ConfigError, DataError
from ..space.benchmark import dataset_classes
from .integrity import check_store_file, unpack_gzipped
from .job_status import Status
from .layout import run_dir_for
from .migration import parse_record
from .record import RunRecord
from .sqlite_store import Store

__all__ = ["StoreData", "reading", "run_dir_for", "store_path", "read_store", "read_curves", "chance_accuracy"]

_JOB_COLUMNS = ("key", "arch", "protocol", "seed", "status", "attempts", "error", "degenerate", "test_accuracy",
                "test_loss", "train_loss_last", "lr", "lr_scale", "epochs", "wall_time_s", "updated_at")


@dataclass(frozen=True)
class StoreData:
    """What a store holds, minus the per-epoch curves (see :func:`read_curves`).

    Attributes:
        path: the ``store.sqlite`` file.
        meta: the meta table as stored (text values).
        jobs: one row per job, the columns of the ``jobs`` table present in the file except the
            JSON blobs; ``degenerate`` as bool, ``seed`` as int where set.
        record: the run's record, parsed from ``meta`` (an older layout migrated).
    """

    path: Path
    meta: dict[str, Any] = field(repr=False)
    jobs: pd.DataFrame = field(repr=False)
    record: RunRecord = field(repr=False)

    @property
    def protocols(self) -> list[str]:
        """The protocol labels in the store, in order of first appearance."""
        return list(dict.fromkeys(self.jobs["protocol"].dropna().astype(str)))


def store_path(pipeline: str | Path, results: str | Path | None = None) -> Path:
    """The store file of ``pipeline``: a pipeline name (``<results>/<name>/store.sqlite``,
    ``results`` defaulting to ``./results``), a pipeline file (its ``[pipeline] name``), a run
    folder holding ``store.sqlite``, or the ``.sqlite`` file itself.

    >>> store_path("quickstart", "/tmp/res").as_posix()
    '/tmp/res/quickstart/store.sqlite'
    """
    given = Path(pipeline)
    if given.suffix in (".sqlite", ".db") and given.is_file():
        return given
    if given.suffix == ".toml" and given.is_file():
        given = Path(_pipeline_name(given))
    elif any((given / f).is_file() for f in ("store.sqlite", "store.sqlite.gz")) and \
            (results is None or not (Path(results) / given).is_dir()):
        return given / "store.sqlite"
    return run_dir_for(given, results) / "store.sqlite"


@contextmanager
def reading(run_dir: str | Path) -> Iterator[Store]:
    """The store of the run folder ``run_dir``, opened read-only (rows, meta, job and record
    JSON) and closed on leaving; it works while the driver writes.

    Raises:
        DataError: no store there.
    """
    store = Store(Path(run_dir) / "store.sqlite", readonly=True)
    try:
        yield store
    finally:
        store.close()


def _pipeline_name(path: Path) -> str:
    """``[pipeline] name`` of a pipeline file (else the file's stem)."""
    try:
        name = read_toml_file(path, "pipeline").get("pipeline", {}).get("name")
    except (ConfigError, AttributeError):
        name = None
    return str(name) if isinstance(name, str) and name else path.stem


def _connect(path: Path) -> sqlite3.Connection:
    if not unpack_gzipped(path).is_file():
        raise DataError(
            f"no result store at {str(path)!r}: run `nasrescale run PIPELINE` first, or point --results at "
            "the folder that holds <pipeline>/store.sqlite"
        )
    check_store_file(path)  # a damaged, foreign or newer store: refused here, naming the file and what to do
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=30)
        conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.Error as err:
        raise DataError(f"cannot read the result store {str(path)!r}: {err}") from None
    return conn


def _tables(conn: sqlite3.Connection) -> dict[str, list[str]]:
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    return {n: [r[1] for r in conn.execute(f"PRAGMA table_info('{n}')")] for n in names}


def read_store(path: str | Path) -> StoreData:
    """Read the meta and jobs tables of a store file, read-only.

    Raises:
        DataError: the file is missing, not SQLite, has no ``jobs`` table, or its meta is of a
            newer version than this one reads.
    """
    path = Path(path)
    conn = _connect(path)
    try:
        tables = _tables(conn)
        if "jobs" not in tables:
            raise DataError(f"{str(path)!r} is not a nasrescale result store (it has no jobs table)")
        meta: dict[str, Any] = {}
        if "meta" in tables:
            for key, value in conn.execute("SELECT key, value FROM meta"):
                meta[str(key)] = value
        columns = [c for c in _JOB_COLUMNS if c in tables["jobs"]]
        extra = ["record_json"] if "record_json" in tables["jobs"] else []
        jobs = pd.read_sql_query(f"SELECT {', '.join(columns + extra)} FROM jobs", conn)
    except sqlite3.Error as err:
        raise DataError(f"cannot read the result store {str(path)!r}: {err}") from None
    finally:
        conn.close()
    for name in ("arch", "protocol", "status"):
        if name not in jobs:
            raise DataError(f"{str(path)!r}: the jobs table has no {name!r} column")
    jobs["degenerate"] = jobs["degenerate"].fillna(0).astype(bool) if "degenerate" in jobs else False
    if "seed" not in jobs:
        jobs["seed"] = 0
    for name in ("test_accuracy", "lr", "lr_scale", "wall_time_s"):
        jobs[name] = pd.to_numeric(jobs[name], errors="coerce") if name in jobs else float("nan")
    jobs["protocol"] = jobs["protocol"].astype(str)
    return StoreData(path=path, meta=meta, jobs=jobs, record=parse_record(meta, str(path)))


def read_curves(path: str | Path, keys: list[str]) -> pd.DataFrame:
    """Per-epoch curves (``key, epoch, train_loss, train_acc, lr``) of the given job keys."""
    conn = _connect(Path(path))
    try:
        if "curves" not in _tables(conn) or not keys:
            return pd.DataFrame(columns=["key", "epoch", "train_loss", "train_acc", "lr"])
        marks = ",".join("?" * len(keys))
        return pd.read_sql_query(f"SELECT * FROM curves WHERE key IN ({marks}) ORDER BY key, epoch", conn,
                                 params=list(keys))
    except sqlite3.Error as err:
        raise DataError(f"cannot read curves from {str(path)!r}: {err}") from None
    finally:
        conn.close()


def chance_accuracy(store: StoreData) -> float | None:
    """Chance accuracy (percent) of the store's dataset: what a constant classifier scores.

    From, in order: a degenerate job's stored accuracy (recorded as chance), ``num_classes``
    in a job record, the dataset name in the resolved pipeline. ``None`` if none says.
    """
    jobs = store.jobs
    degenerate = jobs[jobs["degenerate"] & jobs["test_accuracy"].notna() & (jobs["status"] == Status.DONE)]
    if len(degenerate):
        return float(degenerate["test_accuracy"].iloc[0])
    for text in jobs.get("record_json", pd.Series(dtype=object)).dropna():
        try:
            classes = json.loads(text).get("num_classes")
        except (json.JSONDecodeError, AttributeError):
            continue
        if isinstance(classes, int) and classes > 0:
            return 100.0 / classes
    name = store.record.dataset
    classes = dataset_classes(name) if name else None
    return 100.0 / classes if classes else None
