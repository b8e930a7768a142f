"""A proxy calibration read once from its store: :class:`CalibrationSummary`, one
:class:`Candidate` per candidate budget (a protocol label of the store).

Per candidate: its runs, accuracies, seconds per run and the CPU-hours to rank the cells once
(one seed); against the reference (where there is one and the candidate has finished runs, its
:class:`Ranked` figures): Kendall tau and Spearman rho of its mean-over-seeds accuracy with
paired-bootstrap CIs, one seed's tau, the tau between its seeds and the top-K% taus.
``report.json`` is :meth:`CalibrationSummary.to_json`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ...ranking.bands import MIN_TOPK_ROWS
from ...ranking.compare import compare, per_seed
from ...ranking.rank import kendall_tau
from ...ranking.sources import load_source, store_source
from ...store.job_status import FINAL
from ...store.read import StoreData, read_store
from ...report.common.records import cpus_per_run
from ...report.common.reference import protocol_order, reference_spec
from ...report.common.typed import ABSENT, Absent, Plain

__all__ = ["GOAL_TAU", "Ranked", "Candidate", "CalibrationSummary", "candidate_stats", "summarize_calibration"]

#: the proxy validity a budget should reach to stand in for the benchmark's protocol
GOAL_TAU = 0.6


@dataclass(frozen=True)
class Ranked(Plain):
    """A candidate's figures against the reference (top-K% taus ``None`` below
    :data:`~nasrescale.ranking.bands.MIN_TOPK_ROWS` cells)."""

    n: int
    kendall_tau: float | None
    spearman: float | None
    tau_ci: list[float] | None
    rho_ci: list[float] | None
    per_seed_tau: float | None
    seed_vs_seed_tau: float | None
    top50_tau: float | None
    top20_tau: float | None
    tau_per_cpu_hour: float | None


@dataclass(frozen=True)
class Candidate(Plain):
    """One candidate budget; ``ranked``: its figures against the reference (``None``: no reference
    or no finished run); ``budget``: its stored budget table; ``source``: ``RUN:LABEL`` where
    another run's report quotes it."""

    label: str
    runs_done: int
    runs: int
    cells: int
    seeds: list[int]
    mean_accuracy: float | None
    min_accuracy: float | None
    max_accuracy: float | None
    seconds_per_run: float | None
    cpus_per_run: float
    cpu_hours_per_ranking: float | None
    ranked: Ranked | None = None
    budget: dict[str, Any] | Absent = ABSENT
    source: str | Absent = ABSENT

    @property
    def kendall_tau(self) -> float | None:
        """Its tau against the reference (``None``: not ranked)."""
        return None if self.ranked is None else self.ranked.kendall_tau

    def to_plain(self) -> dict[str, Any]:
        """Its ``report.json`` entry: the run figures, the ranked ones beside them, then the budget."""
        head = {f.name: getattr(self, f.name) for f in fields(self)[:11]}
        tail = {k: v for k, v in (("budget", self.budget), ("source", self.source)) if v is not ABSENT}
        return {**head, **(self.ranked.to_plain() if self.ranked is not None else {}), **tail}


def _topk_tau(result: Mapping[str, Any], k: int) -> float | None:
    """Tau within the reference's top ``k``%, ``None`` where that subset has fewer than
    :data:`~nasrescale.ranking.bands.MIN_TOPK_ROWS` cells (not read as a figure)."""
    for row in result.get("topk") or []:
        if row.get("k_percent") == k:
            return row.get("kendall_tau") if row.get("n", 0) >= MIN_TOPK_ROWS else None
    return None


def _per_seed_tau(source: Any, reference: pd.Series) -> float | None:
    """Mean over seeds of the tau of one seed's ranking against the reference (a single seed's
    proxy validity, what a one-seed study gets)."""
    wide = per_seed(source)
    taus = [kendall_tau(wide[s].reindex(reference.index), reference) for s in wide.columns]
    taus = [t for t in taus if t is not None]
    return float(np.mean(taus)) if taus else None


def _ranked(store: StoreData, label: str, reference: Any, hours: float | None, n_boot: int) -> Ranked:
    source = store_source(store, label, label)
    result, merged = compare(source, reference, n_boot=n_boot, topk_by="second")
    noise = (result.get("seed_noise") or {}).get("a") or {}
    tau = result.get("kendall_tau")
    return Ranked(n=result["n"], kendall_tau=tau, spearman=result.get("spearman"),
                  tau_ci=(result.get("ci") or {}).get("kendall_tau"), rho_ci=(result.get("ci") or {}).get("spearman"),
                  per_seed_tau=_per_seed_tau(source, merged["b"]), seed_vs_seed_tau=noise.get("kendall_tau"),
                  top50_tau=_topk_tau(result, 50), top20_tau=_topk_tau(result, 20),
                  tau_per_cpu_hour=tau / hours if tau is not None and hours else None)


def candidate_stats(store: StoreData, label: str, reference: Any, cpus: float, n_boot: int = 1000) -> Candidate:
    """One candidate's figures (see the module); ``reference`` is a loaded source or ``None``."""
    jobs = store.jobs[store.jobs["protocol"] == label]
    done = jobs[jobs["status"].isin(FINAL)]
    seconds = done["wall_time_s"].dropna().to_numpy(float)
    cells = int(done["arch"].nunique())
    per_run = float(np.median(seconds)) if seconds.size else None
    hours = per_run * cpus / 3600 * cells if per_run is not None else None  # one seed of every cell
    accuracy = done["test_accuracy"]
    return Candidate(label=label, runs_done=len(done), runs=len(jobs), cells=cells,
                     seeds=sorted(int(s) for s in done["seed"].dropna().unique()),
                     mean_accuracy=float(accuracy.mean()) if len(done) else None,
                     min_accuracy=float(accuracy.min()) if len(done) else None,
                     max_accuracy=float(accuracy.max()) if len(done) else None,
                     seconds_per_run=per_run, cpus_per_run=cpus, cpu_hours_per_ranking=hours,
                     ranked=None if reference is None or not len(done) else
                     _ranked(store, label, reference, hours, n_boot))


@dataclass(frozen=True)
class CalibrationSummary:
    """A calibration run, read once: its candidates (budget order), reference and goal."""

    run_dir: Path
    store: StoreData
    name: str
    reference: str | None
    candidates: tuple[Candidate, ...]
    goal_tau: float = GOAL_TAU
    n_boot: int = field(default=1000)

    @property
    def ranked(self) -> list[Candidate]:
        """The candidates with a tau against the reference."""
        return [c for c in self.candidates if c.kendall_tau is not None]

    def to_json(self) -> dict[str, Any]:
        """``report.json``: the run, its reference and goal, and every candidate."""
        return {"name": self.name, "reference": self.reference, "goal_tau": self.goal_tau,
                "candidates": [c.to_plain() for c in self.candidates]}


def summarize_calibration(run_dir: Path, n_boot: int = 1000) -> CalibrationSummary:
    """Read the calibration in ``run_dir`` (its ``store.sqlite``) into its summary."""
    store = read_store(Path(run_dir) / "store.sqlite")
    spec, nats = reference_spec(store.record)
    reference = load_source(spec, nats_file=nats) if spec else None
    cpus = cpus_per_run(store)
    budgets = {name: t.to_json() for name, t in store.record.budgets.items()}
    labels = [p for p in protocol_order(store) if p in budgets] or protocol_order(store)
    candidates = tuple(replace(candidate_stats(store, label, reference, cpus, n_boot), budget=budgets.get(label, {}))
                       for label in labels)
    return CalibrationSummary(Path(run_dir), store, store.record.name or Path(run_dir).name, spec, candidates,
                              n_boot=n_boot)
