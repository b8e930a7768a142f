"""The sections of a landscape's report, in order (:data:`LANDSCAPE_SECTIONS`), each over the
run's :class:`~nasrescale.kinds.landscape.summary.LandscapeSummary`: the headline, does each
cell's best LR follow the path-depth rule, the figures, the same cells in another landscape
(``landscape.compare``, :mod:`.compare_section`), the headroom a per-cell LR leaves, the
ranking each choice of LR gives (with the calibrated verdicts where there are enough cells), the
effective step, each cell and the provenance. Below 3 finished cells only the headline and the
provenance are written.
"""

from __future__ import annotations

from typing import Any

from ...report.common.page import Computed, Section
from ...report.common.provenance import provenance_lines
from .compare_section import Compare
from .lines import cell_table, criterion_lines, elr_lines, headroom_lines, ranking_lines, signed, slope_lines
from .phrases import grid_text
from .plots import plot_best_vs_rule, plot_landscapes
from .stats import MIN_CELLS
from .summary import LandscapeSummary
from .verdict_text import bracket_lines, distortion_lines, power_lines, verdict_line

__all__ = ["LANDSCAPE_SECTIONS", "Title", "Rule", "Figures", "Headroom", "Bracket", "Ranking", "Distortion", "Elr",
           "Cells", "Provenance"]


class _Lines:
    """A section of Markdown lines alone (no numbers of its own in ``report.json``); ``compared``:
    written only once 3 cells have finished."""

    key: str | None = None
    compared: bool = True

    def compute(self, run: LandscapeSummary) -> Computed:
        return Computed(None)

    def render(self, run: LandscapeSummary, computed: Computed) -> list[str]:
        return self.lines(run) if run.compared or not self.compared else []

    def lines(self, run: LandscapeSummary) -> list[str]:
        raise NotImplementedError


class Title(_Lines):
    compared = False

    def lines(self, run: LandscapeSummary) -> list[str]:
        res = run.analysis
        lines = [f"# LR landscape: {run.name}", "",
                 f"Protocol `{res.label}` at {res.epochs} epoch(s), {grid_text(res.settings)}, seeds "
                 f"{', '.join(map(str, res.seeds))}. {res.cells} cell(s) finished"
                 + (f", {res.pending} not yet" if res.pending else "") + ".", ""]
        if not run.compared:
            return lines + [f"**So far {res.cells} of {res.cells + res.pending} cells finished: fewer than 3, nothing "
                            "to compare yet.**", ""]
        if not run.full:
            lines += [f"So far on {res.cells} cells: below {MIN_CELLS} cells the figures are shown without "
                      "intervals or verdicts.", ""]
        h = res.headroom
        lines += [f"**Slope of log(best LR) on log(path-depth scale) {signed(res.slope.slope, 2)} on {res.cells} "
                  f"cells (the rule: 1; one global LR: 0); oracle - global {h.oracle_global.mean:+.2f} points, "
                  f"rule - global {h.rule_global.mean:+.2f}.**", ""]
        return lines + ([verdict_line(res.verdicts), ""] if res.verdicts else [])


class Rule(_Lines):
    def lines(self, run: LandscapeSummary) -> list[str]:
        res = run.analysis
        return ["## Does each cell's best LR follow the path-depth rule?", "", *slope_lines(res, run.full),
                *(criterion_lines(res.criterion, run.full) if res.criterion else [])]


class Figures(_Lines):
    def lines(self, run: LandscapeSummary) -> list[str]:
        res = run.analysis
        ci = res.slope.slope_ci if run.full else None  # no interval below MIN_CELLS
        fig = plot_best_vs_rule(run.figure_cells, run.settings.lr, res.rule_constant, res.slope.slope, ci,
                                run.run_dir / "landscape_rule.png", f"{run.name}: each cell's best LR vs the path-depth rule")
        curves = plot_landscapes(run.figure_cells, run.settings.lr, run.run_dir / "landscape_curves.png",
                                 f"{run.name}: accuracy vs LR")
        return [f"![best LR vs rule]({fig.name})", "", f"![accuracy vs LR]({curves.name})", ""]


class Headroom(_Lines):
    def lines(self, run: LandscapeSummary) -> list[str]:
        return ["## Headroom: what a per-cell LR buys over one global LR", "", *headroom_lines(run.analysis, run.full)]


class Bracket(_Lines):
    def lines(self, run: LandscapeSummary) -> list[str]:
        v = run.analysis.verdicts
        return ["### The gain, bracketed and set against a null", "", *bracket_lines(v)] if v else []


class Ranking(_Lines):
    def lines(self, run: LandscapeSummary) -> list[str]:
        return ["## The ranking each choice of LR gives", "",
                *ranking_lines(run.analysis.ranking, run.settings.top_percent)]


class Distortion(_Lines):
    def lines(self, run: LandscapeSummary) -> list[str]:
        v = run.analysis.verdicts
        return ["### Does one fixed LR distort the ranking?", "", *distortion_lines(v),
                "### What this design can detect", "", *power_lines(v)] if v else []


class Elr(_Lines):
    def lines(self, run: LandscapeSummary) -> list[str]:
        return ["## The effective step at each cell's best LR, against one fixed LR", "",
                *elr_lines(run.analysis.elr, run.full)]


class Cells(_Lines):
    def lines(self, run: LandscapeSummary) -> list[str]:
        return ["## Each cell", "", *cell_table(run.analysis.per_cell, run.store.record.family_or("nb201"))]


class Provenance(_Lines):
    compared = False

    def lines(self, run: LandscapeSummary) -> list[str]:
        return provenance_lines(run.store)


#: the landscape report's sections, in the page's order
LANDSCAPE_SECTIONS: tuple[Section[Any], ...] = (Title(), Rule(), Figures(), Compare(), Headroom(), Bracket(),
                                                Ranking(), Distortion(), Elr(), Cells(), Provenance())
