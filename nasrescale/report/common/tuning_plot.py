"""The tuning section's figure ``tuning.png``: per protocol, the mean accuracy against the
multiplier (log axis) with each tuning cell's runs behind it, the chosen multiplier marked (a
tuning still running says so in the legend: in progress, or extending its grid)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping

from ...fileio import save_figure
from .tuning_view import TuningView

__all__ = ["tuning_plot"]


def tuning_plot(found: Mapping[str, TuningView], path: Path) -> Path:
    """Mean accuracy vs multiplier per protocol of ``found`` (each tuning cell's runs faint behind
    it), saved at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for i, (label, view) in enumerate(found.items()):
        color = f"C{i}"
        means = sorted((float(m), v) for m, v in view.means.items())
        chosen = view.chosen
        ax.plot([m for m, _ in means], [v for _, v in means], "o-", color=color,
                label=f"{label} (x{chosen:g})" if chosen is not None else
                f"{label} ({'extending' if view.next is not None else 'in progress'})")
        for pts in _cell_points(view).values():
            pts.sort()
            ax.plot([m for m, _ in pts], [a for _, a in pts], "-", color=color, alpha=0.15, lw=0.8)
        if chosen is not None:
            ax.axvline(chosen, color=color, ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("multiplier of the anchor LR")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("LR tuning: mean over tuning cells (faint: each cell)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    return path


def _cell_points(view: TuningView) -> dict[str, list[tuple[float, float]]]:
    """``<cell>/<seed>`` -> its runs' ``(multiplier, test accuracy)`` (runs without a finite accuracy left out)."""
    by_arch: dict[str, list[tuple[float, float]]] = {}
    for m, rs in view.runs.items():
        for r in rs:
            acc = r.test_accuracy
            if acc is not None and math.isfinite(acc):
                by_arch.setdefault(f"{r.arch}/{r.seed}", []).append((float(m), acc))
    return by_arch
