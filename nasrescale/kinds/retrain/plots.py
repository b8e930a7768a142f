"""The retrain report's figures (matplotlib, no pyplot state: each function builds, saves and
drops one :class:`~matplotlib.figure.Figure`, rendered by the Agg backend to PNG with
:func:`~nasrescale.report.common.figure_output.save_png`).

Accuracies are in percent throughout; K in the top-K curve is a percentage of architectures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ...report.common.figure_output import save_png

__all__ = ["scatter_plot", "pairwise_gaps", "gap_figure", "gap_plot", "curves_plot", "reference_plot",
           "scales_differ", "ranks"]


def scales_differ(*groups: Sequence[float]) -> bool:
    """Whether accuracies drawn on one shared axis would collapse: for two groups, the narrower
    group's range is under a third of the range both span together (a 4-epoch run's 20-30 %
    against the benchmark's 85-95 %; a 5-point shift within the same 10 points is no collapse).

    >>> scales_differ([20, 25, 30], [85, 90, 95]), scales_differ([84, 90, 93], [85, 90, 95])
    (True, False)
    """
    spans = [(float(np.nanmin(v)), float(np.nanmax(v))) for v in (np.asarray(g, dtype=float) for g in groups) if v.size]
    for i, (a_lo, a_hi) in enumerate(spans):
        for b_lo, b_hi in spans[i + 1:]:
            if min(a_hi - a_lo, b_hi - b_lo) < (max(a_hi, b_hi) - min(a_lo, b_lo)) / 3:
                return True
    return False


def ranks(values: Sequence[float]) -> np.ndarray:
    """Rank of each value, 1 = the highest accuracy (ties share their mean rank).

    >>> ranks([90.0, 95.0, 80.0]).tolist()
    [2.0, 1.0, 3.0]
    """
    return pd.Series(np.asarray(values, dtype=float)).rank(ascending=False).to_numpy()


def _at_chance(frame: pd.DataFrame) -> pd.Series:
    """Rows of a merged comparison frame at chance accuracy: degenerate cells, diverged runs."""
    mask = pd.Series(False, index=frame.index)
    for column in ("degenerate", "diverged_a", "diverged_b"):
        if column in frame:
            mask |= frame[column].fillna(0).astype(float) > 0
    return mask


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def scatter_plot(merged: pd.DataFrame, label_a: str, label_b: str, tau: float | None, path: Path) -> Path:
    """B's accuracy against A's, one point per architecture, with the y = x line (Fig. 4 left).

    Degenerate cells and architectures with a diverged run get their own markers.
    """
    fig = Figure(figsize=(5.2, 5.0))
    ax = fig.add_subplot()
    degenerate = merged["degenerate"].astype(bool)
    diverged = (merged["diverged_a"] > 0) | (merged["diverged_b"] > 0)
    normal = ~degenerate & ~diverged
    ax.scatter(merged.loc[normal, "a"], merged.loc[normal, "b"], s=18, alpha=0.75, label="architecture")
    if diverged.any():
        ax.scatter(merged.loc[diverged, "a"], merged.loc[diverged, "b"], s=36, marker="x", color="tab:red",
                   label="has a diverged run")
    if degenerate.any():
        ax.scatter(merged.loc[degenerate, "a"], merged.loc[degenerate, "b"], s=36, marker="s",
                   facecolors="none", edgecolors="tab:gray", label="degenerate (chance)")
    values = np.concatenate([merged["a"].to_numpy(float), merged["b"].to_numpy(float)])
    lo, hi = (np.nanmin(values), np.nanmax(values)) if values.size else (0.0, 100.0)
    pad = max(0.5, 0.04 * (hi - lo))
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="black", lw=1, ls="--", label="y = x")
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_xlabel(f"{label_a} test accuracy (%)")
    ax.set_ylabel(f"{label_b} test accuracy (%)")
    ax.set_title(f"{len(merged)} architectures, Kendall tau = {_fmt(tau)}")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    return save_png(fig, path)


def pairwise_gaps(acc: Sequence[float]) -> np.ndarray:
    """Absolute accuracy gaps ``|acc_i - acc_j|`` over all pairs of architectures (points).

    >>> pairwise_gaps([90.0, 91.0, 93.0]).tolist()
    [1.0, 3.0, 2.0]
    """
    values = np.asarray(acc, dtype=float)
    i, j = np.triu_indices(values.size, 1)  # each unordered pair once
    return np.abs(values[i] - values[j])


def gap_figure(accuracies: Mapping[str, Sequence[float]], diffs: Mapping[str, Sequence[float]],
               by_rank: bool = False, standardized: bool = False) -> Figure:
    """The figure of :func:`gap_plot`: the histograms with their legends below the axes (never
    over a bar) and whole-number architecture counts on the left one's y axis."""
    fig = Figure(figsize=(11.0, 4.6))
    left, right = fig.subplots(1, 2)
    values = [np.asarray(v, dtype=float) for v in diffs.values()]
    lo = min((float(v.min()) for v in values if v.size), default=-1.0)
    hi = max((float(v.max()) for v in values if v.size), default=1.0)
    bins = np.linspace(lo, hi if hi > lo else lo + 1.0, 30)
    for name, v in zip(diffs, values):
        if v.size:
            left.hist(v, bins=bins, histtype="step", lw=1.8, label=f"{name} (median {np.median(v):+.2f})")
    left.axvline(0, color="black", lw=0.8, ls="--")
    left.set_xlabel("rank change per architecture (B rank - A rank; 1 = best)" if by_rank
                    else "accuracy difference per architecture (points)")
    left.set_ylabel("architectures")
    left.yaxis.set_major_locator(MaxNLocator(integer=True))  # a count: no half architectures
    left.set_title("how far each architecture moves" + (" (in rank: the sources' accuracy scales differ)"
                                                       if by_rank else ""), fontsize=10)
    gaps = {name: pairwise_gaps(v) for name, v in accuracies.items()}
    top = max((float(g.max()) for g in gaps.values() if g.size), default=1.0)
    gbins = np.linspace(0, max(top, 1e-6), 30)
    for name, g in gaps.items():
        if g.size:
            right.hist(g, bins=gbins, histtype="step", lw=1.8, density=True,
                       label=f"{name} (median {np.median(g):.2f})")
    right.set_xlabel("gap between two architectures (in units of the source's accuracy std)" if standardized
                     else "accuracy gap between two architectures (points)")
    right.set_ylabel("density")
    right.set_title("gaps between architectures", fontsize=10)
    for ax in (left, right):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
    fig.subplots_adjust(wspace=0.25)
    return fig


def gap_plot(accuracies: Mapping[str, Sequence[float]], diffs: Mapping[str, Sequence[float]], path: Path,
             by_rank: bool = False, standardized: bool = False) -> Path:
    """Accuracy-gap distributions (Fig. 4 right). Left: each architecture's accuracy difference
    between two sources (``diffs``: "B - A" -> values), how far a protocol moves the
    architectures; with ``by_rank`` (sources on different accuracy scales) ``diffs`` are rank
    changes instead. Right: gaps ``|acc_i - acc_j|`` between architectures under each source
    (``accuracies``), how far apart the ranking's neighbours are; with ``standardized`` the
    accuracies are in units of each source's std (sources trained at different budgets)."""
    return save_png(gap_figure(accuracies, diffs, by_rank, standardized), path)


def curves_plot(curves: pd.DataFrame, names: Mapping[str, str], path: Path) -> Path:
    """Per-epoch train loss and train accuracy of a few jobs (``names``: job key -> legend)."""
    fig = Figure(figsize=(10.0, 4.0))
    loss_ax, acc_ax = fig.subplots(1, 2)
    for key, name in names.items():
        rows = curves[curves["key"] == key].sort_values("epoch")
        if rows.empty:
            continue
        epochs = rows["epoch"].to_numpy()  # the store counts epochs from 1
        loss_ax.plot(epochs, rows["train_loss"], marker=".", label=name)
        acc_ax.plot(epochs, rows["train_acc"], marker=".", label=name)
    for ax in (loss_ax, acc_ax):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # whole epochs
    loss_ax.set_xlabel("epoch")
    loss_ax.set_ylabel("train loss (epoch mean)")
    acc_ax.set_xlabel("epoch")
    acc_ax.set_ylabel("train accuracy (%)")
    for ax in (loss_ax, acc_ax):
        ax.grid(alpha=0.3)
    loss_ax.set_title("training curves")
    handles, labels = loss_ax.get_legend_handles_labels()
    if handles:  # one entry per job, below both axes
        fig.legend(handles, labels, loc="upper center", ncol=2, fontsize=7, bbox_to_anchor=(0.5, 0.0))
    fig.subplots_adjust(wspace=0.3)
    return save_png(fig, path)


def reference_plot(points: Mapping[str, pd.DataFrame], reference: str, path: Path) -> Path:
    """Each protocol's accuracy against the benchmark reference (``points``: label -> frame with
    ``a`` = protocol, ``b`` = reference accuracy). Where the run's accuracies and the reference's
    lie on different scales (:func:`scales_differ`), ranks are plotted instead (1 = best), so the
    runs do not collapse into one blob at a corner of a shared axis."""
    fig = Figure(figsize=(5.6, 5.0))
    ax = fig.add_subplot()
    runs = [f["a"].to_numpy(float) for f in points.values()]
    refs = [f["b"].to_numpy(float) for f in points.values()]
    live = [f[~_at_chance(f)] for f in points.values()]  # chance accuracy says nothing about scale
    by_rank = scales_differ(np.concatenate([f["a"].to_numpy(float) for f in live] or [np.zeros(0)]),
                            np.concatenate([f["b"].to_numpy(float) for f in live] or [np.zeros(0)]))
    for name, frame in points.items():
        x, y = frame["b"].to_numpy(float), frame["a"].to_numpy(float)
        ax.scatter(ranks(x) if by_rank else x, ranks(y) if by_rank else y, s=16, alpha=0.7, label=name)
    if by_rank:
        n = max((len(f) for f in points.values()), default=1)
        ax.plot([1, n], [1, n], color="black", lw=1, ls="--", label="same rank")
        ax.invert_xaxis()
        ax.invert_yaxis()  # best at the top right, as with accuracies
        ax.set_xlabel(f"rank under the reference {reference} (1 = best)")
        ax.set_ylabel("rank in this run (1 = best)")
        ax.set_title("ranks: this run's accuracies and the reference's lie on different scales", fontsize=9)
    else:
        values = np.concatenate(runs + refs or [np.zeros(0)])
        if values.size:
            lo, hi = np.nanmin(values), np.nanmax(values)
            ax.plot([lo, hi], [lo, hi], color="black", lw=1, ls="--", label="y = x")
        ax.set_xlabel(f"reference {reference} accuracy (%)")
        ax.set_ylabel("this run's test accuracy (%)")
        ax.set_title("protocols against the benchmark")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_png(fig, path)
