"""Figures of :mod:`~nasrescale.kinds.retrain.tau_matrix` and :mod:`~nasrescale.kinds.retrain.elr_section`: the
Kendall-tau matrix between protocols and the ELR spread of every run against its accuracy (matplotlib, Agg, no pyplot state)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...report.common.figure_output import save_png

__all__ = ["tau_matrix_plot", "spread_plot"]


def tau_matrix_plot(tau: pd.DataFrame, path: Path) -> Path:
    """A heat map of a square Kendall-tau table (NaN cells blank), each cell written out."""
    n = len(tau)
    fig = Figure(figsize=(1.1 * n + 2.0, 0.9 * n + 1.2))
    ax = fig.add_subplot(1, 1, 1)
    values = tau.to_numpy(dtype=float)
    image = ax.imshow(np.ma.masked_invalid(values), cmap="viridis", vmin=-1, vmax=1)
    ax.set_xticks(range(n), labels=list(tau.columns), rotation=30, ha="right")
    ax.set_yticks(range(n), labels=list(tau.index))
    for i in range(n):
        for j in range(n):
            if np.isfinite(values[i, j]):
                ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center",
                        color="white" if values[i, j] < 0.5 else "black", fontsize=8)
    fig.colorbar(image, ax=ax, label="Kendall tau")
    ax.set_title("rank agreement between protocols")
    return save_png(fig, path)


#: one marker per protocol, cycled
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def spread_plot(runs: pd.DataFrame, labels: list[str], path: Path) -> Path:
    """Test accuracy against the run's mean relative ELR spread, one colour and one hollow marker
    per protocol (so that protocols whose runs coincide, as a warm-up that ends at once, stay visible)."""
    fig = Figure(figsize=(6.0, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    for index, label in enumerate(labels):
        mine = runs[runs["protocol"] == label]
        if len(mine):
            color = f"C{index % 10}"
            marker = _MARKERS[index % len(_MARKERS)]
            ax.scatter(mine["spread"], mine["accuracy"], s=22 + 14 * (index % 3), marker=marker, facecolors="none",
                       edgecolors=color, linewidths=1.1, label=f"{label} ({len(mine)})")
    ax.set_xlabel("relative ELR spread S_rel (mean over epochs)")
    ax.set_ylabel("test accuracy (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("effective-LR spread vs accuracy")
    return save_png(fig, path)
