"""The training-curves section of ``report.md``: a few jobs' per-epoch curves (best, median and
worst architecture, the lowest seed of each protocol, one diverged job if any)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ...store.job_status import FINAL, Status
from ...store.read import StoreData, read_curves
from . import plots

__all__ = ["curve_jobs", "curves_lines"]

_ROLES = ("best", "median", "worst")


def curve_jobs(store: StoreData, labels: list[str], names: dict[str, str],
                limit_archs: int = 3) -> dict[str, dict[str, Any]]:
    """Job key -> ``{role, ranked_by, arch, protocol, seed, legend}`` for a few jobs: the best,
    median and worst architecture (by the mean accuracy under the last protocol with results,
    ``ranked_by``), lowest seed of each protocol, plus one diverged job if any. The legend names
    the role, the protocol that ranked it, the arch's short name (``names``) and its rank under
    the curve's own protocol."""
    jobs = store.jobs[store.jobs["status"].isin(FINAL) & ~store.jobs["degenerate"]
                      & store.jobs["protocol"].isin(labels)]  # not the LR search's runs
    if jobs.empty:
        return {}
    means, by = pd.Series(dtype=float), ""
    for label in reversed(labels):  # the last protocol with finished jobs
        means = jobs[jobs["protocol"] == label].groupby("arch")["test_accuracy"].mean().dropna().sort_values()
        if len(means):
            by = label
            break
    rank = {label: jobs[jobs["protocol"] == label].groupby("arch")["test_accuracy"].mean().dropna()
            .rank(ascending=False, method="min") for label in labels}  # 1 = best under that protocol
    ranked = [means.index[-1], means.index[len(means) // 2], means.index[0]] if len(means) else []
    picks: dict[str, str] = {}
    for role, arch in zip(_ROLES, ranked):
        picks.setdefault(arch, role)  # with fewer than 3 archs, one arch keeps its first role
    picked: dict[str, dict[str, Any]] = {}
    for arch, role in list(picks.items())[:limit_archs]:
        for label in labels:
            rows = jobs[(jobs["arch"] == arch) & (jobs["protocol"] == label)].sort_values("seed")
            if len(rows):
                seed = int(rows["seed"].iloc[0])
                place = rank[label].get(arch)
                where = "" if place is None else f" (rank {int(place)} of {len(rank[label])} under {label})"
                picked[rows["key"].iloc[0]] = {"role": role, "ranked_by": by, "arch": arch, "protocol": label,
                                               "seed": seed, "legend": f"{role} by {by}: {names.get(arch, arch)} / "
                                                                       f"{label}{where} / seed {seed}"}
    bad = jobs[jobs["status"] == Status.DIVERGED]
    if len(bad):
        row = bad.iloc[0]
        short = names.get(row["arch"], row["arch"])
        picked[row["key"]] = {"role": "diverged", "arch": row["arch"], "protocol": row["protocol"],
                              "seed": int(row["seed"]),
                              "legend": f"diverged: {short} / {row['protocol']} / seed {int(row['seed'])}"}
    return picked


def curves_lines(store: StoreData, picked: dict[str, dict[str, Any]], run_dir: Path) -> list[str]:
    """``## Training curves`` of the jobs :func:`curve_jobs` picked (nothing for none)."""
    if not picked:
        return []
    legends = {k: v["legend"] for k, v in picked.items()}
    fig = plots.curves_plot(read_curves(store.path, list(picked)), legends, run_dir / "curves.png")
    by = next((v["ranked_by"] for v in picked.values() if v.get("ranked_by")), "the last protocol")
    return ["## Training curves", "", f"![training curves]({fig.name})", "",
            f"Best, median and worst architecture by mean test accuracy under {by}, the lowest seed of each "
            "protocol; under another protocol the same cell may rank elsewhere, so each legend gives the cell's rank "
            "under the protocol of its curve.", ""]
