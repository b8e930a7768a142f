"""The sections of a proxy calibration's report, in order (:data:`CALIBRATION_SECTIONS`), each
over the run's :class:`~nasrescale.kinds.calibration.summary.CalibrationSummary`: the candidates'
table, which candidate does best, what the calibration validates, the Method table, the figures
(tau against cost, accuracy against the reference) and the provenance.
"""

from __future__ import annotations

from typing import Any, Sequence

from ...ranking.bands import MIN_TOPK_ROWS
from ...ranking.sources import load_source
from ...ranking.text import fmt
from ...report.common.method import method_section
from ...report.common.page import Computed, Section
from ...report.common.provenance import provenance_lines
from .plots import accuracy_grid, tau_cost_plot
from .summary import CalibrationSummary, Candidate

__all__ = ["CALIBRATION_SECTIONS", "Title", "Table", "Verdict", "Scope", "Method", "CostFigure", "AccuracyFigure",
           "Provenance", "candidates_table", "verdict_lines", "scope_lines"]


class _Lines:
    """A section of Markdown lines alone (no numbers of its own in ``report.json``)."""

    key: str | None = None

    def compute(self, run: CalibrationSummary) -> Computed:
        return Computed(None)

    def render(self, run: CalibrationSummary, computed: Computed) -> list[str]:
        return self.lines(run)

    def lines(self, run: CalibrationSummary) -> list[str]:
        raise NotImplementedError


class Title(_Lines):
    def lines(self, run: CalibrationSummary) -> list[str]:
        return [f"# Proxy calibration: {run.name}", "", run.store.record.description, "",
                f"Each candidate budget trains the same cells under the benchmark's default protocol; its "
                f"ranking (mean accuracy over its seeds) is compared with `{run.reference}`. The seed-vs-seed "
                "tau ranks the cells by one seed against another: how well two runs of one budget agree. It is no "
                "upper bound on the tau against the reference, which ranks the mean over seeds (less noisy than "
                "one seed); one seed's tau against the reference is the like-for-like figure. A top-K% tau of "
                f"fewer than {MIN_TOPK_ROWS} cells is left blank (-). CPU-h/ranking is one seed of every cell: "
                "seconds per run x cores per run x cells.", ""]


def _budget_text(budget: Any) -> str:
    keys = (("width", "C"), ("cells", "N"), ("epochs", "ep"), ("train_subset", "img"), ("resolution", "px"),
            ("batch_size", "bs"))
    return " ".join(f"{short}={budget[k]}" for k, short in keys if k in budget) if isinstance(budget, dict) else ""


def _ci_text(ci: Any) -> str:
    return f"[{fmt(ci[0], 2)}, {fmt(ci[1], 2)}]" if isinstance(ci, (list, tuple)) and len(ci) == 2 else "-"


def _row(c: Candidate) -> list[str]:
    acc = (f"{c.mean_accuracy:.1f} ({c.min_accuracy:.1f}-{c.max_accuracy:.1f})" if c.mean_accuracy is not None
           else "-")
    r = c.ranked
    ranked = ([f"{fmt(r.kendall_tau)} {_ci_text(r.tau_ci)}", fmt(r.spearman), fmt(r.top50_tau), fmt(r.top20_tau),
               fmt(r.per_seed_tau), fmt(r.seed_vs_seed_tau)] if r is not None else [f"{fmt(None)} -", *[fmt(None)] * 5])
    return [f"`{c.label}`", _budget_text(c.budget), f"{c.runs_done}/{c.runs}", acc, *ranked,
            fmt(c.seconds_per_run, 0), fmt(c.cpu_hours_per_ranking, 2), fmt(None if r is None else r.tau_per_cpu_hour, 2)]


def candidates_table(candidates: Sequence[Candidate]) -> list[str]:
    """The candidates' table (Markdown lines)."""
    head = ["candidate", "budget", "runs", "acc % (min-max)", "tau vs ref [95% CI]", "rho", "top-50% tau",
            "top-20% tau", "one seed's tau", "seed-vs-seed tau", "s/run", "CPU-h/ranking", "tau per CPU-h"]
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + [
        "| " + " | ".join(_row(c)) + " |" for c in candidates]


def verdict_lines(run: CalibrationSummary) -> list[str]:
    """Which candidate ranks best, which gives the most tau per CPU-hour, and who meets the goal."""
    ranked = run.ranked
    if not ranked:
        return ["No candidate has results yet."]
    best = max(ranked, key=lambda c: c.kendall_tau)
    thrifty = max((c for c in ranked if c.ranked.tau_per_cpu_hour is not None),
                  key=lambda c: c.ranked.tau_per_cpu_hour, default=None)
    met = [c.label for c in ranked if c.kendall_tau >= run.goal_tau]
    lines = [f"- Highest tau against the reference: `{best.label}` ({fmt(best.kendall_tau)}, "
             f"seed-vs-seed {fmt(best.ranked.seed_vs_seed_tau)})."]
    if thrifty is not None:
        lines.append(f"- Most tau per CPU-hour: `{thrifty.label}` ({fmt(thrifty.ranked.tau_per_cpu_hour, 2)}).")
    lines.append(f"- Goal tau >= {run.goal_tau}: " + (f"met by {', '.join(f'`{m}`' for m in met)}." if met else
                                                     "met by no candidate; the best one found is the highest tau above."))
    return lines


class Table(_Lines):
    def lines(self, run: CalibrationSummary) -> list[str]:
        return candidates_table(run.candidates) + [""]


class Verdict(_Lines):
    def lines(self, run: CalibrationSummary) -> list[str]:
        return verdict_lines(run) + [""]


def scope_lines(run: CalibrationSummary) -> list[str]:
    """What the calibration validated, and what it did not: its protocol(s), and that the best
    candidate was chosen on the cells it is measured on (an in-sample figure)."""
    ranked = run.ranked
    if not ranked:
        return []
    names = sorted({p.name or label for label, p in run.store.record.protocols.items()})
    cells = max(int(c.ranked.n or 0) for c in ranked)
    which = f"the `{'`, `'.join(names)}` protocol" if names else "one protocol"
    return ["**What this validates.** " + f"Every candidate trains {which} only: a protocol with other "
            f"learning rates or another init may rank the cells differently at the same budget, and this run does "
            f"not measure that. The highest tau is the best of {len(ranked)} budgets on the {cells} cells it is "
            f"measured on (a selection, so an in-sample figure that tends to overstate); a study that uses the "
            f"budget measures it out of sample (its default protocol against the reference, on its own cells)."]


class Scope(_Lines):
    def lines(self, run: CalibrationSummary) -> list[str]:
        return scope_lines(run) + [""]


class Method(_Lines):
    def lines(self, run: CalibrationSummary) -> list[str]:
        return method_section(run.store.record)


class CostFigure(_Lines):
    def lines(self, run: CalibrationSummary) -> list[str]:
        if not run.ranked:
            return []
        fig = tau_cost_plot(run.candidates, run.goal_tau, run.run_dir / "tau_vs_cost.png")
        return ["## Proxy validity against cost", "", f"![tau against cost]({fig.name})", "",
                "Kendall tau against the reference (95% bootstrap CI) and between seeds, against the CPU-hours "
                "to rank the cells once; the dashed line is the goal.", ""]


class AccuracyFigure(_Lines):
    def lines(self, run: CalibrationSummary) -> list[str]:
        reference = load_source(run.reference) if run.ranked and run.reference else None
        if reference is None:
            return []
        fig = accuracy_grid(run.store, [c.label for c in run.candidates], reference,
                            run.run_dir / "accuracy_vs_reference.png")
        return ["## Accuracy against the reference", "", f"![accuracy against reference]({fig.name})", "",
                "One panel per candidate: each cell's mean accuracy over seeds against the reference's.", ""]


class Provenance(_Lines):
    def lines(self, run: CalibrationSummary) -> list[str]:
        return provenance_lines(run.store)


#: the calibration report's sections, in the page's order
CALIBRATION_SECTIONS: tuple[Section[Any], ...] = (Title(), Table(), Verdict(), Scope(), Method(), CostFigure(),
                                                  AccuracyFigure(), Provenance())
