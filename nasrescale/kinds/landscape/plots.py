"""The landscape report's figures: each cell's best LR against the rule (paper Fig. 2 style),
and each cell's accuracy against LR."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ...report.common.figure_output import log_ticks, save_png
from .cells import CellLandscape

__all__ = ["plot_best_vs_rule", "plot_landscapes", "pyplot"]


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (imported here: slow to import, plots only)."""
    import matplotlib  # local: slow to import, plots only

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_best_vs_rule(cells: Sequence[CellLandscape], lr: Callable[[float], float], constant: float,
                      slope: float | None, ci: list[float] | None, path: Path, title: str) -> Path:
    """Each cell's best LR (quadratic vertex; bars: bootstrap interval over seeds; hollow: still at
    an edge) against the rule's prediction ``constant x scale``, log-log, with y = x (the rule)
    and the horizontal line of one global LR (slope 0)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 4.6))
    pred = np.array([constant * c.lr_scale for c in cells])
    best = np.array([lr(c.vertex) for c in cells])
    lo = np.array([lr(c.vertex_ci[0]) if c.vertex_ci else lr(c.vertex) for c in cells])
    hi = np.array([lr(c.vertex_ci[1]) if c.vertex_ci else lr(c.vertex) for c in cells])
    for edge in (False, True):
        m = np.array([bool(c.edge) == edge for c in cells])
        if m.any():
            ax.errorbar(pred[m], best[m], yerr=[best[m] - lo[m], hi[m] - best[m]], fmt="o", ms=5, capsize=2, lw=0.8,
                        color="C0", mfc="none" if edge else "C0",
                        label="best LR still at its grid's edge" if edge else "each cell's best LR")
    span = np.array([min(pred.min(), best.min()) / 1.5, max(pred.max(), best.max()) * 1.5])
    ax.plot(span, span, "k--", lw=0.8, label="the rule (slope 1)")
    ax.axhline(float(np.exp(np.mean(np.log(best)))), color="C3", ls=":", lw=0.9, label="one global LR (slope 0)")
    s = slope
    txt = "slope -" if s is None else f"slope {s:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
    ax.set(xscale="log", yscale="log", xlabel="rule's prediction c x path-depth scale", ylabel="cell's best LR",
           title="\n".join([*textwrap.wrap(title, 56, break_on_hyphens=False), f"{txt}, n = {len(cells)}"]))
    log_ticks(ax.xaxis)
    log_ticks(ax.yaxis)
    ax.legend(fontsize=7, loc="best")
    path = save_png(fig, path)
    plt.close(fig)
    return path


def plot_landscapes(cells: Sequence[CellLandscape], lr: Callable[[float], float], path: Path, title: str) -> Path:
    """Mean accuracy against LR per cell (colour: path-depth scale, log), each cell's best marked;
    left as measured, right as the drop from the cell's own best, so the shapes compare."""
    plt = pyplot()
    from matplotlib.colors import LogNorm

    fig, axes = plt.subplots(1, 2, figsize=(10.4, 4.4), sharex=True, gridspec_kw={"wspace": 0.32})
    scales = [c.lr_scale for c in cells]
    norm = LogNorm(min(scales), max(scales) if max(scales) > min(scales) else min(scales) * 2)
    cmap = plt.get_cmap("viridis")
    for c in cells:
        ks, colour = sorted(c.acc), cmap(norm(c.lr_scale))
        mean, top = np.array([np.mean(c.acc[k]) for k in ks]), float(np.mean(c.acc[c.best]))
        for ax, shift in zip(axes, (0.0, top)):
            ax.plot([lr(k) for k in ks], mean - shift, "-", color=colour, lw=0.9, alpha=0.8)
            ax.plot([lr(c.best)], [top - shift], "o", color=colour, ms=4)
    bar = fig.colorbar(plt.cm.ScalarMappable(cmap=cmap, norm=norm), ax=axes, label="path-depth scale")
    log_ticks(bar.ax.yaxis)
    axes[0].set(xscale="log", xlabel="LR", ylabel="test accuracy (%), mean over seeds", title=title)
    axes[1].set(xscale="log", xlabel="LR", ylabel="minus the cell's best (points)",
                title="the same, from each cell's best")
    log_ticks(axes[0].xaxis)
    path = save_png(fig, path)
    plt.close(fig)
    return path
