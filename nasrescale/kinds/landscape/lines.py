"""The landscape report's paragraphs and tables, each from the typed figures it states
(:mod:`~nasrescale.kinds.landscape.figures`); ``full``: enough cells for intervals
(:data:`~.stats.MIN_CELLS`)."""

from __future__ import annotations

from typing import Any, Sequence

from ...report.common.markdown import md_table
from ...report.common.names import short_names
from .figures import CellRow, CriterionRow, Elr, Headroom, LandscapeAnalysis, Ranking, Slope
from .phrases import global_text, strata_lines
from .stats import ARMS

__all__ = ["signed", "slope_lines", "criterion_lines", "captured_text", "headroom_lines", "elr_lines",
           "ranking_lines", "cell_table"]


def signed(v: Any, digits: int = 2) -> str:
    """A figure: signed at 2 digits, else plain at ``digits`` (``-`` where undefined)."""
    return "-" if v is None else f"{v:+.{digits}f}" if isinstance(v, float) and digits == 2 else f"{v:.{digits}f}"


def _ci(ci: list[float] | None, show: bool = True) -> str:
    return f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci and show else ""


def slope_lines(res: LandscapeAnalysis, full: bool) -> list[str]:
    """The slope of each cell's best LR on its path-depth scale, and by stratum."""
    s, a = res.slope, res.slope_argmax
    if s.slope is None:
        return ["The slope is undefined (every cell has the same path-depth scale or the same best LR).", ""]
    ci = f" (95% CI {s.slope_ci[0]:.2f} to {s.slope_ci[1]:.2f})" if full else ""
    where = ""
    if full:
        where = (f" The rule's 1 is {'inside' if s.rule_in_ci else 'outside'} that interval; one global LR's 0 is "
                 f"{'inside' if s.global_in_ci else 'outside'}.")
    return [f"Regressed on log(path-depth scale), log(each cell's best LR) has slope **{s.slope:.2f}**{ci} "
            f"(the rule predicts 1; one LR for every cell, 0).{where} Pearson r of the logs "
            f"{signed(s.pearson_log, 3)} (the paper reports r on log LR for its MLPs and CNNs). By the argmax "
            f"instead of the quadratic's vertex: slope {signed(a.slope, 3)}.", "",
            *strata_lines(res.strata or None)]


def criterion_lines(rows: Sequence[CriterionRow], full: bool) -> list[str]:
    """The paper's one-epoch criterion beside the landscape's slope on the same cells."""
    table = [[r.source, str(r.n), signed(r.slope, 2)
              + (f" [{r.slope_ci[0]:.2f}, {r.slope_ci[1]:.2f}]" if full and r.slope_ci else ""), r.note] for r in rows]
    return ["The paper's one-epoch criterion (constant LR, argmin of the training loss), each run with the optimizer "
            "its row names (the paper's own is plain SGD at batch 128), on the same cells:",
            "", *md_table(["best LR by", "cells", "slope on path-depth scale", "note"], table), ""]


def captured_text(cap: float | None, ci: list[float] | None) -> str:
    """The share of the oracle's gain over one global LR that the rule captures, in words.

    >>> captured_text(-0.5, [-1.2, 0.1])
    "The rule captures -50% [-120%, 10%] of the oracle's gain over one global LR (below 0: the rule does worse than one global LR)"
    >>> captured_text(None, None)[:50]
    'The cross-fitted oracle does not beat one global L'
    """
    if cap is None:
        return ("The cross-fitted oracle does not beat one global LR on average, so the rule's share of its gain is "
                "undefined (what that estimate can and cannot say: the bracket below)")
    text = f"The rule captures {100 * cap:.0f}%" + (f" [{100 * ci[0]:.0f}%, {100 * ci[1]:.0f}%]" if ci else "")
    return text + " of the oracle's gain over one global LR" + (
        " (below 0: the rule does worse than one global LR)" if cap < 0 else "")


def headroom_lines(res: LandscapeAnalysis, full: bool) -> list[str]:
    """The arms' mean accuracies and gaps over one global LR, and what the rule captures."""
    h: Headroom = res.headroom
    gaps = {"oracle": h.oracle_global, "rule": h.rule_global}
    rows = [[arm, f"{h.mean[arm]:.2f}", *(["-", "-", "-"] if arm == "global" else
                                         [f"{gaps[arm].mean:+.2f}{_ci(gaps[arm].ci, show=full)}",
                                          f"{gaps[arm].median:+.2f}", f"{100 * gaps[arm].share_gain:.0f}%"])]
            for arm in ARMS]
    ci = (h.captured_ci or None) if full else None
    clipped = (f"; {res.rule_clipped} rule choice(s) fell outside a cell's measured grid (scored at its nearest "
               "point)." if res.rule_clipped else ".")
    return [*md_table(["LR per cell", "mean accuracy (%)", "minus global [95% CI]", "median", "cells that gain"], rows),
            "", "oracle: each cell's own best LR, chosen on its other seeds and scored on each seed (cross-fitted); "
            "global: one LR for every cell; rule: LR = c x path-depth scale at the nearest grid point. The global LR "
            "and c are chosen leave-one-cell-out (on every other cell, then scored on this one).",
            "", global_text(res.arms["global"]), "", captured_text(h.captured, ci) + clipped, ""]


_ELR_NAMES = {"nominal": "nominal best LR", "elr_first": "effective step at the best LR, first epoch",
              "elr_last": "effective step at the best LR, last epoch"}


def elr_lines(e: Elr | None, full: bool) -> list[str]:
    """The spread and slope of the effective step at each cell's best LR, against one fixed LR."""
    if not e:
        return ["No run recorded effective LRs: nothing to say about them.", ""]
    names = dict(_ELR_NAMES)
    if e.fixed_lr is not None:
        names |= {"fixed_first": f"effective step at one LR {e.fixed_lr:.3g}, first epoch",
                  "fixed_last": f"effective step at one LR {e.fixed_lr:.3g}, last epoch"}
    rows = [[title, f"{s.median:.3g}", f"{s.sd_log:.2f}", signed(s.slope, 2)
             + (f" [{s.slope_ci[0]:.2f}, {s.slope_ci[1]:.2f}]" if full and s.slope_ci else "")]
            for title, s in ((title, e.series(k)) for k, title in names.items())]
    lines = [f"The effective step of a scale-invariant conv (a conv followed by a BatchNorm: its update acts through "
             f"it) is the epoch's scheduled LR times |grad W| / |W|, the median over the cell's live convs (dead ones, "
             f"whose ELR is 0, left out); {e.n} cells. At each cell's best LR against one LR for every cell (the "
             "global LR most folds chose): a smaller spread across cells at the best LR than at the fixed one says "
             "the best *effective* step is the more nearly constant.", "",
             *md_table(["", "median over cells", "sd of log over cells", "slope on path-depth scale"], rows), ""]
    for when, d in (("first", e.spread_diff_first), ("last", e.spread_diff_last)):
        if d and full:
            word = ("smaller at the best LR" if d.ci[1] < 0 else "larger at the best LR" if d.ci[0] > 0
                    else "not distinguishable at these cells")
            lines.append(f"Spread at the best LR minus spread at one LR, {when} epoch: {d.diff:+.2f} "
                         f"[{d.ci[0]:+.2f}, {d.ci[1]:+.2f}] (bootstrap over cells): {word}.")
    return lines + [""]


def ranking_lines(r: Ranking, top: int) -> list[str]:
    """Tau between the rankings each arm gives, beside the seed floor and the benchmark."""
    rows = [[pair.replace("-", " vs "), signed(r.pair(pair).tau, 3), signed(r.pair(pair).tau_top, 3),
             signed(r.pair(pair).tau_single, 3)] for pair in ("global-oracle", "rule-oracle", "global-rule")]
    lines = md_table(["rankings", "Kendall tau (seed means)", f"tau, top {top}% by oracle", "tau, single runs"], rows)
    lines += ["", f"Seed floor, like for like (one seed's run against another's, global LR): tau "
              f"{signed(r.seed_floor, 3)}. The single-run column is the comparable figure: an arm's seed against "
              "another arm's other seed."]
    if r.reference:
        refs = ", ".join(f"{arm} {signed(r.reference[arm], 3)}" for arm in ARMS)
        lines.append(f"Against the benchmark ({r.reference_n} cells): {refs}.")
    return lines + [""]


def cell_table(cells: Sequence[CellRow], family: str) -> list[str]:
    """One row per finished cell, by path-depth scale."""
    names, how = short_names([c.arch for c in cells], family)
    rows = []
    for c in sorted(cells, key=lambda c: c.lr_scale):
        ci = c.vertex_ci
        rows.append([f"`{names[c.arch]}`", f"{c.lr_scale:.3f}", f"{c.sum_l3:g}", f"{c.best_lr:.3g}",
                     f"{c.vertex_lr:.3g}" + (f" [{ci[0]:.3g}, {ci[1]:.3g}]" if ci else ""), c.edge or "",
                     f"{c.lrs[0]:.3g}-{c.lrs[-1]:.3g}", f"{c.best_mean:.2f}"])
    return md_table(["cell", "path-depth scale", "sum L^3", "best LR (argmax)", "best LR (vertex) [bootstrap]",
                     "at edge", "LRs tried", "best mean acc."], rows) + ["", how, ""]
