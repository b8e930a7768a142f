"""Picking the maximal learning rate from a grid (Chen et al., ICLR 2024, §4).

Each LR of a log-spaced grid is trained for a short run (one epoch by default) with several
seeds; :func:`select_lr` then applies one of two rules, pure functions of the per-LR losses
(a run's loss is its final training loss: by default the epoch's mean training loss, as the
paper's released code logs it, or the mean over the epoch's last 10% of steps; a
``None``/NaN/inf loss is a diverged run).

``argmin`` (the default; the paper's rule)
    The paper defines the maximal LR as "the maximal learning rate which achieves the smallest
    training loss at the end of one epoch", picked per random run and then averaged. So:

    1. **Per seed**, the LR of the smallest final loss (a diverged run never wins; among
       exactly equal losses the larger LR). A seed whose every run diverged has no argmin.
    2. The chosen LR is the **geometric mean** of the seeds' argmins (their mean in log LR: the
       grid is log-spaced and the rule is compared in log-log; our choice, the paper says
       "averaged").
    3. ``edge`` flags a seed's argmin at the grid's smallest or largest LR: the true maximal LR
       may lie beyond the grid (the validation pipeline then extends the grid there).

``within_tol`` (this project's earlier rule, kept selectable)
    An LR diverged if any seed diverged; the others are scored by the mean loss over seeds;
    the **largest** LR whose mean loss is within ``rel_tol`` (relative) of the smallest is chosen.

>>> s = select_lr({0.1: [1.50, 1.52], 0.2: [1.40, 1.43], 0.4: [1.41, 1.42], 0.8: [float("nan"), 2.0]})
>>> s.per_seed, s.chosen_lr, s.edge
((0.2, 0.4), 0.282843, None)
>>> select_lr({0.1: [1.50, 1.52], 0.2: [1.40, 1.43], 0.4: [1.405, 1.41], 0.8: [float("nan"), 2.0]},
...           rule="within_tol").chosen_lr
0.4
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Mapping, Sequence

from ..errors import ConfigError, DataError

__all__ = ["Selection", "select_lr", "log_grid", "MAX_GRID_POINTS", "DEFAULT_REL_TOL", "SELECTION_RULES", "seed_argmins"]

#: default relative tolerance for ties: 1% of the smallest mean loss
DEFAULT_REL_TOL = 0.01
#: the maximal-LR rules :func:`select_lr` applies (module docstring)
SELECTION_RULES = ("argmin", "within_tol")


@dataclass(frozen=True)
class Selection:
    """The outcome of :func:`select_lr`.

    Attributes:
        chosen_lr: the maximal LR under ``rule``: ``argmin``, the geometric mean of
            ``per_seed``; ``within_tol``, the largest LR whose mean loss ties with the smallest.
        best_lr: the LR with the smallest mean loss over seeds (an LR with a diverged seed
            excluded).
        grid: every LR, ascending.
        mean_loss: mean final training loss per LR (``None`` for a diverged LR).
        losses: the per-seed losses per LR, as given (``None`` for a missing/diverged seed).
        diverged: the LRs that diverged (any seed), ascending.
        tied: the LRs within the tolerance of the best, ascending (``chosen_lr`` is the last).
        rel_tol: the relative tolerance used.
        edge: ``"low"`` or ``"high"`` when a choice (``argmin``: any seed's) is the grid's
            smallest or largest LR (widen the grid that way), else ``None``.
        rule: the rule applied (:data:`SELECTION_RULES`).
        per_seed: ``argmin``: each seed's argmin LR (``None`` where every run of the seed
            diverged), in seed order; ``within_tol``: empty.
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
    rule: str = "within_tol"
    per_seed: tuple[float | None, ...] = ()

    def edge_message(self) -> str | None:
        """A sentence saying the choice is at the grid's edge, or ``None``."""
        if self.rule == "argmin" and self.edge is not None:
            where, way = ("largest", "upwards") if self.edge == "high" else ("smallest", "downwards")
            return (f"a seed's argmin LR is the grid's {where} ({self.grid[-1 if self.edge == 'high' else 0]:g}): "
                    f"the maximal LR may lie beyond the grid; extend the grid {way}")
        if self.edge == "high":
            return (f"the chosen LR {self.chosen_lr:g} is the grid's largest: the maximal LR may be larger; "
                    "extend the grid upwards")
        if self.edge == "low":
            return (f"the chosen LR {self.chosen_lr:g} is the grid's smallest: the maximal LR may be smaller; "
                    "extend the grid downwards")
        return None


def _finite(x: float | None) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def seed_argmins(grid: Sequence[float], per_lr: Mapping[float, Sequence[float | None]]) -> list[float | None]:
    """Each seed's argmin LR: the LR of its smallest finite loss (the larger LR on an exact
    tie); ``None`` for a seed whose every run diverged. ``per_lr[lr][i]`` is seed ``i``'s loss.

    >>> seed_argmins([0.1, 0.2, 0.4], {0.1: [2.0, 1.0], 0.2: [1.0, None], 0.4: [1.0, None]})
    [0.4, 0.1]
    """
    seeds = {len(per_lr[lr]) for lr in grid}
    if len(seeds) != 1:
        raise ConfigError(f"LR selection: every LR needs one loss per seed for the argmin rule; got {sorted(seeds)} runs")
    out: list[float | None] = []
    for i in range(seeds.pop()):
        finite = [(per_lr[lr][i], lr) for lr in grid if _finite(per_lr[lr][i])]
        out.append(min(finite, key=lambda t: (t[0], -t[1]))[1] if finite else None)
    return out


def _edge(grid: Sequence[float], picks: Sequence[float]) -> Literal["low", "high"] | None:
    """``"high"``/``"low"`` when a pick is the grid's largest/smallest LR (high first)."""
    if len(grid) < 2:
        return None
    if grid[-1] in picks:
        return "high"
    return "low" if grid[0] in picks else None


def select_lr(losses: Mapping[float, Sequence[float | None]], rel_tol: float = DEFAULT_REL_TOL,
              rule: str = "argmin") -> Selection:
    """Apply a maximal-LR rule (module docstring) to final training losses per LR.

    Args:
        losses: LR -> the final training loss of each seed, in seed order (``None``/NaN/inf: diverged).
        rel_tol: relative tolerance of a tie (``>= 0``; the ``within_tol`` rule only).
        rule: ``argmin`` (the paper's) or ``within_tol`` (:data:`SELECTION_RULES`).

    Returns:
        The :class:`Selection`.

    Raises:
        ConfigError: an empty grid, a non-positive LR, an LR without seeds, a negative
            tolerance, an unknown rule, or (``argmin``) LRs with different seed counts.
        DataError: every run diverged (lower the grid).

    >>> select_lr({0.01: [2.0], 0.1: [1.0], 1.0: [1.005]}, rule="within_tol").chosen_lr   # a tie within 1%
    1.0
    >>> select_lr({0.01: [2.0], 0.1: [1.0], 1.0: [1.005]}).chosen_lr   # argmin: the smallest loss
    0.1
    """
    if rule not in SELECTION_RULES:
        raise ConfigError(f"lr_search.rule: unknown rule {rule!r}; rules: {', '.join(SELECTION_RULES)}")
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
    losses_out = {lr: per_lr[lr] for lr in grid}
    if rule == "argmin":
        picks = seed_argmins(grid, per_lr)
        found = [p for p in picks if p is not None]
        if not found:
            raise DataError(f"LR selection: every run of the grid diverged ({grid[0]:g} .. {grid[-1]:g}); "
                            "search lower learning rates")
        chosen = float(f"{math.exp(sum(math.log(p) for p in found) / len(found)):.6g}")  # reads and keys stably
        best_lr = min(ok, key=lambda lr: (mean[lr], -lr)) if ok else found[-1]
        return Selection(chosen, best_lr, grid, mean, losses_out, diverged, [], rel_tol, _edge(grid, found),
                         rule, tuple(picks))
    if not ok:
        raise DataError(f"LR selection: every LR of the grid diverged ({grid[0]:g} .. {grid[-1]:g}); "
                        "search lower learning rates")
    best_lr = min(ok, key=lambda lr: (mean[lr], -lr))
    best = mean[best_lr]
    # relative tolerance on a loss (>= 0 for cross-entropy); abs() keeps it sane for any sign
    tied = [lr for lr in ok if mean[lr] <= best + rel_tol * abs(best)]  # type: ignore[operator]
    return Selection(tied[-1], best_lr, grid, mean, losses_out, diverged, tied, rel_tol, _edge(grid, [tied[-1]]), rule)


#: the most learning rates one grid may hold (each is a training run per seed and architecture)
MAX_GRID_POINTS = 1000


def log_grid(lr_min: float, lr_max: float, points: int) -> list[float]:
    """``points`` learning rates spaced evenly in log scale from ``lr_min`` to ``lr_max``
    (rounded to 6 significant digits, so they read well and key stably).

    >>> log_grid(0.01, 1.0, 5)
    [0.01, 0.0316228, 0.1, 0.316228, 1.0]
    >>> log_grid(0.1, 0.1, 1)
    [0.1]

    Raises:
        ConfigError: ``lr_min`` or ``lr_max`` not > 0, ``lr_max < lr_min``, or ``points < 1``
            (or ``points == 1`` with ``lr_min != lr_max``), or more than :data:`MAX_GRID_POINTS`.
    """
    if not (lr_min > 0 and lr_max > 0 and math.isfinite(lr_min) and math.isfinite(lr_max)):
        raise ConfigError(f"lr_search: lr_min and lr_max must be > 0, got {lr_min}, {lr_max}")
    if lr_max < lr_min:
        raise ConfigError(f"lr_search: lr_max ({lr_max}) is smaller than lr_min ({lr_min})")
    if points < 1 or (points == 1 and lr_min != lr_max):
        raise ConfigError(f"lr_search.points: need >= 2 points for a range ({lr_min} .. {lr_max}), got {points}")
    if points > MAX_GRID_POINTS:
        raise ConfigError(f"lr_search.points: at most {MAX_GRID_POINTS} learning rates in a grid, got {points}")
    if points == 1:
        return [float(f"{lr_min:.6g}")]
    step = (math.log(lr_max) - math.log(lr_min)) / (points - 1)
    return [float(f"{math.exp(math.log(lr_min) + i * step):.6g}") for i in range(points)]
