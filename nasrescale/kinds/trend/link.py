"""A retrain run's link to the budget trends built on it.

A trend (``kind = "trend"``, :mod:`nasrescale.kinds.trend`) that reuses a study's runs
(``trend.reuse``) or reads its seed-noise floor (``trend.noise``) says how the study's 6-epoch
comparison moves with the budget. The study's claims section then gives one sentence per such
trend, read from the trend's own ``report.json`` (written by ``nasrescale report TREND``): which
way the gain of B over A and tau(A, B) moved from the smallest to the largest budget, and
whether the paper's gain "till converge" is consistent with that movement. A gain "rose" or
"fell" only when the 95% CI of its change (paired over the cells both budgets rank, the
trend's ``gain_changes``) holds no zero; the paper's gain is consistent when it lies inside the
CI at the largest budget. Nothing is extrapolated past the largest measured budget.

>>> rows = [{"a": "default", "b": "principled", "epochs": 6, "n": 24, "gain": -1.0, "gain_ci": [-1.5, -0.5],
...          "kendall_tau": 0.6},
...         {"a": "default", "b": "principled", "epochs": 24, "n": 24, "gain": 0.2, "gain_ci": [-0.3, 0.6],
...          "kendall_tau": 0.7}]
>>> up = [{"b": "principled", "from": 6, "to": 24, "n": 24, "change": 1.2, "change_ci": [0.5, 1.9]}]
>>> text = trend_claim("trend", {"pairs": rows, "gain_changes": up, "cells": 24}, 0.44)
>>> "rose from -1.00 [-1.50, -0.50] at 6 epochs to +0.20 [-0.30, +0.60] at 24 epochs (change +1.20" in text
True
>>> "consistent with the paper's +0.44" in text, "but also with no gain" in text, "not consistent" in text
(True, True, False)
>>> above = [rows[0], {**rows[1], "gain": 0.5, "gain_ci": [0.1, 0.9]}]
>>> "inside the CI at 24 epochs, which excludes no gain" in trend_claim(
...     "trend", {"pairs": above, "gain_changes": up, "cells": 24}, 0.44)
True
>>> falling = [{**rows[0], "gain": -0.5, "gain_ci": [-0.8, -0.2]}, {**rows[1], "gain": -2.0, "gain_ci": [-2.6, -1.4]}]
>>> down = [{**up[0], "change": -1.5, "change_ci": [-2.1, -0.9]}]
>>> text = trend_claim("trend", {"pairs": falling, "gain_changes": down, "cells": 24}, 0.44)
>>> "fell from -0.50" in text, "not consistent with the paper's +0.44" in text
(True, True)

Separate CIs that overlap can still hide a change the paired CI tells; a paired CI that holds
zero says the gain did not move:

>>> near = [rows[0], {**rows[1], "gain": -0.4, "gain_ci": [-0.9, 0.1]}]
>>> text = trend_claim("trend", {"pairs": near, "gain_changes": [{**up[0], "change": 0.6, "change_ci": [0.2, 1.0]}],
...                              "cells": 24}, 0.44)
>>> "rose from -1.00" in text, "not yet consistent" in text, "moved toward it" in text
(True, True, True)
>>> still = [{**up[0], "n": 20, "change": 0.05, "change_ci": [-0.4, 0.5]}]
>>> flat = [rows[0], {**rows[1], "gain": -0.95, "gain_ci": [-1.4, -0.5], "n": 20}]
>>> text = trend_claim("trend", {"pairs": flat, "gain_changes": still, "cells": 24}, 0.44)
>>> "did not move beyond its CI (from -1.00" in text, "on 24 and 20 cells" in text, "not consistent" in text
(True, True, True)

Below 10 cells (:data:`~nasrescale.ranking.bands.MIN_TOPK_ROWS`) a bootstrap over the cells says
little: the sentence gives the figures so far, with neither CIs nor a verdict:

>>> few = [{**r, "n": 4} for r in rows]  # a partial trend: 4 of its 24 cells compared
>>> text = trend_claim("trend", {"pairs": few, "gain_changes": [{**up[0], "n": 4}], "cells": 24, "compared": 4}, 0.44)
>>> "so far went from -1.00 at 6 epochs to +0.20 at 24 epochs (change +1.20)" in text
True
>>> "4 cells: fewer than 10, too few for a verdict" in text, "consistent" in text, "rose" in text, "[-" in text
(True, False, False, False)
>>> mixed = [few[0], {**few[1], "n": 3}]  # the budgets measured on different cells
>>> "(change +1.20; on 4 and 3 cells: not the same cells)" in trend_claim("trend", {"pairs": mixed,
...     "gain_changes": [{**up[0], "n": 3}], "cells": 24, "compared": 3}, 0.44)
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ...ranking.bands import MIN_TOPK_ROWS
from ...ranking.text import fmt
from .path import path_text
from ...report.common.links import RunLink
from ...report.common.siblings import sibling_reports
from ...report.common.claim_verdicts import cells_text, paper_gain

__all__ = ["cells_clause", "cells_note", "linked_trends", "trend_claim", "TREND_LINK"]


def linked_trends(run_dir: Path, name: str) -> list[tuple[str, dict[str, Any]]]:
    """``(folder name, report.json)`` of every trend report beside ``run_dir`` (in the same results
    folder) whose ``reuse`` or ``noise`` names the run ``name``, by folder name."""
    return [(folder, numbers) for folder, numbers in sibling_reports(run_dir)
            if "epochs" in numbers and isinstance(numbers.get("pairs"), list)
            and name in (numbers.get("reuse"), numbers.get("noise"))]


def _has_ci(row: Mapping[str, Any], key: str = "gain_ci") -> bool:
    ci = row.get(key)
    return isinstance(ci, list) and len(ci) == 2 and None not in ci


def _gain(row: Mapping[str, Any]) -> str:
    ci = row["gain_ci"] if _has_ci(row) else None
    ci_text = f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else ""
    return f"{row['gain']:+.2f}{ci_text} at {row['epochs']} epochs"


def _moved(change: Mapping[str, Any] | None) -> int:
    """+1 / -1 where the change's paired CI lies above / below zero; 0 where it holds zero or is missing."""
    if change is None or not _has_ci(change, "change_ci"):
        return 0
    low, high = change["change_ci"]
    return 1 if low > 0 else -1 if high < 0 else 0


def _verdict(first: Mapping[str, Any], last: Mapping[str, Any], change: Mapping[str, Any] | None,
             paper: float) -> str:
    if not _has_ci(last):
        return (f"too few cells for a CI at {last['epochs']} epochs, so no verdict yet on the paper's "
                f"+{paper:.2f} (\"till converge\")")
    low, high = last["gain_ci"]
    inside = low <= paper <= high
    toward = _moved(change) != 0 and (paper - first["gain"]) * _moved(change) > 0
    moved = "moved toward it beyond its CI" if toward else "did not move toward it beyond its CI"
    head = f"the paper's +{paper:.2f} (\"till converge\")"
    if inside and low <= 0 <= high:
        return (f"consistent with {head} but also with no gain: both lie inside the CI at {last['epochs']} "
                f"epochs, and the gain {moved}")
    if inside:
        return (f"consistent with {head}: it is inside the CI at {last['epochs']} epochs, which excludes no "
                f"gain, and the gain {moved}")
    if toward:
        return (f"not yet consistent with {head}: it is outside the CI at {last['epochs']} epochs, "
                f"though the gain {moved}")
    return (f"not consistent with {head} as far as {last['epochs']} epochs show: it is outside the CI there "
            f"and the gain {moved}")


def cells_clause(first: Mapping[str, Any], last: Mapping[str, Any]) -> str:
    """That two budgets were measured on different numbers of cells; empty on the same count.

    >>> cells_clause({"n": 24}, {"n": 10}), cells_clause({"n": 24}, {"n": 24})
    ('on 24 and 10 cells: not the same cells', '')
    """
    if first.get("n") == last.get("n"):
        return ""
    return f"on {first.get('n')} and {last.get('n')} cells: not the same cells"


def cells_note(first: Mapping[str, Any], last: Mapping[str, Any]) -> str:
    """:func:`cells_clause` in parentheses after a space; empty on the same count.

    >>> cells_note({"n": 24}, {"n": 10})
    ' (on 24 and 10 cells: not the same cells)'
    >>> cells_note({"n": 24}, {"n": 24})
    ''
    """
    clause = cells_clause(first, last)
    return f" ({clause})" if clause else ""


def _change(b: str, first: Mapping[str, Any], last: Mapping[str, Any], change: Mapping[str, Any] | None) -> str:
    """How the gain of ``b`` over A changed between two budgets (by the paired CI of the change),
    on how many cells; without that CI it only gives the two gains."""
    if change is None or not _has_ci(change, "change_ci"):
        text = f"the gain of {b} over {first['a']} went from {_gain(first)} to {_gain(last)}"
    else:
        low, high = change["change_ci"]
        paired = f"change {change['change']:+.2f} [{low:+.2f}, {high:+.2f}], paired over {change['n']} cells"
        way = {1: "rose", -1: "fell"}.get(_moved(change))
        text = (f"the gain of {b} over {first['a']} {way} from {_gain(first)} to {_gain(last)} ({paired})" if way
                else f"the gain of {b} over {first['a']} did not move beyond its CI (from {_gain(first)} to "
                     f"{_gain(last)}; {paired})")
    return text + cells_note(first, last)


def _path(b: str, rows: list[Mapping[str, Any]], changes: list[Mapping[str, Any]],
          ends: Mapping[str, Any] | None) -> str:
    """The gain of ``b`` at every budget, each step's change, and the change end to end."""
    steps = [c for c in changes if c.get("b") == b and c.get("step")]
    text = f"the gain of {b} over {rows[0]['a']} was {path_text(rows, steps)}"
    if ends is not None and _has_ci(ends, "change_ci"):
        low, high = ends["change_ci"]
        text += (f"; from {ends['from']} to {ends['to']} epochs, a change of {ends['change']:+.2f} "
                 f"[{low:+.2f}, {high:+.2f}], paired over {ends['n']} cells")
    return text + cells_note(rows[0], rows[-1])


def _so_far(b: str, first: Mapping[str, Any], last: Mapping[str, Any], change: Mapping[str, Any] | None) -> str:
    """The gain of ``b`` over A at two budgets and its paired change, figures alone (no CI, no verdict)."""
    delta = change.get("change") if change else None
    notes = [note for note in ("" if delta is None else f"change {delta:+.2f}", cells_clause(first, last)) if note]
    return (f"the gain of {b} over {first['a']} so far went from {first['gain']:+.2f} at {first['epochs']} epochs to "
            f"{last['gain']:+.2f} at {last['epochs']} epochs" + (f" ({'; '.join(notes)})" if notes else ""))


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
        change = next((c for c in numbers.get("gain_changes") or [] if c.get("b") == b
                       and c.get("from") == first["epochs"] and c.get("to") == last["epochs"]), None)
        n = min(row.get("n") or 0 for row in (first, last, change or last))
        few = n < MIN_TOPK_ROWS
        text = _so_far(b, first, last, change) if few else _change(b, first, last, change)
        if len(rows) > 2 and not few:
            text = _path(b, rows, numbers.get("gain_changes") or [], change)
        if len(rows) > 2 and any(row.get("kendall_tau") is not None for row in rows):
            text += ", and tau(A, B) was " + ", ".join(f"{fmt(r.get('kendall_tau'))} at {r['epochs']}" for r in rows)
        elif first.get("kendall_tau") is not None or last.get("kendall_tau") is not None:
            text += (f", and tau(A, B) went from {fmt(first.get('kendall_tau'))} "
                     f"to {fmt(last.get('kendall_tau'))}")
        if few:
            parts.append(f"{text} ({cells_text({'n': n})})")
        else:
            parts.append(text + (f"; this is {_verdict(first, last, change, paper)}" if paper is not None else ""))
    if not parts:
        return ""
    cells = numbers.get("compared", numbers.get("cells", "?"))
    return (f"With the budget ([{folder}](../{folder}/report.md), {cells} cells): "
            + "; ".join(parts) + ". No trend is extrapolated past the largest budget it measured.")


def _quotes(run_dir: Path, name: str, dataset: str | None) -> list[str]:
    return [trend_claim(folder, trend, paper_gain(dataset)) for folder, trend in linked_trends(run_dir, name)]


#: how a study's report quotes the trends built on it
TREND_LINK = RunLink("trend", _quotes)
