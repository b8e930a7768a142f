"""The 2x2's effects, each a paired comparison of two arms computed once per report.

The 2x2 crosses init {PyTorch default, in-degree} with LR rule {one global LR, base LR x
path-depth scale}, each arm's global LR tuned at the run's budget (docs/protocols.md:
``flat``, ``principled``, ``tuned``, ``scaled``; ``default`` and ``rescaled`` beside them).
Each effect is B - A on the cells both arms finished: the mean gain with its 95% CI (at
:data:`~nasrescale.ranking.paired.VERDICT_BOOT` resamples), tau(A, B)
with its CI, the top-20% tau (and its cell count), each arm's seed-noise tau on the same cells, and
the robust companions of the gain (``robust``: :func:`~nasrescale.ranking.paired.paired_robust`). The 2x2
section tabulates them and the claims section reads them, so both say the same numbers.

>>> [(name, a, b) for name, a, b in EFFECTS][:2]
[('path-depth vs global LR, in-degree init', 'flat', 'principled'), ('path-depth vs global LR, PyTorch init', 'tuned', 'scaled')]
"""

from __future__ import annotations

from typing import Any, Mapping

from ...ranking.compare import compare
from ...ranking.paired import paired_robust
from ...ranking.sources import Source

__all__ = ["ARMS", "EFFECTS", "effect_rows"]

#: the 2x2's arms and the two protocols beside them
ARMS = ("principled", "flat", "scaled", "tuned", "default", "rescaled")

#: (effect, A, B): each row is B - A
EFFECTS = (
    ("path-depth vs global LR, in-degree init", "flat", "principled"),
    ("path-depth vs global LR, PyTorch init", "tuned", "scaled"),
    ("in-degree vs PyTorch init, global LR", "tuned", "flat"),
    ("in-degree vs PyTorch init, path-depth LR", "scaled", "principled"),
    ("tuning alone (default's LR tuned)", "default", "tuned"),
    ("the paper's comparison", "default", "principled"),
    ("the paper's 200-epoch base LR kept", "principled", "rescaled"),
)


def _topk(result: dict[str, Any], k: int = 20) -> dict[str, Any]:
    """The top-``k``% row of a comparison (its tau and its cell count), or an empty one."""
    return next((row for row in result.get("topk") or [] if row.get("k_percent") == k), {})


def _seed_tau(result: dict[str, Any], side: str) -> Any:
    return ((result.get("seed_noise") or {}).get(side) or {}).get("kendall_tau")


def effect_rows(sources: Mapping[str, Source], *, n_boot: int, include_degenerate: bool) -> list[dict[str, Any]]:
    """One entry per effect whose two protocols both have finished cells in ``sources``."""
    out = []
    for name, a, b in EFFECTS:
        if a not in sources or b not in sources or sources[a].runs.empty or sources[b].runs.empty:
            continue
        result, merged = compare(sources[a], sources[b], n_boot=n_boot, include_degenerate=include_degenerate)
        if not result.get("n"):
            continue
        ci, top20 = result.get("ci") or {}, _topk(result)
        robust = paired_robust(merged["b"] - merged["a"])
        out.append({"effect": name, "a": a, "b": b, "n": result["n"], "gain": result.get("mean_diff"),
                    "gain_ci": robust["ci"] or ci.get("mean_diff"), "kendall_tau": result.get("kendall_tau"),
                    "kendall_tau_ci": ci.get("kendall_tau"), "top20_kendall_tau": top20.get("kendall_tau"),
                    "top20_n": top20.get("n"),
                    "seed_tau_a": _seed_tau(result, "a"), "seed_tau_b": _seed_tau(result, "b"),
                    "per_run_tau": result.get("per_run_kendall_tau"), "robust": robust})
    return out
