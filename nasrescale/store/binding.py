"""Whether a store may hold a pipeline: the one rule :meth:`~nasrescale.store.sqlite_store.Store.bind_pipeline`
applies and :func:`~nasrescale.pipeline.runner.check_store` reports read-only before a run opens the store.

A store holds one pipeline's identity. The same identity binds; one that only grows it (by
protocols) rebinds, keeping the results; another one rebinds only while nothing has run, and is
refused once something has, naming the keys that differ.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Callable

from .job_status import Status

__all__ = ["binding_verdict", "refusal", "holds_results", "diff_keys"]


def binding_verdict(db: sqlite3.Connection, identity: dict[str, Any],
                    normalize: Callable[[dict[str, Any]], dict[str, Any]] | None,
                    grows: Callable[[dict[str, Any], dict[str, Any]], bool] | None) -> tuple[str, Any]:
    """``(verdict, stored identity)``: ``new`` (none stored), ``same``, ``grows``, ``rebind``
    (another identity, but nothing ran) or ``refused``."""
    row = db.execute("SELECT value FROM meta WHERE key = 'identity'").fetchone()
    if row is None:
        return "new", None
    old = json.loads(row[0])
    old = normalize(old) if normalize is not None else old
    if old == identity:
        return "same", old
    if grows is not None and grows(old, identity):
        return "grows", old
    return ("refused" if holds_results(db) else "rebind"), old


def refusal(name: str, folder: Path, old: Any, identity: dict[str, Any], rename_hint: str) -> str:
    """The message of a refused binding: the keys that differ and the ways out."""
    diff = diff_keys(old, identity)
    return (f"results for pipeline {name!r} in {str(folder)!r} were made with a different "
            f"pipeline (differs in: {', '.join(diff[:8])}); not mixing them. Rename it "
            f"({rename_hint}), use --results DIR, or move that folder away")


def holds_results(db: sqlite3.Connection) -> bool:
    """Whether some job of the store has run (any status but ``pending``)."""
    return db.execute("SELECT 1 FROM jobs WHERE status != ? LIMIT 1", (Status.PENDING,)).fetchone() is not None


def diff_keys(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted key paths where two JSON values differ.

    >>> diff_keys({"a": 1, "b": {"c": 2}}, {"a": 1, "b": {"c": 3}, "d": 0})
    ['b.c', 'd']
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for k in sorted(set(old) | set(new)):
            out += diff_keys(old.get(k), new.get(k), f"{prefix}.{k}" if prefix else k)
        return out
    return [] if old == new else [prefix or "(root)"]
