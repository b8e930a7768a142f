"""The sections of an LR-rule validation's report, in order (:data:`VALIDATION_SECTIONS`), each
over the run's :class:`~nasrescale.kinds.lr_validation.summary.ValidationSummary`: the
statistics beside the paper's r, the censored fits, the figures, how much the figure depends on
the definition of the maximal LR, what ran, and every architecture.
"""

from __future__ import annotations

import math
from typing import Any

from ...errors import DataError
from ...lrsearch.search import LOSS_KINDS
from ...lrsearch.select import SELECTION_RULES
from ...lrsearch.rule_stats import PREDICTED_SLOPE, PREDICTED_SLOPE_L3
from ...store.job_status import FINAL
from ...store.schema import LrSearchRecord
from ...report.common.markdown import md_table
from ...report.common.page import Computed, Section
from ...report.common.validation_run import Correlation, GroupStats, analysis_of
from .plots import plot_curves, plot_predicted_measured
from .summary import ValidationSummary

__all__ = ["VALIDATION_SECTIONS", "Title", "Statistics", "Censored", "Figures", "Sensitivity", "WhatRan",
           "PerArchitecture", "fmt3"]


def fmt3(x: float | None) -> str:
    """A figure to 3 decimals (``-`` where undefined)."""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


class _Lines:
    """A section of Markdown lines alone (no numbers of its own in ``report.json``)."""

    key: str | None = None

    def compute(self, run: ValidationSummary) -> Computed:
        return Computed(None)

    def render(self, run: ValidationSummary, computed: Computed) -> list[str]:
        return self.lines(run)

    def lines(self, run: ValidationSummary) -> list[str]:
        raise NotImplementedError


class Title(_Lines):
    def lines(self, run: ValidationSummary) -> list[str]:
        rule = ("the argmin of the final training loss per seed, averaged over seeds in log LR (the paper's rule)"
                if run.analysis.rule == "argmin" else
                f"the largest LR within {100 * run.plan.rel_tol:g}% of the smallest mean final training loss")
        return [f"# LR validation: {run.name}{' (interim)' if _pending(run) else ''}", "", *_interim(run),
                f"Family `{run.family}`, base architecture `{run.plan.base_arch}`. Each architecture's maximal LR "
                f"is {rule}, and is compared with `base_lr x lr_scale(arch) x kernel factor`, base_lr being the base "
                "architecture's measured maximal LR (Chen et al., ICLR 2024, eqs. 8-9).", ""]


def _pending(run: ValidationSummary) -> int:
    """How many of the run's stored jobs have not finished (pending, running or to retry)."""
    return sum(r["status"] not in FINAL for r in run.rows)


def _interim(run: ValidationSummary) -> list[str]:
    """The line that says the figures are not final yet, where jobs are still to run."""
    pending = _pending(run)
    if not pending:
        return []
    return [f"**Interim:** {len(run.rows) - pending:,} of the {len(run.rows):,} runs stored so far have finished; "
            f"{pending:,} still to run, and a cell whose best LR sits at a grid edge may add a round past it. "
            f"Every figure below moves until `nasrescale run {run.name}` finishes.", ""]


def _ci(value: float | None, ci: list[float] | None) -> str:
    return f"{fmt3(value)} [{fmt3(ci[0])}, {fmt3(ci[1])}]" if ci else fmt3(value)


def _stats_rows(label: str, c: GroupStats, paper: float | None) -> list[str]:
    subsets: list[tuple[str, Correlation]] = [("all", c), ("without base", c.without_base)]
    if c.interior:
        subsets.append(("without base and edge points", c.interior))
    return [f"| {label} | {what} | {s.n} | {fmt3(s.pearson_log)} | {fmt3(s.pearson)} | {fmt3(s.spearman)} | "
            f"{_ci(s.slope, s.slope_ci)} | {_ci(s.slope_l3, s.slope_l3_ci)} | {'-' if paper is None else paper} |"
            for what, s in subsets]


def _stats_table(run: ValidationSummary) -> list[str]:
    """The statistics per group (and overall), with and without the base, beside the paper's r."""
    paper = run.paper[0][1] if run.paper else None
    lines = ["| group | points | n | Pearson r (log LR) | Pearson r (LR) | Spearman rho | "
             f"slope vs predicted [95% CI] (rule: {PREDICTED_SLOPE:g}) | "
             f"slope vs sum L^3 [95% CI] (rule: {PREDICTED_SLOPE_L3:g}) | paper's r |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    if len(run.analysis.groups) > 1:
        lines += _stats_rows("all groups", run.analysis.overall, None)
    for g, gc in run.analysis.groups.items():
        lines += _stats_rows(g, gc, paper)
    return lines


def _vs_paper(run: ValidationSummary) -> list[str]:
    """One sentence per paper figure: our r beside it and the difference; where the paper has no
    figure for the family, the run's own r and slope against the rule's."""
    c, res = run.analysis.overall, run.analysis
    if c.pearson_log is None:
        return [f"**So far {len(res.points)} architecture(s) finished, {res.skipped} not yet: too few for "
                "r (log LR) and a slope.**"]
    out = []
    if not run.paper and c.slope is not None:
        nb = c.without_base
        out.append(f"**r (log LR) = {c.pearson_log:.3f}, log-log slope {c.slope:.3f} on the prediction (the rule: "
                   f"1); without the base architecture r {fmt3(nb.pearson_log)}, slope {fmt3(nb.slope)}"
                   + (f" [{nb.slope_ci[0]:.3f}, {nb.slope_ci[1]:.3f}]" if nb.slope_ci else "") + " (n = " + str(nb.n)
                   + "). The paper has no figure for this family.**")
    for what, r in run.paper:
        nb = c.without_base.pearson_log
        out.append(f"**{what}**: r (log LR) = {c.pearson_log:.3f} against the paper's {r} "
                   f"({c.pearson_log - r:+.3f})" + ("" if nb is None else
                   f"; without the base architecture {nb:.3f} ({nb - r:+.3f})") + ".")
    return out


class Statistics(_Lines):
    def lines(self, run: ValidationSummary) -> list[str]:
        edge = (" A measured LR still at its grid's edge only bounds the maximal LR, so the last row leaves "
                "those points out too." if run.analysis.at_edge else "")
        return ["## Statistics", "", *_vs_paper(run), "", *_stats_table(run), "",
                "Slopes are least-squares fits in log-log with Student-t 95% intervals; "
                "`sum L^3` is the sum over input-output paths of the path depth cubed." + edge, ""]


def _slope_text(slope: float | None, ci: list[float] | None) -> str:
    return "-" if slope is None else f"{slope:+.2f}" + (f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "")


class Censored(_Lines):
    """Censored fits with clones counted once, and the path count beside the scale."""

    def lines(self, run: ValidationSummary) -> list[str]:
        c = run.censored
        if c is None:
            return []
        rows = [[f.fit, str(f.n), str(f.censored), _slope_text(f.slope, f.slope_ci)] for f in c.fits]
        lines = ["### Censored fits, each function once, and the path count", "",
                 f"Each cell isomorphic to one before it (the base first) is counted once ({c.clones_dropped} left "
                 f"out); a maximal LR at its grid's edge is kept as the bound it is ({c.censored} such cell(s)), in a "
                 "censored-normal (Tobit) fit of log(maximal LR) on log(path-depth scale) (the rule: slope 1):", "",
                 *md_table(["cells", "n", "censored", "slope [95% CI]"], rows), ""]
        r2, two = c.r2, c.two_predictors
        if r2.path_count is not None and r2.lr_scale is not None:
            lines.append(f"Which explains the maximal LR: R^2 of log(maximal LR) on log(number of input-output paths "
                         f"P) {r2.path_count:.2f}, on log(path-depth scale) {r2.lr_scale:.2f} ({r2.n} measured cells).")
        if two and two.path_count_ci and two.lr_scale_ci:
            lines.append(f"Both in one censored fit: log P {two.path_count:+.2f} [{two.path_count_ci[0]:+.2f}, "
                         f"{two.path_count_ci[1]:+.2f}], log scale {two.lr_scale:+.2f} [{two.lr_scale_ci[0]:+.2f}, "
                         f"{two.lr_scale_ci[1]:+.2f}] (the rule: P 0, scale 1).")
        return lines + [""]


class Figures(_Lines):
    def lines(self, run: ValidationSummary) -> list[str]:
        fig = plot_predicted_measured(run.analysis, run.run_dir / "lr_validation.png",
                                      f"{run.name}: maximal LR, measured vs predicted")
        curves = plot_curves(run.analysis, run.run_dir / "lr_validation_curves.png", run.name)
        return [f"![predicted vs measured]({fig.name})", "", f"![loss vs LR per architecture]({curves.name})", ""]


class Sensitivity(_Lines):
    """Pearson r (log LR) of the same runs read under every rule x loss: how much the figure
    depends on the choice of "maximal LR" (no new training)."""

    def lines(self, run: ValidationSummary) -> list[str]:
        lines = ["## How much the figure depends on the definition of the maximal LR", "",
                 "The same runs, read under each rule and training-loss definition (`nasrescale.lrsearch.select`):", "",
                 "| rule | loss | r (log LR), all | r (log LR), without base | slope vs predicted | at grid edge |",
                 "|---|---|---:|---:|---:|---:|"]
        for rule in SELECTION_RULES:
            for loss in LOSS_KINDS:
                try:
                    res = analysis_of(run.plan.under(rule, loss), run.rows)
                except DataError:  # runs stored before the tail loss was recorded
                    continue
                c = res.overall
                mark = " (this report)" if (rule, loss) == (run.plan.rule, run.plan.loss) else ""
                lines.append(f"| `{rule}`{mark} | `{loss}` | {fmt3(c.pearson_log)} | "
                             f"{fmt3(c.without_base.pearson_log)} | {fmt3(c.slope)} | {res.at_edge} |")
        return lines + [""]


def _budget_lines(run: ValidationSummary) -> list[str]:
    """What was run: data, protocol, grid, seeds, rule, size."""
    record, res = run.record, run.analysis
    search, budget = record.lr_search or LrSearchRecord(), record.budget
    runs = run.plan.runs
    epochs = search.epochs  # every run holds the grid LR constant for the search's epochs
    proto_text = "; ".join(f"`{label}`: init {p.init}, batch {p.batch_size}, momentum {p.momentum}, weight decay "
                           f"{p.weight_decay}, {p.precision}" for label, p in record.protocols.items())
    return [f"- data: `{record.dataset}`"
            + (f", {budget.train_subset} training images" if budget.train_subset else ", full training set"),
            f"- protocols: {proto_text}; each run {epochs} epoch(s) at a constant LR (the protocol's schedule "
            "and epochs are not used)",
            f"- grid: {search.points} LRs from {search.lr_min} to {search.lr_max} (log-spaced), "
            f"extended past an edge up to {search.extend} times; {runs} runs in the plan",
            f"- seeds: {list(search.seeds)}; rule `{res.rule}` on the `{res.loss}` loss"
            + (" (mean over the last 10% of the epoch's steps)" if res.loss == "tail" else
               " (the epoch's mean training loss, as the paper's released code logs it)"),
            f"- width {budget.width or 'family default'}" + (f", cells {budget.cells}" if budget.cells else "")]


def _provenance(run: ValidationSummary) -> list[str]:
    """Machine, torch and wall time of the finished runs (from their records)."""
    if not run.finished:
        return []
    prov = {(r.get("provenance") or {}).get("device_name", "?") + " / torch " + (r.get("provenance") or {}).get("torch", "?")
            for r in run.finished}
    wall = sum(r.get("wall_time_s") or 0.0 for r in run.finished)
    return [f"- ran on: {', '.join(sorted(prov))}; {len(run.finished)} runs, {wall / 60:.1f} min of summed job time"]


class WhatRan(_Lines):
    def lines(self, run: ValidationSummary) -> list[str]:
        return ["## What ran", "", *_budget_lines(run), *_provenance(run), ""]


class PerArchitecture(_Lines):
    def lines(self, run: ValidationSummary) -> list[str]:
        res = run.analysis
        lines = ["## Per architecture", "",
                 "| group | architecture | sum L^3 | lr_scale | predicted LR | measured LR | seeds' argmins | note |",
                 "|---|---|---:|---:|---:|---:|---|---|"]
        for p in res.points:
            note = ("base; " if p.base else "") + (f"argmin at grid {p.edge} edge" if p.edge else "")
            seeds = ", ".join("diverged" if v is None else f"{v:.4g}" for v in p.seed_lrs) or "-"
            lines.append(f"| {p.group} | `{p.arch}` | {p.sum_l3} | {p.lr_scale:.4f} | {p.predicted_lr:.4g} | "
                         f"{p.measured_lr:.4g} | {seeds} | {note.rstrip('; ')} |")
        extra = []
        if res.skipped:
            extra.append(f"{res.skipped} architecture(s) are not finished yet (partial run).")
        if res.degenerate:
            extra.append(f"{res.degenerate} degenerate cell(s) (no input-output path) have no maximal LR; left out.")
        if res.at_edge:
            extra.append(f"{res.at_edge} measured LR(s) still have a seed's argmin at the grid's edge.")
        return lines + [""] + extra + [""]


#: the LR validation report's sections, in the page's order
VALIDATION_SECTIONS: tuple[Section[Any], ...] = (Title(), Statistics(), Censored(), Figures(), Sensitivity(),
                                                 WhatRan(), PerArchitecture())
