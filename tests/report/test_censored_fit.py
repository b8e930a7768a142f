"""The criterion's censored slope: a bound moves the fit the way a bound should, clones count
once, and the path count is set beside the rule's scale."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nasrescale.report.common.tobit import tobit
from nasrescale.report.common.validation_run import Point
from nasrescale.kinds.lr_validation.censored import criterion_fits
from nasrescale.space.encodings import parse_arch
from nasrescale.space.family_loader import get_family
from nasrescale.space.topology import lr_scale, path_depths

NB201 = get_family("nb201")


def _line(extra_y: float, censor: int) -> tuple[float, float, float]:
    """Slopes with a point at x = 10 (y = ``extra_y``) left out, fitted as the bound ``censor`` says,
    and fitted as if measured, over ten points on y = x."""
    rng = np.random.default_rng(0)
    x = np.arange(10.0)
    y = x + rng.normal(0, 0.1, 10)
    X = np.c_[np.ones(11), np.r_[x, 10.0]]
    yy = np.r_[y, extra_y]
    dropped = tobit(X[:10], y, np.zeros(10, int))["coef"][1]
    bounded = tobit(X, yy, np.r_[np.zeros(10, int), censor])["coef"][1]
    as_measured = tobit(X, yy, np.zeros(11, int))["coef"][1]
    return dropped, bounded, as_measured


def test_an_upper_bound_below_the_line_pulls_the_slope_down():
    """True value at most 5 where the line says 10: the slope must fall below the one without it."""
    dropped, bounded, _ = _line(5.0, -1)
    assert dropped == pytest.approx(1.0, abs=0.05)
    assert bounded < dropped - 0.05


def test_a_lower_bound_the_line_already_meets_leaves_the_slope_alone():
    """True value at least 5 where the line says 10: no information against the line, so the slope
    stays where it was, while reading the bound as a measurement bends it."""
    dropped, bounded, as_measured = _line(5.0, 1)
    assert bounded == pytest.approx(dropped, abs=0.01)
    assert as_measured < dropped - 0.1


def test_tobit_without_censoring_is_least_squares():
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    y = np.array([0.3, 0.8, 2.4, 2.9, 4.2, 4.8])
    fit = tobit(np.c_[np.ones(6), x], y, np.zeros(6, int))
    ols = np.polyfit(x, y, 1)
    assert fit["coef"][1] == pytest.approx(ols[0], abs=1e-4)
    lo, hi = fit["ci"][1]
    assert lo < fit["coef"][1] < hi


def _point(arch: str, lr: float, base: bool = False, edge: str | None = None) -> Point:
    return Point(group="g", kernel=None, arch=arch, lr_scale=lr_scale(parse_arch(arch, NB201), NB201),
                 kernel_factor=1.0, sum_l3=None, measured_lr=lr, predicted_lr=lr, edge=edge, base=base,
                 seed_lrs=[lr], seed_min=lr, seed_max=lr, curve=[])


def test_clones_count_once_and_the_path_count_is_compared():
    """A cell isomorphic to the base and one isomorphic to an earlier cell are left out; with
    maximal LRs that fall exactly as P^-2, log P explains them fully."""
    archs = ["3_33_333", "2_22_222", "3_03_003", "1_13_113", "3_30_300", "2_02_222", "2_34_214", "4_03_440"]
    wobble = dict(zip(archs, [0.02, -0.01, 0.01, -0.02, 0.015, -0.015, 0.005, -0.005]))

    def lr_of(a: str) -> float:
        return math.exp(-2 * math.log(len(path_depths(parse_arch(a, NB201), NB201))) + wobble[a])
    points = [_point("1_10_001", 0.2, base=True), _point("1_00_100", 0.2)]  # both compute x
    points += [_point(a, lr_of(a)) for a in archs]
    points += [_point("3_03_003", lr_of("3_03_003"))]  # the same cell twice
    out = criterion_fits(points, NB201)
    assert out.cells == len(archs) and out.clones_dropped == 2
    assert out.r2.path_count > 0.99 > out.r2.lr_scale
    assert [f.fit for f in out.fits][0] == "every cell (censored fit)"
    assert out.two_predictors.path_count == pytest.approx(-2.0, abs=0.1)
