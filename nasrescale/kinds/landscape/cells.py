"""Each cell's landscape read from a store: accuracies per grid LR and seed, its own best LR.

:func:`read_cells` turns a landscape store (its record's plan and its job rows) into one
:class:`CellLandscape` per cell whose grid is complete (every run finished and no extension
pending), with the best LR by argmax and by the vertex of a quadratic through the best and its
neighbours in log LR (:func:`~nasrescale.kinds.landscape.grid.vertex`), a bootstrap interval of
the vertex over seeds and the cross-fitted oracle (chosen on one seed, scored on another).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import DataError
from ...report.common.records import epoch_history
from .grid import best_k, bootstrap_best, cell_grid, cross_fit, vertex
from .settings import LandscapeSettings
from ...store.job_status import FINAL, Status
from ...store.plans import LandscapePlanRecord
from ...store.read import StoreData

__all__ = ["CellLandscape", "read_plan", "read_cells", "cell_of"]


@dataclass(frozen=True)
class CellLandscape:
    """One cell's finished landscape.

    Attributes:
        arch: the cell.
        lr_scale: its path-depth LR scale (the rule's prediction up to one constant).
        sum_l3: its sum over paths of the path depth cubed.
        acc: ``k -> accuracies`` in seed order (``nan``: the run diverged).
        best: grid index of the largest mean accuracy.
        vertex: fractional grid index of the quadratic's vertex (``best`` at an edge).
        edge: ``low``/``high`` when the best is still at the cell's grid edge (extension cap reached).
        vertex_ci: bootstrap 95% interval of the vertex over seeds (``None``: one seed).
        cross: per seed ``(k chosen on the other seeds, this seed's accuracy there)`` (``None``: one seed).
        elr: ``k -> (first-epoch, last-epoch)`` effective step of the runs there, the epoch's LR
            times the median over live layers of ``|grad W| / |W|`` (geometric mean over seeds;
            absent where no run recorded one).
    """

    arch: str
    lr_scale: float
    sum_l3: float
    acc: dict[int, list[float]] = field(repr=False)
    best: int
    vertex: float
    edge: str | None
    vertex_ci: tuple[float, float] | None
    cross: list[tuple[int, float]] | None = field(repr=False)
    elr: dict[int, tuple[float, float]] = field(default_factory=dict, repr=False)

    def at(self, k: int) -> list[float]:
        """This cell's accuracies per seed at grid index ``k`` (its nearest measured one)."""
        return self.acc[min(self.acc, key=lambda j: (abs(j - k), j))]


def read_plan(store: StoreData) -> tuple[LandscapePlanRecord, LandscapeSettings]:
    """The stored plan (from the run's record) and its settings.

    Raises:
        DataError: the store holds no landscape plan.
    """
    plan = store.record.landscape_plan
    if plan is None:
        raise DataError(f"{str(store.path)!r} holds no landscape run (no landscape plan in its store)")
    stored = plan.settings
    return plan, LandscapeSettings(**{name: getattr(stored, name) for name in stored.fields()})


def _elr(record_json: Any) -> tuple[float, float] | None:
    """A run's effective step ``lr x median over live layers of |grad W| / |W|`` in its first and
    last recorded epoch (``lr``: that epoch's scheduled LR; a layer whose ELR is 0 is dead, its
    weights or their gradient zero, and left out); ``None`` without one.

    >>> _elr('{"history": [{"lr": 0.5, "elr": [0.2, 0.0, 0.4]}, {"lr": 0.1, "elr": [0.1, 0.0, 0.3]}]}')
    (0.15, 0.02)
    """
    steps = [float(h.lr) * float(np.median(live)) for h in epoch_history(record_json)
             if h.lr is not None and (live := [e for e in h.elr if e > 0])]
    return (round(steps[0], 12), round(steps[-1], 12)) if steps else None


def _elrs(store: StoreData, settings: LandscapeSettings) -> dict[str, dict[int, tuple[float, float]]]:
    """``arch -> k -> (first, last)`` ELR medians, geometric means over the finished runs that recorded one."""
    by: dict[str, dict[int, list[tuple[float, float]]]] = {}
    if "record_json" not in store.jobs:
        return {}
    for row in store.jobs[store.jobs["status"] == Status.DONE].to_dict("records"):
        elr = _elr(row.get("record_json"))
        if elr is not None and min(elr) > 0 and row.get("lr"):
            by.setdefault(row["arch"], {}).setdefault(round(settings.k_of(float(row["lr"]))), []).append(elr)
    return {a: {k: tuple(float(np.exp(np.mean(np.log(col)))) for col in zip(*v)) for k, v in ks.items()}
            for a, ks in by.items()}


def _accuracies(store: StoreData, settings: LandscapeSettings, seeds: list[int]) -> dict[str, dict[int, list[float]]]:
    """``arch -> k -> accuracies in seed order``, only where every seed finished."""
    by: dict[str, dict[int, dict[int, float]]] = {}
    for row in store.jobs.to_dict("records"):
        if row["status"] not in FINAL or row.get("lr") is None or math.isnan(row["lr"]):
            continue
        acc = row.get("test_accuracy")
        ok = row["status"] == Status.DONE and acc is not None and math.isfinite(acc)
        k = round(settings.k_of(float(row["lr"])))
        by.setdefault(row["arch"], {}).setdefault(k, {})[int(row["seed"])] = float(acc) if ok else math.nan
    return {arch: {k: [runs[s] for s in seeds] for k, runs in sorted(ks.items()) if all(s in runs for s in seeds)}
            for arch, ks in by.items()}


def read_cells(store: StoreData, n_boot: int = 1000) -> tuple[list[CellLandscape], int]:
    """The cells whose landscape is complete, in the plan's order, and how many are not yet."""
    plan, settings = read_plan(store)
    acc = _accuracies(store, settings, list(plan.seeds))
    elrs = _elrs(store, settings)
    out, pending = [], 0
    for arch, info in plan.cells.items():
        if info.degenerate:
            continue
        curve = acc.get(arch, {})
        grid = cell_grid(settings, curve, arch)
        if not curve or any(k not in curve for k in grid):
            pending += 1
            continue
        cell = cell_of(arch, float(info.lr_scale), float(info.sum_l3), curve, n_boot, elrs.get(arch, {}))
        if cell is None:
            pending += 1
            continue
        out.append(cell)
    return out, pending


def cell_of(arch: str, lr_scale: float, sum_l3: float, curve: dict[int, list[float]], n_boot: int = 1000,
            elr: dict[int, tuple[float, float]] | None = None) -> CellLandscape | None:
    """One cell's landscape from its finished grid ``curve`` (``None`` when every LR has a diverged
    seed); ``n_boot = 0`` skips the vertex's bootstrap.

    >>> c = cell_of("a", 0.5, 8.0, {0: [60.0, 61.0], 1: [64.0, 63.0], 2: [62.0, 62.5]}, n_boot=0)
    >>> c.best, c.edge, c.cross
    (1, None, [(1, 64.0), (1, 63.0)])
    """
    best = best_k(curve)
    if best is None:
        return None
    v, edge = vertex(curve)
    edge = edge if best in (min(curve), max(curve)) else None
    return CellLandscape(arch, lr_scale, sum_l3, curve, best, float(v if v is not None else best), edge,
                         bootstrap_best(curve, n_boot) if n_boot else None, cross_fit(curve), elr or {})


def mean_at(cell: CellLandscape, k: int) -> float:
    """The cell's mean accuracy over seeds at grid index ``k`` (nearest measured)."""
    return float(np.mean(cell.at(k)))
