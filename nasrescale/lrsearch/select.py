"""Picking the maximal learning rate from a grid (Chen et al., ICLR 2024, §4, step 1).

Each LR of a log-spaced grid is trained for a short run (one epoch by default) with several
seeds; :func:`select_lr` then applies the rule, a pure function of the per-LR losses:

1. An LR **diverged** if any of its seeds diverged (NaN/inf or missing loss): it loses.
2. The others are scored by the **mean over seeds** of the training loss at the end of the
   run (the last epoch's mean training loss, in nats).
3. Every LR whose mean loss is within ``rel_tol`` of the smallest one (``loss <= best * (1 +
   rel_tol)``, a *relative* tolerance, default 1%) is tied with it; the **largest** tied LR is
   chosen (the paper's "maximal" LR: the largest LR that trains fastest).
4. A choice at the grid's smallest or largest LR is flagged (``edge``): the true maximal LR
   may lie beyond the grid, so widen it.

>>> s = select_lr({0.1: [1.50, 1.52], 0.2: [1.40, 1.41], 0.4: [1.405, 1.41], 0.8: [float("nan"), 2.0]})
>>> s.chosen_lr, s.edge, s.diverged
(0.4, None, [0.8])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Mapping, Sequence

from ..errors import ConfigError, DataError

__all__ = ["Selection", "select_lr", "log_grid", "DEFAULT_REL_TOL"]

#: default relative tolerance for ties: 1% of the smallest mean loss
DEFAULT_REL_TOL = 0.01


@dataclass(frozen=True)
class Selection:
    """The outcome of :func:`select_lr`.

    Attributes:
        chosen_lr: the largest LR whose mean loss ties with the smallest (within ``rel_tol``).
        best_lr: the LR with the smallest mean loss itself.
        grid: every LR, ascending.
        mean_loss: mean final training loss per LR (``None`` for a diverged LR).
        losses: the per-seed losses per LR, as given (``None`` for a missing/diverged seed).
        diverged: the LRs that diverged (any seed), ascending.
        tied: the LRs within the tolerance of the best, ascending (``chosen_lr`` is the last).
        rel_tol: the relative tolerance used.
        edge: ``"low"`` or ``"high"`` when ``chosen_lr`` is the grid's smallest or largest LR
            (widen the grid that way), else ``None``.
    """

    chosen_lr: float
    best_lr: float
    grid: list[float]
    mean_loss: dict[float, float | None]
    losses: dict[float, list[float | None]]
    diverged: list[float]
    tied: list[float]
    rel_tol: float
    edge: Literal["low", "high"] | None = None

    def edge_message(self) -> str | None:
        """A sentence saying the choice is at the grid's edge, or ``None``."""
        if self.edge == "high":
            return (f"the chosen LR {self.chosen_lr:g} is the grid's largest: the maximal LR may be larger; "
                    "extend the grid upwards")
        if self.edge == "low":
            return (f"the chosen LR {self.chosen_lr:g} is the grid's smallest: the maximal LR may be smaller; "
                    "extend the grid downwards")
        return None


def _finite(x: float | None) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def select_lr(losses: Mapping[float, Sequence[float | None]], rel_tol: float = DEFAULT_REL_TOL) -> Selection:
    """Apply the maximal-LR rule (module docstring) to final training losses per LR.

    Args:
        losses: LR -> the final training loss of each seed (``None``/NaN/inf: diverged).
        rel_tol: relative tolerance of a tie (``>= 0``).

    Returns:
        The :class:`Selection`.

    Raises:
        ConfigError: an empty grid, a non-positive LR, an LR without seeds, or a negative tolerance.
        DataError: every LR diverged (lower the grid).

    >>> select_lr({0.01: [2.0], 0.1: [1.0], 1.0: [1.005]}).chosen_lr   # a tie within 1%: the larger
    1.0
    >>> select_lr({0.01: [2.0], 0.1: [1.0], 1.0: [1.05]}).chosen_lr    # 5% worse: not a tie
    0.1
    """
    if not losses:
        raise ConfigError("LR selection: the grid is empty")
    if rel_tol < 0 or not math.isfinite(rel_tol):
        raise ConfigError(f"LR selection: rel_tol must be a finite number >= 0, got {rel_tol}")
    grid = sorted(float(lr) for lr in losses)
    if grid[0] <= 0 or not all(math.isfinite(lr) for lr in grid):
        raise ConfigError(f"LR selection: learning rates must be finite and > 0, got {grid}")
    per_lr = {float(lr): [None if not _finite(v) else float(v) for v in vals] for lr, vals in losses.items()}
    mean: dict[float, float | None] = {}
    for lr in grid:
        vals = per_lr[lr]
        if not vals:
            raise ConfigError(f"LR selection: LR {lr:g} has no runs")
        mean[lr] = None if any(v is None for v in vals) else sum(vals) / len(vals)  # type: ignore[arg-type]
    ok = [lr for lr in grid if mean[lr] is not None]
    diverged = [lr for lr in grid if mean[lr] is None]
    if not ok:
        raise DataError(f"LR selection: every LR of the grid diverged ({grid[0]:g} .. {grid[-1]:g}); "
                        "search lower learning rates")
    best_lr = min(ok, key=lambda lr: (mean[lr], -lr))
    best = mean[best_lr]
    # relative tolerance on a loss (>= 0 for cross-entropy); abs() keeps it sane for any sign
    tied = [lr for lr in ok if mean[lr] <= best + rel_tol * abs(best)]  # type: ignore[operator]
    chosen = tied[-1]
    edge: Literal["low", "high"] | None = None
    if len(grid) > 1 and chosen == grid[-1]:
        edge = "high"
    elif len(grid) > 1 and chosen == grid[0]:
        edge = "low"
    return Selection(chosen, best_lr, grid, mean, {lr: per_lr[lr] for lr in grid}, diverged, tied, rel_tol, edge)


def log_grid(lr_min: float, lr_max: float, points: int) -> list[float]:
    """``points`` learning rates spaced evenly in log scale from ``lr_min`` to ``lr_max``
    (rounded to 6 significant digits, so they read well and key stably).

    >>> log_grid(0.01, 1.0, 5)
    [0.01, 0.0316228, 0.1, 0.316228, 1.0]
    >>> log_grid(0.1, 0.1, 1)
    [0.1]

    Raises:
        ConfigError: ``lr_min`` or ``lr_max`` not > 0, ``lr_max < lr_min``, or ``points < 1``
            (or ``points == 1`` with ``lr_min != lr_max``).
    """
    if not (lr_min > 0 and lr_max > 0 and math.isfinite(lr_min) and math.isfinite(lr_max)):
        raise ConfigError(f"lr_search: lr_min and lr_max must be > 0, got {lr_min}, {lr_max}")
    if lr_max < lr_min:
        raise ConfigError(f"lr_search: lr_max ({lr_max}) is smaller than lr_min ({lr_min})")
    if points < 1 or (points == 1 and lr_min != lr_max):
        raise ConfigError(f"lr_search.points: need >= 2 points for a range ({lr_min} .. {lr_max}), got {points}")
    if points == 1:
        return [float(f"{lr_min:.6g}")]
    step = (math.log(lr_max) - math.log(lr_min)) / (points - 1)
    return [float(f"{math.exp(math.log(lr_min) + i * step):.6g}") for i in range(points)]
