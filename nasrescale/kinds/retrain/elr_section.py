"""The effective learning rates section of a retrain run's ``report.md``: per protocol, the
relative ELR spread of its runs (Mehmeti-Göpel & Wand, Def. 4.1, averaged over a run's epochs as
the paper averages it over training; each epoch's value is in the run's history,
:mod:`nasrescale.train.elr_control`) against the run's test accuracy, with the rank correlation
of the two over architectures.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...ranking.compare import isomorphic_duplicates
from ...ranking.rank import kendall_tau
from ...ranking.text import fmt
from ...store.job_status import Status
from ...store.read import StoreData
from . import tau_elr_plots
from ...report.common.markdown import md_table
from ...report.common.records import epoch_history

__all__ = ["elr_table", "elr_lines", "elr_coverage", "run_spreads"]


def _mean_spread(record_json: Any) -> float:
    """The mean over a run's epochs of its history's ``elr_spread`` (NaN without one)."""
    values = [h.elr_spread for h in epoch_history(record_json) if h.elr_spread is not None and math.isfinite(h.elr_spread)]
    return float(np.mean(values)) if values else math.nan


def run_spreads(store: StoreData, labels: list[str]) -> pd.DataFrame:
    """``protocol, arch, seed, spread, accuracy`` of every finished, trained run with recorded
    ELRs (diverged runs and degenerate cells have no meaningful spread: left out)."""
    jobs = store.jobs
    done = jobs[(jobs["status"] == Status.DONE) & ~jobs["degenerate"] & jobs["protocol"].isin(labels)]
    if "record_json" not in done or done.empty:
        return pd.DataFrame(columns=["protocol", "arch", "seed", "spread", "accuracy"])
    frame = pd.DataFrame({"protocol": done["protocol"], "arch": done["arch"], "seed": done["seed"],
                          "spread": done["record_json"].map(_mean_spread), "accuracy": done["test_accuracy"]})
    return frame.dropna(subset=["spread", "accuracy"]).reset_index(drop=True)


def elr_table(store: StoreData, labels: list[str]) -> tuple[pd.DataFrame, dict, list[list]]:
    """The runs' ELR spreads (:func:`run_spreads`), per protocol their figures for ``report.json``
    and the rows of the table (empty without recorded ELRs)."""
    runs = run_spreads(store, labels)
    family = store.record.family_or("nb201")
    numbers: dict[str, dict] = {}
    rows: list[list] = []
    for label in labels if not runs.empty else []:
        mine = runs[runs["protocol"] == label]
        if mine.empty:
            continue
        per_arch = mine.groupby("arch")[["spread", "accuracy"]].mean()
        per_arch = per_arch.drop(index=list(isomorphic_duplicates(list(per_arch.index), family)))  # each class once
        tau = kendall_tau(per_arch["spread"], per_arch["accuracy"]) if len(per_arch) >= 3 else None
        numbers[label] = {"runs": len(mine), "used": [[a, int(sd)] for a, sd in zip(mine["arch"], mine["seed"])],
                          "median_spread": float(mine["spread"].median()),
                          "mean_accuracy": float(mine["accuracy"].mean()), "kendall_tau_spread_accuracy": tau}
        rows.append([label, len(mine), fmt(mine["spread"].median(), 3), fmt(mine["spread"].min(), 3),
                     fmt(mine["spread"].max(), 3), fmt(mine["accuracy"].mean(), 2), fmt(tau)])
    return runs, numbers, rows


def _span(times: pd.Series) -> str:
    return f"{str(times.min())[:16]} to {str(times.max())[:16]} UTC"


def elr_coverage(store: StoreData, labels: list[str], runs: pd.DataFrame) -> str:
    """Which runs the ELR section uses: per protocol how many of its finished runs recorded ELR
    spreads, and when those and the others finished (empty when every finished run did)."""
    jobs = store.jobs
    done = jobs[(jobs["status"] == Status.DONE) & ~jobs["degenerate"] & jobs["protocol"].isin(labels)]
    used = done.merge(runs[["protocol", "arch", "seed"]], on=["protocol", "arch", "seed"], how="left", indicator=True)
    with_elr = used["_merge"] == "both"
    if with_elr.all() or not with_elr.any():
        return ""
    counts = ", ".join(f"{label} {int((with_elr & (used['protocol'] == label)).sum())} of "
                       f"{int((used['protocol'] == label).sum())}" for label in labels)
    return (f"It uses the {int(with_elr.sum())} of {len(used)} finished runs whose records hold ELR spreads ({counts}; "
            f"{used.loc[with_elr, 'arch'].nunique()} cells): those that finished {_span(used.loc[with_elr, 'updated_at'])}"
            f". The other {int((~with_elr).sum())}, finished {_span(used.loc[~with_elr, 'updated_at'])}, recorded none, "
            "so this section's cells are not the other sections' cells; `report.json` lists its runs.")


def elr_lines(runs: pd.DataFrame, labels: list[str], rows: list[list], out: Path,
              store: StoreData | None = None) -> list[str]:
    """``## Effective learning rates``: ELR spread per protocol against accuracy (table and
    scatter, from :func:`elr_table`), and which runs it uses (:func:`elr_coverage`). Nothing
    when no run recorded ELRs."""
    if runs.empty:
        return []
    coverage = elr_coverage(store, labels, runs) if store is not None else ""
    fig = tau_elr_plots.spread_plot(runs, labels, out / "elr_spread.png")
    return ["## Effective learning rates", "",
            "Relative ELR spread S_rel (Mehmeti-Göpel & Wand, Def. 4.1: the standard deviation over the "
            "scale-invariant layers of ln ELR), measured at the last step of each epoch and averaged over the "
            "run, against the run's test accuracy. Tau: Kendall tau between spread and accuracy over the "
            "architectures (negative: a lower spread goes with a higher accuracy).", "",
            *([coverage, ""] if coverage else []),
            *md_table(["protocol", "runs", "median spread", "min", "max", "mean accuracy", "tau (spread, acc.)"],
                      rows), "", f"![ELR spread vs accuracy]({fig.name})", ""]
