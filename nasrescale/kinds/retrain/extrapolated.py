"""``Extrapolated LRs``: per tuned arm, the cells it trained at an LR outside the range its
tuning tried, and its gain over the baseline with and without them.

A tuned arm's multiplier was chosen on the tuning cells at the LRs those cells got
(``tune:<arm>@x<m>`` jobs); under a path-depth rule an evaluated cell's LR is the chosen base LR
times its own scale, which can lie far outside every LR the tuning tried (e.g. 1.43 against a
tuning maximum of 0.95). Such a cell's accuracy says how the rule extrapolates, not how the
tuned choice fares, so each arm's line names them and gives its gain both ways.
"""

from __future__ import annotations

from typing import Any

from ...lrsearch.tuning import TUNE_PREFIX
from ...ranking.paired import paired_robust
from .lr_split import protocol_lrs
from ...report.common.robust import ci_text
from ...report.common.page import Computed
from .summary import RunSummary

__all__ = ["extrapolated_rows", "Extrapolated"]


def _tried(run: RunSummary, label: str) -> tuple[float, float] | None:
    jobs = run.store.jobs
    lrs = jobs.loc[jobs["protocol"].astype(str).str.startswith(f"{TUNE_PREFIX}{label}@"), "lr"].dropna()
    return (float(lrs.min()), float(lrs.max())) if len(lrs) else None


def extrapolated_rows(run: RunSummary) -> list[dict[str, Any]]:
    """Per tuned arm compared with the baseline (the pair ``"<arm> vs <baseline>"``): ``tried``
    (the LR range its tuning ran), ``outside`` (cells ranked whose LR lies outside it, with
    their LRs), and the robust gain over the baseline with (``gain``) and without them
    (``gain_without``)."""
    if not run.compared:
        return []
    base, out = run.compared[0], []
    for label in run.compared[1:]:
        tried, comparison = _tried(run, label), run.pairs.get(f"{label} vs {base}")
        if tried is None or comparison is None or not len(comparison.merged):
            continue
        merged = comparison.merged
        lrs = protocol_lrs(run.store, label).reindex(merged.index).dropna()
        outside = {str(a): float(v) for a, v in lrs.items() if not tried[0] <= v <= tried[1]}
        diffs = merged["b"] - merged["a"]
        kept = diffs.drop(list(outside))
        out.append({"arm": label, "baseline": base, "tried": list(tried), "outside": outside,
                    "gain": comparison.result.get("paired") or paired_robust(diffs),
                    "gain_without": paired_robust(kept) if outside and len(kept) else None})
    return out


def _gain(robust: dict[str, Any] | None) -> str:
    if not robust or robust.get("mean") is None:
        return "-"
    return f"{robust['mean']:+.2f}" + (f" {ci_text(robust.get('ci'))}" if robust.get("ci") else "") + \
        f" ({robust['n']} cells)"


class Extrapolated:
    """The per-arm lines (nothing without a tuned arm)."""

    key = "extrapolated_lrs"

    def compute(self, run: RunSummary) -> Computed:
        return Computed(extrapolated_rows(run) or None)

    def render(self, run: RunSummary, computed: Computed) -> list[str]:
        if not computed.numbers:
            return []
        lines = ["## Extrapolated LRs", "", "Per tuned arm, the cells it trained at an LR outside the range its "
                 "tuning tried, and its gain over the baseline with and without them (9,999 resamples):", ""]
        for r in computed.numbers:
            low, high = r["tried"]
            cells = ", ".join(f"{run.names.get(a, a)} at {lr:.3g}" for a, lr in r["outside"].items())
            text = (f"- `{r['arm']}` (tuning tried LR {low:.3g} to {high:.3g}): "
                    + (f"{len(r['outside'])} cells outside it ({cells}); gain over {r['baseline']} "
                       f"{_gain(r['gain'])} with them, {_gain(r['gain_without'])} without them."
                       if r["outside"] else f"every cell inside it; gain over {r['baseline']} {_gain(r['gain'])}."))
            lines.append(text)
        return lines + [""]
