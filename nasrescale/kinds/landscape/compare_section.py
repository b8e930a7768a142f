"""The landscape report's section on the same cells in another landscape (``landscape.compare``,
:mod:`.compare`): its numbers in ``report.json`` under ``compare``, a table per cell, a figure
of each cell's best LR in both against its path-depth scale, and what the slopes' difference says.
Without the setting, or below 3 finished cells, the section is left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import NasRescaleError
from ...report.common.figure_output import log_ticks, save_png
from ...report.common.markdown import md_table
from ...report.common.names import short_names
from ...report.common.page import Computed
from ...store.read import read_store, store_path
from .cells import read_cells, read_plan
from .compare import compare_landscapes
from .lines import signed
from .plots import pyplot
from .stats import MIN_CELLS
from .summary import LandscapeSummary

__all__ = ["Compare"]


def _ci(ci: Sequence[float] | None, digits: int = 2) -> str:
    return "" if not ci else f" [{ci[0]:+.{digits}f}, {ci[1]:+.{digits}f}]"


def _budget(epochs: Any) -> str:
    """A run's budget in words.

    >>> _budget(1), _budget(24), _budget(None)
    ('1 epoch', '24 epochs', 'its budget')
    """
    return f"{epochs} epoch{'' if epochs == 1 else 's'}" if epochs else "its budget"


class Compare:
    """``## The same cells in <other run>``: best LRs, their shift and the slopes' difference."""

    key = "compare"

    def compute(self, run: LandscapeSummary) -> Computed:
        other = run.settings.compare
        if not other or not run.compared:
            return Computed(None)
        try:
            store = read_store(store_path(other, run.run_dir.parent))
            plan, settings = read_plan(store)
            there, _ = read_cells(store, 0)
        except (NasRescaleError, OSError) as err:
            return Computed({"run": other, "n": 0, "error": str(err)})
        here = list(run.figure_cells)
        out = compare_landscapes(other, plan.epochs, here, run.settings.lr, there, settings.lr,
                                 run.settings.points_per_octave, settings.points_per_octave,
                                 2000 if run.full else 0)
        return Computed(out, detail=(here, there, settings.lr))

    def render(self, run: LandscapeSummary, computed: Computed) -> list[str]:
        c = computed.numbers
        if c is None:
            return []
        title = f"## The same cells in {c['run']} ({_budget(c.get('epochs'))})"
        if "error" in c:
            return [title, "", f"Not compared: {c['error']}.", ""]
        if c["n"] < 3:
            return [title, "", f"{c['n']} cell(s) finished in both: fewer than 3, nothing to compare yet.", ""]
        full = c["n"] >= MIN_CELLS
        fig = _plot(c, _budget(run.analysis.epochs), run.run_dir / "landscape_compare.png",
                    f"{run.name} ({_budget(run.analysis.epochs)}) against {c['run']} ({_budget(c.get('epochs'))})")
        return [title, "", *_summary_lines(c, run.analysis.epochs, full), f"![best LR in both]({fig.name})", "",
                *_table(c, _budget(run.analysis.epochs), run.store.record.family_or("nb201")), ""]


def _summary_lines(c: dict[str, Any], epochs: Any, full: bool) -> list[str]:
    ci = (lambda v, d=2: _ci(v, d)) if full else (lambda v, d=2: "")
    here, there = _budget(epochs), _budget(c.get("epochs"))
    diff, diff_ci = c["slope_diff"], c["slope_diff_ci"] if full else None
    lines = [f"On the {c['n']} cells both have finished, each cell's best LR (the quadratic's vertex) moves "
             f"{signed(c['shift_mean'], 2)}{ci(c['shift_ci'])} octaves from {there} to {here} on average (median "
             f"{signed(c['shift_median'], 2)}); Spearman rho between the two budgets' best LRs "
             f"{signed(c['spearman'], 2)}.", "",
             f"Slope of log(best LR) on log(path-depth scale): {signed(c['slope_there'], 2)}"
             f"{ci(c['slope_there_ci'])} at {there}, {signed(c['slope_here'], 2)}{ci(c['slope_here_ci'])} at {here}; "
             f"the change, the slope of the shift on the scale, {signed(diff, 2)}{ci(diff_ci)} (0: the budget moves "
             "every cell's best LR alike; +1: it adds the whole rule)."]
    if diff_ci:
        says = ("the budget moves the best LR with path depth" if diff_ci[0] > 0 else
                "the budget moves the best LR against path depth" if diff_ci[1] < 0 else
                "no change with path depth is shown" + ("; the interval excludes +1, the whole rule"
                                                        if diff_ci[1] < 1 else "; the interval holds +1 too"))
        lines[-1] += f" **{says[0].upper() + says[1:]}.**"
    elif not full:
        lines[-1] += f" Below {MIN_CELLS} shared cells: no intervals."
    gains = [(b, g) for b, g in ((there, c.get("gain_there")), (here, c.get("gain_here"))) if g]
    if gains:
        lines += ["", "Each cell's own LR over one global LR on these cells (cross-fitted, points): "
                  + "; ".join(f"{signed(g['mean'], 2)}{ci(g['ci'])} at {b}" for b, g in gains) + "."]
    if c.get("edge"):
        lines += ["", f"{c['edge']} of these cells' best LRs sit at a grid edge in one run or both: a bound there."]
    return lines + [""]


def _table(c: dict[str, Any], here: str, family: str) -> list[str]:
    names, how = short_names([r["arch"] for r in c["cells"]], family)
    rows = [[f"`{names[r['arch']]}`", f"{r['lr_scale']:.3f}", f"{r['other_best_lr']:.3g}", f"{r['best_lr']:.3g}",
             signed(r["shift"], 2)] for r in sorted(c["cells"], key=lambda r: -r["lr_scale"])]
    return md_table(["cell", "path-depth scale", f"best LR, {_budget(c.get('epochs'))}", f"best LR, {here}",
                     "shift (octaves)"], rows) + ["", how]


def _plot(c: dict[str, Any], here: str, path: Path, title: str) -> Path:
    """Each shared cell's best LR in the other run (hollow) and here (filled), joined, against its
    path-depth scale, log-log, with each run's least-squares line."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 4.6))
    x = np.array([r["lr_scale"] for r in c["cells"]])
    for key, fill, colour, slope, name in (("other_best_lr", "none", "C7", c["slope_there"], _budget(c.get("epochs"))),
                                            ("best_lr", "C0", "C0", c["slope_here"], here)):
        y = np.array([r[key] for r in c["cells"]])
        ax.plot(x, y, "o", ms=5, mfc=fill, color=colour, label=f"{name}: slope {signed(slope, 2)}")
        if slope is not None:  # the least-squares line through the logs' means
            span = np.array([x.min(), x.max()])
            ax.plot(span, np.exp(np.mean(np.log(y)) + slope * (np.log(span) - np.mean(np.log(x)))), "-",
                    color=colour, lw=0.8, alpha=0.7)
    for r in c["cells"]:
        ax.plot([r["lr_scale"]] * 2, [r["other_best_lr"], r["best_lr"]], "-", color="0.6", lw=0.7, zorder=0)
    ax.set(xscale="log", yscale="log", xlabel="path-depth scale", ylabel="cell's best LR", title=title)
    ax.title.set_fontsize(9)
    log_ticks(ax.xaxis)
    log_ticks(ax.yaxis)
    ax.legend(fontsize=7, loc="best")
    path = save_png(fig, path)
    plt.close(fig)
    return path
