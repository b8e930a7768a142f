"""The statistics of an LR-rule validation (Chen et al., ICLR 2024, Figs. 2, 3, 5), from scipy.

:func:`correlations` compares predicted with measured maximal LRs as the paper does (Pearson r
on log LR, which the paper's log-log figures show, and on LR; Spearman rho) and adds the
log-log slope with its 95% confidence interval: measured against predicted LR (1 if the rule is
exact) and measured LR against ``sum_p L_p^3`` (-1/2 by eq. 8).

>>> c = correlations([0.1, 0.2, 0.4, 0.8], [0.12, 0.2, 0.5, 0.7], [216, 54, 13.5, 3.375])
>>> round(c["spearman"], 3), c["n"], round(c["slope"], 2), round(c["slope_l3"], 2)
(1.0, 4, 0.9, -0.45)
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from scipy import stats

__all__ = ["correlations", "loglog_slope", "PREDICTED_SLOPE", "PREDICTED_SLOPE_L3"]

#: log-log slope of measured on predicted maximal LR if the rule is exact
PREDICTED_SLOPE = 1.0
#: log-log slope of the maximal LR on sum_p L_p^3 (paper eq. 8)
PREDICTED_SLOPE_L3 = -0.5


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    """Least-squares slope of ``log y`` on ``log x`` and its 95% CI (Student t, n - 2 degrees of
    freedom); ``None`` where undefined (n < 3 or constant x).

    >>> s, lo, hi = loglog_slope([1, 2, 4, 8], [1, 0.5, 0.25, 0.125])
    >>> round(s, 6), round(lo, 6), round(hi, 6)
    (-1.0, -1.0, -1.0)
    """
    if len(x) < 3 or len(set(x)) < 2:
        return None, None, None
    fit = stats.linregress([math.log(v) for v in x], [math.log(v) for v in y])
    half = stats.t.ppf(0.975, len(x) - 2) * fit.stderr
    return float(fit.slope), float(fit.slope - half), float(fit.slope + half)


def correlations(predicted: Sequence[float], measured: Sequence[float],
                 sum_l3: Sequence[float] | None = None) -> dict[str, Any]:
    """Pearson r on log LR and on LR, Spearman rho, and the log-log slopes (module docstring);
    ``None`` where undefined (n < 3 or a constant side)."""
    out: dict[str, Any] = {"n": len(predicted), "pearson_log": None, "pearson": None, "spearman": None,
                           "slope": None, "slope_ci": None, "slope_l3": None, "slope_l3_ci": None}
    if len(predicted) < 3 or len(set(predicted)) < 2 or len(set(measured)) < 2:
        return out
    logp, logm = [math.log(x) for x in predicted], [math.log(x) for x in measured]
    out["pearson_log"] = float(stats.pearsonr(logp, logm)[0])
    out["pearson"] = float(stats.pearsonr(predicted, measured)[0])
    out["spearman"] = float(stats.spearmanr(predicted, measured)[0])
    slope, lo, hi = loglog_slope(predicted, measured)
    out["slope"], out["slope_ci"] = slope, None if slope is None else [lo, hi]
    if sum_l3 is not None:
        slope, lo, hi = loglog_slope(sum_l3, measured)
        out["slope_l3"], out["slope_l3_ci"] = slope, None if slope is None else [lo, hi]
    return out
