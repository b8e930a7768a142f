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

import dataclasses
import functools
import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import ConfigError
from ..executors.base import Executor
from ..jobs.job import TrainJob
from ..jobs.records import provenance, resolve_device
from ..store.job_status import FINAL, Status
from ..store.read import run_dir_for
from ..store.write import Store
from .execute import Pace, RunJobs, job_rows, run_chunks, run_jobs
from .lock import driver_lock
from .order import spread_order, visit_cells
from .runner import bind_store, check_store, plan_pipeline
from .signals import INTERRUPTED, TERMINATED, Terminated, sigterm_as_interrupt
from .spec import Pipeline
from .stages import resolve_lrs

__all__ = ["spread_order", "visit_cells", "SliceSummary", "run_slice", "copy_store", "visit_records", "INTERRUPTED",
           "TERMINATED"]


@dataclass
class SliceSummary:
    """What one slice did: cells and jobs run now, what is finished overall, and the times."""

    run_dir: Path
    cells_run: list[str] = field(default_factory=list)
    jobs_run: int = 0
    stage_jobs_run: int = 0
    jobs_done: int = 0
    jobs_total: int = 0
    cells_done: int = 0
    cells_total: int = 0
    wall_s: float = 0.0
    stopped: str = ""
    failed: int = 0
    job_s: float | None = None  # the slowest chunk's seconds per job trained (the next slice's first estimate)
    waiting: list[str] = field(default_factory=list)  # protocols whose LR search or tuning has not chosen yet

    def to_json(self) -> dict[str, Any]:
        """JSON-ready (the run folder as a string)."""
        out = dict(self.__dict__)
        out["run_dir"] = str(self.run_dir)
        return out


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
    plan = plan_pipeline(pipeline, run_dir=run_dir)
    check_store(pipeline, plan.archs, run_dir)  # refused read-only, before the store is opened to write
    archs = plan.archs
    summary = SliceSummary(run_dir, cells_total=len(archs))
    size = max(1, chunk_cells or pipeline.executor.jobs_per_gpu)
    with driver_lock(run_dir), sigterm_as_interrupt():
        store = Store(run_dir / "store.sqlite")
        try:
            bind_store(store, pipeline, archs, plan.extra)
            run = pipeline.kind.runs(pipeline, store, functools.partial(
                run_jobs, store, settings=pipeline.executor, checkpoints=run_dir / "checkpoints", progress=progress,
                executor=executor))
            pace = Pace(_prior_per_job(store, _device_text(pipeline.executor.device)))
            if pace.per_job is not None:
                log(f"slice: {pace.per_job:.1f} s a job, as the last slice on this device took (until a chunk is timed)")
            resolved = None
            try:
                resolved, stopped = resolve_lrs(pipeline, archs, store, run_dir, _after(run, after_chunk, summary),
                                                deadline=start + deadline_s, progress=progress, log=log, pace=pace)
                if resolved is not None:
                    _evaluate(store, resolved, archs, size, max_cells, start + deadline_s, summary, run, log,
                              after_chunk, pace)
                else:
                    summary.stopped = stopped
            except KeyboardInterrupt as err:  # the slice is still recorded: what it ran, and that it was stopped
                summary.stopped = TERMINATED if isinstance(err, Terminated) else INTERRUPTED
                _close(store, resolved or pipeline, archs, summary, start, pace, resolved is not None, visit)
                raise
            _close(store, resolved or pipeline, archs, summary, start, pace, resolved is not None, visit)
        finally:
            store.close()
    return summary


def _close(store: Store, pipeline: Pipeline, archs: list[str], summary: SliceSummary, start: float, pace: Pace,
           resolved: bool, visit: dict[str, Any] | None) -> None:
    """Where the store stands, and the slice's record (meta ``visit:<n>``)."""
    summary.job_s = pace.timed
    _finish(store, pipeline, archs, summary, start, resolved=resolved)
    _record_visit(store, summary, {"device": _device_text(pipeline.executor.device), **(visit or {})})


def _after(run: RunJobs, after_chunk: Callable[[], None] | None, summary: SliceSummary) -> RunJobs:
    """``run`` counted as the LR stages' jobs, then ``after_chunk`` (the store copied out) when it ran something."""
    def wrapped(jobs: list[TrainJob]) -> tuple[int, int, int]:
        out = run(jobs)
        summary.stage_jobs_run += out[2]
        if out[2] and after_chunk is not None:
            after_chunk()
        return out
    return wrapped


def _evaluate(store: Store, pipeline: Pipeline, archs: list[str], size: int, max_cells: int, deadline: float,
              summary: SliceSummary, run: RunJobs, log: Callable[[str], None],
              after_chunk: Callable[[], None] | None, pace: Pace) -> None:
    """The evaluation jobs: stored as pending, then the next unfinished cells chunk by chunk, each
    only while ``pace`` says it ends by ``deadline``."""
    jobs = pipeline.jobs(archs)
    store.add_jobs(job_rows(jobs))
    jobs_by_arch: dict[str, list[TrainJob]] = {a: [] for a in archs}
    for job in jobs:
        jobs_by_arch[job.arch].append(job)
    todo = _pending_cells(visit_cells(archs), jobs_by_arch, _final_keys(store))[:max_cells]
    chunks = _chunks(todo, size)

    def run_chunk(chunk_jobs: list[TrainJob]) -> tuple[int, int, int]:
        out = run(chunk_jobs)
        cells = list(dict.fromkeys(j.arch for j in chunk_jobs))
        summary.cells_run += cells
        summary.jobs_run += out[2]
        if after_chunk is not None:
            after_chunk()
        return out

    final = _final_keys(store)
    todo_jobs = [[j for a in chunk for j in jobs_by_arch[a] if j.key() not in final] for chunk in chunks]
    _, stopped = run_chunks(run_chunk, todo_jobs, deadline, log, pace=pace)
    summary.stopped = stopped or "slice finished"


def _prior_per_job(store: Store, device: str) -> float | None:
    """The seconds a job of the slowest chunk of the last slice on ``device`` that timed one
    (its record's ``job_s``), or ``None`` if none did."""
    for visit in reversed(visit_records(store.path, store)):
        if visit.get("device") == device and visit.get("job_s"):
            return float(visit["job_s"])
    return None


def _finish(store: Store, pipeline: Pipeline, archs: list[str], summary: SliceSummary, start: float, *,
            resolved: bool) -> None:
    """Where the store stands after the slice: finished and failed jobs and cells of the pipeline
    (``resolved``: its search and tuning chose their LRs; else only the other protocols' jobs
    are known: a tuned protocol's anchor LR is not its LR, so its jobs are not counted as done)."""
    rows = {r["key"]: r["status"] for r in store.rows()}
    if resolved:
        jobs = pipeline.jobs(archs)
        summary.jobs_total = len(jobs)
    else:  # some LRs are not chosen yet (a slice stopped in a search or tuning): count the jobs of
        chosen = _chosen_lrs(store, pipeline)  # the protocols whose LR is known (fixed, or chosen earlier)
        known = [e for e in pipeline.with_base_lrs(chosen).protocols if e.label in chosen or not (e.search or e.tune)]
        summary.waiting = [e.label for e in pipeline.protocols if (e.search or e.tune) and e.label not in chosen]
        jobs = pipeline.kind.plan(dataclasses.replace(pipeline, protocols=tuple(known)), archs)[0] if known else []
        probe = pipeline.with_base_lrs({e.label: 1.0 for e in pipeline.protocols if e.search})  # stand-in LRs
        summary.jobs_total = len(pipeline.kind.plan(probe, archs)[0])
    keys = {j.key() for j in jobs}
    summary.jobs_done = sum(rows.get(k) in FINAL for k in keys)
    summary.failed = sum(status == Status.FAILED for status in rows.values())
    by_arch: dict[str, list[str]] = {}
    for j in jobs:
        by_arch.setdefault(j.arch, []).append(j.key())
    unresolved = summary.jobs_total > len(jobs)  # a protocol without jobs yet leaves every cell unfinished
    summary.cells_done = 0 if unresolved else sum(all(rows.get(k) in FINAL for k in ks) for ks in by_arch.values())
    summary.wall_s = round(time.monotonic() - start, 1)


def _chosen_lrs(store: Store, pipeline: Pipeline) -> dict[str, float]:
    """label -> LR of each searched or tuned protocol whose stage already chose for this pipeline:
    a search's choice (meta ``lr_search:<label>``, the shared search's for every searched
    protocol), a tuning's (meta ``tuning:<label>``) only when it tuned around the anchor the
    protocol has now (its fixed LR, or the search's choice: a search rerun under changed
    analysis settings may have moved it). The others are left out."""
    meta = store.meta()

    def stored(key: str) -> dict[str, Any]:
        try:
            doc = json.loads(meta[key]) if key in meta else {}
        except json.JSONDecodeError:
            return {}
        return doc if isinstance(doc, dict) else {}

    out = {}
    for e in pipeline.protocols:
        anchor = stored(f"lr_search:{pipeline.lr_search.protocol or e.label}").get("chosen_lr") if e.search \
            else e.protocol.lr
        tuning = stored(f"tuning:{e.label}")
        if e.tune and anchor is not None and tuning.get("anchor_lr") == anchor and tuning.get("lr") is not None:
            out[e.label] = float(tuning["lr"])
        elif e.search and not e.tune and anchor is not None:
            out[e.label] = float(anchor)
    return out


def _device_text(device: str) -> str:
    """The executor's device as a slice record names it, e.g. ``cpu (x86_64)`` or ``cuda (NVIDIA H100)``."""
    resolved = resolve_device(device)
    return f"{resolved} ({provenance(resolved)['device_name']})"


def _record_visit(store: Store, summary: SliceSummary, visit: dict[str, Any]) -> None:
    """Store meta ``visit:<n>`` (n = 1 + the slices recorded so far)."""
    n = 1 + sum(1 for _ in visit_records(store.path, store))
    facts = {**visit, **summary.to_json(), "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    facts.pop("run_dir", None)
    store.set_meta(f"visit:{n:03d}", json.dumps(facts))


def visit_records(path: str | Path, store: Store | None = None) -> list[dict[str, Any]]:
    """The ``visit:<n>`` records of a store file, in order (empty if it has none)."""
    own = store is None
    store = store or Store(path, readonly=True)
    try:
        meta = store.meta()
    finally:
        if own:
            store.close()
    return [json.loads(meta[k]) for k in sorted(meta) if k.startswith("visit:")]


def copy_store(src: str | Path, dst: str | Path) -> Path:
    """A consistent one-file copy of a (WAL) store: SQLite's online backup, no ``-wal`` beside it."""
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    tmp.unlink(missing_ok=True)
    source = sqlite3.connect(f"file:{Path(src).resolve()}?mode=ro", uri=True)
    target = sqlite3.connect(tmp)
    try:
        source.backup(target)
        target.execute("PRAGMA journal_mode=DELETE")
    finally:
        target.close()
        source.close()
    tmp.replace(dst)
    return dst
