"""The proxy calibration's figures: tau against cost, and accuracy against the reference."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np
from matplotlib.figure import Figure

from ...ranking.compare import match
from ...ranking.sources import Source, store_source
from ...store.read import StoreData
from ...report.common.figure_output import save_png
from .summary import Candidate

__all__ = ["tau_cost_plot", "accuracy_grid"]


def tau_cost_plot(candidates: Sequence[Candidate], goal: float, path: Path) -> Path:
    """Each candidate's tau against the reference (with its 95% CI) and its seed-vs-seed tau,
    against the CPU-hours to rank the cells once (log axis)."""
    fig = Figure(figsize=(7.0, 4.4))
    ax = fig.add_subplot()
    for i, c in enumerate(c for c in candidates if c.kendall_tau is not None):
        x, tau, color = c.cpu_hours_per_ranking or float("nan"), c.kendall_tau, f"C{i}"
        ci = c.ranked.tau_ci
        err = ([[tau - ci[0]], [ci[1] - tau]] if isinstance(ci, (list, tuple)) and None not in ci else None)
        ax.errorbar([x], [tau], yerr=err, fmt="o", color=color, capsize=3, label=f"{c.label} vs reference")
        if c.ranked.seed_vs_seed_tau is not None:
            ax.plot([x], [c.ranked.seed_vs_seed_tau], marker="x", color=color, markersize=8, linestyle="none",
                    label=f"{c.label} seed vs seed")
    ax.axhline(goal, color="grey", linestyle="--", linewidth=1)
    if any((c.cpu_hours_per_ranking or 0) > 0 for c in candidates):
        ax.set_xscale("log")
    ax.set_xlabel("CPU-hours to rank the cells once (one seed)")
    ax.set_ylabel("Kendall tau")
    ax.set_ylim(min(0.0, ax.get_ylim()[0]), 1.0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    return save_png(fig, path)


def accuracy_grid(store: StoreData, labels: Sequence[str], reference: Source, path: Path) -> Path:
    """One panel per candidate: its mean accuracy over seeds (y) against the reference's (x)."""
    cols = min(3, max(1, len(labels)))
    rows = math.ceil(len(labels) / cols) if labels else 1
    fig = Figure(figsize=(4.0 * cols, 3.4 * rows))
    for i, label in enumerate(labels):
        ax = fig.add_subplot(rows, cols, i + 1)
        source = store_source(store, label, label)
        if source.runs.empty:
            ax.set_title(f"{label}: no results yet", fontsize=9)
            continue
        merged, _ = match(source, reference)
        ax.scatter(merged["b"], merged["a"], s=14)
        if len(merged) > 1:
            slope, intercept = np.polyfit(merged["b"].to_numpy(float), merged["a"].to_numpy(float), 1)
            xs = np.linspace(merged["b"].min(), merged["b"].max(), 2)
            ax.plot(xs, slope * xs + intercept, color="grey", linewidth=1)
        ax.set_title(label, fontsize=9)
        ax.set_xlabel(f"{reference.label} accuracy (%)", fontsize=8)
        ax.set_ylabel("accuracy at this budget (%)", fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return save_png(fig, path)
