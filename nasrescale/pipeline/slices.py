"""Running a pipeline in slices: a few cells per time-limited run, one store across them.

A SLURM job's wall time, a preemptible instance or a GPU allocation of minutes holds less
than a long re-evaluation, so it is cut into slices of cells. The cells are visited in *spread order*
(:func:`spread_order`: the van der Corput sequence over the selection order), so that when the
selection is ordered by benchmark accuracy, as a stratified one is, every slice and every prefix
of slices covers the whole accuracy range: the ranking of what is finished after any slice is
itself a stratified sample.

:func:`run_slice` binds the whole pipeline to its store (all jobs, ``pending`` until run), then
runs the next unfinished cells in chunks (every protocol and seed of a cell together, so a
cell is compared only once complete) and stops before a chunk that would not finish before
the deadline, judged by the chunks already timed. Each slice is recorded in the store's meta
(``visit:<n>``: when, where, what ran), so reports can show which hardware produced what.

"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import ConfigError
from ..executors.base import Executor
from ..jobs.job import TrainJob
from ..store.job_status import FINAL
from ..store.layout import run_dir_for
from ..store.sqlite_store import Store
from .execute import Pace, RunCounter, RunJobs, job_rows, run_chunks, run_jobs
from .lock import driver_lock, lock_if_present
from .order import spread_order, visit_cells
from .runner import bind_store, check_store, plan_pipeline
from .signals import INTERRUPTED, TERMINATED, sigterm_as_interrupt, terminated
from .spec import Pipeline
from .stages import resolve_lrs
from .slice_record import SliceSummary, copy_store, device_text, prior_per_job, record_visit, tally, visit_records

__all__ = ["spread_order", "visit_cells", "SliceSummary", "run_slice", "copy_store", "visit_records", "INTERRUPTED",
           "TERMINATED"]


@dataclass(frozen=True)
class _Slice:
    """One slice's fixed context: its store and pipeline, its cells, limits and callbacks."""

    store: Store
    pipeline: Pipeline
    archs: list[str]
    summary: SliceSummary
    start: float
    deadline: float
    max_cells: int
    size: int
    log: Callable[[str], None]
    after_chunk: Callable[[], None] | None
    visit: dict[str, Any] | None


def _pending_cells(order: list[str], jobs_by_arch: dict[str, list[Any]], final: set[str]) -> list[str]:
    return [a for a in order if any(j.key() not in final for j in jobs_by_arch[a])]


def _final_keys(store: Store) -> set[str]:
    return {r["key"] for r in store.rows() if r["status"] in FINAL}


def _chunks(cells: list[str], size: int) -> list[list[str]]:
    return [cells[i:i + size] for i in range(0, len(cells), size)]


def run_slice(pipeline: Pipeline, results: str | Path | None = None, *, max_cells: int, deadline_s: float,
              chunk_cells: int | None = None, progress: bool = False, visit: dict[str, Any] | None = None,
              log: Callable[[str], None] = print, after_chunk: Callable[[], None] | None = None,
              executor: Executor | None = None) -> SliceSummary:
    """Run up to ``max_cells`` unfinished cells of ``pipeline`` (spread order) within ``deadline_s``.

    A pipeline with ``base_lr = "search"`` or ``tune = true`` runs those stages first
    (:mod:`nasrescale.pipeline.stages`), within the same deadline; once they are finished, later
    slices re-derive their choice from the store and run nothing for them.

    Args:
        pipeline: a retrain pipeline.
        results: results root (default ``./results``).
        max_cells: the most cells this slice runs.
        deadline_s: seconds from now after which no chunk starts, and none starts that the
            measured time per job says would end after it.
        chunk_cells: cells per executor call (default: the executor's ``jobs_per_gpu``).
        progress: the executor's progress bar.
        visit: extra facts recorded in the store's meta ``visit:<n>`` (device, data copy...).
        log: where one line per chunk goes.
        after_chunk: called after each chunk's results are stored (e.g. to copy the store out,
            so an allocation cut off later still keeps what it finished).
        executor: run with this executor instead of the one the settings choose (tests).

    Raises:
        ConfigError: a pipeline kind that does not slice, a store holding a different pipeline
            under this name, or a search or tuning stage that cannot finish.
    """
    if not pipeline.kind.slices:
        raise ConfigError(f"a time-limited run (slices of cells) needs a retrain pipeline; {pipeline.name!r} is a "
                          f"{pipeline.kind.name} pipeline; run it without --time-limit/--max-cells")
    start = time.monotonic()
    run_dir = run_dir_for(pipeline.name, results)
    with sigterm_as_interrupt(), lock_if_present(run_dir):  # a driver at work there: refused before anything loads
        plan = plan_pipeline(pipeline, run_dir=run_dir)
        check_store(pipeline, plan.archs, run_dir)  # refused read-only, before the store is opened to write
        summary = SliceSummary(run_dir, cells_total=len(plan.archs))
        with driver_lock(run_dir):
            store = Store(run_dir / "store.sqlite")
            try:
                bind_store(store, pipeline, plan.archs, plan.extra)
                run = RunCounter(pipeline.kind.runs(pipeline, store, functools.partial(
                    run_jobs, store, settings=pipeline.executor, checkpoints=run_dir / "checkpoints",
                    progress=progress, executor=executor)), store)
                ctx = _Slice(store, pipeline, plan.archs, summary, start, start + deadline_s, max_cells,
                             max(1, chunk_cells or pipeline.executor.jobs_per_gpu), log, after_chunk, visit)
                _run_recorded(ctx, run, progress)
            finally:
                store.close()
    return summary


def _run_recorded(ctx: _Slice, run: RunCounter, progress: bool) -> None:
    """The LR stages, then the cells; the slice's record written however it ends (a Ctrl-C or
    SIGTERM included, re-raised after, with the jobs the stopped chunk finished counted)."""
    pace = Pace(prior_per_job(ctx.store, device_text(ctx.pipeline.executor.device)))
    if pace.per_job is not None:
        ctx.log(f"slice: {pace.per_job:.1f} s a job, as the last slice on this device took (until a chunk is timed)")
    resolved = None
    try:
        resolved, stopped = resolve_lrs(ctx.pipeline, ctx.archs, ctx.store, ctx.summary.run_dir,
                                        _after(run, ctx.after_chunk, ctx.summary), deadline=ctx.deadline,
                                        progress=progress, log=ctx.log, pace=pace)
        if resolved is not None:
            _evaluate(ctx, resolved, run, pace)
        else:
            ctx.summary.stopped = stopped
    except KeyboardInterrupt as err:  # the slice is still recorded: what it ran, and that it was stopped
        ctx.summary.stopped = TERMINATED if terminated(err) else INTERRUPTED
        cut = run.ran - ctx.summary.jobs_run - ctx.summary.stage_jobs_run  # the stopped call's finished jobs
        if resolved is None:
            ctx.summary.stage_jobs_run += cut
        else:
            ctx.summary.jobs_run += cut
        _close(ctx, resolved, pace)
        raise
    _close(ctx, resolved, pace)


def _close(ctx: _Slice, resolved: Pipeline | None, pace: Pace) -> None:
    """Where the store stands, and the slice's record (meta ``visit:<n>``)."""
    pipeline = resolved or ctx.pipeline
    ctx.summary.job_s = pace.timed
    tally(ctx.store, pipeline, ctx.archs, ctx.summary, ctx.start, resolved=resolved is not None)
    record_visit(ctx.store, ctx.summary, {"device": device_text(pipeline.executor.device), **(ctx.visit or {})})


def _after(run: RunJobs, after_chunk: Callable[[], None] | None, summary: SliceSummary) -> RunJobs:
    """``run`` counted as the LR stages' jobs, then ``after_chunk`` (the store copied out) when it ran something."""
    def wrapped(jobs: list[TrainJob]) -> tuple[int, int, int]:
        out = run(jobs)
        summary.stage_jobs_run += out[2]
        if out[2] and after_chunk is not None:
            after_chunk()
        return out
    return wrapped


def _evaluate(ctx: _Slice, pipeline: Pipeline, run: RunJobs, pace: Pace) -> None:
    """The evaluation jobs: stored as pending, then the next unfinished cells chunk by chunk, each
    only while ``pace`` says it ends by the deadline."""
    store, summary = ctx.store, ctx.summary
    jobs = pipeline.jobs(ctx.archs)
    store.add_jobs(job_rows(jobs))
    jobs_by_arch: dict[str, list[TrainJob]] = {a: [] for a in ctx.archs}
    for job in jobs:
        jobs_by_arch[job.arch].append(job)
    todo = _pending_cells(visit_cells(ctx.archs), jobs_by_arch, _final_keys(store))[:ctx.max_cells]

    def run_chunk(chunk_jobs: list[TrainJob]) -> tuple[int, int, int]:
        out = run(chunk_jobs)
        cells = list(dict.fromkeys(j.arch for j in chunk_jobs))
        if pipeline.kind.cells_done is not None:  # e.g. a landscape's extensions of these cells
            more = pipeline.kind.cells_done(pipeline, cells, store, run)
            out = (out[0] + more[0], out[1] + more[1], out[2] + more[2])
        summary.cells_run += cells
        summary.jobs_run += out[2]
        if ctx.after_chunk is not None:
            ctx.after_chunk()
        return out

    final = _final_keys(store)
    todo_jobs = [[j for a in chunk for j in jobs_by_arch[a] if j.key() not in final]
                 for chunk in _chunks(todo, ctx.size)]
    _, stopped = run_chunks(run_chunk, todo_jobs, ctx.deadline, ctx.log, pace=pace)
    summary.stopped = stopped or "slice finished"
