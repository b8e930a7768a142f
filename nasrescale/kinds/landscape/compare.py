"""The same cells in another landscape, e.g. at another budget: does each cell's best LR move,
and does it move with path depth?

``landscape.compare`` names another landscape run that shares cells with this one (a 24-epoch
landscape beside the 6-epoch one its grids were centred on). On the cells both have finished,
:func:`compare_landscapes` gives each cell's best LR in both (the quadratic's vertex, as the
slope uses) and its shift ``log2(here / there)``; the slope of log(best LR) on log(path-depth
scale) in each run on those cells; and their difference, the slope of the log shift on log
scale (least squares, Student-t 95% interval, :func:`~nasrescale.lrsearch.rule_stats.loglog_slope`):
0 where the budget moves every cell's best LR alike, +1 where it adds the whole rule. Beside it
the mean shift with its interval, the rank agreement of the best LRs (Spearman) and, in each
run on the shared cells, what each cell's own LR gains over one global LR.

>>> from nasrescale.kinds.landscape.cells import cell_of
>>> def cell(arch, scale, peak):  # accuracy peaks at grid index ``peak`` (0.1 x 2^(k/2))
...     return cell_of(arch, scale, 1.0, {k: [70.0 - (k - peak) ** 2] * 2 for k in range(peak - 2, peak + 3)}, 0)
>>> there = [cell("a", 1.0, 4), cell("b", 0.5, 4), cell("c", 0.25, 4)]
>>> here = [cell("a", 1.0, 6), cell("b", 0.5, 4), cell("c", 0.25, 2)]  # the rule's slope appears
>>> lr = lambda k: 0.1 * 2 ** (k / 2)
>>> out = compare_landscapes("short", 6, here, lr, there, lr, n_boot=0)
>>> out["n"], [round(x, 3) for x in (out["slope_here"], out["slope_there"], out["slope_diff"])]
(3, [1.0, 0.0, 1.0])
>>> [round(c["shift"], 3) for c in out["cells"]]
[1.0, 0.0, -1.0]
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np
from scipy import stats

from ...lrsearch.rule_stats import loglog_slope
from .cells import CellLandscape
from .stats import arm_scores, headroom

__all__ = ["compare_landscapes"]


def _t_interval(values: Sequence[float]) -> list[float] | None:
    """Student-t 95% interval of the mean (``None`` below 3 values or with no spread)."""
    if len(values) < 3 or float(np.std(values)) == 0.0:
        return None
    half = float(stats.t.ppf(0.975, len(values) - 1) * stats.sem(values))
    return [float(np.mean(values)) - half, float(np.mean(values)) + half]


def _gain(cells: Sequence[CellLandscape], per_octave: int, n_boot: int) -> dict[str, Any] | None:
    """Oracle minus global on ``cells`` (:func:`~.stats.headroom`), where 3 cells or more."""
    if len(cells) < 3:
        return None
    gap = headroom(arm_scores(cells, per_octave), max(n_boot, 99))["oracle-global"]
    return {"mean": gap["mean"], "ci": gap["ci"] if n_boot else None}


def compare_landscapes(other: str, other_epochs: int | None, here: Sequence[CellLandscape],
                       lr: Callable[[float], float], there: Sequence[CellLandscape],
                       other_lr: Callable[[float], float], per_octave: int = 2, other_per_octave: int = 2,
                       n_boot: int = 2000) -> dict[str, Any]:
    """This landscape's cells ``here`` (grid LR ``lr``) against run ``other``'s ``there``, on the
    cells both finished (module docstring); ``n_boot``: the headroom's bootstrap (0: no interval)."""
    theirs = {c.arch: c for c in there}
    shared = [c for c in here if c.arch in theirs]
    out: dict[str, Any] = {"run": other, "epochs": other_epochs, "n": len(shared)}
    if len(shared) < 3:
        return out
    scales = [c.lr_scale for c in shared]
    mine = [lr(c.vertex) for c in shared]
    other_best = [other_lr(theirs[c.arch].vertex) for c in shared]
    shift = [math.log2(a / b) for a, b in zip(mine, other_best)]
    fits = {name: loglog_slope(scales, ys) for name, ys in
            (("here", mine), ("there", other_best), ("diff", [a / b for a, b in zip(mine, other_best)]))}
    for name, (slope, lo, hi) in fits.items():
        out[f"slope_{name}"], out[f"slope_{name}_ci"] = slope, None if slope is None else [lo, hi]
    out |= {"shift_mean": float(np.mean(shift)), "shift_ci": _t_interval(shift),
            "shift_median": float(np.median(shift)),
            "spearman": (float(stats.spearmanr(mine, other_best)[0])
                         if len(set(mine)) > 1 and len(set(other_best)) > 1 else None),
            "edge": sum(bool(c.edge) or bool(theirs[c.arch].edge) for c in shared),
            "gain_here": _gain(shared, per_octave, n_boot),
            "gain_there": _gain([theirs[c.arch] for c in shared], other_per_octave, n_boot),
            "cells": [{"arch": c.arch, "lr_scale": c.lr_scale, "best_lr": a, "other_best_lr": b, "shift": s}
                      for c, a, b, s in zip(shared, mine, other_best, shift)]}
    return out
