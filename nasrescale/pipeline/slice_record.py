"""A slice's record: what it did (:class:`SliceSummary`), where the store stands after it, and
its entry in the store's meta (``visit:<n>``), which the next slice's pacer and the reports read.

>>> import tempfile
>>> from nasrescale.store.sqlite_store import Store
>>> with tempfile.TemporaryDirectory() as tmp:
...     store = Store(Path(tmp) / "store.sqlite")
...     done = SliceSummary(Path(tmp), jobs_run=7, job_s=83.0, stopped="slice finished")
...     record_visit(store, done, {"device": "cpu (x86_64)"})
...     record_visit(store, SliceSummary(Path(tmp), jobs_run=0, stopped="interrupted"), {"device": "cpu (x86_64)"})
...     store.close()
...     [(v["jobs_run"], v["stopped"]) for v in visit_records(Path(tmp) / "store.sqlite")]
[(7, 'slice finished'), (0, 'interrupted')]
>>> with tempfile.TemporaryDirectory() as tmp:
...     store = Store(Path(tmp) / "store.sqlite")
...     record_visit(store, SliceSummary(Path(tmp), job_s=83.0), {"device": "cpu (x86_64)"})
...     record_visit(store, SliceSummary(Path(tmp)), {"device": "cpu (x86_64)"})  # timed no chunk
...     prior_per_job(store, "cpu (x86_64)"), prior_per_job(store, "cuda (NVIDIA H100)")
...     store.close()
(83.0, None)
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..jobs.record_fields import provenance, resolve_device
from ..store.job_status import FINAL, Status
from ..store.migration import parse_record
from ..store.record import RunRecord, visit_entries, visit_key
from ..store.sqlite_store import Store
from .spec import Pipeline

__all__ = ["SliceSummary", "copy_store", "device_text", "prior_per_job", "record_visit", "tally", "visit_records"]


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


def prior_per_job(store: Store, device: str) -> float | None:
    """The seconds a job of the slowest chunk of the last slice on ``device`` that timed one
    (its record's ``job_s``), or ``None`` if none did."""
    for visit in reversed(_record(store).visits):
        if visit.device == device and visit.job_s:
            return float(visit.job_s)
    return None


@dataclass(frozen=True)
class _Row:
    """A stored run of the pipeline that its plan does not list (a kind grew it: a landscape's extension)."""

    k: str
    arch: str

    def key(self) -> str:
        return self.k


def tally(store: Store, pipeline: Pipeline, archs: list[str], summary: SliceSummary, start: float, *,
            resolved: bool, jobs: list[Any] | None = None) -> None:
    """Where the store stands after the slice: finished and failed jobs and cells of the pipeline
    (``resolved``: its search and tuning chose their LRs, ``jobs`` then the pipeline's jobs where
    the caller has them; else only the other protocols' jobs are known: a tuned protocol's anchor
    LR is not its LR, so its jobs are not counted as done)."""
    stored = store.rows()
    rows = {r["key"]: r["status"] for r in stored}
    if resolved:
        jobs = pipeline.jobs(archs) if jobs is None else jobs  # the caller's jobs where it has them: planned once
        keys, names, labels = {j.key() for j in jobs}, {j.arch for j in jobs}, {e.label for e in pipeline.protocols}
        grown = [r for r in stored if r["protocol"] in labels and r["arch"] in names and r["key"] not in keys]
        jobs = [*jobs, *(_Row(r["key"], r["arch"]) for r in grown)]  # runs past the plan: a landscape's extensions
        summary.jobs_total = len(jobs)
    else:  # some LRs are not chosen yet (a slice stopped in a search or tuning): count the jobs of
        chosen = _chosen_lrs(store, pipeline)  # the protocols whose LR is known (fixed, or chosen earlier)
        known = [e for e in pipeline.with_base_lrs(chosen).protocols if e.label in chosen or not (e.search or e.tune)]
        summary.waiting = [e.label for e in pipeline.protocols if (e.search or e.tune) and e.label not in chosen]
        jobs = pipeline.kind.plan(dataclasses.replace(pipeline, protocols=tuple(known)), archs)[0] if known else []
        summary.jobs_total = len(pipeline.with_lrs_to_search().jobs(archs))  # counted, not run
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
    record = _record(store)
    out = {}
    for e in pipeline.protocols:
        search = record.searches.get(pipeline.lr_search.protocol or e.label)
        anchor = (search.chosen_lr if search is not None else None) if e.search else e.protocol.lr
        tuning = record.tunings.get(e.label)
        if e.tune and anchor is not None and tuning is not None and tuning.anchor_lr == anchor \
                and tuning.lr is not None:
            out[e.label] = float(tuning.lr)
        elif e.search and not e.tune and anchor is not None:
            out[e.label] = float(anchor)
    return out


def device_text(device: str) -> str:
    """The executor's device as a slice record names it, e.g. ``cpu (x86_64)`` or ``cuda (NVIDIA H100)``."""
    resolved = resolve_device(device)
    return f"{resolved} ({provenance(resolved)['device_name']})"


def record_visit(store: Store, summary: SliceSummary, visit: dict[str, Any]) -> None:
    """Store meta ``visit:<n>`` (n = 1 + the slices recorded so far)."""
    n = 1 + len(visit_entries(store.meta()))
    facts = {**visit, **summary.to_json(), "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    facts.pop("run_dir", None)
    store.set_meta(visit_key(n), json.dumps(facts))


def _record(store: Store) -> RunRecord:
    return parse_record(store.meta(), str(store.path))


def visit_records(path: str | Path, store: Store | None = None) -> list[dict[str, Any]]:
    """The ``visit:<n>`` records of a store file, in order, as stored (empty if it has none);
    the run record's :attr:`~nasrescale.store.record.RunRecord.visits` in their JSON form."""
    own = store is None
    store = store or Store(path, readonly=True)
    try:
        visits = _record(store).visits
    finally:
        if own:
            store.close()
    return [visit.to_json() for visit in visits]


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
