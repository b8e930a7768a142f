"""The report of a proxy calibration (``kind = "calibration"``): how well each candidate budget
ranks the cells like the reference, what it costs, and how much of it is seed noise.

Per candidate (a protocol label of the store): Kendall tau, Spearman rho and the top-K tau
curve of its mean-over-seeds accuracy against the reference (``nb201:cifar10``: the benchmark's
200-epoch figures), with paired-bootstrap CIs; the tau between its seeds (the noise floor: a
budget cannot rank the cells more consistently than it ranks them against itself); seconds per
run on the machine that ran it and the CPU-hours to rank the cells once (one seed), and tau per
CPU-hour. Figures: tau against cost, and each candidate's accuracy against the reference.

Everything is recomputed from the store (``nasrescale report NAME``); ``nasrescale rank
NAME:LABEL nb201:cifar10`` gives any one candidate's full table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...errors import NasRescaleError
from ...fileio import atomic_write_text
from ...ranking.bands import MIN_TOPK_ROWS
from ...ranking.compare import compare, per_seed
from ...ranking.rank import kendall_tau
from ...ranking.sources import load_source, store_source
from ...ranking.text import fmt, to_json
from ...store.job_status import FINAL
from ...store.read import StoreData, read_store
from .plots import accuracy_grid, tau_cost_plot
from ..common.method import method_section
from ..common.provenance import provenance_lines
from ..common.records import cpus_per_run
from ..common.reference import protocol_order, reference_spec

__all__ = ["scope_lines", "candidate_stats", "proxy_validity", "calibration_text", "write_calibration_report", "GOAL_TAU"]

#: the proxy validity a budget should reach to stand in for the benchmark's protocol
GOAL_TAU = 0.6
#: top-K% points reported beside the full tau
_KS = (50, 20)


def _candidates(store: StoreData) -> dict[str, dict[str, Any]]:
    return {name: dict(table) for name, table in store.record.budgets.items() if isinstance(table, dict)}


def _topk_tau(result: dict[str, Any], k: int) -> float | None:
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


def candidate_stats(store: StoreData, label: str, reference: Any, cpus: float, n_boot: int = 1000) -> dict[str, Any]:
    """One candidate's figures (see the module docstring); ``reference`` is a loaded source or ``None``."""
    jobs = store.jobs[store.jobs["protocol"] == label]
    done = jobs[jobs["status"].isin(FINAL)]
    seconds = done["wall_time_s"].dropna().to_numpy(float)
    cells = int(done["arch"].nunique())
    out: dict[str, Any] = {"label": label, "runs_done": len(done), "runs": len(jobs), "cells": cells,
                           "seeds": sorted(int(s) for s in done["seed"].dropna().unique()),
                           "mean_accuracy": float(done["test_accuracy"].mean()) if len(done) else None,
                           "min_accuracy": float(done["test_accuracy"].min()) if len(done) else None,
                           "max_accuracy": float(done["test_accuracy"].max()) if len(done) else None,
                           "seconds_per_run": float(np.median(seconds)) if seconds.size else None,
                           "cpus_per_run": cpus}
    per_seed = out["seconds_per_run"] * cpus / 3600 if seconds.size else None
    out["cpu_hours_per_ranking"] = per_seed * cells if per_seed is not None else None  # one seed of every cell
    if reference is None or not len(done):
        return out
    source = store_source(store, label, label)
    result, merged = compare(source, reference, n_boot=n_boot, topk_by="second")
    noise = (result.get("seed_noise") or {}).get("a") or {}
    out.update({"n": result["n"], "kendall_tau": result.get("kendall_tau"), "spearman": result.get("spearman"),
                "tau_ci": (result.get("ci") or {}).get("kendall_tau"),
                "rho_ci": (result.get("ci") or {}).get("spearman"),
                "per_seed_tau": _per_seed_tau(source, merged["b"]),
                "seed_vs_seed_tau": noise.get("kendall_tau"),
                **{f"top{k}_tau": _topk_tau(result, k) for k in _KS}})
    hours = out["cpu_hours_per_ranking"]
    tau = out["kendall_tau"]
    out["tau_per_cpu_hour"] = tau / hours if tau is not None and hours else None
    return out


def _analysis(run_dir: Path, n_boot: int) -> tuple[StoreData, dict[str, Any]]:
    store = read_store(run_dir / "store.sqlite")
    spec, nats = reference_spec(store.record)
    reference = load_source(spec, nats_file=nats) if spec else None
    cpus = cpus_per_run(store)
    budgets = _candidates(store)
    labels = [p for p in protocol_order(store) if p in budgets] or protocol_order(store)
    rows = [{**candidate_stats(store, label, reference, cpus, n_boot), "budget": budgets.get(label, {})}
            for label in labels]
    return store, {"name": store.record.name or run_dir.name, "reference": spec, "goal_tau": GOAL_TAU,
                   "candidates": rows}


def _budget_text(budget: dict[str, Any]) -> str:
    keys = (("width", "C"), ("cells", "N"), ("epochs", "ep"), ("train_subset", "img"), ("resolution", "px"),
            ("batch_size", "bs"))
    return " ".join(f"{short}={budget[k]}" for k, short in keys if k in budget)


def _ci_text(ci: Any) -> str:
    return f"[{fmt(ci[0], 2)}, {fmt(ci[1], 2)}]" if isinstance(ci, (list, tuple)) and len(ci) == 2 else "-"


def _table(rows: list[dict[str, Any]]) -> list[str]:
    head = ["candidate", "budget", "runs", "acc % (min-max)", "tau vs ref [95% CI]", "rho", "top-50% tau",
            "top-20% tau", "one seed's tau", "seed-vs-seed tau", "s/run", "CPU-h/ranking", "tau per CPU-h"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        acc = (f"{r['mean_accuracy']:.1f} ({r['min_accuracy']:.1f}-{r['max_accuracy']:.1f})"
               if r.get("mean_accuracy") is not None else "-")
        lines.append("| " + " | ".join([
            f"`{r['label']}`", _budget_text(r.get("budget", {})), f"{r['runs_done']}/{r['runs']}", acc,
            f"{fmt(r.get('kendall_tau'))} {_ci_text(r.get('tau_ci'))}", fmt(r.get("spearman")),
            fmt(r.get("top50_tau")), fmt(r.get("top20_tau")), fmt(r.get("per_seed_tau")),
            fmt(r.get("seed_vs_seed_tau")), fmt(r.get("seconds_per_run"), 0), fmt(r.get("cpu_hours_per_ranking"), 2),
            fmt(r.get("tau_per_cpu_hour"), 2)]) + " |")
    return lines


def _verdict(rows: list[dict[str, Any]]) -> list[str]:
    ranked = [r for r in rows if r.get("kendall_tau") is not None]
    if not ranked:
        return ["No candidate has results yet."]
    best = max(ranked, key=lambda r: r["kendall_tau"])
    thrifty = max((r for r in ranked if r.get("tau_per_cpu_hour") is not None), key=lambda r: r["tau_per_cpu_hour"],
                  default=None)
    met = [r["label"] for r in ranked if r["kendall_tau"] >= GOAL_TAU]
    lines = [f"- Highest tau against the reference: `{best['label']}` ({fmt(best['kendall_tau'])}, "
             f"seed-vs-seed {fmt(best.get('seed_vs_seed_tau'))})."]
    if thrifty is not None:
        lines.append(f"- Most tau per CPU-hour: `{thrifty['label']}` ({fmt(thrifty['tau_per_cpu_hour'], 2)}).")
    lines.append(f"- Goal tau >= {GOAL_TAU}: " + (f"met by {', '.join(f'`{m}`' for m in met)}." if met else
                                                 "met by no candidate; the best one found is the highest tau above."))
    return lines


def scope_lines(rows: list[dict[str, Any]], store: StoreData) -> list[str]:
    """What the calibration validated, and what it did not: its protocol(s), and that the best
    candidate was chosen on the cells it is measured on (an in-sample figure)."""
    ranked = [r for r in rows if r.get("kendall_tau") is not None]
    if not ranked:
        return []
    names = sorted({p.name or label for label, p in store.record.protocols.items()})
    cells = max(int(r.get("n") or 0) for r in ranked)
    which = f"the `{'`, `'.join(names)}` protocol" if names else "one protocol"
    return ["**What this validates.** " + f"Every candidate trains {which} only: a protocol with other "
            f"learning rates or another init may rank the cells differently at the same budget, and this run does "
            f"not measure that. The highest tau is the best of {len(ranked)} budgets on the {cells} cells it is "
            f"measured on (a selection, so an in-sample figure that tends to overstate); a study that uses the "
            f"budget measures it out of sample (its default protocol against the reference, on its own cells)."]


def calibration_text(run_dir: Path, n_boot: int = 1000) -> str:
    """The candidates' table as text (what ``nasrescale run`` prints at the end)."""
    _, res = _analysis(Path(run_dir), n_boot)
    return "\n".join([f"{res['name']}: proxy validity against {res['reference'] or 'no reference'}", ""]
                     + _table(res["candidates"]) + [""] + _verdict(res["candidates"]))


def write_calibration_report(run_dir: Path, n_boot: int = 1000) -> Path:
    """Write ``run_dir/report.md`` with ``report.json`` and its figures; return the report's path."""
    run_dir = Path(run_dir)
    store, res = _analysis(run_dir, n_boot)
    rows = res["candidates"]
    lines = [f"# Proxy calibration: {res['name']}", "",
             store.record.description, "",
             f"Each candidate budget trains the same cells under the benchmark's default protocol; its "
             f"ranking (mean accuracy over its seeds) is compared with `{res['reference']}`. The seed-vs-seed "
             "tau ranks the cells by one seed against another: how well two runs of one budget agree. It is no "
             "upper bound on the tau against the reference, which ranks the mean over seeds (less noisy than one "
             "seed); one seed's tau against the reference is the like-for-like figure. A top-K% tau of fewer than "
             f"{MIN_TOPK_ROWS} cells is left blank (-). CPU-h/ranking is one seed of every cell: seconds per run x "
             "cores per run x cells.", ""]
    lines += _table(rows) + [""] + _verdict(rows) + [""] + scope_lines(rows, store) + [""]
    lines += method_section(store.record)
    if any(r.get("kendall_tau") is not None for r in rows):
        fig = tau_cost_plot(rows, GOAL_TAU, run_dir / "tau_vs_cost.png")
        lines += ["## Proxy validity against cost", "", f"![tau against cost]({fig.name})", "",
                  "Kendall tau against the reference (95% bootstrap CI) and between seeds, against the CPU-hours "
                  "to rank the cells once; the dashed line is the goal.", ""]
        reference = load_source(res["reference"]) if res["reference"] else None
        if reference is not None:
            fig = accuracy_grid(store, [r["label"] for r in rows], reference, run_dir / "accuracy_vs_reference.png")
            lines += ["## Accuracy against the reference", "", f"![accuracy against reference]({fig.name})", "",
                      "One panel per candidate: each cell's mean accuracy over seeds against the reference's.", ""]
    lines += provenance_lines(store)
    atomic_write_text(run_dir / "report.json", to_json(res, indent=1))
    path = run_dir / "report.md"
    atomic_write_text(path, "\n".join(lines))
    return path


def proxy_validity(spec: str, results_root: Path, n_boot: int = 1000) -> dict[str, Any]:
    """The figures of calibration candidate ``spec`` (``RUN:LABEL``) from its store under
    ``results_root``, with ``source`` = ``spec``; ``{"source": spec, "missing": reason}`` when
    that run or candidate is not there."""
    name, _, label = spec.rpartition(":")
    try:
        store = read_store(Path(results_root) / name / "store.sqlite")
        if label not in store.protocols:
            return {"source": spec, "missing": f"{name} has no candidate {label!r}"}
        ref_spec, nats = reference_spec(store.record)
        reference = load_source(ref_spec, nats_file=nats) if ref_spec else None
        return {**candidate_stats(store, label, reference, cpus_per_run(store), n_boot), "source": spec}
    except NasRescaleError as err:
        return {"source": spec, "missing": str(err)}
