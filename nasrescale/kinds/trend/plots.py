"""The trend report's figures: the gain of B over A against the budget, and the taus against it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from matplotlib.figure import Figure

from ...ranking.bands import MIN_TOPK_ROWS
from ...report.common.figure_output import save_png

__all__ = ["gain_epochs_plot", "tau_epochs_plot"]


def _bars(ax: Any, xs: Sequence[float], ys: Sequence[float | None], cis: Sequence[Any], label: str, color: str,
          shift: float) -> None:
    """Points with 95% CI bars (a missing CI: a point alone), nudged by ``shift`` (a factor on the log axis)."""
    points = [(x * shift, y, ci) for x, y, ci in zip(xs, ys, cis) if y is not None]
    if not points:
        return
    low = [max(0.0, y - ci[0]) if ci else 0.0 for _, y, ci in points]  # a BCa interval may miss its estimate
    high = [max(0.0, ci[1] - y) if ci else 0.0 for _, y, ci in points]
    ax.errorbar([p[0] for p in points], [p[1] for p in points], yerr=[low, high], fmt="o-", color=color, capsize=3,
                label=label)


def _epochs_axis(ax: Any, epochs: Sequence[int], ylabel: str, empty: str) -> None:
    """The log epochs axis (a margin either side of the budgets), and a legend; with nothing
    plotted, ``empty`` says why in the middle of the axes instead."""
    ax.set_xscale("log")
    ax.set_xlim(min(epochs) / 1.25, max(epochs) * 1.25)
    ax.set_xticks(list(epochs), [str(e) for e in epochs])
    ax.minorticks_off()
    ax.set_xlabel("training epochs (log scale)")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)  # off the points
    else:
        ax.text(0.5, 0.5, empty, transform=ax.transAxes, ha="center", va="center", color="grey")


def _title(what: str, cells: Sequence[int], ci: str) -> str:
    """A figure's title: what it shows, on how many cells (a range where its points differ), and
    its CIs, drawn on points of at least :data:`MIN_TOPK_ROWS` cells.

    >>> _title("gain", [24, 24], "95% CI"), _title("gain", [4, 0], "95% CI"), _title("gain", [8, 12], "95% CI")
    ('gain, 24 cells (95% CI)', 'gain, 4 cells (too few for CIs)', 'gain, 8-12 cells (95% CI from 10 cells on)')
    >>> _title("gain", [], "95% CI")
    'gain (95% CI)'
    """
    counts = sorted({c for c in cells if c})
    if not counts:
        return f"{what} ({ci})"
    low, high = counts[0], counts[-1]
    shown = f"{low} cell{'' if low == 1 else 's'}" if low == high else f"{low}-{high} cells"
    ci_text = (ci if low >= MIN_TOPK_ROWS else "too few for CIs" if high < MIN_TOPK_ROWS
               else f"{ci} from {MIN_TOPK_ROWS} cells on")
    return f"{what}, {shown} ({ci_text})"


def gain_epochs_plot(epochs: Sequence[int], gains: Mapping[str, Sequence[tuple[float | None, Any]]],
                     path: Path, cells: Sequence[int] = ()) -> Path:
    """Per pair (``"B - A"`` -> per budget ``(mean gain, CI)``), the gain against the epochs, on
    the cell counts ``cells`` of its points (named in the title)."""
    fig = Figure(figsize=(6.4, 4.0))
    ax = fig.add_subplot()
    ax.axhline(0.0, color="grey", lw=0.8)
    for i, (name, rows) in enumerate(gains.items()):
        _bars(ax, epochs, [r[0] for r in rows], [r[1] for r in rows], name, f"C{i}", 1.0 + 0.02 * i)
    _epochs_axis(ax, epochs, "mean gain of B over A (accuracy points)", "no gain yet: no cell compared")
    ax.set_title(_title("gain against the budget", cells, "95% paired-bootstrap CI"))
    return save_png(fig, path)


def tau_epochs_plot(epochs: Sequence[int], taus: Mapping[str, Sequence[tuple[float | None, Any]]],
                    floors: Mapping[str, float], path: Path, cells: Sequence[int] = ()) -> Path:
    """Each series (``name`` -> per budget ``(tau, CI)``) against the epochs; ``floors`` are
    horizontal seed-noise levels (``name`` -> tau); the cell counts ``cells`` of the points are named in the title."""
    fig = Figure(figsize=(6.4, 4.0))
    ax = fig.add_subplot()
    for i, (name, rows) in enumerate(taus.items()):
        _bars(ax, epochs, [r[0] for r in rows], [r[1] for r in rows], name, f"C{i}", 1.0 + 0.02 * i)
    for j, (name, tau) in enumerate(floors.items()):
        ax.axhline(tau, color=f"C{len(taus) + j}", ls="--", lw=1.0, label=name)
    _epochs_axis(ax, epochs, "Kendall tau", "no tau yet: fewer than 3 cells compared")
    ax.set_title(_title("rank agreement against the budget", cells, "95% CI"))
    return save_png(fig, path)
