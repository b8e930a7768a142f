"""Rank statistics between two accuracy vectors over the same architectures.

Pure functions on arrays (row ``i`` of ``a`` and ``b`` is the same architecture): Kendall
tau-b, Spearman rho, Pearson r (scipy), the top-K% curve (paper Fig. 4 middle), precision@K,
paired bootstrap confidence intervals over architectures (scipy), and the seed-noise baseline (paper Fig. 9),
computed on the same top-K% subsets as the comparison it stands beside.
Undefined statistics (fewer than 3 rows, a constant vector) are ``None``, never an error.

>>> a = [90.0, 91.0, 92.0, 93.0]
>>> kendall_tau(a, [1, 2, 3, 4]), kendall_tau(a, [4, 3, 2, 1])
(1.0, -1.0)
>>> topk_size(200, 5), topk_size(7, 10)
(10, 1)
"""

from __future__ import annotations

import math
import warnings
from itertools import combinations
from typing import Callable, Collection, Literal, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from .bands import MIN_TOPK_ROWS, tau_band
from .resample import MIN_ROWS, ResampledSummary

__all__ = [
    "K_PERCENTS",
    "BCA_MAX_ROWS",
    "TopkBy",
    "kendall_tau",
    "spearman",
    "pearson",
    "topk_size",
    "top_order",
    "topk_mask",
    "topk_curve",
    "precision_at_k",
    "summary_stats",
    "bootstrap_cis",
    "seed_noise",
    "MIN_TOPK_ROWS",
]

#: the top-K% levels of the curve, largest first
K_PERCENTS = (100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 5, 1)
TopkBy = Literal["first", "second", "both"]
#: the most rows for which :func:`bootstrap_cis` computes BCa intervals (above: percentile)
BCA_MAX_ROWS = 2000
_BATCH = 100  # resamples per vectorised call: memory O(_BATCH * rows)


def _clean(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _pair(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray] | None:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"the two accuracy vectors differ in length ({x.size} vs {y.size})")
    if x.size < MIN_ROWS or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return x, y


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Kendall tau-b (ties in either vector corrected for); ``None`` if undefined.

    >>> round(kendall_tau([1, 2, 2, 3], [1, 2, 3, 3]), 12)
    0.8
    """
    pair = _pair(a, b)
    return None if pair is None else _clean(stats.kendalltau(*pair, variant="b").statistic)


def spearman(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Spearman rank correlation (average ranks for ties); ``None`` if undefined."""
    pair = _pair(a, b)
    return None if pair is None else _clean(stats.spearmanr(*pair).statistic)


def pearson(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Pearson correlation of the accuracies themselves; ``None`` if undefined."""
    pair = _pair(a, b)
    return None if pair is None else _clean(stats.pearsonr(*pair).statistic)


def topk_size(n: int, k_percent: float) -> int:
    """Rows in the top ``k_percent`` of ``n``: ``ceil(n * K / 100)`` (exact for integer K)."""
    if float(k_percent).is_integer():
        return -(-n * int(k_percent) // 100)
    return math.ceil(n * k_percent / 100)


def top_order(values: Sequence[float], tiebreak: Sequence[str] | None = None) -> np.ndarray:
    """Indices from best (highest accuracy) to worst; equal accuracies in ``tiebreak`` order
    (e.g. the architecture strings) so that the top-K set is deterministic."""
    v = np.asarray(values, dtype=float)
    keys = (np.arange(v.size),) if tiebreak is None else (np.asarray(tiebreak, dtype=object),)
    return np.lexsort((*keys, -v))


def topk_mask(a: Sequence[float], b: Sequence[float], k_percent: float, by: TopkBy = "first",
              tiebreak: Sequence[str] | None = None) -> np.ndarray:
    """Boolean mask of the top-K% rows: by ``a`` (``first``), by ``b`` (``second``), or rows in
    the top K% of either (``both``; between ``ceil(nK/100)`` and twice that many rows).

    >>> topk_mask([4, 3, 2, 1], [1, 2, 3, 4], 50, "both").tolist()
    [True, True, True, True]
    """
    n = len(a)
    m = topk_size(n, k_percent)
    mask = np.zeros(n, dtype=bool)
    if by in ("first", "both"):
        mask[top_order(a, tiebreak)[:m]] = True
    if by in ("second", "both"):
        mask[top_order(b, tiebreak)[:m]] = True
    if by not in ("first", "second", "both"):
        raise ValueError(f"topk by {by!r}; allowed: first, second, both")
    return mask


def topk_curve(a: Sequence[float], b: Sequence[float], by: TopkBy = "first",
               ks: Sequence[float] = K_PERCENTS, tiebreak: Sequence[str] | None = None,
               n_boot: int = 0, seed: int = 0) -> list[dict]:
    """Kendall tau-b within the top-K% subset for each K: ``[{k_percent, n, kendall_tau, ci}]``
    (``kendall_tau`` is ``None`` where the subset has fewer than 3 rows; ``ci`` is the
    bootstrap band of :func:`~nasrescale.ranking.bands.tau_band` over the subset's rows,
    ``None`` without resamples).

    >>> [e["n"] for e in topk_curve([1, 2, 3, 4], [1, 2, 4, 3], ks=[100, 50])]
    [4, 2]
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    out = []
    for k in ks:
        mask = topk_mask(x, y, k, by, tiebreak)
        out.append({"k_percent": k, "n": int(mask.sum()), "kendall_tau": kendall_tau(x[mask], y[mask]),
                    "ci": tau_band([(x[mask], y[mask])], n_boot, seed)})
    return out


def precision_at_k(a: Sequence[float], b: Sequence[float], ks: Sequence[float] = K_PERCENTS,
                   tiebreak: Sequence[str] | None = None) -> list[dict]:
    """Overlap of the two top-K% sets, ``|top_a & top_b| / ceil(nK/100)``, for each K:
    ``[{k_percent, k, precision}]``.

    >>> precision_at_k([4, 3, 2, 1], [3, 4, 1, 2], ks=[50])
    [{'k_percent': 50, 'k': 2, 'precision': 1.0}]
    """
    n = len(a)
    order_a, order_b = top_order(a, tiebreak), top_order(b, tiebreak)
    out = []
    for k in ks:
        m = topk_size(n, k)
        hits = len(set(order_a[:m].tolist()) & set(order_b[:m].tolist()))
        out.append({"k_percent": k, "k": m, "precision": hits / m if m else None})
    return out


def _diffs(a: np.ndarray, b: np.ndarray) -> tuple[float | None, float | None]:
    if a.size == 0:
        return None, None
    d = b - a
    return _clean(float(d.mean())), _clean(float(np.median(d)))


def summary_stats(a: Sequence[float], b: Sequence[float]) -> dict[str, float | None]:
    """``kendall_tau``, ``spearman``, ``pearson``, ``mean_diff`` and ``median_diff`` (b - a)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    mean_diff, median_diff = _diffs(x, y)
    return {"kendall_tau": kendall_tau(x, y), "spearman": spearman(x, y), "pearson": pearson(x, y),
            "mean_diff": mean_diff, "median_diff": median_diff}


def _looped(statistic: Callable[[np.ndarray, np.ndarray], dict], x: np.ndarray, y: np.ndarray,
            names: list[str]) -> Callable[..., np.ndarray]:
    """A scalar ``statistic(x, y) -> {name: value}`` as a statistic of index batches (``None``
    becomes NaN), for :func:`scipy.stats.bootstrap`; the default statistic has a vectorised one."""
    def batched(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        idx = np.moveaxis(np.asarray(idx), axis, -1)
        rows = idx.reshape(-1, idx.shape[-1])
        values = [[np.nan if v is None else v for v in statistic(x[r], y[r]).values()] for r in rows]
        return np.asarray(values, dtype=float).T.reshape(len(names), *idx.shape[:-1])

    return batched


def bootstrap_cis(a: Sequence[float], b: Sequence[float], n_boot: int = 1000, seed: int = 0,
                  level: float = 0.95,
                  statistic: Callable[[np.ndarray, np.ndarray], dict] = summary_stats) -> dict[str, list | None]:
    """Paired bootstrap CIs over architectures (rows resampled with replacement, seeded), by
    :func:`scipy.stats.bootstrap`.

    BCa (bias-corrected and accelerated) up to :data:`BCA_MAX_ROWS` rows, where a statistic's
    resamples are all defined and the interval is finite; the percentile interval otherwise
    (above :data:`BCA_MAX_ROWS` the jackknife BCa needs, one statistic per left-out row, costs
    ``n / n_boot`` times the bootstrap itself). The default ``statistic`` is computed for a
    whole batch of resamples at once (:class:`~nasrescale.ranking.resample.ResampledSummary`).

    Returns:
        ``{name: [low, high]}`` for each statistic ``statistic`` returns (``None`` where fewer
        than half the resamples give a defined value, e.g. too few rows), and ``method``:
        ``{name: "BCa" | "percentile" | None}``, the interval each one got.

    >>> ci = bootstrap_cis([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], n_boot=200)
    >>> ci["kendall_tau"], ci["method"]["kendall_tau"]
    ([1.0, 1.0], 'percentile')
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    names = list(statistic(x, y))
    if n_boot <= 0 or x.size < MIN_ROWS:
        return {**{name: None for name in names}, "method": {name: None for name in names}}
    fn = ResampledSummary(x, y) if statistic is summary_stats else _looped(statistic, x, y, names)
    bca = x.size <= BCA_MAX_ROWS
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)  # a NaN BCa bound: percentile below
        res = stats.bootstrap((np.arange(x.size),), fn, n_resamples=n_boot, batch=_BATCH, vectorized=True,
                              paired=True, confidence_level=level, method="BCa" if bca else "percentile",
                              rng=np.random.default_rng(seed))
    draws = np.reshape(res.bootstrap_distribution, (len(names), n_boot))
    lows, highs = np.reshape(res.confidence_interval.low, -1), np.reshape(res.confidence_interval.high, -1)
    tail = (1 - level) / 2
    out: dict[str, list | None] = {}
    method: dict[str, str | None] = {}
    for i, name in enumerate(names):
        defined = draws[i][np.isfinite(draws[i])]
        if defined.size < n_boot / 2:
            out[name], method[name] = None, None
        elif bca and defined.size == n_boot and np.isfinite(lows[i]) and np.isfinite(highs[i]):
            out[name], method[name] = [float(lows[i]), float(highs[i])], "BCa"
        else:
            out[name] = [float(np.quantile(defined, tail)), float(np.quantile(defined, 1 - tail))]
            method[name] = "percentile"
    return {**out, "method": method}


def _overlap(a: np.ndarray, b: np.ndarray, k_percent: float, tiebreak: np.ndarray) -> float | None:
    m = topk_size(a.size, k_percent)
    if not m:
        return None
    return len(set(top_order(a, tiebreak)[:m].tolist()) & set(top_order(b, tiebreak)[:m].tolist())) / m


def seed_noise(wide: pd.DataFrame, subsets: Mapping[float, Collection] | None = None, n_boot: int = 0,
               seed: int = 0) -> dict | None:
    """Seed-noise baseline: rank agreement between the seeds of one protocol (paper Fig. 9).

    Args:
        wide: one row per architecture (index), one column per seed, accuracies (NaN where
            that seed has no result). Each pair of seeds is compared on the architectures both
            have; the bands resample the architectures every seed has.
        subsets: top-K% -> the architectures (index labels) of the comparison's top-K% subset;
            each seed pair's tau at K is computed on exactly those rows (the ones every seed
            has), so the baseline stands beside the comparison's tau on the same cells.
            ``None``: all rows at K = 100 only.
        n_boot, seed: resamples and seed of the bands (:func:`~nasrescale.ranking.bands.tau_band`).

    Returns:
        ``None`` with fewer than 2 seeds; else ``{seeds, pairs, kendall_tau`` (mean over seed
        pairs, all rows), ``kendall_tau_min``, ``kendall_tau_max``, ``topk`` (per K:
        ``k_percent``, ``n`` (the subset's size), ``kendall_tau`` mean over pairs, ``min``, ``max``, ``ci`` band
        of the mean, and ``precision``: the mean overlap of two seeds' own top-K% sets of all
        rows, the seed-noise baseline of precision@K)``}``.

    >>> wide = pd.DataFrame({0: [1.0, 2, 3, 4, 5], 1: [1.0, 2, 3, 5, 4]}, index=list("abcde"))
    >>> sn = seed_noise(wide, {100: list("abcde"), 60: list("cde")})
    >>> [(e["k_percent"], e["n"], round(e["kendall_tau"], 3), e["precision"]) for e in sn["topk"]]
    [(100, 5, 0.8, 1.0), (60, 3, 0.333, 1.0)]
    """
    seeds = list(wide.columns)
    if len(seeds) < 2:
        return None
    subsets = {100: list(wide.index)} if subsets is None else subsets
    pairs = [wide[[s, u]].dropna() for s, u in combinations(seeds, 2)]  # each pair: the rows it has
    taus = [t for t in (kendall_tau(p.iloc[:, 0], p.iloc[:, 1]) for p in pairs) if t is not None]
    topk = []
    for k, members in subsets.items():
        inside = [p[p.index.isin(list(members))] for p in pairs]
        per_pair = [t for t in (kendall_tau(p.iloc[:, 0], p.iloc[:, 1]) for p in inside) if t is not None]
        overlaps = [o for o in (_overlap(p.iloc[:, 0].to_numpy(float), p.iloc[:, 1].to_numpy(float), k,
                                         p.index.astype(str).to_numpy()) for p in pairs) if o is not None]
        every = wide[wide.index.isin(list(members))].dropna()  # the band resamples rows every seed has
        band = tau_band([(every[s].to_numpy(float), every[u].to_numpy(float)) for s, u in combinations(seeds, 2)],
                        n_boot, seed)
        topk.append({"k_percent": k, "n": int(wide.index.isin(list(members)).sum()), **_band(per_pair), "ci": band,
                     "precision": float(np.mean(overlaps)) if overlaps else None})
    overall = _band(taus)
    return {"seeds": [s.item() if hasattr(s, "item") else s for s in seeds], "pairs": len(pairs),
            "kendall_tau": overall["kendall_tau"], "kendall_tau_min": overall["min"],
            "kendall_tau_max": overall["max"], "topk": topk}


def _band(values: list[float]) -> dict:
    return {"kendall_tau": float(np.mean(values)) if values else None, "min": min(values) if values else None,
            "max": max(values) if values else None}
