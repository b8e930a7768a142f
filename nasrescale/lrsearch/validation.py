"""Validating the LR rule: grid-searched maximal LRs against the predicted ones (paper Figs. 2, 3, 5).

An LR validation (:mod:`nasrescale.kinds.lr_validation`) grid-searches every selected
architecture's maximal LR exactly as the base-LR search does (:mod:`nasrescale.lrsearch.search`;
same grid, seeds, epochs and rule: by default the paper's argmin of the final training loss per
seed, averaged over seeds), the grid extended past an edge argmin
(:mod:`nasrescale.kinds.lr_validation.grid`). Its stored plan (meta ``validation_plan``: per
group and architecture its scale, kernel factor and job keys) is all :func:`analyze` needs beside
the job rows: each architecture's measured LR (:func:`selections`) against the predicted
``base_lr * lr_scale(arch) * kernel_factor(arch)`` (paper eqs. 8, 9); the report
(:func:`nasrescale.kinds.lr_validation.write.write_validation_report`) adds Pearson r on log LR and
on LR, Spearman rho, log-log slopes with CIs (:mod:`nasrescale.lrsearch.rule_stats`) and the
predicted-vs-measured plot with y = x and per-seed error bars.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..errors import DataError
from .search import losses_from_rows
from .select import select_lr
from .rule_stats import correlations

__all__ = ["analyze", "correlations", "selections"]

def selections(plan: dict[str, Any], rows: Sequence[dict[str, Any]], partial: bool) -> tuple[dict, int]:
    """``{(group, arch): Selection}`` of every finished non-degenerate architecture, and how many were skipped."""
    out: dict[tuple[str, str], Any] = {}
    skipped = 0
    for label, group in plan["groups"].items():
        for m in group["archs"]:
            if m["degenerate"]:
                continue
            try:
                losses = losses_from_rows([(lr, key) for lr, key in m["runs"]], rows, plan.get("loss", "epoch"))
                out[(label, m["arch"])] = select_lr(losses, plan["rel_tol"], plan.get("rule", "within_tol"))
            except DataError:
                if not partial:
                    raise
                skipped += 1
    return out, skipped


def _point(label: str, group: dict[str, Any], m: dict[str, Any], sel: Any, base_lr: float, base: bool) -> dict:
    """One measured-vs-predicted point (see :func:`analyze`)."""
    seeds = [lr for lr in sel.per_seed if lr is not None] or [sel.chosen_lr]
    return {"group": label, "kernel": group["kernel"], "arch": m["arch"], "lr_scale": m["lr_scale"],
            "kernel_factor": m["kernel_factor"], "sum_l3": m.get("sum_l3"), "measured_lr": sel.chosen_lr,
            "predicted_lr": base_lr * m["lr_scale"] * m["kernel_factor"], "edge": sel.edge, "base": base,
            "seed_lrs": list(sel.per_seed), "seed_min": min(seeds), "seed_max": max(seeds),
            "curve": [[lr, sel.mean_loss[lr]] for lr in sel.grid]}  # mean over seeds; None: a seed diverged


def _stats(points: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """:func:`correlations` of ``points``, with and without the base architecture, and (where some
    measured LR is still at its grid's edge, so only bounds it) ``interior``: without the base
    and without those points."""
    def corr(pts: Sequence[dict[str, Any]]) -> dict[str, Any]:
        l3 = [p["sum_l3"] for p in pts]
        return correlations([p["predicted_lr"] for p in pts], [p["measured_lr"] for p in pts],
                            None if None in l3 else l3)

    out = {**corr(points), "without_base": corr([p for p in points if not p["base"]])}
    if any(p["edge"] for p in points):
        out["interior"] = corr([p for p in points if not p["base"] and not p["edge"]])
    return out


def analyze(plan: dict[str, Any], rows: Sequence[dict[str, Any]], partial: bool = True) -> dict[str, Any]:
    """Measured vs predicted maximal LR per architecture, and the statistics.

    Args:
        plan: the stored plan (:func:`nasrescale.kinds.lr_validation.grid.validation_plan`, extended
            by :func:`~nasrescale.kinds.lr_validation.grid.extend_plan`).
        rows: the store's job rows (with ``train_loss_tail`` for ``loss = "tail"``:
            :meth:`~nasrescale.store.sqlite_store.Store.rows_with_tail`).
        partial: skip architectures whose runs are not all finished (else raise).

    Returns:
        ``{"points": [...], "overall": stats, "groups": {label: stats}, "skipped": n, ...}``;
        stats are :func:`correlations` with a ``without_base`` entry; each point has group,
        kernel, arch, lr_scale, kernel_factor, sum_l3, measured_lr (the rule's choice: with
        ``argmin``, the geometric mean of ``seed_lrs``), seed_lrs, seed_min, seed_max,
        predicted_lr (the base architecture's measured LR x lr_scale x kernel_factor), edge,
        base and curve (``[grid LR, mean final loss or None]``).
    """
    measured, skipped = selections(plan, rows, partial)
    points = []
    for label, group in plan["groups"].items():
        base_sel = measured.get((group["base_group"], plan["base_arch"]))
        for m in group["archs"]:
            sel = measured.get((label, m["arch"]))
            if sel is not None and base_sel is not None:
                points.append(_point(label, group, m, sel, base_sel.chosen_lr, m["arch"] == plan["base_arch"]))
    return {"points": points, "overall": _stats(points),
            "groups": {label: _stats([p for p in points if p["group"] == label]) for label in plan["groups"]},
            "skipped": skipped, "rule": plan.get("rule", "within_tol"), "loss": plan.get("loss", "epoch"),
            "degenerate": sum(m["degenerate"] for g in plan["groups"].values() for m in g["archs"]),
            "at_edge": sum(p["edge"] is not None for p in points)}
