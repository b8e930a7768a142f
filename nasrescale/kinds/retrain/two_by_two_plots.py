"""The 2x2 section's figure: each effect's gain with its 95% CI, and its tau(A, B) with its CI
beside the two arms' seed-noise taus on the same cells (rows of
:func:`~nasrescale.kinds.retrain.effects.effect_rows`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np
from matplotlib.figure import Figure

from ...ranking.bands import MIN_TOPK_ROWS
from ...report.common.figure_output import save_png

__all__ = ["effects_plot"]


def _errors(values: Sequence[float], cis: Sequence[Any]) -> np.ndarray:
    """Asymmetric error bars (2 x n) from CIs; a missing CI, or one that misses its estimate
    (BCa can), gives a zero-length side."""
    low = [max(0.0, v - ci[0]) if ci else 0.0 for v, ci in zip(values, cis)]
    high = [max(0.0, ci[1] - v) if ci else 0.0 for v, ci in zip(values, cis)]
    return np.array([low, high])


def _ci(row: dict[str, Any], key: str) -> Any:
    """The row's CI under ``key``, or None below :data:`MIN_TOPK_ROWS` cells (as the table shows it)."""
    return row.get(key) if (row.get("n") or 0) >= MIN_TOPK_ROWS else None


def effects_plot(rows: Sequence[dict[str, Any]], path: Path) -> Path:
    """Two panels sharing the effects as rows (top to bottom in ``rows``' order): left, the gain
    B - A in points with its 95% CI and a line at 0; right, tau(A, B) with its CI, and the
    seed-noise tau of A and of B as open markers (rows without a number are left blank). A row
    on fewer than :data:`MIN_TOPK_ROWS` cells is drawn without its CIs."""
    rows = [r for r in rows if r.get("gain") is not None]
    pos = np.arange(len(rows))[::-1]
    labels = [f"{r['effect']}\n{r['b']} - {r['a']} (n = {r['n']})" for r in rows]
    fig = Figure(figsize=(10.0, 1.0 + 0.62 * max(1, len(rows))))
    gain_ax, tau_ax = fig.subplots(1, 2, sharey=True, gridspec_kw={"width_ratios": [1.1, 1.0]})
    gains = [float(r["gain"]) for r in rows]
    gain_ax.errorbar(gains, pos, xerr=_errors(gains, [_ci(r, "gain_ci") for r in rows]), fmt="o", color="tab:blue",
                     capsize=3)
    gain_ax.axvline(0, color="black", lw=0.8, ls="--")
    gain_ax.set_yticks(pos, labels, fontsize=7)
    gain_ax.set_xlabel("gain B - A (accuracy points, 95% CI)")
    tau_rows = [(p, r) for p, r in zip(pos, rows) if r.get("kendall_tau") is not None]
    if tau_rows:
        taus = [float(r["kendall_tau"]) for _, r in tau_rows]
        tau_ax.errorbar(taus, [p for p, _ in tau_rows], xerr=_errors(taus, [_ci(r, "kendall_tau_ci") for _, r in tau_rows]),
                        fmt="o", color="tab:blue", capsize=3, label="tau(A, B)")
        for key, marker, name in (("seed_tau_a", "s", "seed tau A"), ("seed_tau_b", "D", "seed tau B")):
            seed = [(p, r[key]) for p, r in tau_rows if r.get(key) is not None]
            if seed:
                tau_ax.plot([s for _, s in seed], [p for p, _ in seed], marker, mfc="none", color="tab:gray",
                            label=name)
        tau_ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    tau_ax.set_xlabel("Kendall tau (95% CI; open: seed 0 vs 1 of each arm)")
    for ax in (gain_ax, tau_ax):
        ax.grid(alpha=0.3, axis="x")
    fig.suptitle("The 2x2: each effect B - A on the cells both arms finished", fontsize=10)
    fig.tight_layout()
    return save_png(fig, path)
