"""``## Across committed runs``: where another retrain run under the same results folder trained
some of this run's cells, Kendall tau between the same protocol's rankings in the two runs (on
the cells both rank, with n), e.g. the CPU study's ``default`` against the GPU slice's.

Two runs at different budgets rank the same cells; how far they agree says how far a claim made
at one budget carries to the other. Trend, calibration and LR-validation runs are not compared.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import NasRescaleError
from ...ranking.bands import MIN_TOPK_ROWS
from ...ranking.compare import compare
from ...ranking.sources import store_source
from ...ranking.text import fmt
from ...store.read import read_store
from ...report.common.page import Computed
from .plan import KIND
from .summary import RunSummary

__all__ = ["CrossRun", "cross_run_rows"]

_STORES = ("store.sqlite", "store.sqlite.gz")


def _other_runs(run_dir: Path) -> list[Path]:
    """Run folders beside ``run_dir`` holding a store."""
    return sorted(p for p in run_dir.parent.iterdir()
                  if p.is_dir() and p.resolve() != run_dir.resolve() and any((p / s).is_file() for s in _STORES))


def cross_run_rows(run: RunSummary) -> list[dict[str, Any]]:
    """Per other retrain run and protocol label both have: ``run``, ``protocol``, ``n`` (the cells
    both rank) and ``kendall_tau`` (``None`` below :data:`MIN_TOPK_ROWS` cells)."""
    rows = []
    for other in _other_runs(run.run_dir):
        try:
            store = read_store(other / "store.sqlite")
        except NasRescaleError:
            continue
        if store.record.kind != KIND:  # another study only
            continue
        for label in run.compared:
            if label not in store.protocols or run.sources[label].runs.empty:
                continue
            result, _ = compare(store_source(store, label, f"{other.name}:{label}"), run.sources[label], n_boot=0)
            if result["n"]:
                rows.append({"run": other.name, "protocol": label, "n": result["n"],
                             "kendall_tau": result["kendall_tau"] if result["n"] >= MIN_TOPK_ROWS else None})
    return rows


class CrossRun:
    """The cross-run line (nothing where no other committed run shares cells with this one)."""

    key = "cross_run"

    def compute(self, run: RunSummary) -> Computed:
        rows = cross_run_rows(run)
        return Computed(rows or None)

    def render(self, run: RunSummary, computed: Computed) -> list[str]:
        if not computed.numbers:
            return []
        parts = [f"`{r['protocol']}` here vs `{r['protocol']}` in [{r['run']}](../{r['run']}/report.md): tau "
                 + (f"{fmt(r['kendall_tau'])}" if r["kendall_tau"] is not None else "- (too few cells)")
                 + f" (n = {r['n']})" for r in computed.numbers]
        return ["## Across committed runs", "",
                "The same protocol's ranking of the cells two runs share, each at its own budget, on the cells this "
                "run evaluates: " + "; ".join(parts) + ".", ""]
