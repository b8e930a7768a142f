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

>>> spread_order(8)
[0, 4, 2, 6, 1, 5, 3, 7]
>>> spread_order(6)
[0, 3, 1, 4, 2, 5]
>>> sorted(spread_order(5)) == list(range(5))
True
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import ConfigError
from ..jobs.records import provenance, resolve_device
from ..store.job_status import FINAL
from ..store.read import run_dir_for
from ..store.write import Store
from .lock import driver_lock
from .preflight import check_data, check_executor, check_reference
from .runner import run_jobs
from .spec import Pipeline

__all__ = ["spread_order", "visit_cells", "SliceSummary", "run_slice", "copy_store", "visit_records"]


def _radical_inverse(k: int) -> float:
    """``k``'s binary digits mirrored behind the point (van der Corput): 0, 1/2, 1/4, 3/4, 1/8..."""
    value, scale = 0.0, 0.5
    while k:
        k, bit = divmod(k, 2)
        value, scale = value + bit * scale, scale / 2
    return value


def spread_order(n: int) -> list[int]:
    """``0..n-1`` in van der Corput order: for every power of two ``m <= n``, the first ``m``
    indices fall one in each of ``m`` equal parts of the range (and other prefixes nearly so)."""
    order: list[int] = []
    seen: set[int] = set()
    k = 0
    while len(order) < n:
        i = int(_radical_inverse(k) * n)
        if i not in seen:
            seen.add(i)
            order.append(i)
        k += 1
    return order


def visit_cells(archs: Sequence[str]) -> list[str]:
    """The pipeline's architectures in the order slices visit them."""
    return [archs[i] for i in spread_order(len(archs))]


@dataclass
class SliceSummary:
    """What one slice did: cells and jobs run now, what is finished overall, and the times."""

    run_dir: Path
    cells_run: list[str] = field(default_factory=list)
    jobs_run: int = 0
    jobs_done: int = 0
    jobs_total: int = 0
    cells_done: int = 0
    cells_total: int = 0
    wall_s: float = 0.0
    stopped: str = ""

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
              log: Callable[[str], None] = print, after_chunk: Callable[[], None] | None = None) -> SliceSummary:
    """Run up to ``max_cells`` unfinished cells of ``pipeline`` (spread order) within ``deadline_s``.

    Args:
        pipeline: a retrain pipeline with fixed base LRs.
        results: results root (default ``./results``).
        max_cells: the most cells this slice runs.
        deadline_s: seconds from now after which no chunk starts, and none starts that the
            measured time per cell says would end after it.
        chunk_cells: cells per executor call (default: the executor's ``jobs_per_gpu``).
        progress: the executor's progress bar.
        visit: extra facts recorded in the store's meta ``visit:<n>`` (device, data copy...).
        log: where one line per chunk goes.
        after_chunk: called after each chunk's results are stored (e.g. to copy the store out,
            so an allocation cut off later still keeps what it finished).

    Raises:
        ConfigError: an LR-validation pipeline or one whose base LR comes from a search, or a
            store holding a different pipeline under this name.
    """
    if not pipeline.kind.slices or pipeline.needs_search():
        raise ConfigError(f"a time-limited run (slices of cells) needs a retrain pipeline with fixed base LRs; "
                          f"{pipeline.name!r} is a {pipeline.kind.name} pipeline"
                          + (" with base_lr = \"search\"" if pipeline.needs_search() else "")
                          + "; run it without --time-limit/--max-cells")
    check_executor(pipeline.executor)  # what the jobs need, before anything is stored
    for spec, keys in pipeline.data_specs():
        check_data(spec, keys)
    start = time.monotonic()
    run_dir = run_dir_for(pipeline.name, results)
    archs = pipeline.arch_list()
    check_reference(pipeline, archs)
    jobs = pipeline.jobs(archs)
    jobs_by_arch: dict[str, list[Any]] = {a: [] for a in archs}
    for job in jobs:
        jobs_by_arch[job.arch].append(job)
    summary = SliceSummary(run_dir, jobs_total=len(jobs), cells_total=len(archs))
    size = max(1, chunk_cells or pipeline.executor.jobs_per_gpu)
    with driver_lock(run_dir):
        store = Store(run_dir / "store.sqlite")
        try:
            extra = {f"base_lr:{e.label}": json.dumps(e.protocol.lr) for e in pipeline.protocols}
            store.bind_pipeline(pipeline.name, pipeline.resolved(archs), pipeline.identity(archs), extra)
            store.add_jobs({"key": j.key(), "arch": j.arch, "protocol": j.label, "seed": j.seed,
                            "job_json": json.dumps(j.to_json())} for j in jobs)
            todo = _pending_cells(visit_cells(archs), jobs_by_arch, _final_keys(store))[:max_cells]
            _run_chunks(store, pipeline, run_dir, _chunks(todo, size), jobs_by_arch, start + deadline_s,
                        summary, progress, log, after_chunk)
            final = _final_keys(store)
            summary.jobs_done = len(final & {j.key() for j in jobs})
            summary.cells_done = sum(all(j.key() in final for j in jobs_by_arch[a]) for a in archs)
            summary.wall_s = round(time.monotonic() - start, 1)
            _record_visit(store, summary, {"device": _device_text(pipeline.executor.device), **(visit or {})})
        finally:
            store.close()
    return summary


def _run_chunks(store: Store, pipeline: Pipeline, run_dir: Path, chunks: list[list[str]],
                jobs_by_arch: dict[str, list[Any]], deadline: float, summary: SliceSummary, progress: bool,
                log: Callable[[str], None], after_chunk: Callable[[], None] | None) -> None:
    """Run chunk after chunk until done or the next one would end past ``deadline``."""
    per_cell: float | None = None
    for i, chunk in enumerate(chunks):
        left = deadline - time.monotonic()
        if left <= 0 or (per_cell is not None and per_cell * len(chunk) > left):
            summary.stopped = f"time: {len(chunks) - i} chunk(s) left for the next slice ({left:.0f} s left)"
            log(f"slice: stopping before chunk {i + 1}/{len(chunks)}: {summary.stopped}")
            return
        t0 = time.monotonic()
        chunk_jobs = [j for a in chunk for j in jobs_by_arch[a]]
        run_jobs(store, chunk_jobs, pipeline.executor, run_dir / "checkpoints", progress=progress)
        took = time.monotonic() - t0
        per_cell = max(per_cell or 0.0, took / len(chunk))  # the slowest chunk so far: a cautious estimate
        summary.cells_run += chunk
        summary.jobs_run += len(chunk_jobs)
        log(f"slice: chunk {i + 1}/{len(chunks)}: {len(chunk)} cell(s), {len(chunk_jobs)} jobs in {took:.1f} s")
        if after_chunk is not None:
            after_chunk()
    summary.stopped = "slice finished"


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
