"""The power curve and planner when the smoothed fit shrinks the cells' optima to (nearly) one
point: spreading the fitted optima then moves nothing, so the curve spreads the cells' raw best
LRs (or, if those coincide too, evenly spaced optima) and the planner still answers."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from nasrescale.kinds.landscape.power import MIN_SPREAD, plan, power_curve, true_distortion, with_pattern
from nasrescale.kinds.landscape.sim import Grid, Truth, simulate
from nasrescale.kinds.landscape.verdict_text import power_lines
from nasrescale.kinds.landscape.verdicts import TAU_MARGIN, TARGET_TAU

PER_OCTAVE = 2
X = np.arange(8) / PER_OCTAVE


def _truth(optimum: np.ndarray, seeds: int = 2, sigma: float = 0.5) -> Truth:
    rng = np.random.default_rng(0)
    n = len(optimum)
    return Truth(level=rng.uniform(60, 72, n), optimum=optimum, curvature=np.full(n, 0.4), sigma=sigma, x=X,
                 avail=np.ones((n, len(X)), bool), seeds=seeds)


def _shrunk_and_grid(cells: int = 12) -> tuple[Truth, Grid]:
    """A landscape whose optima are spread by 0.7 octaves (its grid: 2 seeds of it), and the
    'fitted' truth a strongly pooling fit would give: every optimum at one point."""
    rng = np.random.default_rng(1)
    real = _truth(1.75 + 0.7 * rng.standard_normal(cells))
    grid = simulate(real, np.random.default_rng(2), PER_OCTAVE)
    return replace(real, optimum=np.full(cells, 1.75)), grid


def test_shrunk_optima_are_spread_by_the_raw_best_lrs_and_the_planner_answers():
    shrunk, grid = _shrunk_and_grid()
    before = plan(shrunk, PER_OCTAVE, TARGET_TAU, 20, np.random.default_rng(3), TAU_MARGIN)
    assert before["factor"] is None  # the old pattern: no factor moves a shared optimum
    t, info = with_pattern(shrunk, grid)
    assert info["pattern"] == "raw" and info["fitted_sd"] == 0.0 and info["sd"] >= MIN_SPREAD / PER_OCTAVE
    assert true_distortion(t) == true_distortion(shrunk)  # as fitted is as fitted
    curve = power_curve(t, PER_OCTAVE, 20, np.random.default_rng(4), TAU_MARGIN, factors=(0.0, 1.0, 4.0))
    assert np.isclose(curve[0]["tau"], 1.0) and curve[-1]["tau"] < TARGET_TAU
    assert curve[-1]["regret"] > curve[1]["regret"] > 0
    after = plan(t, PER_OCTAVE, TARGET_TAU, 20, np.random.default_rng(3), TAU_MARGIN, seeds=(2, 8),
                 cell_factors=(1.0,))
    assert after["factor"] is not None and len(after["designs"]) == 2
    assert all(abs(d["true_tau"] - TARGET_TAU) < 0.1 for d in after["designs"])
    text = "\n".join(power_lines({"fitted": true_distortion(t), "null_rates": {"distorted": 0, "equivalent": 0},
                                  "power_curve": curve, "plan": after, "power_target": 0.8, "spread": info}))
    assert "raw best LRs" in text and f"sd {info['sd']:.2f} octaves" in text and "no design planned" not in text


def test_coinciding_raw_optima_fall_back_to_evenly_spaced_ones():
    """Every cell peaks at the same grid point: the pattern is normal scores at one grid step."""
    shrunk, _ = _shrunk_and_grid(cells=9)
    clean = replace(shrunk, sigma=0.0)
    t, info = with_pattern(clean, simulate(clean, np.random.default_rng(5), PER_OCTAVE))
    assert info["pattern"] == "even"
    assert np.isclose(info["sd"], 1 / PER_OCTAVE) and np.isclose(np.median(t.pattern), 0.0)
    assert true_distortion(t.spread(6.0))["tau"] < 1.0


def test_fitted_optima_that_differ_are_spread_as_they_are():
    """Optima spread by more than a quarter grid step: the pattern is the fitted one, unchanged."""
    real = _truth(1.75 + 0.5 * np.random.default_rng(6).standard_normal(12))
    t, info = with_pattern(real, simulate(real, np.random.default_rng(7), PER_OCTAVE))
    assert info["pattern"] == "fitted" and t is real and t.pattern is None
    assert np.isclose(info["sd"], np.std(real.optimum))
