"""The criterion's slope fitted honestly: censored points kept as bounds, clones counted once, and
the path count beside the rule's scale.

A cell whose maximal LR sits at its grid's edge was not measured: its true maximal LR lies
beyond that edge (at most the lowest grid LR, or at least the highest). Deleting it biases the
slope toward the cells that fit; keeping the edge LR as if measured biases it the other way.
:func:`tobit` fits the line by maximum likelihood with each such point as the bound it is (a
censored-normal, "Tobit", regression; Wald intervals from the numerical Hessian, Student-t on
``n - p`` degrees of freedom). :func:`criterion_fits` applies it to an ``lr_validation`` run's
points, after dropping every cell isomorphic to one before it (the base first: a clone of the
base has the base's losses, so it adds no information), to: every cell; the conv-bearing cells;
the cells with more than one input-output path; and log(maximal LR) on log(path count ``P``),
on log(path-depth scale) and on both, with each one-predictor fit's R^2 (least squares on the
measured points) so the report says which explains the maximal LR.

>>> x = np.array([0., 1., 2., 3., 4.])
>>> fit = tobit(np.c_[np.ones(5), x], np.array([0.1, 0.9, 2.1, 2.9, 3.0]), np.array([0, 0, 0, 0, 1]))
>>> round(fit["coef"][1], 1) >= 1.0  # the last point is a lower bound (3.0 or more): the slope stays ~1
True
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from scipy import optimize, stats

from ...space.families import CellFamily
from ...space.encodings import parse_arch
from ...space.isomorphism import first_of_each_class
from ...space.topology import effective_edges, path_depths

__all__ = ["tobit", "criterion_fits"]


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


def _r2(x: np.ndarray, y: np.ndarray) -> float | None:
    if len(y) < 3 or np.ptp(x) == 0:
        return None
    return float(stats.linregress(x, y).rvalue ** 2)


def _cell_facts(points: Sequence[dict[str, Any]], family: CellFamily) -> list[dict[str, Any]]:
    """The non-base points whose cell is the first of its isomorphism class (the base first),
    with their path count and whether a conv lies on a live edge."""
    base = [p for p in points if p["base"]]
    keep, _ = first_of_each_class([p["arch"] for p in [*base, *points] if not p.get("degenerate")], family)
    kept = set(keep) - {p["arch"] for p in base}
    out, seen = [], set()
    for p in points:
        if p["base"] or p["arch"] not in kept or p["arch"] in seen or not p["measured_lr"]:
            continue
        seen.add(p["arch"])
        graph = parse_arch(p["arch"], family)
        ops = [op for _, _, op in effective_edges(graph, family)]
        out.append({"arch": p["arch"], "x": math.log(p["lr_scale"]), "y": math.log(p["measured_lr"]),
                    "paths": len(path_depths(graph, family)),
                    "conv": any(family.op(op).parametric for op in ops),
                    "censor": {"low": -1, "high": 1}.get(p["edge"] or "", 0)})
    return out


def _slope_fit(name: str, cells: list[dict[str, Any]]) -> dict[str, Any]:
    if len(cells) < 3 or len({c["x"] for c in cells}) < 2:
        return {"fit": name, "n": len(cells), "slope": None, "slope_ci": None, "censored": 0}
    f = tobit(np.c_[np.ones(len(cells)), [c["x"] for c in cells]], np.array([c["y"] for c in cells]),
              np.array([c["censor"] for c in cells]))
    return {"fit": name, "n": f["n"], "slope": f["coef"][1], "slope_ci": f["ci"][1], "censored": f["censored"]}


def criterion_fits(points: Sequence[dict[str, Any]], family: CellFamily) -> dict[str, Any]:
    """The censored slopes and the path-count comparison (module docstring), JSON-able."""
    cells = _cell_facts(points, family)
    fits = [_slope_fit("every cell (censored fit)", cells),
            _slope_fit("conv-bearing cells", [c for c in cells if c["conv"]]),
            _slope_fit("cells with more than one path", [c for c in cells if c["paths"] > 1])]
    out: dict[str, Any] = {"cells": len(cells), "clones_dropped": sum(not p["base"] for p in points) - len(cells),
                           "fits": fits, "censored": sum(c["censor"] != 0 for c in cells)}
    measured = [c for c in cells if c["censor"] == 0]
    y = np.array([c["y"] for c in measured])
    logp, x = np.log([c["paths"] for c in measured]), np.array([c["x"] for c in measured])
    out["r2"] = {"path_count": _r2(logp, y), "lr_scale": _r2(x, y), "n": len(measured)}
    if len(cells) >= 4:
        both = tobit(np.c_[np.ones(len(cells)), np.log([c["paths"] for c in cells]), [c["x"] for c in cells]],
                     np.array([c["y"] for c in cells]), np.array([c["censor"] for c in cells]))
        out["two_predictors"] = {"path_count": both["coef"][1], "path_count_ci": both["ci"][1],
                                 "lr_scale": both["coef"][2], "lr_scale_ci": both["ci"][2], "n": both["n"]}
    return out
