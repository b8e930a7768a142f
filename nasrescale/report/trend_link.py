"""A retrain run's link to the budget trends built on it.

A trend (``kind = "trend"``, :mod:`nasrescale.report.trend`) that reuses a study's runs
(``trend.reuse``) or reads its seed-noise floor (``trend.noise``) says how the study's 6-epoch
comparison moves with the budget. The study's claims section then gives one sentence per such
trend, read from the trend's own ``report.json`` (written by ``nasrescale report TREND``): which
way the gain of B over A and tau(A, B) moved from the smallest to the largest budget, and
whether the paper's gain "till converge" is consistent with that movement. A gain "rose" or
"fell" only when its 95% CIs at the two budgets do not overlap; the paper's gain is consistent
when it lies inside the CI at the largest budget. Nothing is extrapolated past the largest
measured budget.

>>> rows = [{"a": "default", "b": "principled", "epochs": 6, "n": 24, "gain": -1.0, "gain_ci": [-1.5, -0.5],
...          "kendall_tau": 0.6},
...         {"a": "default", "b": "principled", "epochs": 24, "n": 24, "gain": 0.2, "gain_ci": [-0.3, 0.6],
...          "kendall_tau": 0.7}]
>>> text = trend_claim("trend", {"pairs": rows, "cells": 24}, 0.44)
>>> "rose from -1.00 [-1.50, -0.50] at 6 epochs to +0.20 [-0.30, +0.60] at 24" in text
True
>>> "consistent with the paper's +0.44" in text, "not consistent" in text
(True, False)
>>> falling = [{**rows[0], "gain": -0.5, "gain_ci": [-0.8, -0.2]}, {**rows[1], "gain": -2.0, "gain_ci": [-2.6, -1.4]}]
>>> text = trend_claim("trend", {"pairs": falling, "cells": 24}, 0.44)
>>> "fell from -0.50" in text, "not consistent with the paper's +0.44" in text
(True, True)
>>> flat = [rows[0], {**rows[1], "gain": -0.95, "gain_ci": [-1.4, -0.5], "n": 20}]
>>> text = trend_claim("trend", {"pairs": flat, "cells": 24}, 0.44)
>>> "did not move beyond its CIs (from -1.00" in text, "on 24 and 20 cells" in text, "not consistent" in text
(True, True, True)
>>> few = [{**r, "n": 2, "gain_ci": None, "kendall_tau": None} for r in rows]  # a partial trend: 2 of its 24 cells compared
>>> text = trend_claim("trend", {"pairs": few, "cells": 24, "compared": 2}, 0.44)
>>> "2 cells)" in text, "no verdict yet" in text, "consistent" in text
(True, True, False)
>>> "went from -1.00 at 6 epochs to +0.20 at 24 epochs" in text, "beyond its CIs" in text, "tau(A, B)" in text
(True, False, False)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from ..ranking.text import fmt

__all__ = ["cells_note", "linked_trends", "trend_claim"]


def linked_trends(run_dir: Path, name: str) -> list[tuple[str, dict[str, Any]]]:
    """``(folder name, report.json)`` of every trend report beside ``run_dir`` (in the same results
    folder) whose ``reuse`` or ``noise`` names the run ``name``, by folder name."""
    found = []
    for report in sorted(Path(run_dir).parent.glob("*/report.json")):
        try:
            numbers = json.loads(report.read_text())
        except (OSError, json.JSONDecodeError):
            continue  # a report being rewritten, or not a report: nothing to link
        if isinstance(numbers, dict) and "epochs" in numbers and isinstance(numbers.get("pairs"), list) \
                and name in (numbers.get("reuse"), numbers.get("noise")) and report.parent != Path(run_dir):
            found.append((report.parent.name, numbers))
    return found


def _gain(row: Mapping[str, Any]) -> str:
    ci = row.get("gain_ci")
    ci_text = f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if _has_ci(row) else ""
    return f"{row['gain']:+.2f}{ci_text} at {row['epochs']} epochs"


def _apart(first: Mapping[str, Any], last: Mapping[str, Any]) -> bool:
    """Whether the gain's 95% CIs at the two budgets do not overlap: a change the trend can tell."""
    if not (_has_ci(first) and _has_ci(last)):
        return False
    a, b = first["gain_ci"], last["gain_ci"]
    return a[1] < b[0] or b[1] < a[0]


def _verdict(first: Mapping[str, Any], last: Mapping[str, Any], paper: float) -> str:
    ci = last.get("gain_ci")
    if not _has_ci(last):
        return (f"too few cells for a CI at {last['epochs']} epochs, so no verdict yet on the paper's "
                f"+{paper:.2f} (\"till converge\")")
    inside = ci[0] <= paper <= ci[1]
    toward = _apart(first, last) and abs(last["gain"] - paper) < abs(first["gain"] - paper)
    moved = "moved toward it beyond its CIs" if toward else "did not move toward it beyond its CIs"
    head = f"the paper's +{paper:.2f} (\"till converge\")"
    if inside:
        return f"consistent with {head}: it is inside the CI at {last['epochs']} epochs, and the gain {moved}"
    if toward:
        return (f"not yet consistent with {head}: it is outside the CI at {last['epochs']} epochs, "
                f"though the gain {moved}")
    return (f"not consistent with {head} as far as {last['epochs']} epochs show: it is outside the CI there "
            f"and the gain {moved}")


def cells_note(first: Mapping[str, Any], last: Mapping[str, Any]) -> str:
    """A clause for two budgets measured on different numbers of cells; empty on the same count.

    >>> cells_note({"n": 24}, {"n": 10})
    ' (on 24 and 10 cells: not the same cells)'
    >>> cells_note({"n": 24}, {"n": 24})
    ''
    """
    if first.get("n") == last.get("n"):
        return ""
    return f" (on {first.get('n')} and {last.get('n')} cells: not the same cells)"


def _has_ci(row: Mapping[str, Any]) -> bool:
    ci = row.get("gain_ci")
    return isinstance(ci, list) and None not in ci


def _change(b: str, first: Mapping[str, Any], last: Mapping[str, Any]) -> str:
    """How the gain of ``b`` over A changed between two budgets, on how many cells; without a CI
    at either budget it only gives the two gains, claiming no movement or stillness."""
    if not (_has_ci(first) and _has_ci(last)):
        text = f"the gain of {b} over {first['a']} went from {_gain(first)} to {_gain(last)}"
    elif _apart(first, last):
        way = "rose" if last["gain"] > first["gain"] else "fell"
        text = f"the gain of {b} over {first['a']} {way} from {_gain(first)} to {_gain(last)}"
    else:
        text = f"the gain of {b} over {first['a']} did not move beyond its CIs (from {_gain(first)} to {_gain(last)})"
    return text + cells_note(first, last)


def trend_claim(folder: str, numbers: Mapping[str, Any], paper: float | None) -> str:
    """One sentence on the trend in results folder ``folder`` (its ``report.json`` ``numbers``):
    per B, the gain and tau(A, B) at its smallest and largest budget, and, given the paper's
    gain ``paper``, whether the movement is consistent with it; empty before two budgets have a gain."""
    parts = []
    for b in dict.fromkeys(r.get("b") for r in numbers["pairs"]):
        rows = sorted((r for r in numbers["pairs"] if r.get("b") == b and r.get("gain") is not None),
                      key=lambda r: r["epochs"])
        if len(rows) < 2:
            continue
        first, last = rows[0], rows[-1]
        text = _change(b, first, last)
        if first.get("kendall_tau") is not None or last.get("kendall_tau") is not None:
            text += (f", and tau(A, B) went from {fmt(first.get('kendall_tau'))} "
                     f"to {fmt(last.get('kendall_tau'))}")
        parts.append(text + (f"; this is {_verdict(first, last, paper)}" if paper is not None else ""))
    if not parts:
        return ""
    cells = numbers.get("compared", numbers.get("cells", "?"))
    return (f"With the budget ([{folder}](../{folder}/report.md), {cells} cells): "
            + "; ".join(parts) + ". No trend is extrapolated past the largest budget it measured.")
