"""A trend's gain across every budget it measured, in words: each budget's gain with its CI,
each step's paired change with its CI, and whether the path is monotone.

A path that rises and then falls is said as such; "rose from ... to ..." is written only where
every step moves the same way. A step "rose" or "fell" only where its paired CI holds no zero.

>>> rows = [{"epochs": e, "gain": g, "gain_ci": [g - 0.4, g + 0.3]} for e, g in ((6, -0.12), (12, 0.60), (24, 0.33))]
>>> steps = [{"from": 6, "to": 12, "change": 0.72, "change_ci": [0.3, 1.1], "n": 23},
...          {"from": 12, "to": 24, "change": -0.27, "change_ci": [-0.55, -0.06], "n": 23}]
>>> print(path_text(rows, steps))
-0.12 [-0.52, +0.18] at 6, +0.60 [+0.20, +0.90] at 12 and +0.33 [-0.07, +0.63] at 24 epochs: not monotone, it rose from 6 to 12 epochs (+0.72 [+0.30, +1.10]) and fell from 12 to 24 epochs (-0.27 [-0.55, -0.06])
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...report.common.robust import ci_text

__all__ = ["budget_gains", "step_text", "monotone", "path_text"]


def budget_gains(rows: Sequence[Mapping[str, Any]]) -> str:
    """Every budget's gain with its CI, in budget order."""
    parts = [f"{r['gain']:+.2f}" + (f" {ci_text(r.get('gain_ci'))}" if ci_text(r.get("gain_ci")) else "")
             + f" at {r['epochs']}" for r in rows]
    return (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]) + " epochs"


def step_text(step: Mapping[str, Any]) -> str:
    """One step's change: rose / fell where its CI holds no zero, else held within its CI.

    >>> step_text({"from": 6, "to": 12, "change": 0.1, "change_ci": [-0.2, 0.4]})
    'did not move beyond its CI from 6 to 12 epochs (+0.10 [-0.20, +0.40])'
    """
    ci = step.get("change_ci")
    way = "did not move beyond its CI"
    if ci and None not in ci:
        way = "rose" if ci[0] > 0 else "fell" if ci[1] < 0 else way
    figures = f"{step['change']:+.2f}" + (f" {ci_text(ci)}" if ci_text(ci) else "")
    return f"{way} from {step['from']} to {step['to']} epochs ({figures})"


def monotone(steps: Sequence[Mapping[str, Any]]) -> bool:
    """Whether every step's change has one sign (a zero change breaks no path).

    >>> monotone([{"change": 0.3}, {"change": 0.1}]), monotone([{"change": 0.7}, {"change": -0.3}])
    (True, False)
    """
    signs = {(s["change"] > 0) - (s["change"] < 0) for s in steps if s.get("change") is not None} - {0}
    return len(signs) <= 1


def path_text(rows: Sequence[Mapping[str, Any]], steps: Sequence[Mapping[str, Any]]) -> str:
    """Every budget's gain, then each step's change, saying where the path is not monotone."""
    head = budget_gains(rows)
    if not steps:
        return head
    shape = "monotone" if monotone(steps) else "not monotone"
    return f"{head}: {shape}, it " + " and ".join(step_text(s) for s in steps)
