"""A landscape as arrays, the arms' scores from them, and landscapes simulated from a known truth.

The statistics that are calibrated by simulation (:mod:`.inference`) read a landscape in one
array form, :class:`Grid`: accuracies ``Y[cell, k, seed]`` on the union of the cells' grid
points (``nan`` where a cell has no run there), so the observed landscape and every simulated one
go through the same code. A run that diverged scores chance accuracy (:data:`CHANCE`) and its LR
is never chosen. The arms, per cell and seed (:func:`arm_scores`):

* ``oracle``: cross-fitted: the LR of the largest mean over the *other* seeds, scored on this one;
* ``global``: one LR for every cell, the largest mean over every *other* cell (leave-one-cell-out)
  among the LRs every cell has;
* a fixed grid LR ``k``: each cell at its nearest measured grid point.

:class:`Truth` is a landscape's noise-free shape, ``level - curvature (x - optimum)^2`` per cell
in octaves, and :func:`simulate` draws seeds of it with Gaussian seed noise.

>>> t = Truth(level=np.array([70., 60.]), optimum=np.array([0., 0.5]), curvature=np.array([2., 2.]),
...           sigma=0.0, x=np.arange(-2, 3) / 2, avail=np.ones((2, 5), bool), seeds=2)
>>> g = simulate(t, np.random.default_rng(0), per_octave=2)
>>> arm_scores(g)["oracle"][:, 0].tolist(), arm_scores(g)["global"][:, 0].tolist()
([70.0, 60.0], [69.5, 59.5])
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from .cells import CellLandscape

__all__ = ["CHANCE", "Grid", "Truth", "to_grid", "arm_scores", "fixed_scores", "simulate", "mean_curves", "last_argmax"]

#: the accuracy a diverged run scores (10 classes)
CHANCE = 10.0


@dataclass(frozen=True)
class Grid:
    """A landscape as arrays: ``Y[cell, k, seed]`` (``nan``: no run), ``ks`` the grid indices of
    axis 1, ``x`` the same in octaves, ``diverged`` where a run diverged (scored :data:`CHANCE`)."""

    Y: np.ndarray
    ks: np.ndarray
    x: np.ndarray
    diverged: np.ndarray

    @property
    def avail(self) -> np.ndarray:
        """``(cells, K)``: where a cell has every seed's run."""
        return ~np.isnan(self.Y).any(axis=2)


def to_grid(cells: Sequence[CellLandscape], per_octave: int) -> Grid:
    """The array form of finished cells (every cell the same number of seeds)."""
    ks = np.array(sorted(set().union(*(c.acc for c in cells))))
    seeds = min(len(v) for c in cells for v in c.acc.values())
    Y = np.full((len(cells), len(ks), seeds), np.nan)
    for i, c in enumerate(cells):
        for j, k in enumerate(ks):
            if k in c.acc:
                Y[i, j] = c.acc[k][:seeds]
    diverged = np.zeros_like(Y, bool)
    for i, c in enumerate(cells):
        for j, k in enumerate(ks):
            if k in c.acc:
                diverged[i, j] = np.isnan(np.asarray(c.acc[k][:seeds], float))
    Y = np.where(diverged, CHANCE, Y)
    return Grid(Y, ks, ks / per_octave, diverged)


def mean_curves(g: Grid) -> np.ndarray:
    """``(cells, K)`` mean over seeds, ``-inf`` where a cell has no run or a seed diverged there."""
    ok = g.avail & ~g.diverged.any(axis=2)
    return np.where(ok, np.nan_to_num(g.Y.mean(axis=2), nan=0.0), -np.inf)


def last_argmax(m: np.ndarray) -> np.ndarray:
    """Per row, the index of the largest value, the last among equals (the larger LR)."""
    return m.shape[-1] - 1 - np.argmax(m[..., ::-1], axis=-1)


def _oracle(g: Grid) -> np.ndarray:
    S = g.Y.shape[2]
    n = len(g.Y)
    out = np.empty((n, S))
    ok = g.avail & ~g.diverged.any(axis=2)
    for s in range(S):
        others = np.delete(g.Y, s, axis=2) if S > 1 else g.Y
        m = np.where(ok, np.nan_to_num(others.mean(axis=2), nan=0.0), -np.inf)
        out[:, s] = g.Y[np.arange(n), last_argmax(m), s]
    return out


def _global(g: Grid) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, the leave-one-cell-out global grid index (axis-1 position) and its scores."""
    m = mean_curves(g)
    common = g.avail.all(axis=0)
    if not common.any():
        common = g.avail.any(axis=0)
    filled = np.where(np.isfinite(m), m, 0.0)
    total = filled.sum(axis=0)
    rest = np.where(common[None], total[None] - filled, -np.inf)
    j = last_argmax(rest)
    j = np.array([_nearest(g.avail[i], jj) for i, jj in enumerate(j)])
    return j, g.Y[np.arange(len(g.Y)), j]


def _nearest(avail: np.ndarray, j: int) -> int:
    have = np.flatnonzero(avail)
    return int(have[np.argmin(np.abs(have - j) * 2 - (have > j))])


def fixed_scores(g: Grid, k: int) -> np.ndarray:
    """``(cells, seeds)``: every cell at grid index ``k`` (its nearest measured one)."""
    j = int(np.argmin(np.abs(g.ks - k)))
    rows = [_nearest(g.avail[i], j) for i in range(len(g.Y))]
    return g.Y[np.arange(len(g.Y)), rows]


def arm_scores(g: Grid) -> dict[str, np.ndarray]:
    """``{"oracle": (cells, seeds), "global": (cells, seeds), "global_k": (cells,) grid indices}``."""
    j, scores = _global(g)
    return {"oracle": _oracle(g), "global": scores, "global_k": g.ks[j]}


@dataclass(frozen=True)
class Truth:
    """A landscape's noise-free shape (module docstring), on grid ``x`` (octaves) where ``avail``."""

    level: np.ndarray
    optimum: np.ndarray
    curvature: np.ndarray
    sigma: float
    x: np.ndarray
    avail: np.ndarray
    seeds: int
    #: the optima's deviations that :meth:`spread` scales (``None``: each optimum's distance from
    #: the median optimum)
    pattern: np.ndarray | None = None

    def value(self, x: np.ndarray | float) -> np.ndarray:
        """``(cells, len(x))`` noise-free accuracy."""
        x = np.atleast_1d(np.asarray(x, float))
        return self.level[:, None] - self.curvature[:, None] * (x[None] - self.optimum[:, None]) ** 2

    def spread(self, factor: float) -> "Truth":
        """The same cells with their optima at the median optimum plus ``factor`` times the pattern
        (by default each optimum's distance from the median, so 1 leaves the optima as they are).

        >>> t = Truth(np.zeros(3), np.array([0., 1., 2.]), np.ones(3), 0., np.zeros(1), np.ones((3, 1), bool), 2)
        >>> t.spread(2).optimum.tolist(), replace(t, pattern=np.array([1., 0., -1.])).spread(0.5).optimum.tolist()
        ([-1.0, 1.0, 3.0], [1.5, 1.0, 0.5])
        """
        centre = float(np.median(self.optimum))
        pattern = self.optimum - centre if self.pattern is None else self.pattern
        return replace(self, optimum=centre + factor * pattern)


def simulate(t: Truth, rng: np.random.Generator, per_octave: int) -> Grid:
    """One simulated landscape of truth ``t``: every available point, ``t.seeds`` seeds
    (``per_octave``: grid points per octave, to name the grid indices of ``t.x``)."""
    clean = t.value(t.x)[:, :, None]
    Y = clean + t.sigma * rng.standard_normal((len(t.level), len(t.x), t.seeds))
    Y = np.where(t.avail[:, :, None], Y, np.nan)
    return Grid(Y, np.rint(t.x * per_octave).astype(int), t.x, np.zeros_like(Y, bool))
