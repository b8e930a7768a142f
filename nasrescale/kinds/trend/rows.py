"""The rows of a trend report's tables (:mod:`nasrescale.kinds.trend.sections`): each protocol
against the reference at one budget (:func:`protocol_row`), B against A at one budget
(:func:`pair_row`), and how a row with few cells is shown (:func:`shown_ci`, :func:`top_text`,
:func:`few_note`: below :data:`MIN_TOPK_ROWS` cells a figure without its CI, no top-K% tau).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ranking.bands import MIN_TOPK_ROWS
from ...ranking.paired import paired_robust
from ...ranking.text import fmt
from ...store.job_status import FINAL
from ...report.common.claim_verdicts import too_few
from ...store.record import trend_label
from .summary import TrendSummary

__all__ = ["protocol_row", "pair_row", "shown_ci", "top_text", "few_note"]


def shown_ci(row: dict[str, Any], key: str) -> Any:
    """A row's CI ``key`` where the row compares at least :data:`MIN_TOPK_ROWS` cells; else ``None``:
    a bootstrap over so few cells says little, so tables and figures give the figure alone.

    >>> shown_ci({"n": 12, "gain_ci": [0.1, 0.5]}, "gain_ci"), shown_ci({"n": 4, "gain_ci": [0.1, 0.5]}, "gain_ci")
    ([0.1, 0.5], None)
    """
    return None if too_few(row) else row.get(key)


def top_text(tau: Any, n: Any) -> str:
    """A top-K% tau, shown from :data:`MIN_TOPK_ROWS` cells in the subset on.

    >>> top_text(0.4321, 12), top_text(1.0, 3), top_text(None, None)
    ('0.432', '-', '-')
    """
    return fmt(tau) if (n or 0) >= MIN_TOPK_ROWS else "-"


def few_note(rows: list[dict[str, Any]], top: bool = False) -> list[str]:
    """The line under a table whose rows compare fewer than :data:`MIN_TOPK_ROWS` cells (or,
    with ``top``, whose top-K% subsets hold fewer).

    >>> few_note([{"n": 12, "topk_kendall_tau": 0.5, "topk_n": 6}], top=True)[0]
    'A top-K% tau of fewer than 10 cells is not shown: a tau over so few cells says little (report.json keeps every figure).'
    >>> few_note([{"n": 12}])
    []
    """
    small = any(0 < (r.get("n") or 0) < MIN_TOPK_ROWS for r in rows)
    small_top = top and any(r.get("topk_kendall_tau") is not None and (r.get("topk_n") or 0) < MIN_TOPK_ROWS
                            for r in rows)
    said = ([f"a row on fewer than {MIN_TOPK_ROWS} cells gives its figures without a CI"] if small else []) \
        + ([f"a top-K% tau of fewer than {MIN_TOPK_ROWS} cells is not shown"] if small_top else [])
    if not said:
        return []
    why = " or ".join(w for w, on in (("a bootstrap", small), ("a tau", small_top)) if on)
    text = ", and ".join(said)
    return [f"{text[0].upper()}{text[1:]}: {why} over so few cells says little (report.json keeps every figure).", ""]


def _mean_accuracy(run: TrendSummary, label: str, epochs: int) -> float | None:
    """The mean accuracy the pairs at ``epochs`` rank ``label`` by (over the cells they rank, each
    cell's mean over its seeds, a diverged run at chance), so that B's mean - A's mean is the gain;
    without a pair, the mean of the finished runs on the compared cells."""
    for (b, e), comparison in run.pairs.items():
        if e == epochs and label in (run.labels[0], b) and comparison.result.get("n"):
            return comparison.result["mean_a" if label == run.labels[0] else "mean_b"]
    jobs = run.store.jobs[(run.store.jobs["protocol"] == trend_label(label, epochs))
                          & run.store.jobs["status"].isin(FINAL) & run.store.jobs["arch"].isin(run.compared)]
    return float(jobs["test_accuracy"].mean()) if len(jobs) else None


def protocol_row(run: TrendSummary, label: str, epochs: int, cpus: float) -> dict[str, Any]:
    """One protocol at one budget: runs finished (of all), mean accuracy (on the cells the pairs
    rank), CPU-hours (of every finished run), tau and rho against the reference."""
    jobs = run.store.jobs[run.store.jobs["protocol"] == trend_label(label, epochs)]
    done = jobs[jobs["status"].isin(FINAL)]
    seconds = float(done["wall_time_s"].dropna().sum())
    out: dict[str, Any] = {"protocol": label, "epochs": epochs, "runs": len(jobs), "runs_done": len(done),
                           "mean_accuracy": _mean_accuracy(run, label, epochs),
                           "cpu_hours": seconds * cpus / 3600 if len(done) and np.isfinite(cpus) else None}
    comparison = run.vs_reference.get((label, epochs))
    if comparison is not None:
        r = comparison.result
        out.update({"n": r["n"], "kendall_tau": r["kendall_tau"], "kendall_tau_ci": r["ci"].get("kendall_tau"),
                    "spearman": r["spearman"], "spearman_ci": r["ci"].get("spearman")})
    return out


def pair_row(run: TrendSummary, b: str, epochs: int) -> dict[str, Any]:
    """B against A at one budget: the gain (B - A) and tau(A, B) with CIs, the top-K% tau, own seed
    noise; every figure ``None`` (and ``n`` 0) while A or B has no finished run at that budget."""
    if (b, epochs) not in run.pairs:
        return {"a": run.labels[0], "b": b, "epochs": epochs, "n": 0, "gain": None, "gain_ci": None,
                "kendall_tau": None, "kendall_tau_ci": None, "topk_kendall_tau": None, "topk_n": 0,
                "seed_noise": {"a": None, "b": None}}
    r, merged = run.pairs[(b, epochs)].result, run.pairs[(b, epochs)].merged
    top = next((e for e in r["topk"] if e["k_percent"] == run.top_percent), {})
    noise = {side: (r["seed_noise"].get(side) or {}).get("kendall_tau") for side in ("a", "b")}
    robust = paired_robust(merged["b"] - merged["a"]) if len(merged) else None
    return {"a": run.labels[0], "b": b, "epochs": epochs, "n": r["n"], "gain": r["mean_diff"],
            "gain_ci": (robust or {}).get("ci") or r["ci"].get("mean_diff"), "robust": robust,
            "kendall_tau": r["kendall_tau"],
            "kendall_tau_ci": r["ci"].get("kendall_tau"), "topk_kendall_tau": top.get("kendall_tau"),
            "topk_n": top.get("n", 0), "seed_noise": noise}
