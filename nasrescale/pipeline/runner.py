"""Driving a pipeline: fill the store with its jobs, run what is missing, report progress.

The driver is the only writer of ``results/<name>/store.sqlite`` (:class:`~nasrescale.store.write.Store`).
:func:`run_pipeline` binds the resolved pipeline to the store (refusing a different one under the
same name), inserts any new jobs as ``pending``, and hands the jobs that are not finished --
pending, failed, or left ``running`` by a killed driver -- to the executor. Each job's outcome is
stored in one transaction as it arrives, then its checkpoint (``checkpoints/<key>.pt``) is
deleted; a job killed mid-training resumes from that checkpoint on the next run.
"""

from __future__ import annotations

import csv
import json
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..errors import ConfigError
from ..executors import get_executor
from ..executors.base import Executor, ExecutorSettings, Outcome
from ..jobs.job import TrainJob
from ..lrsearch.select import Selection
from ..store.write import Store
from .preflight import PIPELINE_KEYS, check_data, check_executor
from .spec import ANALYSIS_ONLY, Pipeline, strip_keys

__all__ = ["RunSummary", "run_dir_for", "run_pipeline", "run_jobs", "run_search", "status_text", "export_csv",
           "EXPORT_COLUMNS"]

EXPORT_COLUMNS = ("arch", "protocol", "seed", "status", "test_accuracy", "test_accuracy_released10", "test_loss", "train_loss_last", "lr",
                  "lr_scale", "base_lr", "epochs", "wall_time_s", "degenerate", "attempts", "width", "cells",
                  "dataset", "test_split", "test_images", "device_name", "key", "error")


@dataclass(frozen=True)
class RunSummary:
    """What a call of :func:`run_pipeline` did, and where the store stands after it."""

    run_dir: Path
    total: int
    new: int
    ran: int
    counts: dict[str, int]

    @property
    def failed(self) -> int:
        """Jobs whose last attempt raised."""
        return self.counts.get("failed", 0)


def run_dir_for(name: str, results: str | Path | None = None) -> Path:
    """``<results or ./results>/<name>``."""
    return Path(results if results is not None else "results") / name


def run_pipeline(pipeline: Pipeline, results: str | Path | None = None, *, progress: bool = True,
                 executor: Executor | None = None) -> RunSummary:
    """Run every job of ``pipeline`` that the store does not have a final result for.

    Args:
        pipeline: the resolved pipeline.
        results: the results root (default ``./results``); the run lives in ``<root>/<name>``.
        progress: show the executor's bar over jobs.
        executor: run with this executor instead of the one the settings choose (tests).

    Returns:
        The :class:`RunSummary`.

    Raises:
        ConfigError: the store holds results of a different pipeline under this name, or the
            executor's package or device is missing (before anything is written).
        DataError: the data is missing or smaller than the budget's subsets (before anything
            is written).
    """
    run_dir = run_dir_for(pipeline.name, results)
    archs = pipeline.arch_list()
    extra: dict[str, str] = {}
    jobs: list[TrainJob] | None = None  # with base_lr = "search": built once the search has chosen
    if pipeline.pipeline.kind == "lr_validation":
        plan, jobs = pipeline.validation_plan(archs)
        extra["validation_plan"] = json.dumps(plan)
    elif not pipeline.needs_search():
        jobs = pipeline.jobs(archs)  # checks every architecture before anything is written
    extra.update({f"base_lr:{e.label}": json.dumps(e.protocol.lr) for e in pipeline.protocols if not e.search})
    check_executor(pipeline.executor)  # everything the jobs need, before the first row is stored
    check_data(pipeline.data_spec(), PIPELINE_KEYS)
    with _driver_lock(run_dir):
        return _drive(pipeline, run_dir, archs, jobs, extra, progress, executor)


@contextmanager
def _driver_lock(run_dir: Path) -> Iterator[None]:
    """One driver per run folder: an exclusive ``flock`` on ``run_dir/.driver.lock`` (released by
    the kernel when the process dies, so a killed driver never leaves a stale lock)."""
    import os

    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    with open(run_dir / ".driver.lock", "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            raise ConfigError(f"another `nasrescale run` (pid {f.read().strip() or '?'}) is driving {str(run_dir)!r}; "
                              "wait for it, or watch it with `nasrescale status`") from None
        f.truncate(0)
        f.write(str(os.getpid()))
        f.flush()
        yield


def _drive(pipeline: Pipeline, run_dir: Path, archs: list[str], jobs: list | None, extra: dict[str, str],
           progress: bool, executor: Executor | None) -> RunSummary:
    store = Store(run_dir / "store.sqlite")
    checkpoints = run_dir / "checkpoints"
    try:
        store.bind_pipeline(pipeline.name, pipeline.resolved(archs), pipeline.identity(archs), extra,
                            normalize=lambda old: strip_keys(old, ANALYSIS_ONLY))
        total = new = ran = 0
        if pipeline.needs_search():  # base_lr = "search": the LR search's jobs first, then the chosen LRs
            lrs = {}
            for e in (e for e in pipeline.protocols if e.search):
                sel, counts = _search_stage(pipeline, e.label, e.protocol, store, run_dir, executor, progress)
                lrs[e.label] = sel.chosen_lr
                total, new, ran = total + counts[0], new + counts[1], ran + counts[2]
            pipeline = pipeline.with_base_lrs(lrs)
            jobs = pipeline.jobs(archs)
        n, added, todo = run_jobs(store, jobs, pipeline.executor, checkpoints, progress=progress, executor=executor)
        if pipeline.pipeline.kind == "lr_validation":
            plan = json.loads(extra["validation_plan"])  # as planned, not as stored: rounds re-derive alike
            n2, added2, todo2 = _extend_validation(pipeline, plan, store, checkpoints, progress, executor)
            store.set_meta("pipeline", json.dumps(pipeline.resolved(archs), sort_keys=True))  # its analysis keys
            n, added, todo = n + n2, added + added2, todo + todo2
        return RunSummary(run_dir, total + n, new + added, ran + todo, store.counts())
    finally:
        store.close()


def _extend_validation(pipeline: Pipeline, plan: dict[str, Any], store: Store, checkpoints: Path, progress: bool,
                       executor: Executor | None) -> tuple[int, int, int]:
    """Extend the grids of an ``lr_validation`` run where a seed's argmin sits at an edge
    (:func:`~nasrescale.lrsearch.validation.extend_plan`), up to ``lr_search.extend`` rounds, from
    ``plan`` as planned; the stored plan is updated after each round's jobs ran. A rerun derives
    the same rounds from the same stored results, so it adds nothing (a killed round resumes)."""
    total = new = ran = 0
    for _ in range(pipeline.lr_search.extend):
        jobs = pipeline.extend_validation_plan(plan, store.rows_with_tail())
        if not jobs:
            break
        if progress:
            print(f"extending the LR grid past its edge: {len(jobs)} more runs", file=sys.stderr)
        n, added, todo = run_jobs(store, jobs, pipeline.executor, checkpoints, progress=progress, executor=executor)
        store.set_meta("validation_plan", json.dumps(plan))
        total, new, ran = total + n, new + added, ran + todo
    # the plan as this run reads it (rule, loss: analysis-only keys a rerun may change)
    store.set_meta("validation_plan", json.dumps(plan))
    return total, new, ran


def run_jobs(store: Store, jobs: list[TrainJob], settings: ExecutorSettings, checkpoints: Path, *,
             progress: bool = True, executor: Executor | None = None) -> tuple[int, int, int]:
    """Insert ``jobs`` into ``store`` (as pending, if new) and run those without a final result.

    Returns:
        ``(jobs, new jobs, jobs run now)``.
    """
    by_key = {job.key(): job for job in jobs}
    new = store.add_jobs({"key": k, "arch": j.arch, "protocol": j.label, "seed": j.seed,
                          "job_json": json.dumps(j.to_json())} for k, j in by_key.items())
    todo = [by_key[k] for k in store.runnable() if k in by_key]
    if todo:
        runner = executor or get_executor(settings, checkpoint_dir=checkpoints, progress=progress)

        def on_outcome(outcome: Outcome) -> None:
            store.finish(outcome.key, outcome.status, outcome.record, outcome.error, outcome.attempts)
            if outcome.status != "failed":  # stored for good: the checkpoint has served
                (checkpoints / f"{outcome.key}.pt").unlink(missing_ok=True)
            if outcome.status == "failed" and progress:
                print(f"job {outcome.key} failed: {(outcome.error or '').splitlines()[0]}", file=sys.stderr)

        runner.run(todo, on_outcome, store.mark_running)
    return len(by_key), new, len(todo)


def run_search(store: Store, pairs: list[tuple[float, TrainJob]], search: Any, settings: ExecutorSettings,
               checkpoints: Path, *, progress: bool = True,
               executor: Executor | None = None) -> tuple[Selection, tuple[int, int, int]]:
    """Run (what is missing of) an LR search's ``(grid LR, job)`` pairs and select the LR with
    the rule, loss and tolerance of ``search`` (:class:`~nasrescale.lrsearch.search.LrSearchSettings`).

    Raises:
        DataError: some runs failed (rerun to retry them) or every LR diverged.
    """
    from ..lrsearch.search import losses_from_rows
    from ..lrsearch.select import select_lr

    counts = run_jobs(store, [job for _, job in pairs], settings, checkpoints, progress=progress, executor=executor)
    losses = losses_from_rows([(lr, job.key()) for lr, job in pairs], store.rows_with_tail(), search.loss)
    return select_lr(losses, search.rel_tol, search.rule), counts


def _search_stage(pipeline: Pipeline, label: str, protocol: Any, store: Store, run_dir: Path,
                  executor: Executor | None, progress: bool) -> tuple[Selection, tuple[int, int, int]]:
    """The LR search of protocol ``label`` (``base_lr = "search"``): run it, store the choice
    (meta ``base_lr:<label>`` and ``lr_search:<label>``), plot it, print its table."""
    from ..lrsearch.search import SEARCH_PREFIX, format_table, plot_selection, search_jobs, selection_json

    family = pipeline.family()
    arch = pipeline.lr_search.arch or family.base
    pairs = search_jobs(arch, family, pipeline.data_spec(), protocol, pipeline.lr_search, SEARCH_PREFIX + label,
                        pipeline.budget.width, pipeline.budget.cells)
    sel, counts = run_search(store, pairs, pipeline.lr_search, pipeline.executor, run_dir / "checkpoints",
                             progress=progress, executor=executor)
    store.set_meta(f"base_lr:{label}", json.dumps(sel.chosen_lr))
    store.set_meta(f"lr_search:{label}", json.dumps(selection_json(sel, arch=pairs[0][1].arch, protocol=label)))
    plot_selection(sel, run_dir / f"lr_search_{label}.png", f"{pipeline.name}: base-LR search for {label!r}")
    if progress:
        print(f"LR search for protocol {label!r} on {pairs[0][1].arch}:\n{format_table(sel)}", file=sys.stderr)
    return sel, counts


def _eta_seconds(store: Store) -> float | None:
    """Remaining time: remaining jobs' cost x (wall time per unit cost of the finished ones)."""
    done_cost = done_wall = todo_cost = 0.0
    for row in store.rows():
        cost = float(store.job_json(row["key"]).get("cost") or 0.0)
        if row["status"] in ("done", "diverged"):
            if cost > 0 and row["wall_time_s"]:
                done_cost, done_wall = done_cost + cost, done_wall + row["wall_time_s"]
        elif row["status"] != "failed":
            todo_cost += cost
    if todo_cost == 0:
        return 0.0
    return None if done_cost == 0 else todo_cost * done_wall / done_cost


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def status_text(run_dir: Path) -> str:
    """A few lines on a run's progress: counts by status and protocol, ETA, failures."""
    store = Store(run_dir / "store.sqlite", readonly=True)
    try:
        rows, counts = store.rows(), store.counts()
        total = len(rows)
        final = counts["done"] + counts["diverged"]
        lines = [f"pipeline {store.get_meta('name')!r} in {run_dir}: {final}/{total} jobs finished "
                 f"({100.0 * final / total if total else 0:.0f}%)",
                 "  " + ", ".join(f"{s} {n}" for s, n in counts.items())]
        for label in dict.fromkeys(r["protocol"] for r in rows):
            mine = [r for r in rows if r["protocol"] == label]
            fin = sum(r["status"] in ("done", "diverged") for r in mine)
            lines.append(f"  protocol {label}: {fin}/{len(mine)} finished")
        eta = _eta_seconds(store)
        lines.append("  ETA: " + ("unknown (no job finished yet)" if eta is None else _clock(eta))
                     + " of sequential job time")
        for r in rows:
            if r["status"] == "failed":
                lines.append(f"  failed {r['key']} ({r['arch']}, {r['protocol']}, seed {r['seed']}): "
                             f"{(r['error'] or '').splitlines()[0] if r['error'] else ''}")
        return "\n".join(lines)
    finally:
        store.close()


def _export_base_lr(record: dict[str, Any], protocol: dict[str, Any]) -> float | None:
    """The base LR of a job, ``None`` for a protocol that has none (a fixed LR without μP;
    records stored before that rule still carry the LR there)."""
    from ..jobs.job import has_base_lr

    if not has_base_lr(record.get("lr_rule", protocol.get("lr_rule")), record.get("init", protocol.get("init"))):
        return None
    return record.get("base_lr", protocol.get("lr"))


def export_csv(run_dir: Path, out: str | Path) -> int:
    """Write one tidy row per job (:data:`EXPORT_COLUMNS`) to ``out``; returns the row count."""
    from ..fileio import atomic_writer

    store = Store(run_dir / "store.sqlite", readonly=True)
    try:
        rows = []
        for row in store.rows():
            rec: dict[str, Any] = store.record(row["key"]) or {}
            job = store.job_json(row["key"])
            rows.append({
                **{c: rec.get(c) for c in EXPORT_COLUMNS}, **{c: row[c] for c in row if c in EXPORT_COLUMNS},
                "base_lr": _export_base_lr(rec, job.get("protocol", {})),
                "epochs": row["epochs"] if row["epochs"] is not None else job.get("protocol", {}).get("epochs"),
                "degenerate": None if row["degenerate"] is None else bool(row["degenerate"]),
                "device_name": (rec.get("provenance") or {}).get("device_name"),
                "error": (row["error"] or "").splitlines()[0] if row["error"] else None,
            })
    finally:
        store.close()
    with atomic_writer(Path(out), newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(EXPORT_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)
