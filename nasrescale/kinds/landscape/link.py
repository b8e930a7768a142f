"""A retrain run's link to the LR landscapes built on it: does each cell's own best LR follow
the path-depth rule, and what does one LR for every cell cost?

A landscape (``kind = "landscape"``, :mod:`nasrescale.kinds.landscape.write`) that reuses a
study's runs (``landscape.reuse``) or names it (``landscape.study``: a longer budget's landscape
that copies nothing) trains the study's cells at every LR of a grid. The study's
claims then give one sentence per such landscape, read from its own ``report.json`` (written
by ``nasrescale report LANDSCAPE``): the slope of log(best LR) on log(path-depth scale) with
its CI (the rule predicts 1, one global LR 0), the paper's one-epoch criterion beside it where
the landscape names one, and the headroom: the cross-fitted per-cell oracle and the rule, each
against one global LR, and the ranking's movement (tau between the rankings at one global LR
and at each cell's own LR, on single runs) beside the seed floor, then the calibrated distortion
verdict with its power and positive controls, the model-based gain and, where it names another
landscape of the same cells (``landscape.compare``), how each best LR moved. Below 10 cells the
figures are given "so far", without CIs or verdicts.

>>> numbers = {"cells": 24, "epochs": 6, "slope": {"slope": 0.1, "slope_ci": [-0.2, 0.4], "rule_in_ci": False,
...            "global_in_ci": True}, "headroom": {"oracle-global": {"mean": 0.3, "ci": [0.1, 0.5]},
...            "rule-global": {"mean": -0.2, "ci": [-0.6, 0.1]}, "captured": None},
...            "criterion": [{"of": "landscape", "source": "landscape", "n": 24, "slope": 0.1, "slope_ci": [-0.2, 0.4]},
...                          {"of": "criterion", "source": "val_bn", "n": 24, "slope": -0.12, "slope_ci": [-0.28, 0.05]}]}
>>> numbers["ranking"] = {"seed_floor": 0.84, "global-oracle": {"tau": 0.91, "tau_single": 0.85}}
>>> text = landscape_claim("land", numbers)
>>> text.endswith("single runs 0.850, against 0.840 between two seeds at one LR.")
True
>>> numbers["verdicts"] = {"distortion": {"verdict": "undetermined at this design", "gap": 0.0, "ci95": [-0.05, 0.05]},
...     "detectable": {"tau": 0.73, "regret": 1.41}, "controls": [{"detected": False}, {"detected": True}],
...     "bracket": {"model": {"estimate": 0.09}, "model_ci": [0.08, 0.13]}}
>>> print(landscape_claim("land", numbers).split("; the calibrated distortion test: ")[1])
undetermined at this design (gap +0.000 [-0.050, +0.050]; 80% power from a true tau of 0.73, 1.41 points of regret; 1 of 2 positive controls detected); model-based gain of each cell's own LR +0.09 [+0.08, +0.13] points.

>>> "slope 0.10 [-0.20, +0.40] (the rule predicts 1: outside the CI; one global LR, 0: inside)" in text
True
>>> "the paper's one-epoch criterion on the same cells: -0.12 [-0.28, +0.05] (val_bn);" in text
True
>>> "oracle - global +0.30 [+0.10, +0.50], rule - global -0.20 [-0.60, +0.10]" in text
True
>>> few = {**numbers, "cells": 4}
>>> "so far on 4 cells (fewer than 10: no CI, no verdict): slope 0.10;" in landscape_claim("land", few)
True
>>> landscape_claim("land", {"cells": 2, "pending": 22, "epochs": 6})
'Landscape `land` (6 epochs): 2 cell(s) finished, 22 under way; no figures yet.'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ...ranking.bands import MIN_TOPK_ROWS
from ...report.common.links import RunLink
from ...report.common.siblings import sibling_reports
from .verdict_text import underpowered

__all__ = ["linked_landscapes", "landscape_claim", "LANDSCAPE_LINK"]


def linked_landscapes(run_dir: Path, name: str) -> list[tuple[str, dict[str, Any]]]:
    """``(folder name, report.json)`` of every landscape report beside ``run_dir`` (in the same
    results folder) whose ``study`` names the run ``name`` or, without a ``study``, whose
    ``reuse`` does, by budget (epochs), then folder name."""
    linked = [(folder, numbers) for folder, numbers in sibling_reports(run_dir)
              if isinstance(numbers.get("settings"), dict) and "points_per_octave" in numbers["settings"]
              and (numbers["settings"].get("study") or numbers["settings"].get("reuse")) == name]
    return sorted(linked, key=lambda item: (item[1].get("epochs") or 0, item[0]))  # shorter budgets first


def _est(entry: Mapping[str, Any], value: str, ci: str, full: bool, sign: bool = True) -> str:
    v, interval = entry.get(value), entry.get(ci)
    if v is None:
        return "-"
    text = f"{v:+.2f}" if sign else f"{v:.2f}"
    return text + (f" [{interval[0]:+.2f}, {interval[1]:+.2f}]" if full and interval else "")


def landscape_claim(folder: str, numbers: Mapping[str, Any]) -> str:
    """One sentence on landscape ``folder``'s ``report.json`` ``numbers`` (see the module)."""
    head = f"Landscape `{folder}` ({numbers.get('epochs')} epochs)"
    cells = int(numbers.get("cells") or 0)
    if cells < 3 or not numbers.get("slope"):
        return f"{head}: {cells} cell(s) finished, {numbers.get('pending', 0)} under way; no figures yet."
    full = cells >= MIN_TOPK_ROWS
    s, h = numbers["slope"], numbers.get("headroom") or {}
    where = ""
    if full and s.get("slope_ci"):
        where = (f" (the rule predicts 1: {'inside' if s.get('rule_in_ci') else 'outside'} the CI; one global LR, 0: "
                 f"{'inside' if s.get('global_in_ci') else 'outside'})")
    scope = f"on {cells} cells" if full else f"so far on {cells} cells (fewer than {MIN_TOPK_ROWS}: no CI, no verdict)"
    text = (f"{head}, does each cell's own best LR follow the path-depth rule? {scope}: slope "
            f"{_est(s, 'slope', 'slope_ci', full, False)}{where}")
    crit = [c for c in numbers.get("criterion") or [] if c.get("slope") is not None and c.get("of") != "landscape"]
    if crit:
        text += "; the paper's one-epoch criterion on the same cells: " + ", ".join(
            f"{_est(c, 'slope', 'slope_ci', full)} ({c.get('run', c['source'])})" for c in crit)
    og, rg = h.get("oracle-global"), h.get("rule-global")
    if og and rg:
        text += (f"; accuracy points, oracle - global {_est(og, 'mean', 'ci', full)}, rule - global "
                 f"{_est(rg, 'mean', 'ci', full)} (each cell's own LR cross-fitted over seeds; the global LR and the "
                 "rule's constant chosen leave-one-cell-out)")
    tau = (numbers.get("ranking") or {}).get("global-oracle") or {}
    floor = (numbers.get("ranking") or {}).get("seed_floor")
    if tau.get("tau_single") is not None and floor is not None:
        text += (f"; Kendall tau between the rankings at one global LR and at each cell's own LR, single runs "
                 f"{tau['tau_single']:.3f}, against {floor:.3f} between two seeds at one LR")
    return text + _verdict_text(numbers.get("verdicts")) + _compare_text(numbers.get("compare"), full) + "."


def _compare_text(c: Mapping[str, Any] | None, full: bool) -> str:
    """The same cells in the landscape ``compare`` names: the mean shift of the best LR and the
    change of the slope (:mod:`.compare`).

    >>> c = {"run": "short", "epochs": 6, "n": 12, "shift_mean": -0.06, "shift_ci": [-0.3, 0.2],
    ...      "slope_there": -0.11, "slope_here": 0.01, "slope_diff": 0.12, "slope_diff_ci": [-0.4, 0.6]}
    >>> _compare_text(c, True)
    '; against `short` (6 epochs) on the 12 cells both finished, each best LR moves -0.06 [-0.30, +0.20] octaves and the slope goes from -0.11 to +0.01, a change of +0.12 [-0.40, +0.60]'
    >>> _compare_text({**c, "n": 2}, True)
    ''
    """
    if not c or int(c.get("n") or 0) < 3 or c.get("slope_diff") is None:
        return ""
    return (f"; against `{c['run']}` ({c.get('epochs')} epochs) on the {c['n']} cells both finished, each best LR "
            f"moves {_est(c, 'shift_mean', 'shift_ci', full)} octaves and the slope goes from "
            f"{_est(c, 'slope_there', 'slope_there_ci', False)} to {_est(c, 'slope_here', 'slope_here_ci', False)}, a change of "
            f"{_est(c, 'slope_diff', 'slope_diff_ci', full)}")


def _verdict_text(v: Mapping[str, Any] | None) -> str:
    """The calibrated distortion verdict with its power and controls, and the model-based gain."""
    if not v:
        return ""
    d, det, b = v["distortion"], v.get("detectable"), v["bracket"]
    power = (f"80% power from a true tau of {det['tau']:.2f}, {det['regret']:.2f} points of regret" if det
             else underpowered(v))
    hits = sum(bool(c["detected"]) for c in v["controls"])
    return (f"; the calibrated distortion test: {d['verdict']} (gap {d['gap']:+.3f} [{d['ci95'][0]:+.3f}, "
            f"{d['ci95'][1]:+.3f}]; {power}; {hits} of {len(v['controls'])} positive controls detected); "
            f"model-based gain of each cell's own LR {b['model']['estimate']:+.2f} [{b['model_ci'][0]:+.2f}, "
            f"{b['model_ci'][1]:+.2f}] points")


def _quotes(run_dir: Path, name: str, dataset: str | None) -> list[str]:
    return [landscape_claim(folder, numbers) for folder, numbers in linked_landscapes(run_dir, name)]


#: how a study's report quotes the landscapes built on it
LANDSCAPE_LINK = RunLink("landscape", _quotes)
