"""Per-architecture LR landscapes: each cell trained at every LR of a log grid, and its own best LR.

A pipeline of ``kind = "landscape"`` trains every selected cell under one protocol at every
LR of a log grid (``[landscape]``, :class:`LandscapeSettings`), ``points_per_octave`` points per
doubling (2: ``2^(1/2)`` apart), with the pipeline's seeds; the protocol's own LR rule is
replaced by the grid LR (``lr_rule = "fixed"``), its schedule and epochs kept. Grid LRs are
``lr_min * 2^(k / points_per_octave)`` for integer ``k`` (computed so, a grid LR equals the
same LR of another store exactly: ``0.1 * 2^2`` is ``0.4``, and a landscape job at the LR a
retrain protocol used *is* that job).

Where a cell's best LR (the largest mean accuracy over seeds) sits at an edge of the LRs it
has, :func:`cell_grid` adds ``EXTEND_POINTS`` grid points past that edge, for that cell only,
up to ``extend`` rounds: the grid a cell has is a function of the finished runs alone, so
every rerun and every slice re-derives the same extensions.

>>> s = LandscapeSettings(lr_min=0.1, lr_max=0.4, points_per_octave=2)
>>> s.ks(), [round(s.lr(k), 4) for k in s.ks()], s.lr(4) == 0.1 * 4.0
([0, 1, 2, 3, 4], [0.1, 0.1414, 0.2, 0.2828, 0.4], True)
>>> acc = {0: [50.0, 51.0], 1: [55.0, 56.0], 2: [57.0, 58.0], 3: [58.0, 59.0], 4: [59.0, 60.0]}
>>> cell_grid(s, acc)  # best at the top edge: two more points past it
[0, 1, 2, 3, 4, 5, 6]
>>> acc.update({5: [58.0, 58.5], 6: [40.0, 42.0]})
>>> cell_grid(s, acc), best_k(acc)
([0, 1, 2, 3, 4, 5, 6], 4)
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from .settings import LandscapeSettings

__all__ = ["EXTEND_POINTS", "cell_grid", "mean_curve", "best_k", "vertex",
           "bootstrap_best", "cross_fit"]

#: grid points added past an edge per extension round
EXTEND_POINTS = 2

#: ``k -> accuracy per seed`` of one cell (``nan``: that run diverged); keys are grid indices
Curve = Mapping[int, Sequence[float]]


def mean_curve(curve: Curve) -> dict[int, float]:
    """Mean accuracy over seeds per grid index (``nan`` where a seed diverged)."""
    return {k: float(np.mean(v)) if len(v) and not np.isnan(v).any() else math.nan for k, v in sorted(curve.items())}


def best_k(curve: Curve) -> int | None:
    """The grid index of the largest mean accuracy (an LR where a seed diverged never wins;
    among equal means the larger LR); ``None`` when every LR has a diverged seed."""
    means = [(m, k) for k, m in mean_curve(curve).items() if not math.isnan(m)]
    return max(means)[1] if means else None


def cell_grid(settings: LandscapeSettings, curve: Curve, arch: str | None = None) -> list[int]:
    """The grid indices cell ``arch`` trains at, given its finished runs ``curve`` (``k -> accuracies``;
    an index with fewer than all seeds is unfinished): its initial grid
    (:meth:`LandscapeSettings.initial_ks`), then per round, once every index so far is finished
    and the best sits at an edge, :data:`EXTEND_POINTS` more past it."""
    ks = settings.initial_ks(arch)
    seeds = max((len(v) for v in curve.values()), default=0)
    for _ in range(settings.extend):
        if seeds == 0 or any(len(curve.get(k, ())) < seeds for k in ks):
            break
        best = best_k({k: curve[k] for k in ks})
        if best == ks[-1]:
            ks = ks + [ks[-1] + i for i in range(1, EXTEND_POINTS + 1)]
        elif best == ks[0]:
            ks = [ks[0] - i for i in range(EXTEND_POINTS, 0, -1)] + ks
        else:
            break
    return ks


def vertex(curve: Curve) -> tuple[float | None, str | None]:
    """The fractional grid index of the vertex of a quadratic through the best mean and its two
    neighbours (clipped to theirs), and the edge (``low``/``high``) when the best has no
    neighbour on one side (then the best index itself). ``(None, None)``: nothing finished.

    >>> k, edge = vertex({0: [50.0], 1: [60.0], 2: [56.0]})
    >>> round(k, 4), edge
    (1.2143, None)
    >>> vertex({0: [60.0], 1: [55.0], 2: [50.0]})
    (0.0, 'low')
    """
    means = mean_curve(curve)
    best = best_k(curve)
    if best is None:
        return None, None
    lo, hi = means.get(best - 1, math.nan), means.get(best + 1, math.nan)
    if math.isnan(lo) or math.isnan(hi):
        return float(best), "low" if math.isnan(lo) else "high"
    mid = means[best]
    denom = lo - 2 * mid + hi
    if denom >= 0:  # flat or not concave: the best point itself
        return float(best), None
    return float(min(best + 1, max(best - 1, best + 0.5 * (lo - hi) / denom))), None


def bootstrap_best(curve: Curve, n_boot: int = 1000, seed: int = 0) -> tuple[float, float] | None:
    """A 95% percentile interval of the vertex (grid index) over bootstrap resamples of the
    seeds (the same resampled seeds at every LR); ``None`` with fewer than 2 seeds. With few
    seeds the resamples are few distinct ones: the interval is coarse, not a confidence level."""
    ks = sorted(curve)
    n = min(len(curve[k]) for k in ks) if ks else 0
    if n < 2:
        return None
    table = np.array([list(curve[k])[:n] for k in ks], dtype=float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(n_boot, n))
    values = [v for v in (vertex({k: table[i, p] for i, k in enumerate(ks)})[0] for p in picks) if v is not None]
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


def cross_fit(curve: Curve) -> list[tuple[int, float]] | None:
    """Noise-free oracle scores: per seed ``s``, the best index chosen on the other seeds' mean and
    the accuracy seed ``s`` got there: ``[(chosen k, accuracy of s), ...]`` in seed order; ``None``
    with fewer than 2 seeds (nothing to choose on apart from the scored run).

    >>> cross_fit({0: [50.0, 60.0], 1: [58.0, 55.0]})
    [(0, 50.0), (1, 55.0)]
    """
    ks = sorted(curve)
    n = min(len(curve[k]) for k in ks) if ks else 0
    if n < 2:
        return None
    out = []
    for s in range(n):
        chosen = best_k({k: [v for i, v in enumerate(curve[k]) if i != s] for k in ks})
        out.append((chosen, float(curve[chosen][s])) if chosen is not None else (ks[0], math.nan))
    return out
