"""The training-curves section of ``report.md``: a few jobs' per-epoch curves (best, median and
worst architecture, the lowest seed of each protocol, one diverged job if any)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ..store.job_status import FINAL, Status
from ..store.read import StoreData, read_curves
from . import plots

__all__ = ["curve_jobs", "curves_lines"]

_ROLES = ("best", "median", "worst")


def curve_jobs(store: StoreData, labels: list[str], names: dict[str, str],
                limit_archs: int = 3) -> dict[str, dict[str, Any]]:
    """Job key -> ``{role, arch, protocol, seed, legend}`` for a few jobs: the best, median and
    worst architecture (by the mean accuracy under the last protocol with results), lowest seed
    of each protocol, plus one diverged job if any. The legend names the role and the arch's
    short name (``names``)."""
    jobs = store.jobs[store.jobs["status"].isin(FINAL) & ~store.jobs["degenerate"]
                      & store.jobs["protocol"].isin(labels)]  # not the LR search's runs
    if jobs.empty:
        return {}
    means = pd.Series(dtype=float)
    for label in reversed(labels):  # the last protocol with finished jobs
        means = jobs[jobs["protocol"] == label].groupby("arch")["test_accuracy"].mean().dropna().sort_values()
        if len(means):
            break
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
                picked[rows["key"].iloc[0]] = {"role": role, "arch": arch, "protocol": label, "seed": seed,
                                               "legend": f"{role}: {names.get(arch, arch)} / {label} / seed {seed}"}
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
    return ["## Training curves", "", f"![training curves]({fig.name})", "",
            "Best, median and worst architecture by mean test accuracy (under the last protocol "
            "with results), the lowest seed of each protocol.", ""]
