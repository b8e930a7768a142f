"""Running jobs through the store: insert them, run what has no final result, store each outcome.

:func:`run_jobs` is the one path from jobs to stored results (every stage of a run uses it);
:func:`run_chunks` runs a list of chunks through it until a deadline; :func:`run_search` is the
one LR-search driver, of ``base_lr = "search"`` and of ``nasrescale lr-search``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..executors import get_executor
from ..errors import ConfigError
from ..executors.base import Executor, ExecutorSettings, Outcome
from ..jobs.job import TrainJob
from ..lrsearch.search import LrSearchSettings, losses_from_rows, plot_selection, selection_json
from ..lrsearch.select import Selection, select_lr
from ..store.job_status import FINAL, Status
from ..store.sqlite_store import Store
from .run_threads import run_threads

__all__ = ["run_jobs", "run_search", "run_chunks", "job_rows", "whole_cells_within", "Pace", "RunJobs", "RunCounter",
           "extend_rounds", "widen_again"]

#: runs jobs through the store and executor; returns ``(jobs, new jobs, jobs run now)``
RunJobs = Callable[[list[TrainJob]], tuple[int, int, int]]


def run_jobs(store: Store, jobs: list[TrainJob], settings: ExecutorSettings, checkpoints: Path, *,
             progress: bool = True, executor: Executor | None = None) -> tuple[int, int, int]:
    """Insert ``jobs`` into ``store`` (as pending, if new) and run those without a final result.

    Returns:
        ``(jobs, new jobs, jobs run now)``.
    """
    by_key = {job.key(): job for job in jobs}
    new = store.add_jobs(job_rows(by_key.values()))
    todo = [by_key[k] for k in store.runnable() if k in by_key]
    if todo:
        settings = run_threads(store, settings)  # picked once per run, kept on resume
        runner = executor or get_executor(settings, checkpoint_dir=checkpoints, progress=progress)

        def on_outcome(outcome: Outcome) -> None:
            store.finish(outcome.key, outcome.status, outcome.record, outcome.error, outcome.attempts)
            if outcome.status != Status.FAILED:  # stored for good: the checkpoint has served
                (checkpoints / f"{outcome.key}.pt").unlink(missing_ok=True)
            if outcome.status == Status.FAILED and progress:
                print(f"job {outcome.key} failed: {(outcome.error or '').splitlines()[0]}", file=sys.stderr)

        runner.run(todo, on_outcome, store.mark_running)
    return len(by_key), new, len(todo)


class RunCounter:
    """A :data:`RunJobs` that adds up what its calls ran, a call cut short included.

    ``counts`` sums the ``(jobs, new jobs, jobs run now)`` of the calls that returned; ``ran``
    is their jobs run now plus, for a call stopped by Ctrl-C or SIGTERM (whose own count is
    lost with it), the jobs it stored a final result for before it was stopped: what a
    driver's record says it ran is what the store gained, however the driver ended.
    """

    def __init__(self, run: RunJobs, store: Store) -> None:
        self.run, self.store = run, store
        self.counts, self.ran = (0, 0, 0), 0

    def __call__(self, jobs: list[TrainJob]) -> tuple[int, int, int]:
        keys = {job.key() for job in jobs}
        before = self._final(keys)
        try:
            out = self.run(jobs)
        except KeyboardInterrupt:
            self.ran += len(self._final(keys) - before)
            raise
        self.counts = (self.counts[0] + out[0], self.counts[1] + out[1], self.counts[2] + out[2])
        self.ran += out[2]
        return out

    def _final(self, keys: set[str]) -> set[str]:
        return {r["key"] for r in self.store.rows() if r["key"] in keys and r["status"] in FINAL}


def job_rows(jobs: Iterable[TrainJob]) -> Iterator[dict[str, Any]]:
    """The store rows of ``jobs`` (:meth:`~nasrescale.store.sqlite_store.Store.add_jobs`)."""
    return ({"key": j.key(), "arch": j.arch, "protocol": j.label, "seed": j.seed, "job_json": json.dumps(j.to_json())}
            for j in jobs)


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


@dataclass
class Pace:
    """The seconds a job that judge whether the next chunk fits, shared by every stage of a slice
    (the tuning's chunks, then the evaluation's).

    Attributes:
        per_job: the estimate: the slowest chunk timed so far, before that an earlier slice's
            (``None``: none yet, so the first chunk starts whatever the time left).
        timed: the slowest chunk this slice timed (``None``: none trained anything).
    """

    per_job: float | None = None
    timed: float | None = None

    def record(self, seconds: float, jobs: int) -> None:
        """A chunk of ``jobs`` jobs took ``seconds``: the slowest chunk so far is the estimate."""
        self.timed = max(self.timed or 0.0, seconds / jobs)
        self.per_job = self.timed  # a timed chunk replaces the prior estimate


def run_chunks(run: RunJobs, chunks: list[list[TrainJob]], deadline: float | None,
               log: Callable[[str], None], what: str = "chunk", pace: Pace | None = None) -> tuple[int, str]:
    """Run chunk after chunk until done, or until the next one would end past ``deadline``
    (``time.monotonic()`` seconds; ``None``: no limit), judged by ``pace`` (the slowest chunk so
    far, before the first an earlier slice's seconds a job), which each timed chunk updates. A
    chunk that does not fit whole runs the whole cells of it that do (:func:`whole_cells_within`),
    then its rest is judged again: the time left is used, and the next slice picks up what is left.

    Returns:
        ``(jobs run, why it stopped)``: ``""`` when every chunk ran.
    """
    pace = pace if pace is not None else Pace()
    ran, queue, i = 0, list(chunks), 0
    while i < len(queue):
        chunk = queue[i]
        fits, left = _what_fits(chunk, deadline, pace.per_job)
        if chunk and not fits:
            need = "" if pace.per_job is None else f", the next needs ~{pace.per_job * len(chunk):.0f} s"
            stopped = f"time: {len(queue) - i} {what}(s) left for the next slice ({left:.0f} s left{need})"
            log(f"slice: stopping before {what} {i + 1}/{len(queue)}: {stopped}")
            return ran, stopped
        if len(fits) < len(chunk):
            log(f"slice: {what} {i + 1}/{len(queue)} cut to the {len(fits)} of its {len(chunk)} jobs "
                f"(whole cells) that fit the {left:.0f} s left")
        t0 = time.monotonic()
        _, _, todo = run(fits)
        took = time.monotonic() - t0
        ran += todo
        if todo:
            pace.record(took, todo)
            log(f"slice: {what} {i + 1}/{len(queue)}: {todo} jobs in {took:.1f} s")
        if len(fits) < len(chunk):
            queue[i] = chunk[len(fits):]  # the rest of the chunk, judged again by the pace just timed
        else:
            i += 1
    return ran, ""


def _what_fits(chunk: list[TrainJob], deadline: float | None, per_job: float | None
               ) -> tuple[list[TrainJob], float]:
    """``(the jobs of chunk to run before deadline, the seconds left)``: the whole chunk when it fits
    (or no estimate says otherwise), else its whole cells that fit, or none."""
    if deadline is None:
        return chunk, float("inf")
    left = deadline - time.monotonic()
    if left <= 0:
        return [], left
    if per_job is None or per_job * len(chunk) <= left:
        return chunk, left
    return whole_cells_within(chunk, int(left // per_job)), left


def whole_cells_within(jobs: list[TrainJob], limit: int) -> list[TrainJob]:
    """The longest prefix of ``jobs`` that holds whole cells only (every job of each of its
    architectures, in order of first appearance) and at most ``limit`` jobs: what of a chunk
    fits the time left. Empty when not even its first cell fits.

    >>> from types import SimpleNamespace as Job
    >>> chunk = [Job(arch=a, seed=s) for a in "abc" for s in (0, 1)]
    >>> [f"{j.arch}{j.seed}" for j in whole_cells_within(chunk, 5)]
    ['a0', 'a1', 'b0', 'b1']
    >>> whole_cells_within(chunk, 1)
    []
    """
    cells: dict[str, list[TrainJob]] = {}
    for job in jobs:
        cells.setdefault(job.arch, []).append(job)
    out: list[TrainJob] = []
    for cell_jobs in cells.values():
        if len(out) + len(cell_jobs) > limit:
            break
        out += cell_jobs
    return out


# -- grids extended past their edges ------------------------------------------------------------
def extend_rounds(rounds: int, next_jobs: Callable[[], list[TrainJob]], run: RunJobs,
                  announce: Callable[[list[TrainJob]], str] | None = None,
                  after_round: Callable[[], None] = lambda: None) -> tuple[int, int, int]:
    """Up to ``rounds`` rounds of a grid's extensions: ``next_jobs()`` gives the round's new jobs
    (none: done), ``run`` runs them, then ``after_round()``; returns the summed run counts. With
    ``announce``, each round first prints its line about the round's jobs on stderr.

    >>> asked = iter([[1, 2], [3], []])
    >>> extend_rounds(5, lambda: next(asked), lambda jobs: (len(jobs), len(jobs), 0))
    (3, 3, 0)
    """
    totals = (0, 0, 0)
    for _ in range(rounds):
        jobs = next_jobs()
        if not jobs:
            break
        if announce is not None:
            print(announce(jobs), file=sys.stderr)
        counts = run(jobs)
        totals = (totals[0] + counts[0], totals[1] + counts[1], totals[2] + counts[2])
        after_round()
    return totals


def widen_again(round_: int, extend: int, edges: Iterable[str], refusal: Callable[[], str]) -> bool:
    """Whether a stage's grid is extended once more after round ``round_`` (0-based): yes while a
    choice sits at an edge (``edges``, the labels of those) and rounds remain; no when none does,
    or with ``extend = 0`` (an edge is then only flagged); after the last of ``extend`` rounds a
    choice still at an edge is a ConfigError whose message ``refusal()`` gives.

    >>> widen_again(0, 2, ["rescaled"], str), widen_again(0, 2, [], str), widen_again(0, 0, ["rescaled"], str)
    (True, False, False)
    >>> widen_again(2, 2, ["rescaled"], lambda: "tuning: still at the edge")
    Traceback (most recent call last):
    ...
    nasrescale.errors.ConfigError: tuning: still at the edge
    """
    if not list(edges) or extend == 0:
        return False
    if round_ == extend:
        raise ConfigError(refusal())
    return True
