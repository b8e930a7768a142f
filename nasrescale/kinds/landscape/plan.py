"""The per-architecture LR landscape (``kind = "landscape"``): every cell at every LR of a log
grid under one protocol, each cell's grid extended past an edge best (:mod:`.grid`).

A landscape pipeline is a retrain pipeline with one protocol and a ``[landscape]`` table::

    [pipeline]
    name = "my_landscape"
    kind = "landscape"
    seeds = [0, 1]
    reference = "nb201:cifar10"
    [protocols.flat]
    protocol = "nb201"
    init = "in_degree_source"       # the grid LR replaces the protocol's LR (lr_rule = "fixed")
    [landscape]
    lr_min = 0.1                    # grid: 0.1 x 2^(k/2) up to lr_max
    lr_max = 1.13
    points_per_octave = 2
    extend = 3                      # rounds of 2 more points past an edge best, per cell
    strata = [0.5]                  # optional: every path-depth-scale stratum must hold a cell
    reuse = "my_study"              # optional: copy finished runs of the same jobs from this store
    # centers = {"1_21_010" = 0.4}  # optional: each cell's grid is center_points LRs around its own

Every job is stored under the protocol's label; its LR tells the grid point. The plan (meta
``landscape_plan``) records the grid and each cell's path-depth scale, so the report needs only
the store. A time-limited run visits cells in spread order as a retrain does; each chunk's
cells are extended before the next chunk starts.

A cell's jobs share everything but LR and seed, so with ``executor.fuse`` on the executors'
:func:`~nasrescale.jobs.grouping.plan_units` trains each cell's grid LRs x seeds (and each
extension round's) as one fused group; every member is stored under its own job key.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any, Sequence

from ...errors import ConfigError, NasRescaleError
from ...jobs.job import TrainJob
from ...pipeline.execute import RunJobs, extend_rounds
from ...pipeline.protocols import protocol_keys
from ...pipeline.reuse import check_reuse
from ...space.topology import is_degenerate, lr_scale, sum_depth_cubed
from ...store.job_status import FINAL, Status
from ...store.migration import parse_record
from ...store.record import LANDSCAPE_PLAN_KEY
from ...store.schema import frozen_json
from ...store.sqlite_store import Store
from .grid import cell_grid
from .settings import LandscapeSettings

__all__ = ["landscape_plan", "landscape_jobs", "extend_cells", "check_landscape", "resolved_settings",
           "refresh_analysis", "ANALYSIS_SETTINGS"]


def _entry(pipeline: Any) -> Any:
    if len(pipeline.protocols) != 1:
        labels = ", ".join(e.label for e in pipeline.protocols)
        raise ConfigError(f"protocols: a landscape trains one protocol at every grid LR; got {len(pipeline.protocols)} "
                          f"({labels}): keep one [protocols.<label>] table (one landscape per protocol)")
    return pipeline.protocols[0]


def resolved_settings(pipeline: Any) -> LandscapeSettings:
    """``[landscape]`` with its ``centers`` keyed by canonical cell (any of the family's encodings
    may name a cell in the file); a key that is no cell is a ConfigError naming it."""
    settings = pipeline.table("landscape")
    centers = {}
    for key, lr in settings.centers.items():
        try:
            centers[pipeline.arch_cells([key])[0].text] = lr
        except NasRescaleError as err:
            raise ConfigError(f"landscape.centers.{key}: {err}") from None
    return dataclasses.replace(settings, centers=centers)


def landscape_jobs(pipeline: Any, arch: str, ks: Sequence[int]) -> list[TrainJob]:
    """The jobs of ``arch`` at grid indices ``ks`` x the pipeline's seeds."""
    entry, settings, budget = _entry(pipeline), pipeline.table("landscape"), pipeline.budget
    cell = pipeline.arch_cells([arch])[0]
    with protocol_keys(entry.label):
        return [TrainJob(cell, pipeline.family(), pipeline.data_spec(),
                         dataclasses.replace(entry.protocol, lr=settings.lr(k), lr_rule="fixed"), seed,
                         budget.width, budget.cells, entry.label)
                for k in ks for seed in pipeline.pipeline.seeds]


def check_landscape(pipeline: Any, run_dir: Path) -> None:
    """What a landscape needs before its store is created: every stratum ``landscape.strata`` cuts
    holds a selected cell, and the ``reuse`` store exists; else a ConfigError naming the key."""
    family, settings = pipeline.family(), pipeline.table("landscape")
    scales = {}
    for cell in pipeline.arch_cells(pipeline.arch_list()):
        arch, graph = cell.text, cell.graph
        if not is_degenerate(graph, family):
            scales[arch] = lr_scale(graph, family)
    edges = [0.0, *settings.strata, math.inf]
    for lo, hi in zip(edges, edges[1:]):
        if not any(lo <= s < hi for s in scales.values()):
            where = f"[{lo:g}, {hi:g})" if math.isfinite(hi) else f">= {lo:g}"
            raise ConfigError(f"landscape.strata: no selected cell has a path-depth scale {where}; add such cells "
                              f"to [archs] (nasrescale analyze shows a cell's scale) or drop that threshold")
    check_reuse(pipeline, run_dir)


def landscape_plan(pipeline: Any, archs: Sequence[str]) -> tuple[list[TrainJob], dict[str, str]]:
    """Every live cell's initial grid x seeds, and the plan meta (:data:`LANDSCAPE_PLAN_KEY`)."""
    entry, family, settings = _entry(pipeline), pipeline.family(), resolved_settings(pipeline)
    cells: dict[str, dict[str, Any]] = {}
    for arch, cell in zip(archs, pipeline.arch_cells(archs)):
        graph = cell.graph
        dead = is_degenerate(graph, family)
        cells[arch] = {"lr_scale": None if dead else lr_scale(graph, family), "degenerate": dead,
                       "sum_l3": sum_depth_cubed(graph, family)}
    jobs = [job for arch in archs if not cells[arch]["degenerate"] for job in landscape_jobs(pipeline, arch, settings.initial_ks(arch))]
    plan = {"label": entry.label, "seeds": list(pipeline.pipeline.seeds), "settings": dataclasses.asdict(settings),
            "epochs": entry.protocol.epochs, "cells": cells}
    return jobs, {LANDSCAPE_PLAN_KEY: json.dumps(plan, sort_keys=True)}


def _curves(store: Store, settings: LandscapeSettings) -> dict[str, dict[int, list[float]]]:
    """``arch -> k -> finished accuracies`` from the store (diverged: ``nan``)."""
    out: dict[str, dict[int, list[float]]] = {}
    for row in store.rows():
        if row["status"] not in FINAL or row.get("lr") is None:
            continue
        acc = row.get("test_accuracy")
        ok = row["status"] == Status.DONE and acc is not None and math.isfinite(acc)
        k = round(settings.k_of(row["lr"]))
        out.setdefault(row["arch"], {}).setdefault(k, []).append(acc if ok else math.nan)
    return out


def extend_cells(pipeline: Any, archs: Sequence[str], store: Store, run: RunJobs,
                 progress: bool = False) -> tuple[int, int, int]:
    """Train each cell's extension points (:func:`~.grid.cell_grid`)
    round by round until no cell of ``archs`` needs more; returns the summed run counts."""
    settings = resolved_settings(pipeline)
    live = [a for a, cell in zip(archs, pipeline.arch_cells(archs)) if not is_degenerate(cell.graph, pipeline.family())]

    def next_jobs() -> list[TrainJob]:
        curves, stored = _curves(store, settings), {row["key"] for row in store.rows()}
        jobs = []
        for arch in live:  # only grid points new to the store (a failed run is retried by a rerun, not here)
            jobs += [job for job in landscape_jobs(pipeline, arch, cell_grid(settings, curves.get(arch, {}), arch))
                     if job.key() not in stored]
        return jobs

    return extend_rounds(settings.extend, next_jobs, run, _announce if progress else None)


def _announce(jobs: list[TrainJob]) -> str:
    return f"extending {len({j.arch for j in jobs})} cell(s) past an edge best: {len(jobs)} more runs"


#: settings that only say how stored runs are read: a rerun brings the stored plan's up to date
ANALYSIS_SETTINGS = ("reuse", "study", "top_percent", "criterion", "recipe", "compare")


def refresh_analysis(pipeline: Any, store: Store) -> bool:
    """Write the pipeline's analysis-only ``[landscape]`` settings (:data:`ANALYSIS_SETTINGS`) into
    the stored plan, so the report reads the ones the user ran with last; the grid, the cells and
    every stored result are left as they are. Whether the plan changed."""
    plan = parse_record(store.meta(), str(store.path)).landscape_plan
    if plan is None:
        return False
    now = dataclasses.asdict(resolved_settings(pipeline))
    fresh = {k: frozen_json(now[k]) for k in ANALYSIS_SETTINGS if getattr(plan.settings, k) != frozen_json(now[k])}
    if not fresh:
        return False
    keys = plan.settings.keys + tuple(k for k in fresh if k not in plan.settings.keys)
    settings = dataclasses.replace(plan.settings, **fresh, keys=keys)
    store.set_meta(LANDSCAPE_PLAN_KEY, json.dumps(dataclasses.replace(plan, settings=settings).to_json(), sort_keys=True))
    return True
