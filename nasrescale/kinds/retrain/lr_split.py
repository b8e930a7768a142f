"""A protocol pair's comparison split by the learning rate B used against A's fixed one.

A path-depth protocol gives every cell its own LR; the benchmark's protocol gives all of them
one (NB201: 0.1). Where B's LR is close to A's the two protocols differ mostly in the init;
where it is far below, in the LR too. :func:`lr_split` compares the pair separately on the cells
whose B-LR is at or above A's and on those below it, each with the seed noise of both
protocols on the same cells, so that a ranking change can be placed where it happens.

>>> lrs = pd.Series({"c1": 0.05, "c2": 0.2, "c3": 0.1})
>>> lr_groups(lrs, 0.1)
{'at or above': ['c2', 'c3'], 'below': ['c1']}
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd

from ...ranking.compare import compare
from ...ranking.sources import Source
from ...ranking.text import fmt
from ...store.read import StoreData
from ...report.common.markdown import md_table

__all__ = ["protocol_lrs", "fixed_lr", "lr_groups", "lr_split", "lr_split_lines"]


def protocol_lrs(store: StoreData, label: str) -> pd.Series:
    """Per architecture, the LR protocol ``label`` trained it with (median over its runs)."""
    jobs = store.jobs[store.jobs["protocol"] == label]
    return jobs.groupby("arch")["lr"].median().dropna()


def fixed_lr(store: StoreData, label: str) -> float | None:
    """The one LR ``label`` used for every cell, or ``None`` if its LRs differ (or none is known)."""
    lrs = protocol_lrs(store, label)
    return float(lrs.iloc[0]) if len(lrs) and lrs.nunique() == 1 else None


def lr_groups(lrs: pd.Series, reference_lr: float) -> dict[str, list[str]]:
    """The cells at or above ``reference_lr`` and those below it (each in index order)."""
    return {"at or above": [a for a, v in lrs.items() if v >= reference_lr],
            "below": [a for a, v in lrs.items() if v < reference_lr]}


def _only(source: Source, archs: list[str]) -> Source:
    return dataclasses.replace(source, runs=source.runs[source.runs["arch"].isin(archs)])


def lr_split(store: StoreData, a: Source, b: Source, n_boot: int, include_degenerate: bool) -> dict[str, Any] | None:
    """The pair compared on each LR group: ``{reference_lr, groups: {name: result}}``, or
    ``None`` when A's LR is not one fixed value or B's does not vary."""
    reference_lr, lrs = fixed_lr(store, a.label), protocol_lrs(store, b.label)
    if reference_lr is None or lrs.nunique() < 2:
        return None
    groups = {}
    for name, archs in lr_groups(lrs, reference_lr).items():
        result, _ = compare(_only(a, archs), _only(b, archs), n_boot=n_boot, include_degenerate=include_degenerate)
        groups[name] = {k: result[k] for k in ("n", "kendall_tau", "mean_diff", "ci", "seed_noise", "counts",
                                            "per_run_kendall_tau")}
    return {"reference_lr": reference_lr, "lr_min": float(lrs.min()), "lr_max": float(lrs.max()), "groups": groups}


def _noise(result: dict, side: str) -> str:
    return fmt(((result.get("seed_noise") or {}).get(side) or {}).get("kendall_tau"))


def lr_split_lines(split: dict[str, Any] | None, label_a: str, label_b: str) -> list[str]:
    """The section's Markdown: one row per LR group (empty without a split)."""
    if not split:
        return []
    lr = split["reference_lr"]
    rows = []
    for name, r in split["groups"].items():
        ci_tau, ci_diff = (r["ci"] or {}).get("kendall_tau"), (r["ci"] or {}).get("mean_diff")
        rows.append([f"{label_b}'s LR {'>=' if name == 'at or above' else '<'} {lr:g}", r["n"],
                     fmt(r["kendall_tau"]) + ("" if not ci_tau else f" [{fmt(ci_tau[0])}, {fmt(ci_tau[1])}]"),
                     _noise(r, "a"), _noise(r, "b"),
                     fmt(r["mean_diff"], 2) + ("" if not ci_diff else f" [{fmt(ci_diff[0], 2)}, {fmt(ci_diff[1], 2)}]")])
    return [f"### Split by the learning rate {label_b} used", "",
            f"{label_a} trains every cell at LR {lr:g}; {label_b} at {split['lr_min']:.3g} to {split['lr_max']:.3g} "
            "by the path-depth rule. Each row compares the pair on the cells of one side of "
            f"{lr:g}, beside the seed noise of each protocol on the same cells.", "",
            *md_table(["cells", "n", f"tau {label_a},{label_b} [95% CI]", f"seed-noise tau {label_a}",
                       f"seed-noise tau {label_b}", "mean diff (B - A) [95% CI]"], rows), ""]
