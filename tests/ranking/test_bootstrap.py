"""Bootstrap CIs by scipy.stats.bootstrap: the vectorised resample statistics against direct
computation, BCa against scipy's own (unvectorised) bootstrap, and the degenerate cases."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from nasrescale.ranking import rank
from nasrescale.ranking.rank import bootstrap_cis, summary_stats
from nasrescale.ranking.resample import STAT_NAMES, ResampledSummary


def tied_pair(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Accuracies rounded to one decimal, so that both vectors have ties."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n).round(1)
    return a, (a + rng.normal(scale=0.7, size=n)).round(1)


@pytest.mark.parametrize("n", [3, 4, 9, 64, 257])
def test_resampled_summary_matches_summary_stats_row_by_row(n):
    a, b = tied_pair(n, n)
    rng = np.random.default_rng(0)
    boot = rng.integers(0, n, (25, n))
    jackknife = np.array([np.delete(np.arange(n), i) for i in range(n)])  # what BCa evaluates
    fn = ResampledSummary(a, b)
    for rows in (boot, jackknife):
        got = fn(rows)
        assert got.shape == (len(STAT_NAMES), len(rows))
        for j, idx in enumerate(rows):
            want = summary_stats(a[idx], b[idx])
            assert list(want) == list(STAT_NAMES)
            for i, name in enumerate(STAT_NAMES):
                if want[name] is None:
                    assert np.isnan(got[i, j]), (name, idx)
                else:
                    assert got[i, j] == pytest.approx(want[name], abs=1e-12), (name, idx)


DIRECT = {"kendall_tau": lambda x, y: stats.kendalltau(x, y).statistic,
          "spearman": lambda x, y: stats.spearmanr(x, y).statistic,
          "pearson": lambda x, y: stats.pearsonr(x, y).statistic,
          "mean_diff": lambda x, y: np.mean(y - x)}


@pytest.mark.parametrize("tied, names", [(True, ["kendall_tau", "spearman"]),
                                         (False, ["pearson", "mean_diff"])])
def test_bca_agrees_with_scipys_unvectorised_bootstrap_of_scipy_statistics(tied, names):
    # value statistics on untied data only: a resample's mean that ties the estimate exactly
    # decides BCa's bias correction, and two summation orders may break such a tie differently
    # (the rank statistics of this tied pair happen to have no such resample; checked below)
    a, b = tied_pair(40, 3)
    if not tied:
        a, b = a + np.random.default_rng(9).normal(scale=1e-3, size=40), b
    ci = bootstrap_cis(a, b, n_boot=400, seed=5)
    for name in names:
        res = stats.bootstrap((a, b), DIRECT[name], paired=True, vectorized=False, n_resamples=400, method="BCa",
                              batch=rank._BATCH, rng=np.random.default_rng(5))
        # no resample within rounding of the estimate, so both count the same resamples below it
        assert np.abs(res.bootstrap_distribution - DIRECT[name](a, b)).min() > 1e-6, name
        assert ci["method"][name] == "BCa"
        # the statistics agree to ~1e-15 (float64 on O(1) values); through the jackknife and the
        # interpolated quantiles that stays far below 1e-10, while a different resample would
        # move a bound by the spacing of the draws (~1e-4 here)
        assert ci[name] == pytest.approx([res.confidence_interval.low, res.confidence_interval.high], abs=1e-10), name


def test_ci_brackets_the_estimate_and_a_seed_repeats_it():
    a, b = tied_pair(80, 4)
    ci = bootstrap_cis(a, b, n_boot=300, seed=11)
    assert ci == bootstrap_cis(a, b, n_boot=300, seed=11)
    point = summary_stats(a, b)
    for name in ("kendall_tau", "spearman", "pearson", "mean_diff"):
        assert ci[name][0] < point[name] < ci[name][1], name


def test_perfectly_correlated_pair_gives_a_clean_degenerate_interval():
    a = np.arange(20, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no DegenerateDataWarning or NaN arithmetic escapes
        ci = bootstrap_cis(a, a * 2 + 1, n_boot=200, seed=0)
    assert ci["kendall_tau"] == [1.0, 1.0] and ci["spearman"] == [1.0, 1.0]
    assert ci["method"]["kendall_tau"] == "percentile"  # BCa's jackknife is 0/0 here


def test_percentile_above_bca_max_rows_and_for_partly_undefined_statistics(monkeypatch):
    a, b = tied_pair(30, 6)
    monkeypatch.setattr(rank, "BCA_MAX_ROWS", 10)
    ci = bootstrap_cis(a, b, n_boot=200, seed=2)
    assert set(ci["method"].values()) == {"percentile"}
    monkeypatch.undo()
    few = bootstrap_cis([1.0, 1.0, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0], n_boot=200, seed=0)
    # a resample of only the three 1.0 rows leaves x constant (tau NaN): the defined ones count
    assert few["method"]["kendall_tau"] == "percentile" and few["method"]["mean_diff"] == "BCa"


def dyadic_tied_pair(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Tied accuracies in multiples of 1/8: every sum of them is exact in float64, so a mean is
    the same number however it is summed (one rounding, in the final division)."""
    rng = np.random.default_rng(seed)
    a = (rng.normal(size=n) * 8).round() / 8
    return a, a + (rng.normal(scale=0.7, size=n) * 8).round() / 8


def mean_only(x, y):
    return {"mean_diff": float(np.mean(y - x))}


def record_statistic_calls(monkeypatch) -> dict[str, list]:
    """Record the row indices (resamples, then BCa's jackknife rows) and the values of every
    call scipy makes to the vectorised and to the looped statistic of ``bootstrap_cis``."""
    calls: dict[str, list] = {"vectorised": [], "looped": []}

    def recorded(kind, fn):
        def call(idx, axis=-1):
            out = fn(idx, axis=axis)
            calls[kind].append((np.moveaxis(np.asarray(idx), axis, -1).copy(), np.asarray(out)))
            return out
        return call

    class Recorded(ResampledSummary):
        def __call__(self, idx, axis=-1):
            return recorded("vectorised", super().__call__)(idx, axis)

    looped = rank._looped
    monkeypatch.setattr(rank, "ResampledSummary", Recorded)
    monkeypatch.setattr(rank, "_looped", lambda *args: recorded("looped", looped(*args)))
    return calls


def test_a_custom_statistic_runs_unvectorised_with_the_same_resamples(monkeypatch):
    a, b = tied_pair(25, 8)
    calls = record_statistic_calls(monkeypatch)
    custom = bootstrap_cis(a, b, n_boot=150, seed=3, statistic=mean_only)
    default = bootstrap_cis(a, b, n_boot=150, seed=3)
    assert list(custom) == ["mean_diff", "method"]
    assert custom["method"] == {"mean_diff": default["method"]["mean_diff"]} == {"mean_diff": "BCa"}
    looped, vectorised = calls["looped"], calls["vectorised"]
    assert len(looped) == len(vectorised) > 150 // rank._BATCH  # resample batches and jackknife
    for (idx_l, out_l), (idx_v, out_v) in zip(looped, vectorised):
        np.testing.assert_array_equal(idx_l, idx_v)  # the same rows, exactly
        # the same mean of <= 25 differences below 10 in size, up to float64 summation order
        np.testing.assert_allclose(out_l[0], out_v[STAT_NAMES.index("mean_diff")], rtol=0, atol=1e-12)


def test_with_exact_resample_statistics_the_looped_and_vectorised_intervals_are_equal(monkeypatch):
    # With ties, a resample's statistic can equal the estimate exactly, and a rounding
    # difference then moves BCa's bias correction: intervals are compared where every
    # resample's statistic is exact (dyadic data), and the data must have such resamples.
    a, b = dyadic_tied_pair(25, 8)
    calls = record_statistic_calls(monkeypatch)
    custom = bootstrap_cis(a, b, n_boot=150, seed=3, statistic=mean_only)
    default = bootstrap_cis(a, b, n_boot=150, seed=3)
    draws = np.concatenate([out[0].ravel() for idx, out in calls["looped"] if idx.ndim == 2 and idx.shape[-1] == 25])
    assert (draws == float(np.mean(b - a))).any()
    assert custom["method"]["mean_diff"] == default["method"]["mean_diff"] == "BCa"
    assert custom["mean_diff"] == default["mean_diff"]
