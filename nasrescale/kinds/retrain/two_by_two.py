"""The report's 2x2 section: the paper's per-architecture scaling apart from global-LR and init effects.

A run whose protocols include arms of the 2x2 of init {PyTorch default, in-degree} x LR rule {one
global LR, base LR x path-depth scale} (docs/protocols.md: ``flat``, ``principled``, ``tuned``,
``scaled``; ``default`` and ``rescaled`` beside them) gets one table of effects, each a paired
comparison B - A on the cells both finished, with its 95% CI, the rank agreement tau(A, B) with
its CI, the top-20% tau, and the seed-noise tau of A and of B on the same cells for scale:

* the paper's claim: path-depth against global within each init;
* the init's effect within each LR rule;
* what tuning alone buys (``tuned`` vs ``default``) and the paper's own comparison
  (``principled`` vs ``default``);
* the base LR's sensitivity (``rescaled``, the paper's 200-epoch base LR, vs ``principled``).

Then per arm: its tau against the reference with CI, and the effective LR eta/||W||^2 of its
scale-invariant convs (the median over layers, then over runs) in the first and the last
epoch, from the runs whose history records it. The effects are computed once per report
(:func:`~nasrescale.kinds.retrain.effects.effect_rows`, :attr:`RunSummary.effects`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...ranking.bands import MIN_TOPK_ROWS
from ...ranking.text import fmt
from ...store.job_status import Status
from ...report.common.markdown import md_table
from ...report.common.records import epoch_history
from ...report.common.robust import robust_cells
from .effects import ARMS
from ...report.common.page import Computed
from .summary import RunSummary
from .two_by_two_plots import effects_plot

__all__ = ["TwoByTwo", "elr_by_arm"]


def _elr_medians(record_json: Any) -> tuple[float, float]:
    """A run's median per-layer ELR in its first and last recorded epoch (NaN without one)."""
    epochs = [h.elr for h in epoch_history(record_json) if h.elr]
    if not epochs:
        return math.nan, math.nan
    return float(np.median(epochs[0])), float(np.median(epochs[-1]))


def elr_by_arm(run: RunSummary) -> dict[str, dict[str, Any]]:
    """Per arm with recorded ELRs: runs, and the median over runs of the first and last epoch's ELR."""
    jobs = run.store.jobs
    if "record_json" not in jobs:
        return {}
    out = {}
    for label in (a for a in ARMS if a in run.labels):
        done = jobs[(jobs["protocol"] == label) & (jobs["status"] == Status.DONE) & ~jobs["degenerate"].astype(bool)]
        pairs = [p for p in done["record_json"].map(_elr_medians) if math.isfinite(p[0])]
        if pairs:
            out[label] = {"runs": len(pairs), "of": len(done), "first_epoch": float(np.median([p[0] for p in pairs])),
                          "last_epoch": float(np.median([p[1] for p in pairs]))}
    return out


def _with_ci(value: Any, ci: Any, digits: int = 3) -> str:
    """``value [lo, hi]``, or the value alone where there is no CI (too few cells).

    >>> _with_ci(0.5, [0.25, 0.75]), _with_ci(-0.11, None, 2), _with_ci(None, None)
    ('0.500 [0.250, 0.750]', '-0.11', '-')
    """
    text = fmt(value, digits)
    if isinstance(ci, list) and len(ci) == 2 and None not in ci:
        text += f" [{fmt(ci[0], digits)}, {fmt(ci[1], digits)}]"
    return text


def _shown_ci(row: dict[str, Any], key: str) -> Any:
    """The row's CI under ``key`` where the effect has :data:`MIN_TOPK_ROWS` cells or more, else None.

    >>> _shown_ci({"n": 15, "gain_ci": [-0.5, 0.2]}, "gain_ci"), _shown_ci({"n": 4, "gain_ci": [1.0, 1.0]}, "gain_ci")
    ([-0.5, 0.2], None)
    """
    return row.get(key) if (row.get("n") or 0) >= MIN_TOPK_ROWS else None


def _top20(row: dict[str, Any]) -> str:
    """The top-20% tau, or "-" where the top 20% holds fewer than :data:`MIN_TOPK_ROWS` cells.

    >>> _top20({"top20_kendall_tau": 0.6, "top20_n": 11}), _top20({"top20_kendall_tau": 1.0, "top20_n": 3})
    ('0.600', '-')
    """
    return fmt(row.get("top20_kendall_tau")) if (row.get("top20_n") or 0) >= MIN_TOPK_ROWS else "-"


def _gain_cells(row: dict[str, Any]) -> list[str]:
    """The gain with its CI at 9,999 resamples, the median, the cells that gain and the verdict
    (:func:`~nasrescale.ranking.paired.paired_robust`); the figures alone below :data:`MIN_TOPK_ROWS` cells.

    >>> _gain_cells({"n": 4, "b": "p", "gain": 0.2, "gain_ci": [0.1, 0.3],
    ...              "robust": {"median": 0.1, "wilcoxon_p": None, "gains": 3, "n": 4, "verdict": "none"}})
    ['0.20', '+0.10', '3 of 4', '-']
    """
    few = (row.get("n") or 0) < MIN_TOPK_ROWS
    median, _, gains, word = robust_cells(row, few)
    return [_with_ci(row["gain"], None if few else row.get("gain_ci"), 2), median, gains, word]


class TwoByTwo:
    """The 2x2 section (nothing unless two arms of one effect have finished cells)."""

    key = "two_by_two"

    def compute(self, run: RunSummary) -> Computed:
        rows = run.effects
        if not rows:
            return Computed(None)
        reference = {label: {"kendall_tau": c.result.get("kendall_tau"),
                             "ci": (c.result.get("ci") or {}).get("kendall_tau"), "n": c.result.get("n")}
                     for label, c in run.vs_reference.items() if label in ARMS}
        return Computed({"effects": rows, "reference": reference, "elr": elr_by_arm(run)})

    def render(self, run: RunSummary, computed: Computed) -> list[str]:
        if computed.numbers is None:
            return []
        numbers = computed.numbers
        lines = ["## The 2x2: per-architecture scaling apart from global LR and init", "",
                 "Each row is B - A on the cells both finished: the mean gain in accuracy points with its 95% "
                 "paired-bootstrap CI at 9,999 resamples, the median difference, the cells that gain, the verdict (a "
                 "word only where the CI excludes 0 and survives dropping the 3 cells that carry it most; the claims "
                 "above name the cells), tau(A, B) of the means over seeds with its CI, tau on A's top 20%, the "
                 "single-run tau(A, B) (the mean over every pairing of a seed of A with a seed of B) and the "
                 "seed-noise tau of A and of B (seed 0 vs 1, single runs too) on the same cells: a single-run "
                 "tau(A, B) near the seed-noise tau means the two rankings differ no more than reruns do; tau of "
                 f"the means sits higher by construction and is not read against it. On fewer than {MIN_TOPK_ROWS} cells a bootstrap over "
                 "cells says little, so such a row gives its figures without CIs, and a top 20% of fewer "
                 "cells no tau (report.json keeps them).", ""]
        rows = [[r["effect"], f"{r['b']} - {r['a']}", r["n"], *_gain_cells(r),
                 _with_ci(r["kendall_tau"], _shown_ci(r, "kendall_tau_ci")), _top20(r),
                 fmt((r.get("per_run_tau") or {}).get("kendall_tau")),
                 f"{fmt(r['seed_tau_a'])} / {fmt(r['seed_tau_b'])}"] for r in numbers["effects"]]
        lines += [*md_table(["effect", "B - A", "cells", "gain (95% CI, 9,999 resamples)", "median", "cells that gain",
                             "verdict", "tau(A, B) (95% CI)", "top-20% tau", "single-run tau(A, B)",
                             "seed tau A / B"], rows), ""]
        figure = effects_plot(numbers["effects"], run.run_dir / "effects_2x2.png")
        lines += [f"![the 2x2's effects: gain and tau(A, B) with 95% CIs]({figure.name})", ""]
        if numbers["reference"]:
            lines += ["Against the reference: " + "; ".join(
                f"{label} tau {_with_ci(v['kendall_tau'], _shown_ci(v, 'ci'))} (n = {v['n']})"
                for label, v in numbers["reference"].items()) + ".", ""]
        if numbers["elr"]:
            lines += ["Effective LR eta/||W||^2 of the scale-invariant convs (median over layers, then runs): "
                      + "; ".join(f"{label} {fmt(v['first_epoch'], 4)} in the first epoch -> {fmt(v['last_epoch'], 4)} "
                                  f"in the last ({v['runs']} of {v['of']} runs record it)"
                                  for label, v in numbers["elr"].items()) + ".", ""]
        return lines
