"""A paired comparison's robust companions to its mean gain, and the verdict they allow.

A mean over a few dozen cells can rest on a handful of them. :func:`paired_robust` gives,
beside the mean difference (B - A, one value per cell) and its 95% BCa bootstrap CI at
:data:`VERDICT_BOOT` resamples, the median difference, the Wilcoxon signed-rank p
(:func:`scipy.stats.wilcoxon`), the share of cells that gain, and the influence of the few
cells that move the mean most: the mean without the k (<= :data:`MAX_DROPPED`) cells farthest
from it.

The verdict (:func:`verdict`) is ``better`` or ``worse`` only where the CI excludes 0, by more
than :data:`EDGE` of its width, *and* still excludes it on the same side with the k cells
that carry it most (the largest differences on its side) dropped; ``edge`` where a bound lies within :data:`EDGE` of the CI's width of 0; ``driven``
(by the smallest number of cells whose removal lets the CI reach 0) where dropping a few
cells undoes it; ``none`` where the CI holds 0.

>>> d = pd.Series([1.0, 1.1, 0.9, 1.2, 0.8, 1.0, 1.05, 0.95, 1.1, 0.9], index=[f"c{i}" for i in range(10)])
>>> r = paired_robust(d, n_boot=999)
>>> r["verdict"], r["gains"], r["n"], r["median"]
('better', 10, 10, 1.0)
>>> d.iloc[:3] = [-9.0, -8.0, -7.0]; d.iloc[3:] = 0.1
>>> r = paired_robust(d, n_boot=999)
>>> r["verdict"] in ("driven", "edge", "none"), r["influence"]["cells"]
(True, ['c0', 'c1', 'c2'])
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .boot_counts import VERDICT_BOOT  # bootstrap resamples behind a verdict's CI
from .resample import MIN_ROWS

__all__ = ["VERDICT_BOOT", "MAX_DROPPED", "EDGE", "mean_ci", "influential", "verdict", "paired_robust"]

#: the most cells the influence check drops
MAX_DROPPED = 3
#: a CI bound within this share of the CI's width of 0 is "at the edge"
EDGE = 0.05


def mean_ci(diffs: np.ndarray, n_boot: int = VERDICT_BOOT, seed: int = 0) -> list[float] | None:
    """The 95% BCa bootstrap CI of the mean of ``diffs`` (percentile where BCa is undefined);
    ``None`` below :data:`~nasrescale.ranking.resample.MIN_ROWS` values."""
    d = np.asarray(diffs, dtype=float)
    if d.size < MIN_ROWS or n_boot <= 0:
        return None
    if np.ptp(d) == 0:
        return [float(d[0]), float(d[0])]
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        res = stats.bootstrap((d,), np.mean, n_resamples=n_boot, method="BCa", vectorized=True,
                              rng=np.random.default_rng(seed))
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        low, high = (float(q) for q in np.quantile(res.bootstrap_distribution, [0.025, 0.975]))
    return [low, high]


def influential(diffs: pd.Series, k: int = MAX_DROPPED, toward_zero: bool = False) -> list[str]:
    """The ``k`` cells whose removal moves the mean most (dropping cell i moves it by
    (mean - d_i) / (n - 1)): the largest |d_i - mean|; with ``toward_zero``, those whose removal
    moves it most toward 0 (the largest differences where the mean is positive, else the smallest).

    >>> d = pd.Series([0.5, -4.0, 0.2, -1.0, 3.0], index=list("abcde"))
    >>> influential(d, 2), influential(d, 2, toward_zero=True)
    (['b', 'e'], ['b', 'd'])
    """
    if toward_zero:
        key = diffs if diffs.mean() >= 0 else -diffs
    else:
        key = (diffs - diffs.mean()).abs()
    return [str(cell) for cell in key.sort_values(ascending=False, kind="stable").index[:k]]


def verdict(ci: list[float] | None) -> str:
    """``better``, ``worse``, ``edge`` (a bound within :data:`EDGE` of the width of 0) or ``none``.

    >>> verdict([0.1, 0.5]), verdict([-0.82, 0.0]), verdict([0.004, 0.45]), verdict([-0.36, 0.43]), verdict(None)
    ('better', 'edge', 'edge', 'none', 'none')
    """
    if not ci:
        return "none"
    low, high = ci
    if min(abs(low), abs(high)) <= EDGE * (high - low):
        return "edge"
    return "better" if low > 0 else "worse" if high < 0 else "none"


def _wilcoxon(d: np.ndarray) -> float | None:
    if d.size < MIN_ROWS or not np.any(d != 0):
        return None
    return float(stats.wilcoxon(d).pvalue)


def paired_robust(diffs: pd.Series, *, n_boot: int = VERDICT_BOOT, seed: int = 0) -> dict[str, Any]:
    """The robust summary of per-cell differences ``diffs`` (B - A, indexed by cell).

    Returns:
        ``n``, ``mean``, ``median``, ``wilcoxon_p``, ``gains`` (cells with d > 0), ``share``
        (their share), ``ci`` (the mean's CI at ``n_boot`` resamples), ``n_boot``, ``influence``
        (``cells``: the :func:`influential` ones, ``mean_without``, ``ci_without``, ``survives``:
        whether a verdict holds without them, ``None`` where there was none), ``verdict`` and ``driven_by`` (the cells whose
        removal undoes a verdict, fewest first; empty otherwise).
    """
    d = diffs.dropna().astype(float)
    x = d.to_numpy()
    ci = mean_ci(x, n_boot, seed)
    word = verdict(ci)
    k = min(MAX_DROPPED, max(len(d) - MIN_ROWS, 0))
    cells = influential(d, k) if k else []
    rest = d.drop(cells)
    ci_without = mean_ci(rest.to_numpy(), n_boot, seed) if cells else None
    driven: list[str] = []
    if word in ("better", "worse"):
        side = influential(d, k, toward_zero=True)
        for j in range(1, k + 1):
            if verdict(mean_ci(d.drop(side[:j]).to_numpy(), n_boot, seed)) != word:
                driven, word = side[:j], "driven"
                break
    gains = int((x > 0).sum())
    return {"n": int(x.size), "mean": float(x.mean()) if x.size else None,
            "median": float(np.median(x)) if x.size else None, "wilcoxon_p": _wilcoxon(x),
            "gains": gains, "share": gains / x.size if x.size else None, "ci": ci, "n_boot": n_boot,
            "influence": {"cells": cells, "mean_without": float(rest.mean()) if cells else None,
                          "ci_without": ci_without,
                          "survives": True if word in ("better", "worse") else False if driven else None},
            "verdict": word, "driven_by": driven}
