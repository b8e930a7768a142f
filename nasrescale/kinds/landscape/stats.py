"""Across cells: does each cell's own best LR follow the path-depth rule, and what does a fixed
LR cost the ranking?

* **Slope**: least squares of log(best LR) on log(path-depth scale) with a Student-t 95%
  interval (:func:`~nasrescale.lrsearch.rule_stats.loglog_slope`): 1 if the rule is exact, 0 if one
  global LR fits every cell; Pearson r of the logs, as the paper reports.
* **Headroom**: per cell, the accuracy at its own best LR (the *oracle*, cross-fitted: chosen on
  the other seeds, scored on each seed), at one *global* LR and under the *rule* (LR = c x scale,
  at the grid point nearest to it). The global LR and the rule's constant c are chosen by
  leave-one-cell-out: for each cell, on every other cell's mean accuracy, then scored on it, so
  no cell is scored on a choice it took part in. Paired means with bootstrap 95% intervals over
  cells, and the share of the oracle's gain over global that the rule captures.
* **Ranking**: Kendall tau between the arms' rankings (means over seeds), top-K% tau, and like
  for like on single runs (an arm's seed ``s`` against another arm's seed ``s'``, averaged over
  ordered seed pairs ``s != s'``) beside the seed floor (the global arm's seed against seed).
"""

from __future__ import annotations

import math
from itertools import permutations
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from scipy import stats

from ...lrsearch.rule_stats import loglog_slope
from ...ranking.rank import kendall_tau, topk_mask
from .cells import CellLandscape

__all__ = ["ARMS", "arm_scores", "slope_stats", "strata_stats", "headroom", "ranking", "elr_stats", "MIN_CELLS"]

#: the three ways of choosing a cell's LR the report compares
ARMS = ("oracle", "global", "rule")
#: below this many cells the report gives figures without intervals or verdicts
MIN_CELLS = 10


def slope_stats(cells: Sequence[CellLandscape], lr: Callable[[float], float], which: str = "vertex") -> dict[str, Any]:
    """Slope of log(best LR) on log(scale) with its CI, where 1 and 0 fall, Pearson r of the logs."""
    scales = [c.lr_scale for c in cells]
    best = [lr(c.vertex if which == "vertex" else c.best) for c in cells]
    slope, lo, hi = loglog_slope(scales, best)
    out: dict[str, Any] = {"n": len(cells), "slope": slope, "slope_ci": None if slope is None else [lo, hi],
                           "pearson_log": None, "rule_in_ci": None, "global_in_ci": None}
    if slope is not None and len(set(best)) > 1:
        out["pearson_log"] = float(stats.pearsonr(np.log(scales), np.log(best))[0])
        out["rule_in_ci"], out["global_in_ci"] = bool(lo <= 1.0 <= hi), bool(lo <= 0.0 <= hi)
    return out


def strata_stats(cells: Sequence[CellLandscape], strata: Sequence[float], lr: Callable[[float], float],
                 conv: Callable[[str], bool] | None = None) -> list[dict[str, Any]]:
    """Per path-depth stratum (``strata``: thresholds), its cells, median scale and median best LR
    (vertex), and with ``conv`` (``arch -> whether a conv lies on a live edge``) how many carry one."""
    edges = [0.0, *strata, math.inf]
    out = []
    for lo, hi in zip(edges, edges[1:]):
        sub = [c for c in cells if lo <= c.lr_scale < hi]
        out.append({"scale": [lo, hi if math.isfinite(hi) else None], "n": len(sub),
                    "median_scale": float(np.median([c.lr_scale for c in sub])) if sub else None,
                    "median_best_lr": float(np.median([lr(c.vertex) for c in sub])) if sub else None}
                   | ({"conv_bearing": sum(conv(c.arch) for c in sub)} if conv is not None else {}))
    return out


def _common_ks(cells: Sequence[CellLandscape]) -> list[int]:
    ks = set.intersection(*(set(c.acc) for c in cells)) if cells else set()
    return sorted(ks)


def _rule_k(cell: CellLandscape, offset: int, per_octave: int) -> int:
    """The grid index nearest to the rule's LR ``lr(offset) x scale`` (``offset``: c's grid index)."""
    return int(round(offset + per_octave * math.log2(cell.lr_scale)))


def _choose(cells: Sequence[CellLandscape], options: Sequence[int], k_of: Callable[[CellLandscape, int], int]) -> int:
    """The option whose LR choice ``k_of(cell, option)`` gives the largest mean accuracy over ``cells``."""
    return max(options, key=lambda o: (np.mean([np.mean(c.at(k_of(c, o))) for c in cells]), o))


def arm_scores(cells: Sequence[CellLandscape], per_octave: int) -> dict[str, Any]:
    """Per cell and arm, the chosen grid index and the accuracy per seed (leave-one-cell-out for
    ``global`` and ``rule``, cross-fitted for ``oracle``): ``{arm: {"k": [...], "seeds": [[...], ...]}}``,
    plus ``clipped``: how many rule choices fell outside a cell's measured grid (scored at its nearest point)
    and ``global_options``: the grid indices every cell has, among which the global LR is chosen."""
    ks = _common_ks(cells)
    lo = min(min(c.acc) - round(per_octave * math.log2(c.lr_scale)) for c in cells)
    hi = max(max(c.acc) - round(per_octave * math.log2(c.lr_scale)) for c in cells)
    offsets = list(range(lo, hi + 1))
    out: dict[str, Any] = {arm: {"k": [], "seeds": []} for arm in ARMS}
    clipped = 0
    for i, cell in enumerate(cells):
        rest = [c for j, c in enumerate(cells) if j != i] or [cell]
        g = _choose(rest, ks or sorted(cell.acc), lambda c, k: k)
        r = _rule_k(cell, _choose(rest, offsets, lambda c, o: _rule_k(c, o, per_octave)), per_octave)
        clipped += r not in cell.acc
        cross = cell.cross or [(cell.best, float(np.mean(cell.acc[cell.best])))] * len(cell.acc[cell.best])
        for arm, k, seeds in (("oracle", cell.best, [a for _, a in cross]), ("global", g, cell.at(g)),
                              ("rule", r, cell.at(r))):
            out[arm]["k"].append(k)
            out[arm]["seeds"].append([float(a) for a in seeds])
    out["clipped"] = clipped
    out["global_options"] = ks
    return out


def _mean_ci(values: np.ndarray, n_boot: int) -> tuple[float, list[float] | None]:
    mean = float(np.mean(values))
    if len(values) < 3 or np.ptp(values) == 0:
        return mean, None
    res = stats.bootstrap((values,), np.mean, n_resamples=n_boot, method="percentile", random_state=0)
    return mean, [float(res.confidence_interval.low), float(res.confidence_interval.high)]


def headroom(scores: Mapping[str, Any], n_boot: int = 9999) -> dict[str, Any]:
    """Mean accuracy per arm, paired differences with bootstrap 95% intervals over cells, and the
    share of the oracle's gain over global that the rule captures (a ratio of paired means)."""
    means = {arm: np.array([np.mean(s) for s in scores[arm]["seeds"]]) for arm in ARMS}
    out: dict[str, Any] = {"n": len(means["oracle"]), "mean": {a: float(np.mean(v)) for a, v in means.items()}}
    for a, b in (("oracle", "global"), ("rule", "global"), ("oracle", "rule")):
        mean, ci = _mean_ci(means[a] - means[b], n_boot)
        out[f"{a}-{b}"] = {"mean": mean, "ci": ci, "median": float(np.median(means[a] - means[b])),
                           "share_gain": float(np.mean(means[a] - means[b] > 0))}
    gain = means["oracle"] - means["global"]
    captured = means["rule"] - means["global"]
    out["captured"] = float(np.mean(captured) / np.mean(gain)) if np.mean(gain) > 0 else None
    if out["captured"] is not None and len(gain) >= 3:
        rng = np.random.default_rng(0)
        picks = rng.integers(0, len(gain), size=(n_boot, len(gain)))
        ratios = [np.mean(captured[p]) / np.mean(gain[p]) for p in picks if np.mean(gain[p]) > 0]
        out["captured_ci"] = [float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))]
    return out


def _single_run_tau(a: list[list[float]], b: list[list[float]]) -> float | None:
    """Mean over ordered seed pairs ``s != s'`` of tau(arm a's seed s, arm b's seed s')."""
    n = min(len(x) for x in a + b)
    taus = [kendall_tau([x[s] for x in a], [y[t] for y in b]) for s, t in permutations(range(n), 2)]
    taus = [t for t in taus if t is not None]
    return float(np.mean(taus)) if taus else None


def ranking(cells: Sequence[CellLandscape], scores: Mapping[str, Any], top_percent: int,
            reference: Mapping[str, float] | None = None) -> dict[str, Any]:
    """Tau between the arms' rankings (seed means, top-K% by the oracle, single runs like for like),
    the seed floor, and each arm against ``reference`` (arch -> benchmark accuracy)."""
    means = {arm: [float(np.mean(s)) for s in scores[arm]["seeds"]] for arm in ARMS}
    out: dict[str, Any] = {"n": len(cells), "seed_floor": _single_run_tau(scores["global"]["seeds"], scores["global"]["seeds"])}
    for a, b in (("global", "oracle"), ("rule", "oracle"), ("global", "rule")):
        mask = topk_mask(means["oracle"], means["oracle"], top_percent)
        out[f"{a}-{b}"] = {"tau": kendall_tau(means[a], means[b]),
                           "tau_top": kendall_tau(np.array(means[a])[mask], np.array(means[b])[mask]),
                           "tau_single": _single_run_tau(scores[a]["seeds"], scores[b]["seeds"])}
    if reference:
        idx = [i for i, c in enumerate(cells) if c.arch in reference]
        ref = [reference[cells[i].arch] for i in idx]
        out["reference"] = {arm: kendall_tau([means[arm][i] for i in idx], ref) for arm in ARMS}
        out["reference_n"] = len(idx)
    return out


def _sd_log(values: Sequence[float]) -> float:
    return float(np.std(np.log(values), ddof=1))


def elr_stats(cells: Sequence[CellLandscape], lr: Callable[[float], float], fixed_k: int | None = None,
              n_boot: int = 2000) -> dict[str, Any] | None:
    """Is the best *effective* LR constant across cells when the nominal one is not? The spread
    (sd of the log over cells) and the slope on log(path-depth scale) of the nominal best LR
    (argmax) and of the effective step (:attr:`CellLandscape.elr`) of the runs there, in their
    first and last epoch; with ``fixed_k``, the control: the same effective steps at one grid LR
    for every cell, and the paired bootstrap interval over cells of (spread at the best LR) -
    (spread at the fixed LR): below 0 says the effective step is the more nearly constant at each
    cell's best. ``None`` with fewer than 3 cells that recorded ELRs."""
    have = [c for c in cells if c.best in c.elr and (fixed_k is None or fixed_k in c.elr)]
    if len(have) < 3:
        return None
    scales = [c.lr_scale for c in have]
    series = {"nominal": [lr(c.best) for c in have], "elr_first": [c.elr[c.best][0] for c in have],
              "elr_last": [c.elr[c.best][1] for c in have]}
    if fixed_k is not None:
        series |= {"fixed_first": [c.elr[fixed_k][0] for c in have], "fixed_last": [c.elr[fixed_k][1] for c in have]}
    out: dict[str, Any] = {"n": len(have), "fixed_lr": None if fixed_k is None else lr(fixed_k)}
    for name, values in series.items():
        slope, lo, hi = loglog_slope(scales, values)
        out[name] = {"sd_log": _sd_log(values), "slope": slope,
                     "slope_ci": None if slope is None else [lo, hi], "median": float(np.median(values))}
    if fixed_k is not None:
        rng = np.random.default_rng(0)
        picks = rng.integers(0, len(have), size=(n_boot, len(have)))
        for when in ("first", "last"):
            best, fixed = np.log(series[f"elr_{when}"]), np.log(series[f"fixed_{when}"])
            diffs = [np.std(best[p], ddof=1) - np.std(fixed[p], ddof=1) for p in picks if len(set(p)) > 1]
            out[f"spread_diff_{when}"] = {"diff": out[f"elr_{when}"]["sd_log"] - out[f"fixed_{when}"]["sd_log"],
                                          "ci": [float(np.percentile(diffs, 2.5)), float(np.percentile(diffs, 97.5))]}
    return out
