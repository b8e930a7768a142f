"""Verdicts that can come out either way: the ranking-distortion test and the oracle-gain bracket.

**Distortion.** Does one fixed recipe (an LR for every cell) rank the cells differently from each
cell's own best LR, beyond seed noise? On single runs, like for like, the statistic is

    gap = (tau(F, F) + tau(O, O)) / 2 - tau(F, O)

where ``tau(A, B)`` is Kendall's tau (tau-a over pairs of distinct cells) between arm A's
ranking on seed ``s`` and arm B's on another seed ``t``, averaged over every ordered seed pair,
``F`` the fixed arm and ``O`` the cross-fitted oracle. The two rankings' own reproducibility is
the seed floor. Written per pair of cells, the gap is the mean over seed pairs of
``(f_s - o_s)(f_t - o_t) / 2``, with ``f_s`` the sign F gives the pair on seed ``s``: it grows
with the pairs the two arms order differently on two seeds alike, and seed noise, which flips a
pair on one seed independently of the other, leaves it at 0. Its intervals come
from a bootstrap over cells (a cell's seeds travel with it, so seed noise is inside). The
verdict (:func:`verdict`):

* ``distorted``: the 95% interval excludes 0 from above;
* ``equivalent within D``: the 90% interval lies inside ``(-D, D)`` (two one-sided tests at 5%),
  given only where the positive controls were detected;
* ``undetermined at this design`` otherwise.

**Bracket.** The oracle's gain over one global LR, three ways: in-sample (each cell's best mean
against the best common LR, both picked on the data scored: biased up), cross-fitted (picked on
other seeds or cells: biased down), and model-based (the smoothed landscape's gain,
:mod:`.model`). :func:`bracket` sets each against its null: the same estimator on landscapes
simulated from the fitted pooled curve, every cell sharing one optimum, at the measured seed noise.

>>> verdict([0.10, 0.30], [0.12, 0.28], 0.05, controls_detected=True)
'distorted'
>>> verdict([-0.02, 0.03], [-0.01, 0.02], 0.05, controls_detected=True)
'equivalent within 0.05'
>>> verdict([-0.02, 0.03], [-0.01, 0.02], 0.05, controls_detected=False)
'undetermined at this design'
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .cells import CellLandscape
from .model import LandscapeFit, argmax_on, fit_landscape, pure_noise, windowed
from .sim import Grid, Truth, arm_scores, mean_curves, simulate, to_grid

__all__ = ["WINDOW", "distortion", "verdict", "fit_grid", "truth_of", "null_truth",
           "gains", "bracket"]

#: octaves either side of a cell's best mean that its smoothed fit sees
WINDOW = 1.5


def _signs(scores: np.ndarray) -> np.ndarray:
    """``(seeds, cells, cells)``: per seed, the sign of every pairwise difference of the cells' scores."""
    return np.sign(scores.T[:, :, None] - scores.T[:, None, :])


def _pair_terms(fixed: np.ndarray, oracle: np.ndarray) -> dict[str, np.ndarray]:
    """Per pair of cells, the single-run agreement terms summed over ordered seed pairs ``s != t``
    and divided by their number: ``ff`` (F_s with F_t), ``oo``, ``fo`` and the gap's."""
    f, o = _signs(fixed), _signs(oracle)
    pairs = f.shape[0] * (f.shape[0] - 1)

    def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # sum over s != t of a_s * b_t
        return (a.sum(axis=0) * b.sum(axis=0) - (a * b).sum(axis=0)) / pairs

    d = f - o
    return {"ff": cross(f, f), "oo": cross(o, o), "fo": cross(f, o), "gap": cross(d, d) / 2}


def _mean_over_pairs(m: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Per row of ``idx`` (``(B, cells)``), the mean of ``m`` over pairs of distinct cells drawn
    (a cell drawn twice pairs with itself at 0 and is not counted)."""
    total = m[idx[:, :, None], idx[:, None, :]].sum(axis=(1, 2))
    counts = np.apply_along_axis(np.bincount, 1, idx, minlength=m.shape[0])
    distinct = idx.shape[1] ** 2 - (counts ** 2).sum(axis=1)
    return np.where(distinct > 0, total / np.maximum(distinct, 1), 0.0)


def distortion(fixed: np.ndarray, oracle: np.ndarray, rng: np.random.Generator, n_boot: int = 2000) -> dict[str, Any]:
    """The gap (module docstring) of fixed-arm scores against the oracle's (each ``(cells, seeds)``,
    seeds >= 2) with its 95% and 90% bootstrap intervals over cells; taus are tau-a over pairs of
    distinct cells.

    >>> f = np.array([[1., 1.], [2., 2.], [3., 3.], [4., 4.]])
    >>> d = distortion(f, f[::-1].copy(), np.random.default_rng(0), 200)
    >>> d["tau"], d["floor"], d["gap"]
    (-1.0, 1.0, 2.0)
    """
    terms = _pair_terms(fixed, oracle)
    n = len(fixed)
    ident = np.arange(n)[None]
    boot = _mean_over_pairs(terms["gap"], rng.integers(0, n, size=(n_boot, n)))
    ff, oo, fo = (float(_mean_over_pairs(terms[k], ident)[0]) for k in ("ff", "oo", "fo"))
    return {"gap": float(_mean_over_pairs(terms["gap"], ident)[0]), "tau": fo, "floor": (ff + oo) / 2,
            "ci95": [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))],
            "ci90": [float(np.percentile(boot, 5)), float(np.percentile(boot, 95))]}


def verdict(ci95: Sequence[float], ci90: Sequence[float], margin: float, controls_detected: bool) -> str:
    """The verdict words (module docstring)."""
    if ci95[0] > 0:
        return "distorted"
    if controls_detected and -margin < ci90[0] and ci90[1] < margin:
        return f"equivalent within {margin:g}"
    return "undetermined at this design"


def fit_grid(g: Grid, window: float = WINDOW) -> tuple[LandscapeFit, float]:
    """The smoothed landscape of ``g`` (x centred on the grid's middle) and its centre (octaves)."""
    ref = float(np.median(g.x))
    curves = []
    for i in range(len(g.Y)):
        have = g.avail[i]
        curves.append(windowed(g.x[have] - ref, np.where(g.diverged[i][have], np.nan, g.Y[i][have]), window))
    return fit_landscape(curves), ref


def truth_of(fit: LandscapeFit, ref: float, g: Grid, sigma: float) -> Truth:
    """The fitted landscape as a truth to simulate from: each cell's fitted optimum, level there and
    curvature (at least a tenth of the pooled one, so no cell is flat)."""
    opt = np.array([fit.optimum(i) for i in range(len(fit.mean))])
    level = np.array([float(fit.value(i, o)) for i, o in enumerate(opt)])
    floor = 0.1 * max(-float(fit.mu[2]), 1e-3)
    curv = np.maximum(-fit.mean[:, 2], floor)
    return Truth(level, opt + ref, curv, sigma, g.x, g.avail, g.Y.shape[2])


def null_truth(fit: LandscapeFit, ref: float, g: Grid, sigma: float) -> Truth:
    """Every cell on the pooled curve's shape and optimum, at its own fitted level."""
    t = truth_of(fit, ref, g, sigma)
    pooled = fit.pooled_optimum() + ref
    return Truth(t.level, np.full_like(t.level, pooled), np.full_like(t.level, max(-float(fit.mu[2]), 1e-3)),
                 sigma, g.x, g.avail, t.seeds)


def _model_gain(fit: LandscapeFit, coefs: np.ndarray) -> np.ndarray:
    """Per draw (``(draws, cells, 3)``), the mean over cells of each cell's peak minus its value at
    the LR where the draw's mean curve peaks."""
    lo, hi = fit.lo, fit.hi
    peak_x = np.stack([argmax_on(c, lo, hi) for c in coefs])
    peak = coefs[..., 0] + coefs[..., 1] * peak_x + coefs[..., 2] * peak_x ** 2
    common_lo, common_hi = (np.max(lo), np.min(hi)) if np.max(lo) <= np.min(hi) else (np.min(lo), np.max(hi))
    xg = argmax_on(coefs.mean(axis=1), np.full(len(coefs), common_lo), np.full(len(coefs), common_hi))
    at_g = coefs[..., 0] + coefs[..., 1] * xg[:, None] + coefs[..., 2] * xg[:, None] ** 2
    return (peak - at_g).mean(axis=1)


def gains(g: Grid, fit: LandscapeFit | None = None) -> dict[str, float]:
    """The three estimates of the oracle's gain over one global LR (module docstring), in points."""
    m = mean_curves(g)
    common = g.avail.all(axis=0) if g.avail.all(axis=0).any() else g.avail.any(axis=0)
    jg = int(np.argmax(np.where(common, np.where(np.isfinite(m), m, 0).sum(axis=0), -np.inf)))
    in_sample = float(np.mean(m.max(axis=1) - np.where(np.isfinite(m[:, jg]), m[:, jg], 0)))
    arms = arm_scores(g)
    cross = float(np.mean(arms["oracle"].mean(axis=1) - arms["global"].mean(axis=1)))
    fit = fit or fit_grid(g)[0]
    return {"in_sample": in_sample, "cross_fitted": cross, "model": float(_model_gain(fit, fit.mean[None])[0])}


def bracket(cells: Sequence[CellLandscape], per_octave: int, rng: np.random.Generator, n_null: int = 200,
            n_draws: int = 2000) -> dict[str, Any]:
    """The three gain estimates, the model-based one's posterior 95% interval, and each against its
    null (the null's mean, 95% range and the share of null values at or above the observed: p)."""
    g = to_grid(cells, per_octave)
    fit, ref = fit_grid(g)
    sigma, df = pure_noise([(g.x, g.Y[i][g.avail[i]]) for i in range(len(g.Y))])
    obs = gains(g, fit)
    draws = _model_gain(fit, fit.draws(n_draws, rng))
    truth = null_truth(fit, ref, g, sigma)
    null = [gains(simulate(truth, rng, per_octave)) for _ in range(n_null)]
    out: dict[str, Any] = {"n": len(cells), "sigma_seed": sigma, "sigma_df": df, "sigma_model": fit.sigma,
                           "pooled_optimum_octaves": fit.pooled_optimum() + ref, "n_null": n_null,
                           "model_ci": [float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5))]}
    for name, value in obs.items():
        values = np.array([n[name] for n in null])
        out[name] = {"estimate": value, "null_mean": float(values.mean()),
                     "null_range": [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))],
                     "p": float((np.sum(values >= value) + 1) / (len(values) + 1))}
    return out
