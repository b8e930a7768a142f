"""The censored-normal ("Tobit") regression: a line fitted with each censored point kept as the
bound it is (an LR at its grid's edge only bounds the maximal LR), by maximum likelihood, with
Wald intervals from the numerical Hessian (Student-t on ``n - p`` degrees of freedom). The LR
validation's censored fits and a landscape's criterion rows use it.

>>> x = np.array([0., 1., 2., 3., 4.])
>>> fit = tobit(np.c_[np.ones(5), x], np.array([0.1, 0.9, 2.1, 2.9, 3.0]), np.array([0, 0, 0, 0, 1]))
>>> round(fit["coef"][1], 1) >= 1.0  # the last point is a lower bound (3.0 or more): the slope stays ~1
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize, stats

__all__ = ["tobit"]


def _nll(theta: np.ndarray, X: np.ndarray, y: np.ndarray, censor: np.ndarray) -> float:
    beta, sigma = theta[:-1], math.exp(theta[-1])
    z = (y - X @ beta) / sigma
    exact = censor == 0
    ll = np.sum(stats.norm.logpdf(z[exact]) - math.log(sigma))
    ll += np.sum(stats.norm.logcdf(z[censor < 0]))   # true value <= y: an upper bound
    ll += np.sum(stats.norm.logcdf(-z[censor > 0]))  # true value >= y: a lower bound
    return -float(ll)


def _hessian(f: Any, x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    n = len(x)
    H = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            e_i, e_j = np.eye(n)[i] * h, np.eye(n)[j] * h
            H[i, j] = (f(x + e_i + e_j) - f(x + e_i - e_j) - f(x - e_i + e_j) + f(x - e_i - e_j)) / (4 * h * h)
    return H


def tobit(X: np.ndarray, y: np.ndarray, censor: np.ndarray) -> dict[str, Any]:
    """Censored-normal regression of ``y`` on ``X`` (with its intercept column); ``censor``: 0 for a
    measured point, -1 for an upper bound (the true value is at most ``y``), +1 for a lower bound.
    Returns ``coef``, ``ci`` (95%, per coefficient; ``None`` where the fit has no curvature there),
    ``sigma``, ``n`` and ``censored``."""
    censor = np.asarray(censor)
    start = np.linalg.lstsq(X[censor == 0] if (censor == 0).sum() > X.shape[1] else X, y[censor == 0]
                            if (censor == 0).sum() > X.shape[1] else y, rcond=None)[0]
    resid = y - X @ start
    theta0 = np.r_[start, math.log(max(float(np.std(resid)), 1e-3))]
    res = optimize.minimize(_nll, theta0, args=(X, y, censor), method="Nelder-Mead",
                            options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 20000, "maxfev": 40000})
    res = optimize.minimize(_nll, res.x, args=(X, y, censor), method="BFGS")
    H = _hessian(lambda t: _nll(t, X, y, censor), res.x)
    df = max(len(y) - X.shape[1], 1)
    half = [None] * X.shape[1]
    try:
        cov = np.linalg.inv(H)
        if np.all(np.diag(cov)[:-1] > 0):
            half = list(stats.t.ppf(0.975, df) * np.sqrt(np.diag(cov)[:-1]))
    except np.linalg.LinAlgError:
        pass
    coef = [float(b) for b in res.x[:-1]]
    return {"coef": coef, "ci": [None if h is None else [c - float(h), c + float(h)] for c, h in zip(coef, half)],
            "sigma": math.exp(res.x[-1]), "n": len(y), "censored": int(np.sum(censor != 0))}
