"""Rank statistics, checked against hand-worked examples and brute-force pair counts."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nasrescale.ranking.rank import (
    K_PERCENTS,
    bootstrap_cis,
    kendall_tau,
    pearson,
    precision_at_k,
    seed_noise,
    spearman,
    topk_curve,
    topk_mask,
    topk_size,
)


def brute_tau_b(x, y):
    """Kendall tau-b from its definition: (C - D) / sqrt((P - Tx) (P - Ty)) over all pairs."""
    concordant = discordant = ties_x = ties_y = pairs = 0
    for i, j in combinations(range(len(x)), 2):
        pairs += 1
        dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        ties_x += dx == 0
        ties_y += dy == 0
        concordant += dx * dy > 0
        discordant += dx * dy < 0
    denom = math.sqrt((pairs - ties_x) * (pairs - ties_y))
    return None if denom == 0 else (concordant - discordant) / denom


def test_kendall_by_hand():
    # one swap among 5: 10 pairs, 2 discordant -> (8 - 2) / 10
    assert kendall_tau([1, 2, 3, 4, 5], [1, 3, 2, 5, 4]) == pytest.approx(0.6)
    # ties: x has one tied pair, y one; C = 4, D = 0, P = 6 -> 4 / sqrt(5 * 5)
    assert kendall_tau([1, 2, 2, 3], [1, 2, 3, 3]) == pytest.approx(4 / 5)


def test_spearman_and_pearson_by_hand():
    # d = (0, 1, 1, 1, 1): rho = 1 - 6 * 4 / (5 * 24)
    assert spearman([1, 2, 3, 4, 5], [1, 3, 2, 5, 4]) == pytest.approx(0.8)
    # deviations (-1, 0, 1) and (-1, 1, 0): cov 1, variances 2 -> 1/2
    assert pearson([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)
    assert pearson([1, 2, 3, 4], [5, 7, 9, 11]) == pytest.approx(1.0)


def test_undefined_is_none():
    assert kendall_tau([1, 2], [2, 1]) is None  # too few rows
    assert kendall_tau([1, 1, 1], [1, 2, 3]) is None  # constant vector
    assert spearman([5, 5, 5, 5], [1, 2, 3, 4]) is None
    assert pearson([], []) is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=3, max_size=25))
def test_tau_b_equals_brute_force_with_ties(pairs):
    x = np.array([p[0] for p in pairs], dtype=float)
    y = np.array([p[1] for p in pairs], dtype=float)
    expected = brute_tau_b(x, y)
    got = kendall_tau(x, y)
    if expected is None or np.ptp(x) == 0 or np.ptp(y) == 0:
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=3, max_size=30, unique=True),
       st.randoms(use_true_random=False))
def test_tau_symmetry_and_monotone_invariance(values, rnd):
    a = np.array(values, dtype=float)
    b = np.array(rnd.sample(values, len(values)), dtype=float)
    tau = kendall_tau(a, b)
    assert kendall_tau(b, a) == pytest.approx(tau)
    assert kendall_tau(a, -b) == pytest.approx(-tau)
    assert kendall_tau(np.log1p(a) ** 3, b) == pytest.approx(tau)  # ranks only


@given(st.integers(0, 20000), st.sampled_from(K_PERCENTS))
def test_topk_size_is_ceiling(n, k):
    m = topk_size(n, k)
    assert m * 100 >= n * k
    assert (m - 1) * 100 < n * k


# Ten architectures: within the top half by a, b runs the other way; the bottom half agrees.
A = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
B = [1, 2, 3, 4, 5, 0, -1, -2, -3, -4]


def test_topk_curve_by_hand():
    curve = {e["k_percent"]: e for e in topk_curve(A, B, "first")}
    # all 45 pairs: 10 discordant in the top half, 35 concordant
    assert curve[100]["kendall_tau"] == pytest.approx((35 - 10) / 45)
    assert curve[50]["n"] == 5
    assert curve[50]["kendall_tau"] == pytest.approx(-1.0)
    assert curve[30]["n"] == 3
    assert curve[30]["kendall_tau"] == pytest.approx(-1.0)
    assert curve[10]["n"] == 1
    assert curve[10]["kendall_tau"] is None  # under 3 rows: null
    assert [e["k_percent"] for e in topk_curve(A, B)] == list(K_PERCENTS)


def test_topk_by_second_and_both():
    # top 30% by b = indexes 4, 3, 2; by a = 0, 1, 2; either = 5 rows
    assert np.flatnonzero(topk_mask(A, B, 30, "second")).tolist() == [2, 3, 4]
    assert np.flatnonzero(topk_mask(A, B, 30, "both")).tolist() == [0, 1, 2, 3, 4]
    both = {e["k_percent"]: e for e in topk_curve(A, B, "both")}
    assert both[30]["n"] == 5
    assert both[30]["kendall_tau"] == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="allowed: first, second, both"):
        topk_mask(A, B, 30, "either")


def test_precision_at_k_by_hand():
    prec = {e["k_percent"]: e for e in precision_at_k(A, B)}
    assert prec[50]["precision"] == 1.0  # same five architectures, different order
    assert prec[30] == {"k_percent": 30, "k": 3, "precision": pytest.approx(1 / 3)}  # only index 2 shared
    assert prec[10]["precision"] == 0.0


def test_ties_at_the_topk_boundary_are_deterministic():
    a = [5, 5, 5, 1]
    archs = ["c", "a", "b", "d"]
    # top 50% = 2 rows among three tied at 5: broken by architecture string ('a', 'b')
    assert np.flatnonzero(topk_mask(a, a, 50, "first", archs)).tolist() == [1, 2]


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(1)
    a = rng.normal(size=60)
    b = a + rng.normal(scale=0.5, size=60)
    ci = bootstrap_cis(a, b, n_boot=300, seed=7)
    assert ci == bootstrap_cis(a, b, n_boot=300, seed=7)
    assert ci != bootstrap_cis(a, b, n_boot=300, seed=8)
    assert ci["kendall_tau"][0] < kendall_tau(a, b) < ci["kendall_tau"][1]
    d = (b - a).mean()
    assert ci["mean_diff"][0] < d < ci["mean_diff"][1]
    assert bootstrap_cis([1, 2], [2, 1], n_boot=50)["kendall_tau"] is None
    assert bootstrap_cis(a, b, n_boot=0)["spearman"] is None


def test_seed_noise_means_over_seed_pairs():
    wide = pd.DataFrame({0: [1, 2, 3, 4, 5], 1: [1, 3, 2, 5, 4], 2: [5, 4, 3, 2, np.nan]},
                        index=list("abcde"))
    noise = seed_noise(wide)
    taus = [kendall_tau([1, 2, 3, 4, 5], [1, 3, 2, 5, 4]),  # seeds 0, 1
            kendall_tau([1, 2, 3, 4], [5, 4, 3, 2]),  # seeds 0, 2 on the 4 shared archs
            kendall_tau([1, 3, 2, 5], [5, 4, 3, 2])]  # seeds 1, 2
    assert noise["pairs"] == 3
    assert noise["seeds"] == [0, 1, 2]
    assert noise["kendall_tau"] == pytest.approx(np.mean(taus))
    assert noise["kendall_tau_min"] == pytest.approx(min(taus))
    assert noise["kendall_tau_max"] == pytest.approx(max(taus))
    assert seed_noise(wide[[0]]) is None
