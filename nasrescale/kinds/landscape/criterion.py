"""The paper's own LR criterion on the landscape's cells, beside the accuracy-optimal LR.

The paper measures a network's "maximal LR" as the LR of the smallest training loss after one
epoch at constant LR (Chen et al., ICLR 2024, §4; ``kind = "lr_validation"``). A landscape's
``criterion`` names such runs; for each, on the cells it shares with the landscape, the report
gives the slope of log(maximal LR) on log(path-depth scale) beside the slope of the landscape's
accuracy-optimal LR on the same cells.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ...errors import NasRescaleError
from ...lrsearch.rule_stats import loglog_slope
from ...space.families import CellFamily
from ...space.isomorphism import first_of_each_class
from ...store.read import store_path
from ...store.record import RunRecord
from ...report.common.tobit import tobit
from ...report.common.validation_run import read_validation
from .cells import CellLandscape

__all__ = ["criterion_rows"]


def _row(of: str, source: str, lrs: dict[str, float], scales: dict[str, float], note: str = "",
         run: str | None = None, censor: dict[str, int] | None = None) -> dict[str, Any]:
    """One table row; ``of``: ``criterion`` (an lr_validation run's maximal LRs, ``run`` naming
    it) or ``landscape``; ``censor``: ``arch -> -1 / +1`` where an LR only bounds the cell's
    (a censored fit then, :func:`~nasrescale.report.common.tobit.tobit`)."""
    archs = sorted(lrs)
    if censor and any(censor.get(a) for a in archs) and len(archs) >= 3:
        fit = tobit(np.c_[np.ones(len(archs)), [math.log(scales[a]) for a in archs]],
                    np.log([lrs[a] for a in archs]), np.array([censor.get(a, 0) for a in archs]))
        slope, ci = fit["coef"][1], fit["ci"][1]
    else:
        slope, lo, hi = loglog_slope([scales[a] for a in archs], [lrs[a] for a in archs])
        ci = None if slope is None else [lo, hi]
    row = {"of": of, "source": source, "n": len(archs), "slope": slope, "slope_ci": ci, "note": note}
    return row | ({"run": run} if run is not None else {})


def _optimizer(record: RunRecord) -> str:
    """The optimizer a criterion run trained with, in words (from its record's first protocol).

    >>> from nasrescale.store.migration import record_of
    >>> plain = {"momentum": 0.0, "nesterov": False, "weight_decay": 0.0, "batch_size": 128}
    >>> _optimizer(record_of({"protocols": {"p": plain}}))
    'SGD, batch 128'
    >>> nesterov = {"momentum": 0.9, "nesterov": True, "weight_decay": 0.0005, "batch_size": 256}
    >>> _optimizer(record_of({"protocols": {"p": nesterov}}))
    'SGD, Nesterov momentum 0.9, weight decay 0.0005, batch 256'
    """
    p = next(iter(record.protocols.values()), None)
    if p is None:
        return "optimizer not recorded"
    parts = ["SGD"]
    if p.momentum:
        parts.append(f"{'Nesterov ' if p.nesterov else ''}momentum {p.momentum:g}")
    if p.weight_decay:
        parts.append(f"weight decay {p.weight_decay:g}")
    return ", ".join(parts + [f"batch {p.batch_size}"])


def criterion_rows(names: Sequence[str], cells: Sequence[CellLandscape], lr: Callable[[float], float],
                   results: Path, family: CellFamily | None = None) -> list[dict[str, Any]]:
    """Per named ``lr_validation`` run, its slope on the cells it shares with the landscape, after
    the landscape's own on them (once for runs that share the same cells). With ``family``, a cell
    isomorphic to an earlier one is counted once; a maximal LR at its grid's edge is a bound
    (censored fit)."""
    kept = first_of_each_class([c.arch for c in cells], family)[0] if family is not None else None
    mine = {c.arch: lr(c.vertex) for c in cells if kept is None or c.arch in kept}
    scales = {c.arch: c.lr_scale for c in cells}
    rows: list[dict[str, Any]] = []
    shown: list[set[str]] = []
    for name in names:
        try:
            run_dir = store_path(name, results).parent
            run = read_validation(run_dir)
        except (NasRescaleError, OSError) as err:
            rows.append({"of": "criterion", "run": name, "source": name, "n": 0, "slope": None, "slope_ci": None,
                         "note": f"not read: {err}"})
            continue
        points = run.analysis.points
        theirs = {p.arch: p.measured_lr for p in points if p.arch in mine and not p.base
                  and p.measured_lr and math.isfinite(p.measured_lr)}
        edge = sum(1 for p in points if p.arch in theirs and p.edge)
        censor = {p.arch: {"low": -1, "high": 1}[p.edge] for p in points if p.arch in theirs and p.edge}
        if set(theirs) not in shown:  # once per set of shared cells
            shown.append(set(theirs))
            rows.append(_row("landscape", "landscape (accuracy-optimal LR), same cells", {a: mine[a] for a in theirs}, scales))
        rows.append(_row("criterion", f"{name} (maximal LR, one epoch, {_optimizer(run.record)})", theirs, scales,
                         f"{edge} at a grid edge: a bound (censored fit)" if edge else "", run=name, censor=censor))
    return rows
