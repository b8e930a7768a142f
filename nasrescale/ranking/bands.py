"""Bootstrap bands of Kendall tau for the top-K% curves, and the smallest subset worth a row.

A band is the percentile interval of the statistic over resamples of the rows (architectures,
with replacement, seeded); every vector of a resample takes the same rows, so a band of the
mean tau over several seed pairs resamples architectures, not seeds. Kendall tau-b of each
resample comes from :class:`~nasrescale.ranking.resample.ResampledSummary` (ties that
resampling makes are corrected for).

Top-K% subsets shrink fast: at ``n = 6`` the null standard deviation of tau is
``sqrt(2 (2n + 5) / (9 n (n - 1)))`` = 0.35, and at ``n = 3`` tau can only be ±1/3 or ±1.
Tables and plots hide or grey the rows below :data:`MIN_TOPK_ROWS`.

>>> round(null_tau_sd(6), 2), round(null_tau_sd(10), 2)
(0.35, 0.25)
>>> tau_band([([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6])], n_boot=200)
[1.0, 1.0]
>>> tau_band([([1, 2], [1, 2])]) is None
True
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .resample import MIN_ROWS, ResampledSummary

__all__ = ["MIN_TOPK_ROWS", "null_tau_sd", "tau_band"]

#: the fewest architectures in a top-K% subset whose tau a table shows as a figure
MIN_TOPK_ROWS = 10
_BATCH = 200  # resamples per vectorised call


def null_tau_sd(n: int) -> float:
    """Standard deviation of Kendall tau between two independent rankings of ``n`` items."""
    return math.sqrt(2 * (2 * n + 5) / (9 * n * (n - 1)))


def tau_band(pairs: Sequence[tuple[Sequence[float], Sequence[float]]], n_boot: int = 1000, seed: int = 0,
             level: float = 0.95) -> list[float] | None:
    """Percentile bootstrap interval of the mean Kendall tau-b over ``pairs`` of accuracy
    vectors, all on the same rows (row ``i`` of every vector is one architecture).

    Returns:
        ``[low, high]``, or ``None`` with fewer than 3 rows, no resamples, or fewer than half
        the resamples defined (a resample constant in a vector has no tau).
    """
    if not pairs or n_boot <= 0:
        return None
    rows = len(pairs[0][0])
    if rows < MIN_ROWS:
        return None
    summaries = [ResampledSummary(a, b) for a, b in pairs]
    rng = np.random.default_rng(seed)
    draws = []
    for start in range(0, n_boot, _BATCH):
        idx = rng.integers(0, rows, size=(min(_BATCH, n_boot - start), rows))
        draws.append(np.mean([s(idx)[0] for s in summaries], axis=0))
    defined = np.concatenate(draws)
    defined = defined[np.isfinite(defined)]
    if defined.size < n_boot / 2:
        return None
    tail = (1 - level) / 2
    return [float(np.quantile(defined, tail)), float(np.quantile(defined, 1 - tail))]
