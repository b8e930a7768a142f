"""The sections of a budget trend's report (``kind = "trend"``), in order (:data:`TREND_SECTIONS`):
does a comparison of protocols depend on the training budget?

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

from typing import Any

from ...ranking.text import fmt
from ...report.common.held_out import held_out_note
from ...report.common.markdown import md_table
from ...report.common.names import short_names
from ...report.common.page import Computed, Section
from ...report.common.provenance import provenance_lines
from ...report.common.records import cpus_per_run
from ...report.common.robust import robust_cells
from ...report.common.claim_verdicts import too_few
from .changes import change_line, estimate
from .plots import gain_epochs_plot, tau_epochs_plot
from .rows import few_note, pair_row, protocol_row, shown_ci, top_text
from .summary import TrendSummary, gain_changes

__all__ = ["TREND_SECTIONS", "Title", "Protocols", "Pairs", "GainChanges", "NoiseFloor", "Figures", "Provenance"]


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
                 estimate(r.get('kendall_tau'), shown_ci(r, 'kendall_tau_ci')),
                 estimate(r.get('spearman'), shown_ci(r, 'spearman_ci')), fmt(r["cpu_hours"], 2)]
                for r in computed.numbers]
        return ["## Each protocol against the reference, per budget", "",
                *md_table(["epochs", "protocol", "runs", "n", "mean acc. (%)", "Kendall tau [95% CI]",
                           "Spearman [95% CI]", "CPU-hours"], rows), "", *few_note(computed.numbers),
                "CPU-hours: the runs' wall time x cores per run (reused runs count with the time they took "
                "where they ran).", ""]


class Pairs:
    key = "pairs"

    def compute(self, run: TrendSummary) -> Computed:
        return Computed([pair_row(run, b, e) for b in run.labels[1:] for e in run.epochs])

    def render(self, run: TrendSummary, computed: Computed) -> list[str]:
        own = any(v is not None for r in computed.numbers for v in r["seed_noise"].values())
        rows = [[r["epochs"], f"{r['b']} vs {r['a']}", r["n"], estimate(r['gain'], shown_ci(r, 'gain_ci'), 2),
                 *robust_cells(r, too_few(r)),
                 estimate(r['kendall_tau'], shown_ci(r, 'kendall_tau_ci')), top_text(r["topk_kendall_tau"], r["topk_n"]),
                 *([f"{fmt(r['seed_noise']['a'])} / {fmt(r['seed_noise']['b'])}"] if own else [])]
                for r in computed.numbers]
        single = [] if own else ["One seed a run: the trend measures no seed noise of its own; the seed-noise floor "
                                 "(below, where `trend.noise` names a store) gives tau(A, B) its scale.", ""]
        return ["## B against A, per budget", "",
                *md_table(["epochs", "pair", "n", "gain B - A [95% CI, 9,999 resamples]", "median", "Wilcoxon p",
                           "cells that gain", "verdict", "tau(A, B) [95% CI]",
                           f"tau top {run.top_percent}%", *(["seed-noise tau A / B"] if own else [])], rows), "",
                *few_note(computed.numbers, top=True), *single]


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
        rows = [[label, fmt(v["kendall_tau"]), top_text(v["topk_kendall_tau"], v["topk_n"]),
                 ", ".join(map(str, v["seeds"] or []))]
                for label, v in floor["protocols"].items()]
        return ["## Seed-noise floor", "",
                f"Kendall tau between the seeds of `{floor['store']}` on the trend's cells, at its own budget: "
                "two protocols cannot be told apart by a tau(A, B) at this level.", "",
                *md_table(["protocol", "seed-vs-seed tau", f"top {run.top_percent}%", "seeds"], rows), ""]


def _series(rows: list[dict[str, Any]], value: str, ci: str) -> list[tuple[Any, Any]]:
    """Per budget ``(figure, CI)``; no CI bar below :data:`MIN_TOPK_ROWS` cells."""
    return [(r.get(value), shown_ci(r, ci)) for r in rows]


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
        return Computed({"source": reused.source, "runs": reused.runs} if reused is not None else None)

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
