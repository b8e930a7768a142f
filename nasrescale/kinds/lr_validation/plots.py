"""The figures of an LR-rule validation report (:mod:`nasrescale.kinds.lr_validation`).

* :func:`plot_predicted_measured`: measured vs predicted maximal LR, log-log, y = x, each point
  with the spread of its seeds' argmins as an error bar (min to max), the base starred, points
  whose argmin sits at the grid's edge hollow;
* :func:`plot_curves`: mean final training loss vs LR per architecture, the measured LR marked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...fileio import save_figure
from ...report.common.figure_output import log_ticks
from ...report.common.validation_run import Point, ValidationAnalysis

__all__ = ["plot_predicted_measured", "plot_curves"]


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _short_arch(arch: str, limit: int = 28) -> str:
    """An architecture as a legend shows it: NB201 strings in their digit form, long ones cut
    (a 60-character legend entry squeezes the axes to a sliver)."""
    if arch.startswith("|"):
        from ...space.encodings import format_arch, parse_arch
        from ...space.family_loader import get_family

        try:
            nb201 = get_family("nb201")
            return format_arch(parse_arch(arch, nb201), nb201, "digits")
        except Exception:  # noqa: BLE001 - another family's string: cut below
            pass
    return arch if len(arch) <= limit else arch[:limit - 3] + "..."


def _pyplot() -> Any:
    import matplotlib  # local: matplotlib is slow to import and only plots need it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _scatter_group(ax: Any, pts: list[Point], color: str, label: str) -> None:
    """One group's points with seed-spread error bars (hollow: at the grid's edge)."""
    for edge in (False, True):
        sub = [p for p in pts if bool(p.edge) == edge]
        if not sub:
            continue
        x = [p.predicted_lr for p in sub]
        y = [p.measured_lr for p in sub]
        yerr = [[p.measured_lr - p.seed_min for p in sub], [p.seed_max - p.measured_lr for p in sub]]
        ax.errorbar(x, y, yerr=yerr, fmt="o", ms=5, color=color, capsize=2, lw=0.8,
                    mfc="none" if edge else color, label=f"{label} (argmin at grid edge)" if edge else label)
    base = [p for p in pts if p.base]
    if base:
        ax.scatter([base[0].predicted_lr], [base[0].measured_lr], marker="*", s=160, color=color,
                   edgecolors="k", zorder=3, label=f"{label}: base architecture")


def plot_predicted_measured(res: ValidationAnalysis, path: Path, title: str) -> Path:
    """Write the predicted-vs-measured figure (module docstring) to ``path``."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 5.2), dpi=120)
    groups = list(dict.fromkeys(p.group for p in res.points))
    for i, g in enumerate(groups):
        _scatter_group(ax, [p for p in res.points if p.group == g], f"C{i % 10}", g)
    values = [v for p in res.points for v in (p.predicted_lr, p.seed_min, p.seed_max)]
    if values:
        lo, hi = min(values) / 1.5, max(values) * 1.5
        ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="y = x (the rule)")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.legend(fontsize=7, loc="upper left")
    ax.set_xscale("log")
    ax.set_yscale("log")
    log_ticks(ax.xaxis)
    log_ticks(ax.yaxis)
    ax.set_xlabel("predicted maximal LR  (base LR x lr_scale x kernel factor)")
    ax.set_ylabel("measured maximal LR  (bars: range over seeds)")
    c = res.overall
    nb = c.without_base
    ax.set_title(f"{title}\nPearson r (log LR) {_fmt(c.pearson_log)}, without the base {_fmt(nb.pearson_log)}; "
                 f"Spearman {_fmt(c.spearman)}; n = {c.n}", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path


def plot_curves(res: ValidationAnalysis, path: Path, title: str) -> Path:
    """Write the loss-vs-LR figure (module docstring) to ``path``: one panel per group."""
    plt = _pyplot()
    groups = list(dict.fromkeys(p.group for p in res.points)) or ["-"]
    fig, axes = plt.subplots(1, len(groups), figsize=(6.4 * len(groups), 6.2), dpi=110, squeeze=False)
    for ax, g in zip(axes[0], groups):
        pts = [p for p in res.points if p.group == g]
        finite = [loss for p in pts for _, loss in p.curve if loss is not None]
        cap = min(finite) * 1.6 if finite else 1.0  # exploding losses would flatten the interesting part
        for i, p in enumerate(pts):
            kept = [(lr, loss) for lr, loss in p.curve if loss is not None and loss <= cap]
            color = plt.get_cmap("tab20")(i % 20)
            ax.plot([lr for lr, _ in kept], [loss for _, loss in kept], "-", color=color, lw=2.2 if p.base else 1.0,
                    label=f"{_short_arch(p.arch)} (s = {p.lr_scale:.2f})" + (" base" if p.base else ""))
            ax.axvline(p.measured_lr, color=color, lw=0.6, ls=":")
        ax.set_xscale("log")
        log_ticks(ax.xaxis)
        ax.set_xlabel("learning rate  (dotted: measured maximal LR)")
        ax.set_ylabel("final training loss, mean over seeds (nats)")
        ax.set_title(f"{title}: {g}", fontsize=9)
        if pts:  # below the axes: the curves fill the panel
            ax.legend(fontsize=6, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path
