"""The stages that fix a retrain pipeline's learning rates before its evaluation jobs.

1. **The LR search** (``base_lr = "search"``): the base architecture for one epoch at each LR of
   the ``[lr_search]`` grid (:func:`~nasrescale.pipeline.execute.run_search`); a choice at the
   grid's edge extends the grid past it by 4 grid steps, up to ``lr_search.extend`` times. With
   ``lr_search.protocol = "<label>"`` one search, trained with that protocol, gives every
   ``base_lr = "search"`` protocol its base LR (the paper's procedure: one base LR, then each
   architecture's scale). Meta: ``lr_search:<label>`` (the selection), ``base_lr:<label>``.
2. **The tuning** (``tune = true``, :mod:`nasrescale.lrsearch.tuning`): the protocol at its anchor
   LR (its base LR, or the search's choice) times each ``[tuning] multipliers`` on the tuning cells
   and seeds; the multiplier of the best mean test accuracy is kept, a best one at the grid's edge
   extends the grid (up to ``tuning.extend`` times). Meta: ``tuning:<label>`` (anchor,
   multipliers, mean accuracies, every run's accuracy, the choice), ``base_lr:<label>``.

Both stages' jobs are ordinary stored jobs (labels ``lr-search:<label>``, ``tune:<label>@x<m>``),
so a killed or time-limited run resumes them, and a finished stage is re-derived from its stored
results without running anything: a sliced run searches and tunes once. A stage that cannot
finish (every LR diverged, the edge persists after the extensions) raises :class:`ConfigError`
before any evaluation job is stored; with ``extend = 0`` an edge choice is only flagged.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import ConfigError, DataError
from ..jobs.job import TrainJob
from ..lrsearch.search import SEARCH_PREFIX, search_table, search_jobs
from ..lrsearch.select import Selection
from ..lrsearch.tuning import TuningChoice, chance_accuracy, choose_multiplier, extend_multipliers, tune_label
from ..store.job_status import Status
from ..store.record import base_lr_key, lr_search_key, tuning_key
from ..store.sqlite_store import Store
from .execute import Pace, RunJobs, run_chunks, run_search, widen_again
from .order import visit_cells
from .spec import Pipeline

__all__ = ["resolve_lrs", "tuning_cells", "tuned_lr", "SEARCH_EXTEND_STEPS"]

#: grid steps a search's grid grows past its edge per extension
SEARCH_EXTEND_STEPS = 4
#: classes per dataset (a diverged tuning run counts at chance accuracy, 100 / classes)


def resolve_lrs(pipeline: Pipeline, archs: Sequence[str], store: Store, run_dir: Path, run: RunJobs, *,
                deadline: float | None = None, progress: bool = True,
                log: Callable[[str], None] = print, pace: Pace | None = None) -> tuple[Pipeline | None, str]:
    """``pipeline`` with the LRs its search and tuning choose (itself when it has neither); the
    tuning's cells start only while ``pace`` (the slice's seconds a job) says they end by ``deadline``.

    Returns:
        ``(pipeline, "")``, or ``(None, why)`` when ``deadline`` stopped the tuning part-way.

    Raises:
        ConfigError: a stage that cannot finish (module docstring).
    """
    lrs: dict[str, float] = {}
    if pipeline.needs_search():
        lrs.update(_search_stage(pipeline, store, run_dir, run, progress))
    if pipeline.needs_tuning():
        anchors = {e.label: lrs.get(e.label, e.protocol.lr) for e in pipeline.protocols if e.tune}
        tuned, stopped = _tuning_stage(pipeline, archs, anchors, store, run, deadline, log, pace)
        if tuned is None:
            return None, stopped
        lrs.update(tuned)
    return (pipeline.with_base_lrs(lrs) if lrs else pipeline), ""


# -- the LR search ----------------------------------------------------------------------------
def _search_stage(pipeline: Pipeline, store: Store, run_dir: Path, run: RunJobs, progress: bool) -> dict[str, float]:
    """label -> the searched base LR, for every ``base_lr = "search"`` protocol."""
    searched = [e for e in pipeline.protocols if e.search]
    shared = pipeline.lr_search.protocol
    if shared is not None:
        entry = next(e for e in pipeline.protocols if e.label == shared)
        lr = _search(pipeline, entry.label, entry.protocol, store, run_dir, run, progress)
        for e in searched:
            store.set_meta(base_lr_key(e.label), json.dumps(lr))
        return {e.label: lr for e in searched}
    return {e.label: _search(pipeline, e.label, e.protocol, store, run_dir, run, progress) for e in searched}


def _search(pipeline: Pipeline, label: str, protocol: Any, store: Store, run_dir: Path, run: RunJobs,
            progress: bool) -> float:
    """One search (extended past an edge choice), its meta and its table; returns the chosen LR."""
    settings = pipeline.lr_search
    arch = settings.arch or pipeline.family().base
    cell = pipeline.arch_cells([arch])[0]
    grid = settings.grid()
    for round_ in range(settings.extend + 1):
        pairs = search_jobs(cell, pipeline.family(), pipeline.data_spec(), protocol, settings, SEARCH_PREFIX + label,
                            pipeline.budget.width, pipeline.budget.cells, lrs=grid)
        run([job for _, job in pairs])
        sel, _, _ = run_search(store, pairs, settings, pipeline.executor, run_dir, meta_key=lr_search_key(label),
                               plot=run_dir / f"lr_search_{label}.png",
                               title=f"{pipeline.name}: base-LR search for {label!r}",
                               info={"protocol": label, "extensions": round_}, progress=False)
        if not widen_again(round_, settings.extend, [label] if sel.edge else [], lambda: (
                f"lr_search: the choice for protocols.{label} is still at the grid's {sel.edge} edge after "
                f"{settings.extend} extension(s) (grid {grid[0]:g} .. {grid[-1]:g}); widen lr_search.lr_min/lr_max "
                "or raise lr_search.extend")):
            break
        grid = _extended(grid, sel)
    store.set_meta(base_lr_key(label), json.dumps(sel.chosen_lr))
    if progress:
        print(f"LR search for protocol {label!r} on {arch}:\n{search_table(sel, settings.seeds)}", file=sys.stderr)
    return sel.chosen_lr


def _extended(grid: list[float], sel: Selection) -> list[float]:
    """``grid`` with :data:`SEARCH_EXTEND_STEPS` more LRs past ``sel``'s edge, at the grid's ratio."""
    ratio = (grid[-1] / grid[0]) ** (1 / (len(grid) - 1)) if len(grid) > 1 else 2.0
    if sel.edge == "high":
        return grid + [float(f"{grid[-1] * ratio ** k:.6g}") for k in range(1, SEARCH_EXTEND_STEPS + 1)]
    return [float(f"{grid[0] / ratio ** k:.6g}") for k in range(SEARCH_EXTEND_STEPS, 0, -1)] + grid


# -- the tuning -------------------------------------------------------------------------------
def tuning_cells(pipeline: Pipeline, archs: Sequence[str]) -> list[str]:
    """The tuning cells: positions ``offset`` .. ``offset + cells - 1`` of the visiting order.

    Raises:
        ConfigError: the pipeline has fewer cells than that.
    """
    t = pipeline.tuning
    order = visit_cells(list(archs))
    if t.offset + t.cells > len(order):
        raise ConfigError(f"tuning: offset {t.offset} + cells {t.cells} exceeds the pipeline's {len(order)} cells; "
                          "lower tuning.offset or tuning.cells, or select more cells")
    return order[t.offset:t.offset + t.cells]


def _tuning_stage(pipeline: Pipeline, archs: Sequence[str], anchors: dict[str, float], store: Store, run: RunJobs,
                  deadline: float | None, log: Callable[[str], None],
                  pace: Pace | None) -> tuple[dict[str, float] | None, str]:
    """label -> anchor x best multiplier for every ``tune = true`` protocol, or ``(None, why)``."""
    t, cells = pipeline.tuning, tuning_cells(pipeline, archs)
    grids = {label: list(t.multipliers) for label in anchors}
    chance = chance_accuracy(pipeline.data.name)
    for round_ in range(t.extend + 1):
        jobs = {label: {m: _tuning_jobs(pipeline, label, anchors[label], m, cells) for m in grid}
                for label, grid in grids.items()}
        final = set(_accuracies(store))
        chunks = [[j for per in jobs.values() for js in per.values() for j in js if j.arch == cell and j.key() not in final]
                  for cell in cells]
        chunks = [c for c in chunks if c]
        _, stopped = run_chunks(run, chunks, deadline, log, what="tuning cell", pace=pace)
        if stopped:
            return None, stopped
        _refuse_failed(store, [j for per in jobs.values() for js in per.values() for j in js])
        accuracies = _accuracies(store)
        choices = {label: choose_multiplier({m: [accuracies.get(j.key()) for j in js] for m, js in per.items()}, chance)
                   for label, per in jobs.items()}
        edges = [label for label, c in choices.items() if c.edge is not None]
        if not widen_again(round_, t.extend, edges, lambda: (
                f"tuning: the best multiplier of protocols.{edges[0]} is still at the grid's {choices[edges[0]].edge} "
                f"edge after {t.extend} extension(s) ({grids[edges[0]]}); widen tuning.multipliers or raise "
                "tuning.extend")):  # extend = 0: an edge is only flagged (meta tuning:<label>)
            break
        grids.update({label: extend_multipliers(grids[label], choices[label].edge) for label in edges})
    return {label: _record_choice(store, label, anchors[label], choices[label], jobs[label], cells, t.seeds)
            for label in choices}, ""


def _tuning_jobs(pipeline: Pipeline, label: str, anchor: float, multiplier: float, cells: list[str]) -> list[TrainJob]:
    entry = next(e for e in pipeline.protocols if e.label == label)
    protocol = dataclasses.replace(entry.protocol, lr=tuned_lr(anchor, multiplier))
    return [TrainJob(cell, pipeline.family(), pipeline.data_spec(), protocol, seed, pipeline.budget.width,
                     pipeline.budget.cells, tune_label(label, multiplier))
            for cell in pipeline.arch_cells(cells) for seed in pipeline.tuning.seeds]


def tuned_lr(anchor: float, multiplier: float) -> float:
    """The LR of ``anchor`` x ``multiplier``, to 6 significant digits (so it keys stably).

    >>> tuned_lr(0.1, 0.25), tuned_lr(0.4634, 2.0)
    (0.025, 0.9268)
    """
    return float(f"{anchor * multiplier:.6g}")


def _refuse_failed(store: Store, jobs: list[TrainJob]) -> None:
    """DataError if a tuning run failed: a multiplier chosen without it could differ from the one
    chosen once it is retried, and the evaluation would then mix two LRs under one label."""
    status = {r["key"]: r["status"] for r in store.rows()}
    failed = [j for j in jobs if status.get(j.key()) == Status.FAILED]
    if failed:
        raise DataError(f"tuning: {len(failed)} run(s) of the grid failed (the first: {failed[0].label}, "
                        f"{failed[0].arch}, seed {failed[0].seed}); no multiplier is chosen without them: "
                        "rerun the same command to retry them (`nasrescale status` shows their errors)")


def _accuracies(store: Store) -> dict[str, float | None]:
    """key -> test accuracy of every finished job (``None``: diverged)."""
    out: dict[str, float | None] = {}
    for r in store.rows():
        if r["status"] == Status.DONE:
            out[r["key"]] = r["test_accuracy"]
        elif r["status"] == Status.DIVERGED:
            out[r["key"]] = None
    return out


def _record_choice(store: Store, label: str, anchor: float, choice: TuningChoice,
                   jobs: dict[float, list[TrainJob]], cells: list[str], seeds: Sequence[int]) -> float:
    """Store meta ``tuning:<label>`` and ``base_lr:<label>``; returns the tuned LR."""
    accuracies = _accuracies(store)
    lr = tuned_lr(anchor, choice.chosen)
    runs = {f"{m:g}": [{"arch": j.arch, "seed": j.seed, "key": j.key(), "test_accuracy": accuracies.get(j.key())}
                       for j in js] for m, js in jobs.items()}
    doc = {"protocol": label, "anchor_lr": anchor, "criterion": "mean test accuracy over the tuning cells and seeds",
           "cells": cells, "seeds": list(seeds), **choice.to_json(), "lr": lr, "runs": runs}
    store.set_meta(tuning_key(label), json.dumps(doc))
    store.set_meta(base_lr_key(label), json.dumps(lr))
    return lr
