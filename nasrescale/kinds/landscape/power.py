"""What the distortion test can see: its power, the smallest distortion it detects, and the design
that would detect a stated one.

All by simulation from the smoothed landscape (:mod:`.model`) at the measured seed noise: the
cells' fitted optima are spread about their median by a factor (0: one shared optimum, no
distortion; 1: as fitted; more: larger distortions), and at each factor the *true* distortion
is what a noise-free landscape gives: Kendall tau between the cells' accuracies at the best
common grid LR and at their own optima, and the mean regret there (points). The power at a
factor is the share of simulated landscapes the test calls ``distorted``
(:func:`~.inference.verdict`). The minimum detectable distortion is where the power first
reaches 80%, interpolated between factors.

Partial pooling can shrink the fitted optima to nearly one point (a flat landscape, few seeds);
spreading them by any factor then moves nothing and no power is ever reached. :func:`with_pattern`
says what is spread instead when their sd is under :data:`MIN_SPREAD` grid steps: the cells' raw
best LRs (mean over seeds), or if those too coincide, evenly spaced normal scores at one grid step.
The planner (:func:`plan`) finds the factor whose
true tau is the target, then the power of designs with more seeds or more cells (new cells
drawn from the fitted ones, their levels jittered by a kernel bandwidth).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import numpy as np
from scipy import stats

from .inference import distortion
from .sim import Grid, Truth, arm_scores, last_argmax, mean_curves, simulate

__all__ = ["POWER", "FACTORS", "MIN_SPREAD", "with_pattern", "true_distortion", "power_at", "power_curve",
           "detectable", "plan"]

#: the power a design must reach
POWER = 0.8
#: optimum-spread factors the power curve visits
FACTORS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
#: the least sd of the optima, in grid steps, for spreading them to be a test of anything
MIN_SPREAD = 0.25


def with_pattern(t: Truth, g: Grid) -> tuple[Truth, dict[str, Any]]:
    """``t`` with the pattern its power curve spreads (module docstring), and what that is:
    ``pattern`` (``"fitted"``, ``"raw"`` or ``"even"``), its sd at factor 1 and the fitted optima's
    sd, in octaves.

    >>> x = np.arange(5) / 2
    >>> Y = np.stack([60 - (x - o) ** 2 for o in (0.5, 1.0, 1.5)])[:, :, None].repeat(2, axis=2)
    >>> g = Grid(Y, np.arange(5), x, np.zeros_like(Y, bool))
    >>> t = Truth(np.full(3, 60.), np.full(3, 1.0), np.ones(3), 0.5, x, np.ones((3, 5), bool), 2)
    >>> t2, info = with_pattern(t, g)
    >>> info["pattern"], t2.spread(1).optimum.tolist()
    ('raw', [0.5, 1.0, 1.5])
    """
    step = float(np.min(np.diff(np.unique(g.x)))) if len(np.unique(g.x)) > 1 else 1.0
    fitted_sd = float(np.std(t.optimum))
    info: dict[str, Any] = {"pattern": "fitted", "sd": fitted_sd, "fitted_sd": fitted_sd}
    if fitted_sd >= MIN_SPREAD * step:
        return t, info
    m = mean_curves(g)
    raw = g.x[last_argmax(m)]  # the larger LR among equal means
    pattern = raw - np.median(raw)
    info.update(pattern="raw")
    if np.std(pattern) < MIN_SPREAD * step:
        order = np.argsort(np.argsort(raw, kind="stable"), kind="stable")
        z = stats.norm.ppf((order + 0.5) / len(raw))
        pattern = step * z / np.std(z) if np.std(z) > 0 else np.zeros_like(raw)
        info.update(pattern="even")
    info["sd"] = float(np.std(pattern))
    return replace(t, pattern=pattern), info


def true_distortion(t: Truth) -> dict[str, float]:
    """The noise-free distortion of one global LR (the best common grid point): tau against the
    cells' own optima, and the mean regret in points."""
    vals = t.value(t.x)
    common = t.avail.all(axis=0) if t.avail.all(axis=0).any() else t.avail.any(axis=0)
    j = int(np.argmax(np.where(common, vals.mean(axis=0), -np.inf)))
    best = np.where(t.avail, vals, -np.inf).max(axis=1)
    tau = stats.kendalltau(vals[:, j], best).statistic
    return {"tau": float(tau) if np.isfinite(tau) else 1.0, "regret": float(np.mean(best - vals[:, j]))}


def power_at(t: Truth, per_octave: int, reps: int, rng: np.random.Generator, margin: float,
             n_boot: int = 500) -> dict[str, float]:
    """Shares of ``reps`` simulated landscapes of ``t`` that the test calls distorted and equivalent."""
    distorted = equivalent = 0
    for _ in range(reps):
        arms = arm_scores(simulate(t, rng, per_octave))
        d = distortion(arms["global"], arms["oracle"], rng, n_boot)
        distorted += d["ci95"][0] > 0
        equivalent += -margin < d["ci90"][0] and d["ci90"][1] < margin
    return {"distorted": distorted / reps, "equivalent": equivalent / reps}


def power_curve(t: Truth, per_octave: int, reps: int, rng: np.random.Generator, margin: float,
                factors: Sequence[float] = FACTORS) -> list[dict[str, float]]:
    """Per spread factor: the true distortion and the test's power there."""
    out = []
    for f in factors:
        spread = t.spread(f)
        out.append({"factor": float(f), **true_distortion(spread),
                    **{f"p_{k}": v for k, v in power_at(spread, per_octave, reps, rng, margin).items()}})
    return out


def detectable(curve: Sequence[dict[str, float]], power: float = POWER) -> dict[str, float] | None:
    """The smallest true distortion reaching ``power`` (interpolated); ``None`` if none does.

    >>> detectable([{"factor": 0, "tau": 1.0, "regret": 0.0, "p_distorted": 0.0},
    ...             {"factor": 1, "tau": 0.8, "regret": 1.0, "p_distorted": 1.0}])
    {'factor': 0.8, 'tau': 0.84, 'regret': 0.8}
    """
    for lo, hi in zip(curve, curve[1:]):
        if hi["p_distorted"] >= power > lo["p_distorted"]:
            w = (power - lo["p_distorted"]) / (hi["p_distorted"] - lo["p_distorted"])
            return {k: round(lo[k] + w * (hi[k] - lo[k]), 10) for k in ("factor", "tau", "regret")}
    if curve and curve[0]["p_distorted"] >= power:
        return {k: curve[0][k] for k in ("factor", "tau", "regret")}
    return None


def _factor_for(t: Truth, target_tau: float, top: float = 8.0, steps: int = 161) -> float | None:
    """The smallest optimum-spread factor at which ``t``'s true tau falls to ``target_tau`` or
    below (scanned in steps of ``top / (steps - 1)``); ``None`` if none up to ``top`` does."""
    for f in np.linspace(0.0, top, steps):
        if true_distortion(t.spread(float(f)))["tau"] <= target_tau:
            return float(f)
    return None


def _more_cells(t: Truth, n: int, rng: np.random.Generator) -> Truth:
    """``n`` cells drawn from ``t``'s (optimum and curvature kept, the level jittered by
    Silverman's bandwidth so drawn twice is not the same cell)."""
    pick = rng.integers(0, len(t.level), n)
    h = 1.06 * float(np.std(t.level)) * len(t.level) ** -0.2
    return replace(t, level=t.level[pick] + h * rng.standard_normal(n), optimum=t.optimum[pick],
                   curvature=t.curvature[pick], avail=t.avail[pick],
                   pattern=None if t.pattern is None else t.pattern[pick])


def plan(t: Truth, per_octave: int, target_tau: float, reps: int, rng: np.random.Generator, margin: float,
         seeds: Sequence[int] = (2, 3, 4, 6, 8), cell_factors: Sequence[float] = (1.0, 1.5, 2.0)) -> dict[str, Any]:
    """Power to detect a true tau of ``target_tau`` per design (cells x seeds), and the cheapest
    design (fewest runs) reaching :data:`POWER`. Each cell set (the fitted one, or cells drawn from
    it) is spread until its own true tau is the target, so every design faces the same distortion;
    ``factor``: the fitted cells' spread factor there (``None``: no spread up to 8 gives it)."""
    factor = _factor_for(t, target_tau)
    out: dict[str, Any] = {"target_tau": target_tau, "factor": factor, "designs": [], "cheapest": None}
    if factor is None:
        return out
    start = int(rng.integers(2**31))
    for cf in cell_factors:
        n = int(round(cf * len(t.level)))
        cells = t if n == len(t.level) else _more_cells(t, n, np.random.default_rng(start))
        f = factor if cells is t else _factor_for(cells, target_tau)
        if f is None:
            continue
        for s in seeds:  # common random numbers: every design's draws start from one seed
            truth = replace(cells.spread(f), seeds=s)
            p = power_at(truth, per_octave, reps, np.random.default_rng(start + 1), margin)["distorted"]
            out["designs"].append({"cells": n, "seeds": s, "runs": int(truth.avail.sum()) * s, "power": p,
                                   "true_tau": true_distortion(truth)["tau"]})
    ok = [d for d in out["designs"] if d["power"] >= POWER]
    out["cheapest"] = min(ok, key=lambda d: (d["runs"], -d["power"])) if ok else None
    return out
