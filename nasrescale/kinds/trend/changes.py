"""The trend report's per-step lines: each B's change of gain between two budgets, paired over
the cells both rank, with the CI's verdict from :data:`~nasrescale.ranking.bands.MIN_TOPK_ROWS`
cells on (:func:`change_line`), and the ``value [low, high]`` form its tables use (:func:`estimate`).
"""

from __future__ import annotations

from typing import Any

from ...ranking.bands import MIN_TOPK_ROWS
from ...ranking.text import fmt
from .link import cells_note
from ...report.common.claim_verdicts import too_few

__all__ = ["estimate", "change_line"]


def estimate(value: Any, ci: Any, digits: int = 3) -> str:
    """``value [low, high]``, or ``value`` alone without a CI (too few cells for one).

    >>> estimate(0.4512, [0.1, 0.9], 2), estimate(-1.62, None, 2), estimate(None, None)
    ('0.45 [0.10, 0.90]', '-1.62', '-')
    """
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in ci:
        return f"{fmt(value, digits)} [{fmt(ci[0], digits)}, {fmt(ci[1], digits)}]"
    return fmt(value, digits)


def change_line(change: dict[str, Any], first: dict[str, Any], last: dict[str, Any]) -> str:
    """One B's change of gain between its smallest and largest budget: with the paired CI's
    verdict from :data:`MIN_TOPK_ROWS` cells on; below, the figures alone, so far.

    >>> row = lambda e, n, g: {"epochs": e, "n": n, "gain": g, "gain_ci": [g - 0.5, g + 0.5], "kendall_tau": 0.5}
    >>> up = {"a": "default", "b": "p", "from": 6, "to": 24, "n": 12, "change": 1.2, "change_ci": [0.5, 1.9]}
    >>> change_line(up, row(6, 12, -1.0), row(24, 12, 0.2)).split("; nothing")[0]
    '- Against the budget, p vs default: from 6 to 24 epochs the gain goes from -1.00 [-1.50, -0.50] to 0.20 [-0.30, 0.70] points, a change of +1.20 [0.50, 1.90] (paired over 12 cells: a change its CI tells from none), and tau(A, B) goes from 0.500 to 0.500'
    >>> change_line({**up, "n": 8}, row(6, 12, -1.0), row(24, 8, 0.2)).split("; nothing")[0]
    '- Against the budget, p vs default, so far: from 6 to 24 epochs the gain goes from -1.00 to 0.20 points, a change of +1.20 (paired over 8 cells: fewer than 10, too few for a verdict), and tau(A, B) goes from 0.500 to 0.500 (on 12 and 8 cells: not the same cells)'
    """
    few = too_few(change) or too_few(first) or too_few(last)
    ci = None if few else change["change_ci"]
    verdict = (f"fewer than {MIN_TOPK_ROWS}, too few for a verdict" if few else "too few cells for a CI" if ci is None
               else "a change its CI tells from none" if ci[0] > 0 or ci[1] < 0 else "its CI holds no change")
    gains = [estimate(row["gain"], None if few else row.get("gain_ci"), 2) for row in (first, last)]
    delta = "-" if change["change"] is None else f"{change['change']:+.2f}"
    taus = (first["kendall_tau"], last["kendall_tau"])
    tau = "" if taus == (None, None) else f", and tau(A, B) goes from {fmt(taus[0])} to {fmt(taus[1])}"
    return (f"- Against the budget, {change['b']} vs {change['a']}{', so far' if few else ''}: from {change['from']} "
            f"to {change['to']} epochs the gain goes from {gains[0]} to {gains[1]} points, a change of "
            f"{delta}{'' if ci is None else f' [{fmt(ci[0], 2)}, {fmt(ci[1], 2)}]'} (paired over {change['n']} "
            f"cells: {verdict}){tau}" + cells_note(first, last)
            + f"; nothing is extrapolated past {change['to']} epochs.")
