"""The report of a budget trend (``kind = "trend"``): does a comparison of protocols depend on
the training budget?

Per budget (``trend.epochs``): each protocol's Kendall tau and Spearman rho against the
reference with 95% paired-bootstrap CIs, its mean accuracy and the CPU-hours its runs took; the
gain of each protocol B over the first protocol A (mean of the per-cell differences, 95%
paired-bootstrap CI), tau(A, B) with its CI and the tau of A's top-K% cells, beside the
seed-noise floor of the store ``trend.noise`` names (its seeds at its own budget); per B, the
change of its gain from the smallest to the largest budget, paired over the cells. Figures: the
gain against the epochs, and tau(A, B) with each protocol's tau against the reference against
the epochs (log axes, CI bars). Everything is recomputed from the store (``nasrescale report
NAME``); a partial run reports what is finished. Below :data:`MIN_TOPK_ROWS` (10) cells, the
tables and plots give a figure without its CI, a top-K% tau of fewer cells is not shown, and the
change of gain is given "so far", without a verdict (``report.json`` keeps every figure).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..ranking.bands import MIN_TOPK_ROWS
from ..ranking.paired import paired_robust
from ..ranking.text import fmt
from ..store.job_status import FINAL
from ..store.record import trend_label
from .calibration import cpus_per_run
from .markdown import md_table
from .provenance import provenance_lines
from .section import Computed, Section, assemble, write_markdown_json
from .archs import short_names
from .held_out import held_out_note
from .robust import robust_cells
from .verdicts import too_few
from .trend_plots import gain_epochs_plot, tau_epochs_plot
from .trend_changes import change_line, estimate
from .trend_summary import TrendSummary, gain_changes, summarize_trend

__all__ = ["TREND_SECTIONS", "protocol_row", "pair_row", "write_trend_report", "trend_text"]


def _ci(row: dict[str, Any], key: str) -> Any:
    """A row's CI ``key`` where the row compares at least :data:`MIN_TOPK_ROWS` cells; else ``None``:
    a bootstrap over so few cells says little, so tables and figures give the figure alone.

    >>> _ci({"n": 12, "gain_ci": [0.1, 0.5]}, "gain_ci"), _ci({"n": 4, "gain_ci": [0.1, 0.5]}, "gain_ci")
    ([0.1, 0.5], None)
    """
    return None if too_few(row) else row.get(key)


def _top(tau: Any, n: Any) -> str:
    """A top-K% tau, shown from :data:`MIN_TOPK_ROWS` cells in the subset on.

    >>> _top(0.4321, 12), _top(1.0, 3), _top(None, None)
    ('0.432', '-', '-')
    """
    return fmt(tau) if (n or 0) >= MIN_TOPK_ROWS else "-"


def _few_note(rows: list[dict[str, Any]], top: bool = False) -> list[str]:
    """The line under a table whose rows compare fewer than :data:`MIN_TOPK_ROWS` cells (or,
    with ``top``, whose top-K% subsets hold fewer).

    >>> _few_note([{"n": 12, "topk_kendall_tau": 0.5, "topk_n": 6}], top=True)[0]
    'A top-K% tau of fewer than 10 cells is not shown: a tau over so few cells says little (report.json keeps every figure).'
    >>> _few_note([{"n": 12}])
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


class Title:
    key = None

    def compute(self, run: TrendSummary) -> Computed:
        return Computed(None)

    def render(self, run: TrendSummary, computed: Computed) -> list[str]:
        a, others = run.labels[0] if run.labels else "?", ", ".join(run.labels[1:]) or "-"
        description = run.store.record.description
        out = len([cell for cell in run.held_out if cell in run.cells])
        interim = [] if len(run.compared) + out >= len(run.cells) else [
            f"**Interim:** {len(run.compared)} of {len(run.cells)} cells have a finished run under every protocol "
            "at every budget; every accuracy, gain and tau below is of those cells, the same ones throughout, and "
            "will change as the rest finish (runs and CPU-hours count every finished run).", ""]
        if run.waiting:
            interim += [f"**Waiting:** no finished run yet for "
                        f"{', '.join(f'{label} at {e} epochs' for label, e in run.waiting)}; left out of the "
                        "cells compared until they have one.", ""]
        if run.held_out:
            names, _ = short_names(sorted({*run.held_out, *(w.split()[-1] for w in run.held_out.values())}),
                                   run.store.record.family_or("nb201"))
            interim += [held_out_note(run.held_out, names, "", False), ""]
        return [f"# Budget trend: {run.name}", "", *([description, ""] if description else []), *interim,
                f"Every protocol trains the same {len(run.cells)} cells at {', '.join(map(str, run.epochs))} epochs. "
                f"A = {a}; B = {others}. Does the comparison of B with A, and how each ranks the cells against "
                f"the reference ({run.reference_spec or 'none'}), move with the budget?", ""]


class Protocols:
    key = "vs_reference"

    def compute(self, run: TrendSummary) -> Computed:
        cpus = cpus_per_run(run.store)
        return Computed([protocol_row(run, label, e, cpus) for e in run.epochs for label in run.labels])

    def render(self, run: TrendSummary, computed: Computed) -> list[str]:
        rows = [[r["epochs"], r["protocol"], f"{r['runs_done']}/{r['runs']}", r.get("n", 0), fmt(r["mean_accuracy"], 2),
                 estimate(r.get('kendall_tau'), _ci(r, 'kendall_tau_ci')),
                 estimate(r.get('spearman'), _ci(r, 'spearman_ci')), fmt(r["cpu_hours"], 2)]
                for r in computed.numbers]
        return ["## Each protocol against the reference, per budget", "",
                *md_table(["epochs", "protocol", "runs", "n", "mean acc. (%)", "Kendall tau [95% CI]",
                           "Spearman [95% CI]", "CPU-hours"], rows), "", *_few_note(computed.numbers),
                "CPU-hours: the runs' wall time x cores per run (reused runs count with the time they took "
                "where they ran).", ""]


class Pairs:
    key = "pairs"

    def compute(self, run: TrendSummary) -> Computed:
        return Computed([pair_row(run, b, e) for b in run.labels[1:] for e in run.epochs])

    def render(self, run: TrendSummary, computed: Computed) -> list[str]:
        own = any(v is not None for r in computed.numbers for v in r["seed_noise"].values())
        rows = [[r["epochs"], f"{r['b']} vs {r['a']}", r["n"], estimate(r['gain'], _ci(r, 'gain_ci'), 2),
                 *robust_cells(r, too_few(r)),
                 estimate(r['kendall_tau'], _ci(r, 'kendall_tau_ci')), _top(r["topk_kendall_tau"], r["topk_n"]),
                 *([f"{fmt(r['seed_noise']['a'])} / {fmt(r['seed_noise']['b'])}"] if own else [])]
                for r in computed.numbers]
        single = [] if own else ["One seed a run: the trend measures no seed noise of its own; the seed-noise floor "
                                 "(below, where `trend.noise` names a store) gives tau(A, B) its scale.", ""]
        return ["## B against A, per budget", "",
                *md_table(["epochs", "pair", "n", "gain B - A [95% CI, 9,999 resamples]", "median", "Wilcoxon p",
                           "cells that gain", "verdict", "tau(A, B) [95% CI]",
                           f"tau top {run.top_percent}%", *(["seed-noise tau A / B"] if own else [])], rows), "",
                *_few_note(computed.numbers, top=True), *single]


class GainChanges:
    """Per B, the change of its gain from the smallest to the largest budget, tested paired."""

    key = "gain_changes"

    def compute(self, run: TrendSummary) -> Computed:
        rows = {(r["b"], r["epochs"]): r for r in Pairs().compute(run).numbers}
        return Computed(gain_changes(run), rows)

    def render(self, run: TrendSummary, computed: Computed) -> list[str]:
        return [change_line(change, computed.detail[(change["b"], change["from"])],
                             computed.detail[(change["b"], change["to"])]) for change in computed.numbers] \
            + ([""] if computed.numbers else [])


class NoiseFloor:
    key = "noise_floor"

    def compute(self, run: TrendSummary) -> Computed:
        if run.noise_store is None:
            return Computed(None)
        if "missing" in run.noise:
            return Computed({"store": run.noise_store, "missing": run.noise["missing"]})
        top = {label: next((e for e in (noise or {}).get("topk", []) if e["k_percent"] == run.top_percent), {})
               for label, noise in run.noise.items()}
        return Computed({"store": run.noise_store, "protocols": {
            label: {"kendall_tau": (noise or {}).get("kendall_tau"), "topk_kendall_tau": top[label].get("kendall_tau"),
                    "topk_n": top[label].get("n", 0), "seeds": (noise or {}).get("seeds")}
            for label, noise in run.noise.items()}})

    def render(self, run: TrendSummary, computed: Computed) -> list[str]:
        floor = computed.numbers
        if floor is None:
            return []
        if "missing" in floor:
            return ["## Seed-noise floor", "", f"`{floor['store']}` cannot be read: {floor['missing']}", ""]
        rows = [[label, fmt(v["kendall_tau"]), _top(v["topk_kendall_tau"], v["topk_n"]),
                 ", ".join(map(str, v["seeds"] or []))]
                for label, v in floor["protocols"].items()]
        return ["## Seed-noise floor", "",
                f"Kendall tau between the seeds of `{floor['store']}` on the trend's cells, at its own budget: "
                "two protocols cannot be told apart by a tau(A, B) at this level.", "",
                *md_table(["protocol", "seed-vs-seed tau", f"top {run.top_percent}%", "seeds"], rows), ""]


def _series(rows: list[dict[str, Any]], value: str, ci: str) -> list[tuple[Any, Any]]:
    """Per budget ``(figure, CI)``; no CI bar below :data:`MIN_TOPK_ROWS` cells."""
    return [(r.get(value), _ci(r, ci)) for r in rows]


class Figures:
    key = None

    def compute(self, run: TrendSummary) -> Computed:
        return Computed(None, (Pairs().compute(run).numbers, Protocols().compute(run).numbers,
                               NoiseFloor().compute(run).numbers))

    def render(self, run: TrendSummary, computed: Computed) -> list[str]:
        pairs, protocols, floor = computed.detail
        if not any(r["gain"] is not None for r in pairs):
            return []
        gains = {f"{b} - {run.labels[0]}": _series([r for r in pairs if r["b"] == b], "gain", "gain_ci")
                 for b in run.labels[1:]}
        taus = {f"tau({run.labels[0]}, {b})": _series([r for r in pairs if r["b"] == b], "kendall_tau",
                                                     "kendall_tau_ci") for b in run.labels[1:]}
        taus.update({f"{label} vs reference": _series([r for r in protocols if r["protocol"] == label],
                                                      "kendall_tau", "kendall_tau_ci") for label in run.labels})
        floors = {f"seed noise, {label} ({floor['store']})": v["kendall_tau"]
                  for label, v in ((floor or {}).get("protocols") or {}).items() if v["kendall_tau"] is not None}
        cells = [r["n"] for r in pairs] + [r.get("n", 0) for r in protocols]
        gain = gain_epochs_plot(run.epochs, gains, run.run_dir / "trend_gain.png", cells)
        tau = tau_epochs_plot(run.epochs, taus, floors, run.run_dir / "trend_tau.png", cells)
        return ["## Against the budget", "", f"![gain against epochs]({gain.name}) ![tau against epochs]({tau.name})",
                ""]


class Provenance:
    key = "reused"

    def compute(self, run: TrendSummary) -> Computed:
        reused = run.store.record.reused
        return Computed(dict(reused) if reused is not None else None)

    def render(self, run: TrendSummary, computed: Computed) -> list[str]:
        reused = computed.numbers
        lines = [f"{reused['runs']} runs were copied from `{reused['source']}` (the same jobs: same key), not "
                 "trained again.", ""] if reused else []
        return lines + provenance_lines(run.store) + [
            f"CIs are paired bootstrap over cells ({run.n_boot} resamples, seed 0; BCa, or percentile where BCa "
            "degenerates); diverged runs count as chance accuracy and degenerate cells are left out; the top-K% "
            "subset is A's best K%.", ""]


#: the trend report's sections, in the page's order
TREND_SECTIONS: tuple[Section[Any], ...] = (Title(), Protocols(), Pairs(), GainChanges(), NoiseFloor(), Figures(),
                                            Provenance())


def write_trend_report(run_dir: Path, n_boot: int = 1000) -> Path:
    """Write ``run_dir/report.md`` with ``report.json`` and its figures; return the report's path."""
    run = summarize_trend(Path(run_dir), n_boot=n_boot)
    lines, numbers = assemble(TREND_SECTIONS, run)
    return write_markdown_json(run.run_dir, lines, {**run.numbers(), **numbers})


def trend_text(run_dir: Path, n_boot: int = 1000) -> str:
    """Per budget, each pair's gain and tau(A, B) as text (what ``nasrescale run`` prints at the end)."""
    run = summarize_trend(Path(run_dir), n_boot=n_boot)
    rows = [pair_row(run, b, e) for b in run.labels[1:] for e in run.epochs]
    return "\n".join([f"{run.name}: B against A = {run.labels[0] if run.labels else '?'}, per budget"] + [
        f"{r['epochs']:>4} ep  {r['b']}: n {r['n']}, gain {estimate(r['gain'], _ci(r, 'gain_ci'), 2)}, "
        f"tau(A, B) {estimate(r['kendall_tau'], _ci(r, 'kendall_tau_ci'))}" for r in rows])
