"""Merging one store of a run into another: the jobs another machine ran (a GPU slice that resumed
a copy of the store, say) are added to the store at home without losing or overwriting what the
home store holds.

Row by row (a job's row, its curves and its record, which names the device and precision it ran
on, travel together, unchanged):

* a job the target lacks is added as the source holds it;
* a job the target has unfinished (``pending``, ``running``, ``failed``) and the source finished
  (``done``, ``diverged``) takes the source's row: a result arrives;
* a job both finished keeps the target's row; where the source's differs (another run of the same
  job, not the copy it started from) it is a *duplicate*: listed in the report with its row and
  record, never written into the target;
* every other row of the source (unfinished, or the target's own copy) changes nothing.

Meta: the run's ``name`` and ``identity`` must match (else nothing is merged); the source's slice
records (``visit:<n>``) the target lacks are appended after the target's own, renumbered; other
entries the target lacks are added, and where both hold a key with different values the target's
is kept (the report names the key). Everything is written in one transaction.

>>> import tempfile
>>> from nasrescale.store.job_status import Status
>>> tmp = Path(tempfile.mkdtemp())
>>> home, away = Store(tmp / "home.sqlite"), Store(tmp / "away.sqlite")
>>> for s in (home, away):
...     _ = s.add_jobs([{"key": k, "arch": "a", "protocol": "p", "seed": 0, "job_json": "{}"} for k in ("k1", "k2")])
>>> _ = home.finish("k1", Status.DONE, {"test_accuracy": 90.0})
>>> _ = away.finish("k2", Status.DONE, {"test_accuracy": 80.0})
>>> home.close(); away.close()
>>> report = merge_store(tmp / "home.sqlite", tmp / "away.sqlite")
>>> report.filled, report.duplicates
(['k2'], [])
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError
from .job_status import FINAL
from .record import IDENTITY_KEY, NAME_KEY, visit_entries, visit_key
from .sqlite_store import Store

__all__ = ["MergeReport", "merge_store"]

_CURVES = ("key", "epoch", "train_loss", "train_acc", "lr")


@dataclass
class MergeReport:
    """What :func:`merge_store` did.

    Attributes:
        added: keys of jobs the target lacked (finished or not), added.
        filled: keys of jobs the target had unfinished, now finished from the source.
        duplicates: jobs finished in both with different rows: the source's row (its ``record``
            parsed) beside the target's ``kept_status`` and ``kept_test_accuracy``; not merged.
        unchanged: rows of the source that changed nothing (the target's own copy, or unfinished).
        visits_added: slice records appended.
        meta_added: meta keys the target lacked, added.
        meta_kept: meta keys both hold with different values (the target's kept).
    """

    added: list[str] = field(default_factory=list)
    filled: list[str] = field(default_factory=list)
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    unchanged: int = 0
    visits_added: int = 0
    meta_added: list[str] = field(default_factory=list)
    meta_kept: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in db.execute(f"PRAGMA table_info('{table}')")]


def _check_same_run(target: dict[str, str], source: dict[str, str], where: Path) -> None:
    """Refuse two stores of different runs (their name or identity differ, where both have one)."""
    for key in (NAME_KEY, IDENTITY_KEY):
        if key in target and key in source and target[key] != source[key]:
            raise DataError(f"{str(where)!r} holds another run than the store it would be merged into (its meta "
                            f"{key!r} differs): nothing merged; results of different settings are never mixed")


def _merge_meta(db: sqlite3.Connection, target: dict[str, str], source: dict[str, str], report: MergeReport) -> None:
    """The source's meta into the target's (module docstring)."""
    have = set(visit_entries(target))
    n = len(visit_entries(target))
    for value in visit_entries(source):
        if value not in have:
            n += 1
            db.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (visit_key(n), value))
            report.visits_added += 1
    visits = set(visit_entries({key: key for key in source}))  # the keys of the source's slice records
    for key, value in source.items():
        if key in visits:
            continue
        if key not in target:
            db.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (key, value))
            report.meta_added.append(key)
        elif target[key] != value:
            report.meta_kept.append(key)


def _duplicate(row: dict[str, Any], kept: sqlite3.Row) -> dict[str, Any]:
    """A duplicate as the report lists it: the source's whole row, its record parsed."""
    out = {k: v for k, v in row.items() if k != "record_json"}
    out["record"] = json.loads(row["record_json"]) if row.get("record_json") else None
    return {**out, "kept_status": kept["status"], "kept_test_accuracy": kept["test_accuracy"]}


def _merge_jobs(db: sqlite3.Connection, src: sqlite3.Connection, report: MergeReport) -> None:
    """The source's job rows and curves into the target's (module docstring)."""
    cols = [c for c in _columns(src, "jobs") if c in set(_columns(db, "jobs"))]
    insert = f"INSERT INTO jobs({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
    for values in map(tuple, src.execute(f"SELECT {', '.join(cols)} FROM jobs ORDER BY rowid").fetchall()):
        row = dict(zip(cols, values))
        kept = db.execute(f"SELECT {', '.join(cols)} FROM jobs WHERE key = ?", (row["key"],)).fetchone()
        theirs_final, ours_final = row["status"] in FINAL, kept is not None and kept["status"] in FINAL
        if kept is not None and (ours_final or not theirs_final):
            same = tuple(kept) == values
            if ours_final and theirs_final and not same:
                report.duplicates.append(_duplicate(row, kept))
            else:
                report.unchanged += 1
            continue
        if kept is None:
            db.execute(insert, values)  # new: keeps its place after the target's rows
            report.added.append(row["key"])
        else:
            db.execute(f"UPDATE jobs SET {', '.join(f'{c} = ?' for c in cols)} WHERE key = ?", (*values, row["key"]))
            report.filled.append(row["key"])
        db.execute("DELETE FROM curves WHERE key = ?", (row["key"],))
        db.executemany(f"INSERT INTO curves({', '.join(_CURVES)}) VALUES ({', '.join('?' * len(_CURVES))})",
                       src.execute(f"SELECT {', '.join(_CURVES)} FROM curves WHERE key = ?", (row["key"],)))


def merge_store(target: str | Path, source: str | Path) -> MergeReport:
    """Merge the store file ``source`` into the store file ``target`` (created where absent, unpacked
    from its ``.gz`` where only that exists): see the module docstring.

    Raises:
        DataError: either file is not a readable store, or they hold different runs (nothing merged).
    """
    src = Store(source, readonly=True)
    home = Store(target)
    try:
        report = MergeReport()
        with home.transaction() as db:
            ours, theirs = dict(db.execute("SELECT key, value FROM meta").fetchall()), src.meta()
            _check_same_run(ours, theirs, Path(source))
            _merge_meta(db, ours, theirs, report)
            _merge_jobs(db, src.db, report)
        return report
    finally:
        home.close()
        src.close()
