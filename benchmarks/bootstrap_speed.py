"""Benchmark of the bootstrap CIs of ``nasrescale rank`` (not a test: prints measured figures).

The reference is the loop :func:`nasrescale.ranking.rank.bootstrap_cis` used before it called
:func:`scipy.stats.bootstrap`: one ``summary_stats`` call (three scipy correlations, two
differences) per resample, percentile intervals. It is timed against the current
``bootstrap_cis`` on the same data, side by side, at the NB201 size (15,625 rows) with 1,000
resamples (the CLI's default), where the current one gives percentile intervals; a second line
times the current one at ``BCA_MAX_ROWS`` rows, the largest size that gets BCa intervals.
Run it with one thread (``OMP_NUM_THREADS=1``) for figures comparable between machines.

Usage: python benchmarks/bootstrap_speed.py [--rows 15625] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from nasrescale.ranking.rank import BCA_MAX_ROWS, bootstrap_cis, summary_stats


def loop_reference(x: np.ndarray, y: np.ndarray, n_boot: int, seed: int = 0, level: float = 0.95) -> dict:
    """Percentile CIs from one ``summary_stats`` call per resample (the old implementation)."""
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {name: [] for name in summary_stats(x, y)}
    for _ in range(n_boot):
        idx = rng.integers(0, x.size, x.size)
        for name, value in summary_stats(x[idx], y[idx]).items():
            if value is not None:
                draws[name].append(value)
    tail = (1 - level) / 2 * 100
    return {name: [float(np.percentile(v, tail)), float(np.percentile(v, 100 - tail))] for name, v in draws.items()}


def accuracies(rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two correlated accuracy vectors, rounded to 0.01 % as stored results are (so with ties)."""
    rng = np.random.default_rng(seed)
    a = np.clip(rng.normal(70.0, 12.0, rows), 10.0, 95.0).round(2)
    return a, np.clip(a + rng.normal(1.0, 4.0, rows), 10.0, 95.0).round(2)


def timed(fn, *args, **kw) -> tuple[float, dict]:  # noqa: ANN001
    """Wall time of one call, in seconds, and its result."""
    start = time.perf_counter()
    out = fn(*args, **kw)
    return time.perf_counter() - start, out


def main() -> None:
    """Print the two timings, their ratio and both sets of intervals."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=15625)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    x, y = accuracies(args.rows)
    t_new, new = timed(bootstrap_cis, x, y, n_boot=args.resamples)
    t_old, old = timed(loop_reference, x, y, args.resamples)
    print(f"{args.rows} rows x {args.resamples} resamples")
    print(f"  loop reference (old):       {t_old:8.2f} s")
    print(f"  scipy.stats.bootstrap (new): {t_new:8.2f} s   ({new['method']['kendall_tau']} intervals)")
    print(f"  ratio old / new:             {t_old / t_new:8.1f}x")
    for name in old:
        print(f"  {name:<12} old [{old[name][0]:.4f}, {old[name][1]:.4f}]  new [{new[name][0]:.4f}, {new[name][1]:.4f}]")
    xb, yb = accuracies(BCA_MAX_ROWS)
    t_bca, bca = timed(bootstrap_cis, xb, yb, n_boot=args.resamples)
    print(f"{BCA_MAX_ROWS} rows x {args.resamples} resamples, new: {t_bca:.2f} s "
          f"({bca['method']['kendall_tau']} intervals, jackknife included)")


if __name__ == "__main__":
    main()
