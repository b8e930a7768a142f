"""Driving a pipeline: fill the store with its jobs, run what is missing, report progress.

The driver is the only writer of ``results/<name>/store.sqlite`` (:class:`~nasrescale.store.sqlite_store.Store`;
one driver per run folder: :mod:`nasrescale.pipeline.lock`).
:func:`run_pipeline` binds the resolved pipeline to the store (refusing a different one under the
same name), inserts any new jobs as ``pending``, and hands the jobs that are not finished --
pending, failed, or left ``running`` by a killed driver -- to the executor. Each job's outcome is
stored in one transaction as it arrives, then its checkpoint (``checkpoints/<key>.pt``) is
deleted; a job killed mid-training resumes from that checkpoint on the next run.

What a pipeline plans and runs after its jobs comes from its kind (:mod:`nasrescale.pipeline.kind_registry`);
The LR stages (``base_lr = "search"``, ``tune = true``) run first (:mod:`nasrescale.pipeline.stages`);
jobs reach the store and the executor through :mod:`nasrescale.pipeline.execute`.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from ..data.datasets import dataset_names
from ..errors import ConfigError, NasRescaleError
from ..executors.base import Executor
from ..jobs.job import TrainJob
from ..store.job_status import Status
from ..store.binding import binding_verdict, refusal
from ..store.integrity import READ_COLUMNS, check_connection, unpack_gzipped
from ..store.layout import run_dir_for
from ..store.record import base_lr_key
from ..store.sqlite_store import Store
from .execute import RunCounter, run_jobs, run_search
from .lock import driver_lock, lock_if_present
from .preflight import check_data, check_executor, check_reference
from .signals import INTERRUPTED, TERMINATED, sigterm_as_interrupt, terminated
from .slice_record import SliceSummary, device_text, record_visit, tally
from .identity import analysis_only, identity_grows, strip_keys
from .spec import Pipeline
from .stages import resolve_lrs, tuning_cells

__all__ = ["RUN_FINISHED", "RunTotals", "Plan", "plan_pipeline", "run_pipeline", "run_jobs", "run_search", "bind_store", "check_store"]


@dataclass(frozen=True)
class RunTotals:
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
    jobs: list[TrainJob] | None  # None with base_lr = "search" or tune = true: planned once their LRs are chosen
    extra: dict[str, str]


def plan_pipeline(pipeline: Pipeline, *, data: bool = True, run_dir: Path | None = None) -> Plan:
    """Plan ``pipeline``'s jobs and check everything they need, writing nothing: every
    architecture and protocol (a job is made of each, which checks its init rule and warm-up),
    the executor, the reference and, with ``data``, the data; given the run folder ``run_dir``,
    what the kind needs beside it (a trend's ``reuse`` store). ``nasrescale run --dry-run`` is
    this without the data.

    Raises:
        ConfigError, DataError: the first problem found, naming its key or file.
    """
    archs = pipeline.arch_list()
    staged = pipeline.needs_search() or pipeline.needs_tuning()
    # every architecture and protocol is checked before anything is written; a searched LR is
    # not known yet, so those jobs are checked with their LR marked to be searched (they refuse to
    # be keyed or trained) and built again once it is chosen
    probe = pipeline.with_lrs_to_search() if staged else pipeline
    jobs, extra = pipeline.kind.plan(probe, archs)
    jobs = None if staged else jobs
    if pipeline.needs_tuning():
        tuning_cells(pipeline, archs)  # enough cells for [tuning]
    if pipeline.needs_search() and pipeline.lr_search.arch:
        try:  # the search's architecture, parsed now (once: its jobs get this cell)
            pipeline.arch_cells([pipeline.lr_search.arch])
        except NasRescaleError as err:
            raise ConfigError(f"lr_search.arch: {err}") from None
    extra.update({base_lr_key(e.label): json.dumps(e.protocol.lr) for e in pipeline.protocols
                  if not e.search and not e.tune})
    for spec, keys in pipeline.data_specs():  # the dataset's name, with or without its data
        if spec.name not in dataset_names():
            raise ConfigError(f"{keys.name}: {spec.name!r} is not a registered dataset; expected one of "
                              f"{', '.join(map(repr, dataset_names()))}")
    check_executor(pipeline.executor)  # everything the jobs need, before the first row is stored
    if data:
        for spec, keys in pipeline.data_specs():
            check_data(spec, keys)
    check_reference(pipeline, archs)
    if run_dir is not None:
        pipeline.kind.check(pipeline, run_dir)
    return Plan(archs, jobs, extra)


def run_pipeline(pipeline: Pipeline, results: str | Path | None = None, *, progress: bool = True,
                 executor: Executor | None = None) -> RunTotals:
    """Run every job of ``pipeline`` that the store does not have a final result for.

    Args:
        pipeline: the resolved pipeline.
        results: the results root (default ``./results``); the run lives in ``<root>/<name>``.
        progress: show the executor's bar over jobs.
        executor: run with this executor instead of the one the settings choose (tests).

    Returns:
        The :class:`RunTotals`.

    Raises:
        ConfigError: the store holds results of a different pipeline under this name, or the
            executor's package or device is missing (before anything is written).
        DataError: the data is missing or smaller than the budget's subsets (before anything
            is written).
    """
    run_dir = run_dir_for(pipeline.name, results)
    # a driver at work in the folder refuses this one before anything is loaded; SIGTERM ends the
    # run as Ctrl-C does, so the lock's pid file goes with it
    with sigterm_as_interrupt(), lock_if_present(run_dir):
        plan = plan_pipeline(pipeline, run_dir=run_dir)
        check_store(pipeline, plan.archs, run_dir)  # refused read-only: the store's file is not even opened to write
        with driver_lock(run_dir):
            return _drive(pipeline, run_dir, plan.archs, plan.jobs, plan.extra, progress, executor)


def check_store(pipeline: Pipeline, archs: list[str], run_dir: Path) -> None:
    """What :func:`bind_store` would refuse in ``run_dir``'s store, found read-only (``--dry-run``,
    and every driver before it opens the store to write, so a refused run leaves its files'
    bytes as they were); nothing when there is no store yet. A store shipped packed alone
    (``store.sqlite.gz``, as committed results are) is checked from a copy unpacked to a temporary
    folder in the run folder, removed after: no store is left beside it.

    Raises:
        ConfigError: the store holds results of another pipeline under this name.
        DataError: the packed store does not unpack to a store.
    """
    path, packed = Path(run_dir) / "store.sqlite", Path(run_dir) / "store.sqlite.gz"
    if not path.is_file() and packed.is_file():
        with tempfile.TemporaryDirectory(dir=run_dir, prefix=".check-") as tmp:  # the store's own disk
            copy = unpack_gzipped(Path(tmp) / path.name, packed)  # DataError: it does not unpack to a store
            return _check_store_file(pipeline, archs, copy, packed)
    if path.is_file() and path.stat().st_size:
        _check_store_file(pipeline, archs, path, path)


def _check_store_file(pipeline: Pipeline, archs: list[str], path: Path, shown: Path) -> None:
    """:func:`check_store` on the store file ``path``, named ``shown`` in messages (the packed file
    it was unpacked from, or itself)."""
    # without a -wal file beside it, read it as immutable: a read-only WAL reader would create one
    flags = "mode=ro" if path.with_name(path.name + "-wal").exists() else "mode=ro&immutable=1"
    try:
        db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?{flags}", uri=True, timeout=30)
    except sqlite3.Error:
        return  # not readable: the driver's own open says why, before it writes
    try:
        check_connection(db, shown, READ_COLUMNS, empty=True)  # damaged or newer: refused as the driver's open would
        verdict, old = binding_verdict(db, pipeline.identity(archs), lambda o: strip_keys(o, analysis_only()),
                                       identity_grows)
    except sqlite3.Error:
        return
    finally:
        db.close()
    if verdict == "refused":
        raise ConfigError(refusal(pipeline.name, shown.parent, old, pipeline.identity(archs), "--set pipeline.name=..."))


def bind_store(store: Store, pipeline: Pipeline, archs: list[str], extra: dict[str, str]) -> None:
    """Bind ``pipeline`` to ``store`` as every driver does (``run``, a slice): the same identity,
    or one grown by protocols (:func:`~nasrescale.pipeline.identity.identity_grows`), else refused;
    then the kind brings its store up to date (:attr:`~nasrescale.pipeline.kind_registry.PipelineKind.bound`)."""
    store.bind_pipeline(pipeline.name, pipeline.resolved(archs), pipeline.identity(archs), extra,
                        normalize=lambda old: strip_keys(old, analysis_only()), grows=identity_grows)
    pipeline.kind.bound(pipeline, store)


#: a whole run's ``stopped`` (meta ``visit:<n>``) when every job it planned has a result
RUN_FINISHED = "run to the end (no time limit)"


def _drive(pipeline: Pipeline, run_dir: Path, archs: list[str], jobs: list | None, extra: dict[str, str],
           progress: bool, executor: Executor | None) -> RunTotals:
    store = Store(run_dir / "store.sqlite")
    try:
        bind_store(store, pipeline, archs, extra)
        run = RunCounter(pipeline.kind.runs(pipeline, store, functools.partial(
            run_jobs, store, settings=pipeline.executor, checkpoints=run_dir / "checkpoints", progress=progress,
            executor=executor)), store)
        _run_recorded(pipeline, archs, jobs, extra, store, run, progress)
        total, new, ran = run.counts
        return RunTotals(run_dir, total, new, ran, store.counts())
    finally:
        store.close()


def _run_recorded(pipeline: Pipeline, archs: list[str], jobs: list | None, extra: dict[str, str], store: Store,
                  run: RunCounter, progress: bool) -> None:
    """The LR stages (``base_lr = "search"``, ``tune = true``), then the jobs with the chosen LRs,
    then the kind's own; a run that trained something, or was stopped (Ctrl-C, SIGTERM: re-raised
    after), is recorded in the store's meta ``visit:<n>`` as a time-limited slice is."""
    start, summary = time.monotonic(), SliceSummary(store.path.parent, cells_total=len(archs))
    resolved = pipeline if jobs is not None else None
    try:
        if resolved is None:
            log = (lambda line: print(line, file=sys.stderr)) if progress else (lambda _: None)
            resolved, _ = resolve_lrs(pipeline, archs, store, store.path.parent, run, progress=progress, log=log)
            jobs = resolved.jobs(archs)
        summary.stage_jobs_run = run.ran
        run(jobs)
        pipeline.kind.after(resolved, archs, store, extra, run, progress)
        summary.stopped = RUN_FINISHED
    except KeyboardInterrupt as err:
        summary.stopped = TERMINATED if terminated(err) else INTERRUPTED
        raise
    finally:
        if summary.stopped:  # finished or stopped; an error is the command's to report
            if resolved is None:
                summary.stage_jobs_run = run.ran
            summary.jobs_run = run.ran - summary.stage_jobs_run
            if summary.jobs_run or summary.stage_jobs_run or summary.stopped != RUN_FINISHED:
                tally(store, resolved or pipeline, archs, summary, start, resolved=resolved is not None,
                      jobs=jobs if resolved is not None else None)
                record_visit(store, summary, {"device": device_text(pipeline.executor.device)})
