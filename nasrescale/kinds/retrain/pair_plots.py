"""Figures of one protocol pair that read the learning rates the runs used, and the top-K% curve
with its bootstrap bands.

* :func:`gain_lr_plot`: each cell's gain (B - A) against the LR B trained it with, on a log
  axis, with a line where that LR equals A's;
* :func:`paired_diff_plot`: the gain of every cell, sorted by that LR, with its seed error bar;
* :func:`topk_band_plot`: Kendall tau within the top K% for each comparison and the seed noise
  on the same cells, each with its 95% bootstrap band; points of fewer than
  :data:`~nasrescale.ranking.bands.MIN_TOPK_ROWS` cells are grey and left unjoined.

Each function builds, saves and drops one Figure (Agg backend, no pyplot state).
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator

from ...ranking.bands import MIN_TOPK_ROWS
from ...report.common.figure_output import save_png

__all__ = ["gain_lr_plot", "lr_ticks", "paired_diff_plot", "topk_band_plot", "seed_error"]


def _log_lr_axis(ax, reference_lr: float | None, label_a: str) -> None:
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    if reference_lr:
        ax.axvline(reference_lr, color="tab:red", lw=1, ls=":", label=f"{label_a}'s LR {reference_lr:g}")


def seed_error(wa: pd.DataFrame, wb: pd.DataFrame) -> pd.Series:
    """Standard error of each cell's mean difference (B - A) from its seeds:
    ``sqrt(var_A / n_A + var_B / n_B)`` (sample variances; NaN with fewer than 2 seeds).

    >>> wa = pd.DataFrame({0: [70.0], 1: [72.0]}, index=["c"])
    >>> wb = pd.DataFrame({0: [71.0], 1: [71.0]}, index=["c"])
    >>> float(seed_error(wa, wb)["c"])
    1.0
    """
    var = lambda w: w.var(axis=1, ddof=1) / w.count(axis=1)  # noqa: E731 - one line, used twice
    return np.sqrt(var(wa) + var(wb.reindex(wa.index)))


def gain_lr_plot(lr: pd.Series, gain: pd.Series, label_a: str, label_b: str, reference_lr: float | None,
                 path: Path, left_out: int = 0, lr_of: str | None = None) -> Path:
    """Each cell's gain (B - A, points) against the LR ``lr_of`` (default B) trained it with
    (log axis), a dotted line at the other protocol's fixed LR (``reference_lr``); ``left_out``
    cells with a diverged run are not drawn."""
    lr_of = lr_of or label_b
    other = label_a if lr_of == label_b else label_b
    fig = Figure(figsize=(6.0, 4.2))
    ax = fig.add_subplot()
    ax.scatter(lr, gain.reindex(lr.index), s=18, alpha=0.75)
    ax.axhline(0, color="black", lw=0.8, ls="--")
    _log_lr_axis(ax, reference_lr, other)
    ax.set_xlabel(f"learning rate {lr_of} trained the cell with (log scale)")
    ax.set_ylabel(f"accuracy gain {label_b} - {label_a} (points)")
    note = f"; {left_out} with a diverged run not shown" if left_out else ""
    ax.set_title(f"gain vs the LR used ({len(lr)} cells{note})", fontsize=10)
    ax.grid(alpha=0.3)
    if reference_lr:
        ax.legend(loc="best", fontsize=8)
    return save_png(fig, path)


def lr_ticks(lrs: np.ndarray, most: int = 8) -> tuple[list[int], list[str]]:
    """Tick positions and labels for cells sorted by LR: one tick where a new LR (to 3 significant
    digits) starts, at most ``most`` of them, so no two neighbouring ticks repeat a value.

    >>> lr_ticks(np.array([0.1, 0.1, 0.115, 0.115, 0.115, 0.2]))
    ([0, 2, 5], ['0.1', '0.115', '0.2'])
    """
    labels = [f"{v:.3g}" for v in lrs]
    starts = [i for i, text in enumerate(labels) if i == 0 or text != labels[i - 1]]
    starts = starts[:: max(1, -(-len(starts) // most))]
    return starts, [labels[i] for i in starts]


def paired_diff_plot(gain: pd.Series, error: pd.Series, lr: pd.Series, label_a: str, label_b: str,
                     reference_lr: float | None, path: Path, lr_of: str | None = None) -> Path:
    """Every cell's gain (B - A) with its seed error bar (:func:`seed_error`), cells sorted by
    the LR ``lr_of`` (default B) used; cells at or above the other's fixed LR in one colour,
    below it in another."""
    lr_of = lr_of or label_b
    order = lr.reindex(gain.index).sort_values(kind="stable").index
    y, err, x_lr = gain[order], error.reindex(order), lr[order]
    fig = Figure(figsize=(7.2, 4.2))
    ax = fig.add_subplot()
    high = (x_lr >= reference_lr).to_numpy() if reference_lr else np.zeros(len(order), dtype=bool)
    pos = np.arange(len(order))
    for mask, color, name in ((~high, "tab:blue", f"LR < {reference_lr:g}" if reference_lr else "cells"),
                              (high, "tab:orange", f"LR >= {reference_lr:g}" if reference_lr else "")):
        if mask.any():
            ax.errorbar(pos[mask], y[mask], yerr=err[mask].fillna(0), fmt="o", ms=3.5, lw=0.9, capsize=2,
                        color=color, label=name)
    ax.axhline(0, color="black", lw=0.8, ls="--")
    ax.set_xticks(*lr_ticks(x_lr.to_numpy()), fontsize=8)
    ax.set_xlabel(f"cells, sorted by the LR {lr_of} used (tick: that LR)")
    ax.set_ylabel(f"{label_b} - {label_a} (points)")
    ax.set_title(f"per-cell difference, error bar: standard error over seeds ({len(order)} cells)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    return save_png(fig, path)


def _series(entries: Sequence[dict], key: str) -> np.ndarray:
    return np.array([np.nan if e.get(key) is None else e[key] for e in entries], dtype=float)


def _draw(ax, pos: np.ndarray, entries: Sequence[dict], color: str | None, label: str, ls: str = "-") -> None:
    tau, few = _series(entries, "kendall_tau"), np.array([e["n"] < MIN_TOPK_ROWS for e in entries])
    low = np.array([np.nan if not e.get("ci") else e["ci"][0] for e in entries], dtype=float)
    high = np.array([np.nan if not e.get("ci") else e["ci"][1] for e in entries], dtype=float)
    solid = np.where(few, np.nan, tau)
    line, = ax.plot(pos, solid, marker="o", lw=1.6, ls=ls, color=color, label=label)
    ax.fill_between(pos, np.where(few, np.nan, low), np.where(few, np.nan, high), color=line.get_color(),
                    alpha=0.15, lw=0)
    ax.plot(pos[few], tau[few], "o", color="lightgray", mec="gray", ms=5)


def topk_band_plot(curves: Mapping[str, Sequence[dict]], noise: Mapping[str, dict | None], path: Path,
                   title: str, subset_by: str) -> Path:
    """Kendall tau within the top K% against K (paper Fig. 4 middle, Fig. 9): one line per
    comparison and one dashed line per protocol's seed noise on the same subsets, each with its
    95% bootstrap band; points of fewer than :data:`MIN_TOPK_ROWS` cells grey, unjoined."""
    fig = Figure(figsize=(6.6, 4.4))
    ax = fig.add_subplot()
    ks = [e["k_percent"] for e in next(iter(curves.values()), [])]
    ns = [e["n"] for e in next(iter(curves.values()), [])]
    pos = np.arange(len(ks))
    for name, curve in curves.items():
        _draw(ax, pos, curve, None, name)
    colors = iter(["tab:gray", "tab:olive", "tab:cyan", "tab:pink", "tab:brown"])
    for name, band in noise.items():
        if band:
            _draw(ax, pos, band["topk"], next(colors, "tab:gray"),
                  f"seed noise: {name} ({len(band['seeds'])} seeds), same cells", ls="--")
    ax.set_xticks(pos, [f"{k}\nn={n}" for k, n in zip(ks, ns)], fontsize=7)
    ax.set_xlabel(f"top K% of cells by {subset_by} (grey: fewer than {MIN_TOPK_ROWS} cells, not read)")
    ax.set_ylabel("Kendall tau within the top K%")
    ax.axhline(0, color="black", lw=0.6)
    ax.set_ylim(-1.05, 1.05)
    ax.set_title(title + " (bands: 95% bootstrap)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", fontsize=7)
    return save_png(fig, path)
