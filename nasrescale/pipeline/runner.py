"""Driving a pipeline: fill the store with its jobs, run what is missing, report progress.

The driver is the only writer of ``results/<name>/store.sqlite`` (:class:`~nasrescale.store.write.Store`;
one driver per run folder: :mod:`nasrescale.pipeline.lock`).
:func:`run_pipeline` binds the resolved pipeline to the store (refusing a different one under the
same name), inserts any new jobs as ``pending``, and hands the jobs that are not finished --
pending, failed, or left ``running`` by a killed driver -- to the executor. Each job's outcome is
stored in one transaction as it arrives, then its checkpoint (``checkpoints/<key>.pt``) is
deleted; a job killed mid-training resumes from that checkpoint on the next run.

What a pipeline plans and runs after its jobs comes from its kind (:mod:`nasrescale.pipeline.kinds`);
:func:`run_search` is the one LR-search driver, of ``base_lr = "search"`` and of ``nasrescale lr-search``.
"""

from __future__ import annotations

import functools
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..executors import get_executor
from ..executors.base import Executor, ExecutorSettings, Outcome
from ..jobs.job import TrainJob
from ..lrsearch.search import (SEARCH_PREFIX, LrSearchSettings, format_table, losses_from_rows, plot_selection,
                               search_jobs, selection_json)
from ..lrsearch.select import Selection, select_lr
from ..protocol import Protocol
from ..store.job_status import Status
from ..store.read import run_dir_for
from ..store.write import Store
from .lock import driver_lock
from .preflight import check_data, check_executor, check_reference
from .spec import ANALYSIS_ONLY, Pipeline, strip_keys

__all__ = ["RunSummary", "Plan", "plan_pipeline", "run_pipeline", "run_jobs", "run_search"]


@dataclass(frozen=True)
class RunSummary:
    """What a call of :func:`run_pipeline` did, and where the store stands after it."""

    run_dir: Path
    total: int
    new: int
    ran: int
    counts: dict[Status, int]

    @property
    def failed(self) -> int:
        """Jobs whose last attempt raised."""
        return self.counts.get(Status.FAILED, 0)


@dataclass(frozen=True)
class Plan:
    """What a run of a pipeline would do, checked before anything is written (:func:`plan_pipeline`)."""

    archs: list[str]
    jobs: list[TrainJob] | None  # None with base_lr = "search": planned once the search has chosen
    extra: dict[str, str]


def plan_pipeline(pipeline: Pipeline, *, data: bool = True) -> Plan:
    """Plan ``pipeline``'s jobs and check everything they need, writing nothing: every
    architecture and protocol (a job is made of each, which checks its init rule and warm-up),
    the executor, the reference and, with ``data``, the data. ``nasrescale run --dry-run`` is
    this without the data.

    Raises:
        ConfigError, DataError: the first problem found, naming its key or file.
    """
    archs = pipeline.arch_list()
    jobs: list[TrainJob] | None = None  # with base_lr = "search": built once the search has chosen
    extra: dict[str, str] = {}
    if not pipeline.needs_search():
        jobs, extra = pipeline.kind.plan(pipeline, archs)  # checks every architecture before anything is written
    extra.update({f"base_lr:{e.label}": json.dumps(e.protocol.lr) for e in pipeline.protocols if not e.search})
    check_executor(pipeline.executor)  # everything the jobs need, before the first row is stored
    if data:
        for spec, keys in pipeline.data_specs():
            check_data(spec, keys)
    check_reference(pipeline, archs)
    return Plan(archs, jobs, extra)


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
    plan = plan_pipeline(pipeline)
    with driver_lock(run_dir):
        return _drive(pipeline, run_dir, plan.archs, plan.jobs, plan.extra, progress, executor)


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
        run = functools.partial(run_jobs, store, settings=pipeline.executor, checkpoints=checkpoints,
                                progress=progress, executor=executor)
        n, added, todo = run(jobs)
        n2, added2, todo2 = pipeline.kind.after(pipeline, archs, store, extra, run, progress)
        n, added, todo = n + n2, added + added2, todo + todo2
        return RunSummary(run_dir, total + n, new + added, ran + todo, store.counts())
    finally:
        store.close()


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
            if outcome.status != Status.FAILED:  # stored for good: the checkpoint has served
                (checkpoints / f"{outcome.key}.pt").unlink(missing_ok=True)
            if outcome.status == Status.FAILED and progress:
                print(f"job {outcome.key} failed: {(outcome.error or '').splitlines()[0]}", file=sys.stderr)

        runner.run(todo, on_outcome, store.mark_running)
    return len(by_key), new, len(todo)


def run_search(store: Store, pairs: list[tuple[float, TrainJob]], search: LrSearchSettings,
               settings: ExecutorSettings, run_dir: Path, *, meta_key: str, plot: str | Path, title: str,
               info: Mapping[str, Any] | None = None, progress: bool = True,
               executor: Executor | None = None) -> tuple[Selection, dict[str, Any], tuple[int, int, int]]:
    """The one LR-search driver (``nasrescale lr-search`` and a pipeline's ``base_lr = "search"``).

    Runs what is missing of the ``(grid LR, job)`` pairs as stored, resumable jobs (checkpoints
    in ``run_dir/checkpoints``), selects the LR with the rule, loss and tolerance of ``search``,
    plots it to ``plot`` and stores the selection (:func:`~nasrescale.lrsearch.search.selection_json`
    with the architecture, ``info`` and the plot's path) as the meta entry ``meta_key``.

    Returns:
        ``(selection, its JSON, (jobs, new jobs, jobs run now))``.

    Raises:
        DataError: some runs failed (rerun to retry them) or every LR diverged.
    """
    counts = run_jobs(store, [job for _, job in pairs], settings, run_dir / "checkpoints", progress=progress,
                      executor=executor)
    losses = losses_from_rows([(lr, job.key()) for lr, job in pairs], store.rows_with_tail(), search.loss)
    sel = select_lr(losses, search.rel_tol, search.rule)
    path = plot_selection(sel, plot, title)
    out = selection_json(sel, search.seeds, arch=pairs[0][1].arch, **dict(info or {}), plot=str(path))
    store.set_meta(meta_key, json.dumps(out))
    return sel, out, counts


def _search_stage(pipeline: Pipeline, label: str, protocol: Protocol, store: Store, run_dir: Path,
                  executor: Executor | None, progress: bool) -> tuple[Selection, tuple[int, int, int]]:
    """The LR search of protocol ``label`` (``base_lr = "search"``) through :func:`run_search`:
    meta ``lr_search:<label>`` holds the selection, ``base_lr:<label>`` the choice; prints its table."""
    arch = pipeline.lr_search.arch or pipeline.family().base
    pairs = search_jobs(arch, pipeline.family(), pipeline.data_spec(), protocol, pipeline.lr_search,
                        SEARCH_PREFIX + label, pipeline.budget.width, pipeline.budget.cells)
    sel, _, counts = run_search(store, pairs, pipeline.lr_search, pipeline.executor, run_dir,
                                meta_key=f"lr_search:{label}", plot=run_dir / f"lr_search_{label}.png",
                                title=f"{pipeline.name}: base-LR search for {label!r}", info={"protocol": label},
                                progress=progress, executor=executor)
    store.set_meta(f"base_lr:{label}", json.dumps(sel.chosen_lr))
    if progress:
        table = format_table(sel, pipeline.lr_search.seeds)
        print(f"LR search for protocol {label!r} on {pairs[0][1].arch}:\n{table}", file=sys.stderr)
    return sel, counts
