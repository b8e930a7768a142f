"""Two sections of ``report.md`` for runs of several protocols (``pipelines/nb201_protocols_cpu.toml``):

* **rank agreement between protocols**: Kendall tau between every pair of protocols (and each
  against the reference) in one matrix, the pairwise sections' numbers side by side, the
  diagonal the seed-noise tau where a protocol has several seeds;
* **effective learning rates**: per protocol, the relative ELR spread of its runs (Mehmeti-Göpel &
  Wand, Def. 4.1, averaged over a run's epochs as the paper averages it over training; each
  epoch's value is in the run's history, :mod:`nasrescale.train.elr_control`) against the
  run's test accuracy, with the rank correlation of the two over architectures.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..ranking.compare import isomorphic_duplicates
from ..ranking.rank import kendall_tau
from ..ranking.text import fmt
from ..store.job_status import Status
from ..store.read import StoreData
from . import protocol_plots
from .markdown import md_table

__all__ = ["tau_matrix", "tau_matrix_lines", "elr_table", "elr_lines", "elr_coverage", "run_spreads"]


def _diagonal(label: str, pairs: Mapping[str, dict]) -> float | None:
    """A protocol's seed-noise tau, read off any pair it is in (``None`` with one seed)."""
    for name, result in pairs.items():
        b, _, a = name.partition(" vs ")
        for side, who in (("a", a), ("b", b)):
            noise = (result.get("seed_noise") or {}).get(side)
            if who == label and noise:
                return noise.get("kendall_tau")
    return None


def tau_matrix(labels: list[str], pairs: Mapping[str, dict], reference: Mapping[str, dict],
               ref_label: str | None) -> dict | None:
    """The tau matrix from the pairwise results (``"B vs A"`` -> result, as
    :func:`~nasrescale.report.summary.summarize` computes them) and each protocol's result against
    the reference: ``{labels, kendall_tau, n}`` (the diagonal the seed-noise tau). ``None`` for
    fewer than 3 protocols (their one pair has its own section)."""
    if len(labels) < 3:
        return None
    names = labels + ([ref_label] if ref_label and reference else [])
    tau = pd.DataFrame(np.nan, index=names, columns=names)
    n = pd.DataFrame(0, index=names, columns=names)
    for name, result in pairs.items():
        b, _, a = name.partition(" vs ")
        for x, y in ((a, b), (b, a)):
            tau.loc[x, y], n.loc[x, y] = result.get("kendall_tau", np.nan), result.get("n", 0)
    for label, result in reference.items():
        for x, y in ((label, ref_label), (ref_label, label)):
            tau.loc[x, y], n.loc[x, y] = result.get("kendall_tau", np.nan), result.get("n", 0)
    for label in labels:
        noise = _diagonal(label, pairs)
        tau.loc[label, label] = np.nan if noise is None else noise
    return {"labels": names, "kendall_tau": tau.to_numpy().tolist(), "n": n.to_numpy().tolist()}


def tau_matrix_lines(matrix: dict | None, n_protocols: int, out: Path) -> list[str]:
    """``## Rank agreement between protocols`` of :func:`tau_matrix` (nothing for ``None``); the
    names after the first ``n_protocols`` are the reference's."""
    if matrix is None:
        return []
    names = matrix["labels"]
    tau = pd.DataFrame(matrix["kendall_tau"], index=names, columns=names, dtype=float)
    n = np.asarray(matrix["n"])[~np.eye(len(names), dtype=bool)]  # the pairs' n (the diagonal holds none)
    rows = [[x] + [("–" if x == y and pd.isna(tau.loc[x, y]) else fmt(tau.loc[x, y])) for y in names] for x in names]
    fig = protocol_plots.tau_matrix_plot(tau, out / "tau_matrix.png")
    return ["## Rank agreement between protocols", "",
            "Kendall tau of the architectures' mean accuracies between every pair of protocols"
            + (f" and against the reference {names[-1]}" if len(names) > n_protocols else "")
            + "; the diagonal is the seed-noise tau between a protocol's own seeds (– with one seed). "
            f"Pairs are ranked on the architectures both finished (n from {int(n.min())} to "
            f"{int(n.max())}); each pair's section below has its confidence interval.", "",
            *md_table(["", *names], rows), "", f"![Kendall tau between protocols]({fig.name})", ""]


def _mean_spread(record_json: Any) -> float:
    """The mean over a run's epochs of its history's ``elr_spread`` (NaN without one)."""
    try:
        history = json.loads(record_json).get("history") or []
    except (TypeError, json.JSONDecodeError, AttributeError):
        return math.nan
    values = [h["elr_spread"] for h in history if isinstance(h, dict) and isinstance(h.get("elr_spread"), (int, float))]
    values = [v for v in values if math.isfinite(v)]
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
    fig = protocol_plots.spread_plot(runs, labels, out / "elr_spread.png")
    return ["## Effective learning rates", "",
            "Relative ELR spread S_rel (Mehmeti-Göpel & Wand, Def. 4.1: the standard deviation over the "
            "scale-invariant layers of ln ELR), measured at the last step of each epoch and averaged over the "
            "run, against the run's test accuracy. Tau: Kendall tau between spread and accuracy over the "
            "architectures (negative: a lower spread goes with a higher accuracy).", "",
            *([coverage, ""] if coverage else []),
            *md_table(["protocol", "runs", "median spread", "min", "max", "mean accuracy", "tau (spread, acc.)"],
                      rows), "", f"![ELR spread vs accuracy]({fig.name})", ""]
