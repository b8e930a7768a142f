"""A smoothed landscape: accuracy as a quadratic in log LR per cell, partially pooled across cells.

Each cell's accuracy near its best LR is modelled as ``y = b0 + b1 x + b2 x^2 + e`` with ``x``
the LR in octaves (``log2(LR / ref)``), the per-cell coefficients ``b ~ N(mu, D)`` drawn from one
distribution the cells share, and ``e ~ N(0, sigma^2)`` the seed noise. This is a Gaussian linear
mixed model; :func:`fit_landscape` fits it by empirical Bayes (EM on ``mu``, ``D``, ``sigma^2``,
then each cell's posterior ``N(mean, cov)``), in closed form with numpy. A cell measured at few
LRs or noisily is pulled toward the pooled shape; one measured well keeps its own.

Only the runs within ``window`` octaves of a cell's best mean accuracy enter its fit (the
quadratic describes the landscape near its top, not the divergence past it); diverged runs
(``nan``) never do.

>>> rng = np.random.default_rng(0)
>>> curves = []
>>> for m in (-0.5, 0.0, 0.5):  # three cells, optima half an octave apart, seed noise 0.1
...     xs = np.arange(-4, 5) / 2
...     curves.append((xs, np.stack([70 - 2 * (xs - m) ** 2 + rng.normal(0, 0.1, 9) for _ in range(2)], 1)))
>>> fit = fit_landscape(curves)
>>> [round(float(fit.optimum(i)), 1) for i in range(3)], round(float(fit.sigma), 1)
([-0.5, 0.0, 0.5], 0.1)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["CellCurve", "LandscapeFit", "fit_landscape", "windowed", "argmax_on", "pure_noise"]

#: one cell's data: grid points in octaves (``x``, shape ``(K,)``) and accuracies ``(K, seeds)``
CellCurve = tuple[np.ndarray, np.ndarray]


def windowed(x: np.ndarray, y: np.ndarray, window: float | None) -> CellCurve:
    """The points of one cell within ``window`` octaves of its best mean (all when ``None``).

    >>> windowed(np.array([0., 1., 2., 3.]), np.array([[1.], [3.], [2.], [0.]]), 1.0)[0].tolist()
    [0.0, 1.0, 2.0]
    """
    means = np.where(np.isnan(y).any(axis=1), -np.inf, y.mean(axis=1))
    if window is None or not np.isfinite(means).any():
        return x, y
    keep = np.abs(x - x[int(np.argmax(means))]) <= window + 1e-9
    return x[keep], y[keep]


def pure_noise(curves: Sequence[CellCurve]) -> tuple[float, int]:
    """The seed noise free of any model: the pooled sd of runs around their cell-and-LR mean, and
    its degrees of freedom (``nan, 0`` with one seed)."""
    ss, df = 0.0, 0
    for _, y in curves:
        for row in y:
            row = row[np.isfinite(row)]
            if len(row) > 1:
                ss += float(np.sum((row - row.mean()) ** 2))
                df += len(row) - 1
    return (math.sqrt(ss / df), df) if df else (math.nan, 0)


def argmax_on(b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Where ``b0 + b1 x + b2 x^2`` peaks on ``[lo, hi]`` (rows of ``b``: vertex if concave and
    inside, else the better end).

    >>> argmax_on(np.array([[0., 1., -1.], [0., 1., 1.]]), np.array([-2., -2.]), np.array([2., 2.])).tolist()
    [0.5, 2.0]
    """
    b = np.atleast_2d(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(b[:, 2] < 0, -b[:, 1] / (2 * b[:, 2]), lo)
    v = np.clip(v, lo, hi)
    ends = np.where(_quad(b, hi) > _quad(b, lo), hi, lo)
    return np.where(b[:, 2] < 0, v, ends)


def _quad(b: np.ndarray, x: np.ndarray | float) -> np.ndarray:
    return b[..., 0] + b[..., 1] * x + b[..., 2] * np.asarray(x) ** 2


@dataclass(frozen=True)
class LandscapeFit:
    """The fitted model (see the module).

    Attributes:
        mu: the pooled coefficients ``(b0, b1, b2)``; ``D``: their spread across cells.
        sigma: the residual sd of the model (seed noise plus lack of fit).
        mean: per cell, the posterior mean of ``(b0, b1, b2)``, shape ``(cells, 3)``.
        cov: per cell, its posterior covariance, ``(cells, 3, 3)``.
        lo, hi: per cell, the range of LRs (octaves) its fit saw: optima are kept inside it.
        iterations: EM iterations run.
    """

    mu: np.ndarray
    D: np.ndarray
    sigma: float
    mean: np.ndarray
    cov: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    iterations: int

    def value(self, i: int, x: float | np.ndarray) -> np.ndarray:
        """Cell ``i``'s fitted accuracy at ``x``."""
        return _quad(self.mean[i], x)

    def optimum(self, i: int) -> float:
        """Cell ``i``'s fitted optimal LR (octaves), inside the range its fit saw."""
        return float(argmax_on(self.mean[i][None], self.lo[i:i + 1], self.hi[i:i + 1])[0])

    def pooled_optimum(self) -> float:
        """Where the pooled curve peaks, inside the range every cell's fit saw (or all cells' range)."""
        lo, hi = float(np.max(self.lo)), float(np.min(self.hi))
        if lo > hi:
            lo, hi = float(np.min(self.lo)), float(np.max(self.hi))
        return float(argmax_on(self.mu[None], np.array([lo]), np.array([hi]))[0])

    def draws(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` joint posterior draws of every cell's coefficients, ``(n, cells, 3)``."""
        chol = np.linalg.cholesky(self.cov + 1e-12 * np.eye(3))
        z = rng.standard_normal((n, len(self.mean), 3))
        return self.mean[None] + np.einsum("cij,ncj->nci", chol, z)


def _design(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    xs = np.repeat(x, y.shape[1])
    ys = y.reshape(-1)
    ok = np.isfinite(ys)
    return np.stack([np.ones(ok.sum()), xs[ok], xs[ok] ** 2], 1), ys[ok]


def _init(designs: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, float]:
    """Start EM from per-cell least squares (ridged, so a cell with 2 LRs still gives a start)."""
    coefs, res = [], []
    for X, y in designs:
        b = np.linalg.solve(X.T @ X + 1e-3 * np.eye(3), X.T @ y)
        coefs.append(b)
        res.append(y - X @ b)
    coefs_a = np.array(coefs)
    D = np.cov(coefs_a.T) + np.diag([1.0, 0.1, 0.1]) if len(coefs) > 1 else np.diag([100.0, 10.0, 10.0])
    var = float(np.mean(np.concatenate(res) ** 2)) if res else 1.0
    return coefs_a.mean(axis=0), D, max(var, 1e-4)


def fit_landscape(curves: Sequence[CellCurve], iterations: int = 500, tol: float = 1e-9) -> LandscapeFit:
    """Fit the partially pooled quadratic (module docstring) to ``curves`` (``x`` in octaves,
    already windowed); each cell needs at least one finite run."""
    designs = [_design(x, y) for x, y in curves]
    mu, D, var = _init(designs)
    n_obs = sum(len(y) for _, y in designs)
    xtx = np.array([X.T @ X for X, _ in designs])
    xty = np.array([X.T @ y for X, y in designs])
    it = 0
    for it in range(1, iterations + 1):
        Dinv = np.linalg.inv(D)
        cov = np.linalg.inv(xtx / var + Dinv[None])
        mean = np.einsum("cij,cj->ci", cov, xty / var + (Dinv @ mu)[None])
        mu_new = mean.mean(axis=0)
        dev = mean - mu_new
        D_new = (np.einsum("ci,cj->ij", dev, dev) + cov.sum(axis=0)) / len(designs) + 1e-9 * np.eye(3)
        ss = sum(float(np.sum((y - X @ m) ** 2)) + float(np.trace(X @ c @ X.T))
                 for (X, y), m, c in zip(designs, mean, cov))
        var_new = max(ss / n_obs, 1e-8)
        done = abs(var_new - var) < tol * var and np.allclose(mu_new, mu, atol=tol, rtol=0)
        mu, D, var = mu_new, D_new, var_new
        if done:
            break
    Dinv = np.linalg.inv(D)
    cov = np.linalg.inv(xtx / var + Dinv[None])
    mean = np.einsum("cij,cj->ci", cov, xty / var + (Dinv @ mu)[None])
    lo = np.array([float(np.min(x)) for x, _ in curves])
    hi = np.array([float(np.max(x)) for x, _ in curves])
    return LandscapeFit(mu, D, math.sqrt(var), mean, cov, lo, hi, it)
