"""The summary statistics of many bootstrap resamples at once, from row multiplicities.

A paired bootstrap resample of ``n`` rows is the original rows, each taken ``w_i`` times
(``sum(w) = n``). Every statistic of :func:`nasrescale.ranking.rank.summary_stats` is a
function of those weights and of orders of the original rows computed once, so a batch of
resamples costs a few passes over a ``(batch, n)`` weight matrix and no sorting:

* mean difference: a weighted mean; median difference: the middle of the cumulative weights
  along the differences sorted once;
* Pearson r: weighted moments of the (centred) accuracies;
* Spearman rho: a weighted Pearson r of the average ranks, which are the tie groups'
  cumulative weights;
* Kendall tau-b: tie counts from the group weights (``W (W - 1) / 2`` pairs in a group of
  weight ``W``), and the weighted count of discordant pairs from a bottom-up merge sort of
  the rows in ``(x, y)`` order whose merge positions are computed once: at each level, each
  right-half row adds its weight times the weight of the left-half rows with a larger ``y``.

:class:`ResampledSummary` is the vectorised statistic :func:`scipy.stats.bootstrap` calls with
the resampled row indices (``paired=True`` over ``arange(n)``). Undefined values (a resample
constant in either vector, or of fewer than 3 rows) are NaN.

>>> s = ResampledSummary([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0])
>>> [round(float(v), 12) for v in s(np.arange(4))]
[0.666666666667, 0.8, 0.8, 0.0, 0.0]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["MIN_ROWS", "STAT_NAMES", "ResampledSummary"]

#: the statistics, in the order of the rows :class:`ResampledSummary` returns
STAT_NAMES = ("kendall_tau", "spearman", "pearson", "mean_diff", "median_diff")
MIN_ROWS = 3  # fewer rows leave a rank correlation undefined (nasrescale.ranking.rank reports null)


def _starts(sorted_values: np.ndarray) -> np.ndarray:
    """First index of each run of equal values in a sorted vector."""
    return np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])


def _group_ids(starts: np.ndarray, n: int) -> np.ndarray:
    ids = np.zeros(n, dtype=np.int64)
    ids[starts[1:]] = 1
    return np.cumsum(ids)


def _avg_ranks(group_w: np.ndarray) -> np.ndarray:
    """Average 1-based rank of each tie group, given the groups' weights in value order."""
    return np.cumsum(group_w, axis=1) - group_w + (group_w + 1) / 2


class ResampledSummary:
    """``(kendall_tau, spearman, pearson, mean_diff, median_diff)`` of resamples of ``(a, b)``.

    Call it with row indices into ``a``/``b``: shape ``(n,)`` gives 5 values, ``(B, m)``
    gives a ``(5, B)`` array (one column per resample). Differences are ``b - a``.
    """

    def __init__(self, a: Sequence[float], b: Sequence[float]) -> None:
        x0, y0 = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        order = np.lexsort((y0, x0))  # rows in (x, y) order: the layout of every weight matrix
        self.n = n = x0.size
        self.position = np.empty(n, dtype=np.int64)
        self.position[order] = np.arange(n)
        x, y = x0[order], y0[order]
        self.xc, self.yc = x - x.mean(), y - y.mean()
        self.x_starts = _starts(x)
        self.x_group = _group_ids(self.x_starts, n)
        self.xy_starts = np.flatnonzero(np.r_[True, (x[1:] != x[:-1]) | (y[1:] != y[:-1])])
        self.y_order = np.argsort(y, kind="stable")
        self.y_starts = _starts(y[self.y_order])
        y_group_sorted = _group_ids(self.y_starts, n)
        self.y_group = np.empty(n, dtype=np.int64)
        self.y_group[self.y_order] = y_group_sorted
        self.d = y - x
        self.d_order = np.argsort(self.d, kind="stable")
        self.d_sorted = (y - x)[self.d_order]
        self.levels = self._merge_levels(y_group_sorted[np.argsort(self.y_order)])

    def _merge_levels(self, y_rank: np.ndarray) -> list[tuple[np.ndarray, ...]]:
        """Per merge level: left rows sorted by (block, y), right rows, and for each right row
        the left-cumsum positions bounding the left rows of its block with a larger ``y``."""
        n, levels, half = self.n, [], 1
        pos = np.arange(n)
        while half < n:
            block, is_left = pos // (2 * half), (pos % (2 * half)) < half
            left, right = pos[is_left], pos[~is_left]
            keys = block[left] * n + y_rank[left]
            by_key = np.argsort(keys, kind="stable")
            keys = keys[by_key]
            le = np.searchsorted(keys, block[right] * n + y_rank[right], side="right")
            end = np.searchsorted(keys, (block[right] + 1) * n, side="left")
            levels.append((left[by_key], right, le, end))
            half *= 2
        return levels

    def weights(self, idx: np.ndarray) -> np.ndarray:
        """The ``(B, n)`` multiplicities (rows in ``(x, y)`` order) of index rows ``idx``."""
        rows = np.atleast_2d(idx)
        flat = self.position[rows] + np.arange(rows.shape[0])[:, None] * self.n
        return np.bincount(flat.ravel(), minlength=rows.shape[0] * self.n).reshape(rows.shape[0], self.n).astype(float)

    def __call__(self, idx: np.ndarray, axis: int = -1) -> np.ndarray:
        """The statistics of the resamples ``idx`` (see the class docstring)."""
        idx = np.moveaxis(np.asarray(idx), axis, -1)
        w = self.weights(idx.reshape(-1, idx.shape[-1]))
        gx = np.add.reduceat(w, self.x_starts, axis=1)  # tie-group weights, in value order
        gy = np.add.reduceat(w[:, self.y_order], self.y_starts, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.stack([self._kendall(w, gx, gy), *self._spearman_pearson(w, gx, gy), *self._diffs(w)])
        return out.reshape(len(STAT_NAMES), *idx.shape[:-1])

    def _discordant(self, w: np.ndarray) -> np.ndarray:
        wt = np.ascontiguousarray(w.T)  # rows gathered whole: about twice as fast as columns
        total = np.zeros(w.shape[0])
        for left, right, le, end in self.levels:
            cum = np.zeros((left.size + 1, w.shape[0]))
            np.cumsum(wt[left], axis=0, out=cum[1:])
            total += np.einsum("rb,rb->b", wt[right], cum[end] - cum[le])
        return total

    def _kendall(self, w: np.ndarray, gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
        n_w = w.sum(axis=1)
        gxy = np.add.reduceat(w, self.xy_starts, axis=1)
        xtie, ytie, ntie = [(g * (g - 1)).sum(axis=1) / 2 for g in (gx, gy, gxy)]
        tot = n_w * (n_w - 1) / 2
        tau = (tot - xtie - ytie + ntie - 2 * self._discordant(w)) / np.sqrt((tot - xtie) * (tot - ytie))
        return np.where((xtie < tot) & (ytie < tot) & (n_w >= MIN_ROWS), np.clip(tau, -1.0, 1.0), np.nan)

    def _spearman_pearson(self, w: np.ndarray, gx: np.ndarray, gy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n_w = w.sum(axis=1)
        constant = ((gx > 0).sum(axis=1) < 2) | ((gy > 0).sum(axis=1) < 2) | (n_w < MIN_ROWS)
        rank_x, rank_y = _avg_ranks(gx), _avg_ranks(gy)
        mid = (n_w + 1) / 2
        var_x = (gx * rank_x ** 2).sum(axis=1) - n_w * mid ** 2
        var_y = (gy * rank_y ** 2).sum(axis=1) - n_w * mid ** 2
        cov = np.einsum("bi,bi,bi->b", w, rank_x[:, self.x_group], rank_y[:, self.y_group]) - n_w * mid ** 2
        rho = cov / np.sqrt(var_x * var_y)
        sx, sy = w @ self.xc, w @ self.yc
        cxy = w @ (self.xc * self.yc) - sx * sy / n_w
        r = cxy / np.sqrt((w @ self.xc ** 2 - sx ** 2 / n_w) * (w @ self.yc ** 2 - sy ** 2 / n_w))
        return (np.where(constant, np.nan, np.clip(rho, -1.0, 1.0)),
                np.where(constant, np.nan, np.clip(r, -1.0, 1.0)))

    def _diffs(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n_w = w.sum(axis=1)
        mean = w @ self.d / n_w
        cum = np.cumsum(w[:, self.d_order], axis=1)
        lo = (cum <= ((n_w - 1) // 2)[:, None]).sum(axis=1)
        hi = (cum <= (n_w // 2)[:, None]).sum(axis=1)
        return mean, (self.d_sorted[lo] + self.d_sorted[hi]) / 2
