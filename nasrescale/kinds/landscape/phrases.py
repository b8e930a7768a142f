"""Sentences of the landscape report that read one stored figure each: the strata, the grid, the
global LR chosen.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from ...report.common.typed import present
from .figures import ArmLrs, Stratum

__all__ = ["strata_lines", "grid_text", "global_text"]


def strata_lines(strata: Sequence[Stratum] | None) -> list[str]:
    """Each path-depth stratum's median best LR, and its ratio against the rule's (two strata).

    >>> print(strata_lines([Stratum([0.0, 0.5], 3, 0.2, 0.3), Stratum([0.5, None], 1, 0.8, 0.33)])[0])
    By path-depth stratum: scale < 0.5: 3 cells, median scale 0.2, median best LR 0.3; scale >= 0.5: 1 cell, median scale 0.8, median best LR 0.33. Between the two, the median best LR changes 1.10x where the rule predicts 4.00x (the median scales' ratio).
    """
    live = [t for t in strata or [] if t.n]
    if len(live) < 2:
        return []
    parts = []
    for t in live:
        lo, hi = t.scale
        where = f"scale >= {lo:g}" if hi is None else (f"scale < {hi:g}" if lo == 0 else f"scale {lo:g}-{hi:g}")
        parts.append(f"{where}{_holds(t)}: {t.n} cell{'s' if t.n != 1 else ''}, median scale "
                     f"{t.median_scale:.3g}, median best LR {t.median_best_lr:.3g}")
    text = "By path-depth stratum: " + "; ".join(parts) + "."
    if len(live) == 2:
        a, b = live
        text += (f" Between the two, the median best LR changes {b.median_best_lr / a.median_best_lr:.2f}x where "
                 f"the rule predicts {b.median_scale / a.median_scale:.2f}x (the median scales' ratio).")
    return [text, ""]


def _holds(t: Stratum) -> str:
    """What a stratum holds, where the cells' convs are known: all conv-free, all conv-bearing, or how many carry one.

    >>> [_holds(Stratum([0.0, None], 3, 0.2, 0.3, k)) for k in (0, 3, 1)]
    [' (conv-free)', ' (every cell with a conv)', ' (1 with a conv)']
    """
    if not present(t.conv_bearing):
        return ""
    k = t.conv_bearing
    return " (conv-free)" if k == 0 else " (every cell with a conv)" if k == t.n else f" ({k} with a conv)"


def grid_text(s: dict[str, Any]) -> str:
    """The grid each cell starts from, as the stored settings ``s`` give it.

    >>> grid_text({"lr_min": 0.1, "lr_max": 1.6, "points_per_octave": 2, "extend": 3})
    'every cell at every LR of a log grid from 0.1 to 1.6 (2 per octave, extended past an edge best by up to 3 rounds per cell)'
    >>> grid_text({"lr_min": 0.1, "points_per_octave": 2, "extend": 3, "centers": {"a": 0.4}, "center_points": 6})
    'each cell at 6 LRs of the log grid 0.1 x 2^(k/2) around its own centre LR (2 below, 3 above; [landscape.centers]), extended past an edge best by up to 3 rounds per cell'
    """
    tail = f"extended past an edge best by up to {s['extend']} rounds per cell"
    if s.get("centers"):
        n = int(s["center_points"])
        below = (n - 1) // 2
        return (f"each cell at {n} LRs of the log grid {s['lr_min']:g} x 2^(k/{s['points_per_octave']}) around its own "
                f"centre LR ({below} below, {n - 1 - below} above; [landscape.centers]), {tail}")
    return (f"every cell at every LR of a log grid from {s['lr_min']:g} to {s['lr_max']:g} "
            f"({s['points_per_octave']} per octave, {tail})")


def global_text(arm: ArmLrs) -> str:
    """Which global LR the leave-one-cell-out folds chose, among the LRs every cell has.

    >>> global_text(ArmLrs([0.2, 0.4, 0.4], [0.2, 0.2828, 0.4]))
    'The global LR chosen: 0.4 (2 cells), 0.2 (1 cell), among the 3 grid LRs every cell has (0.2 to 0.4).'
    >>> print(global_text(ArmLrs([0.2, 0.2], [])))
    The global LR chosen: 0.2 (2 cells); no grid LR is common to every cell, so each fold chose among its own cell's LRs.
    """
    counts = Counter(f"{lr:.3g}" for lr in arm.lr)
    chosen = ", ".join(f"{lr} ({n} cell{'s' if n > 1 else ''})" for lr, n in counts.most_common())
    options = arm.options or []
    if not options:
        return (f"The global LR chosen: {chosen}; no grid LR is common to every cell, so each fold chose among its "
                "own cell's LRs.")
    return (f"The global LR chosen: {chosen}, among the {len(options)} grid LRs every cell has "
            f"({min(options):.3g} to {max(options):.3g}).")
