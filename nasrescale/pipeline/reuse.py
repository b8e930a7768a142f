"""A kind's reuse store: the finished runs of the same jobs, copied in instead of trained.

A kind with a ``reuse_key`` (:attr:`~nasrescale.pipeline.kind_registry.PipelineKind.reuse_key`: a trend's
``trend.reuse``, a landscape's ``landscape.reuse``) names another store; every job about to run
-- an LR search's too -- is first looked up there (job keys are content hashes, so the same job
has the same key), and its finished record is copied in (:func:`reusing`; meta ``reused``
counts them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..jobs.job import TrainJob
from ..store.job_status import FINAL
from ..store.migration import parse_record
from ..store.read import store_path
from ..store.record import REUSED_KEY
from ..store.sqlite_store import Store
from .execute import RunJobs, job_rows

__all__ = ["reusing", "check_reuse", "reuse_source"]


def reuse_source(pipeline: Any) -> tuple[str | None, str | None]:
    """``(key, value)`` of the pipeline's reuse store: its kind's ``reuse_key`` (``trend.reuse``,
    ``landscape.reuse``) and the store it names (``None``: train every job; a kind without a
    reuse key: ``(None, None)``)."""
    key = pipeline.kind.reuse_key
    if key is None:
        return None, None
    table, name = key.split(".")
    return key, getattr(pipeline.table(table), name)


def check_reuse(pipeline: Any, run_dir: Path) -> Path:
    """The store the kind's reuse key (``trend.reuse``, ``landscape.reuse``) names, beside the
    run folder ``run_dir``.

    Raises:
        ConfigError: there is none (checked before the run's own store is created).
    """
    key, name = reuse_source(pipeline)
    path = store_path(name, Path(run_dir).parent) if name is not None else None
    if path is not None and not (path.is_file() or path.with_name(path.name + ".gz").is_file()):
        raise ConfigError(f"{key}: no store at {str(path)!r}; name a run under the results folder "
                          "(or its folder), or drop the key to train every job")
    return path  # type: ignore[return-value]


def reusing(pipeline: Any, store: Store, run: RunJobs) -> RunJobs:
    """``run``, which first copies into ``store`` the finished runs (done or diverged) that the
    reuse store (:func:`reuse_source`) holds under the same keys; ``run`` itself without one.

    Raises:
        ConfigError: the reuse store does not exist (before any job is stored).
    """
    name = reuse_source(pipeline)[1]
    if name is None:
        return run
    source = Store(check_reuse(pipeline, store.path.parent), readonly=True)
    try:
        finished = {r["key"]: {**r, "record": source.record(r["key"])} for r in source.rows() if r["status"] in FINAL}
    finally:
        source.close()

    def copy_then_run(jobs: list[TrainJob]) -> tuple[int, int, int]:
        mine = {job.key(): job for job in jobs if job.key() in finished}
        if mine:
            store.add_jobs(job_rows(mine.values()))
            copied = sum(_copy(store, finished[key]) for key in mine)
            if copied:
                reused = parse_record(store.meta(), str(store.path)).reused
                before = reused.runs if reused is not None else 0
                store.set_meta(REUSED_KEY, json.dumps({"source": name, "runs": before + copied}))
        return run(jobs)

    return copy_then_run


def _copy(store: Store, row: dict[str, Any]) -> bool:
    """Store the finished ``row`` of another store as this store's outcome of its key (not when
    this store has one already)."""
    return store.finish(row["key"], row["status"], row["record"], row.get("error"), int(row.get("attempts") or 1))
