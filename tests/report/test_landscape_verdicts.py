"""The landscape's calibrated verdicts on synthetic landscapes whose truth is known: the null is
called distorted at about the nominal rate, a known distortion is called distorted, the
planner's fast simulation agrees with the report's own path, and the gain bracket separates a
shared optimum from spread optima."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from nasrescale.kinds.landscape.cells import cell_of
from nasrescale.kinds.landscape.inference import bracket, distortion, fit_grid, verdict
from nasrescale.kinds.landscape.power import power_at, true_distortion
from nasrescale.kinds.landscape.sim import Truth, arm_scores, simulate, to_grid
from nasrescale.kinds.landscape.stats import arm_scores as report_arm_scores
from nasrescale.kinds.landscape.verdict_text import distortion_lines
from nasrescale.kinds.landscape.verdicts import TAU_MARGIN, verdicts

PER_OCTAVE = 2


def _truth(spread: float, cells: int = 24, seeds: int = 2, sigma: float = 0.8, seed: int = 0) -> Truth:
    """Cells at levels 55-72 %, curvature 1.5 points per octave^2, optima spread by ``spread``
    octaves (sd) about 1.5 octaves above the grid's lowest LR, on an 8-point grid."""
    rng = np.random.default_rng(seed)
    x = np.arange(8) / PER_OCTAVE
    return Truth(level=rng.uniform(55, 72, cells), optimum=1.5 + spread * rng.standard_normal(cells),
                 curvature=np.full(cells, 1.5), sigma=sigma, x=x, avail=np.ones((cells, len(x)), bool), seeds=seeds)


def _cells(grid) -> list:
    """The report's own cell objects of a simulated grid (as a store would give them)."""
    out = []
    for i in range(len(grid.Y)):
        curve = {int(k): [float(v) for v in grid.Y[i, j]] for j, k in enumerate(grid.ks)}
        out.append(cell_of(f"c{i}", 2.0 ** -(i % 5), 1.0, curve, n_boot=0))
    return out


def test_the_null_is_called_distorted_at_about_the_nominal_rate():
    """Every cell shares one optimum: 'distorted' at most at about the one-sided 2.5 % of a 95 % interval."""
    rates = power_at(_truth(0.0), PER_OCTAVE, 300, np.random.default_rng(1), TAU_MARGIN)
    assert rates["distorted"] <= 0.06  # 2.5 % nominal; 300 draws give a binomial sd of 0.9 points


def test_a_known_distortion_is_called_distorted():
    """Optima spread by an octave (sd): most cells lose points at one LR, and the ranking moves."""
    truth = replace(_truth(1.0), seeds=4)
    assert true_distortion(truth)["tau"] < 0.9
    assert power_at(truth, PER_OCTAVE, 60, np.random.default_rng(2), TAU_MARGIN)["distorted"] >= 0.8


def test_the_arms_of_the_fast_simulation_are_the_reports_own():
    """The array arms the simulations use give the report's arms (oracle cross-fitted over seeds,
    global leave-one-cell-out) on the same landscape, run for run."""
    grid = simulate(replace(_truth(0.6), seeds=3), np.random.default_rng(3), PER_OCTAVE)
    fast = arm_scores(grid)
    slow = report_arm_scores(_cells(grid), PER_OCTAVE)
    assert fast["oracle"].tolist() == slow["oracle"]["seeds"]
    assert fast["global"].tolist() == slow["global"]["seeds"]


def test_the_planners_power_matches_simulation_through_the_report_path():
    """Power from the fast path against power counted by building the report's cells, choosing the
    arms the report's way and testing them, each on its own 300 landscapes: within 10 points."""
    truth = _truth(0.8, seeds=3)
    fast = power_at(truth, PER_OCTAVE, 300, np.random.default_rng(4), TAU_MARGIN)["distorted"]
    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(300):
        arms = report_arm_scores(_cells(simulate(truth, rng, PER_OCTAVE)), PER_OCTAVE)
        d = distortion(np.array(arms["global"]["seeds"]), np.array(arms["oracle"]["seeds"]), rng, 500)
        hits += d["ci95"][0] > 0
    assert 0.1 < fast < 0.95  # a design in between, where the comparison can fail either way
    assert abs(fast - hits / 300) <= 0.10


def test_the_bracket_sets_a_shared_optimum_against_spread_ones():
    """The model-based gain is near 0 and unremarkable against its null when every cell shares one
    optimum, and well above its null when the optima are spread."""
    rng = np.random.default_rng(6)
    shared = bracket(_cells(simulate(_truth(0.0), rng, PER_OCTAVE)), PER_OCTAVE, rng, n_null=60, n_draws=500)
    spread = bracket(_cells(simulate(_truth(0.8), rng, PER_OCTAVE)), PER_OCTAVE, rng, n_null=60, n_draws=500)
    assert shared["model"]["estimate"] < 0.2 and shared["model"]["p"] > 0.05
    assert spread["model"]["estimate"] > 0.5 and spread["model"]["p"] < 0.05
    assert spread["model_ci"][0] > 0
    # the in-sample estimate is biased up against the cross-fitted one, on both
    for b in (shared, spread):
        assert b["in_sample"]["estimate"] > b["cross_fitted"]["estimate"]


def test_the_smoothed_fit_finds_the_optima_it_was_given():
    """With 4 seeds at seed noise 0.3, each cell's fitted optimum lies within a quarter octave of its truth."""
    truth = replace(_truth(0.5, sigma=0.3), seeds=4)
    grid = simulate(truth, np.random.default_rng(7), PER_OCTAVE)
    fit, ref = fit_grid(grid)
    inside = (truth.optimum > 0.5) & (truth.optimum < 3.0)  # away from the grid's edges
    found = np.array([fit.optimum(i) + ref for i in range(len(truth.level))])
    assert np.all(np.abs(found - truth.optimum)[inside] < 0.25)


@pytest.mark.parametrize("ci95, ci90, detected, expected", [
    ((0.01, 0.2), (0.02, 0.18), False, "distorted"),
    ((-0.04, 0.04), (-0.03, 0.03), True, "equivalent within 0.05"),
    ((-0.04, 0.04), (-0.03, 0.03), False, "undetermined at this design"),
    ((-0.1, 0.2), (-0.08, 0.15), True, "undetermined at this design"),
])
def test_verdict_words(ci95, ci90, detected, expected):
    assert verdict(ci95, ci90, TAU_MARGIN, detected) == expected


def test_a_report_that_missed_its_controls_claims_no_absence_of_distortion():
    """On a noisy null landscape with 2 seeds the controls are weak: whatever the verdict, it is
    never 'equivalent' unless a control was detected, and the text says so when none was."""
    rng = np.random.default_rng(8)
    cells = _cells(simulate(_truth(0.0, sigma=2.0), rng, PER_OCTAVE))
    v = verdicts(cells, PER_OCTAVE, lambda k: 0.1 * 2 ** (k / PER_OCTAVE), n_sim=20, n_boot=300)
    assert v is not None and len(v["controls"]) >= 2
    text = "\n".join(distortion_lines(v))
    assert v["controls_detected"] or not v["distortion"]["verdict"].startswith("equivalent")
    assert ("makes no claim that the ranking is not distorted" in text) == (not v["controls_detected"])
    assert v["distortion"]["verdict"] in text
    missed = {**v, "controls_detected": False, "controls": [{**c, "detected": False} for c in v["controls"]],
              "distortion": {**v["distortion"], "verdict": verdict(v["distortion"]["ci95"], [-0.01, 0.01],
                                                                   TAU_MARGIN, False)}}
    assert missed["distortion"]["verdict"] != f"equivalent within {TAU_MARGIN:g}"  # a tight CI, yet no equivalence
    assert "makes no claim that the ranking is not distorted" in "\n".join(distortion_lines(missed))
    assert to_grid(cells, PER_OCTAVE).Y.shape == (24, 8, 2)
