"""``## B vs A``: one protocol pair of a retrain report.

The accuracy scatter, the numbers with their CIs (and a note when a few low cells drive
Pearson r), the top-K% table and curve on the same cells for every column, the pair split by
the LR B used (:mod:`nasrescale.kinds.retrain.lr_split`), B's gain against the LR it used and the
per-cell differences sorted by that LR (:mod:`nasrescale.kinds.retrain.pair_plots`).
"""

from __future__ import annotations

import re

from ...ranking.compare import per_seed
from ...ranking.text import degenerate_note, fmt, isomorphic_note
from . import plots
from .lr_split import fixed_lr, lr_split_lines, protocol_lrs
from ...report.common.markdown import numbers_table, pearson_note, topk_table
from ...report.common.robust import robust_sentence
from .pair_plots import gain_lr_plot, paired_diff_plot, seed_error, topk_band_plot
from ...report.common.reference import Comparison
from .summary import RunSummary

__all__ = ["pair_lines", "lr_setting", "slug"]


def slug(text: str) -> str:
    """A label as a file-name part.

    >>> slug("lr-search:rescaled")
    'lr-search_rescaled'
    """
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


def _notes(run: RunSummary, result: dict) -> list[str]:
    switch = f"`nasrescale rank {run.name}:{result['a']} {run.name}:{result['b']} --include-isomorphic`"
    return [n for n in (degenerate_note(result, run.switch), isomorphic_note(result, switch, run.names)) if n]


def _lr_figures(run: RunSummary, comparison: Comparison, key: str, name: str) -> list[str]:
    """The gain against the LR the varying protocol used (B's, else A's), and every cell's
    difference with its seed error bar, sorted by that LR."""
    result, merged = comparison.result, comparison.merged
    a, b = result["a"], result["b"]
    diverged = (merged["diverged_a"] > 0) | (merged["diverged_b"] > 0)
    live = merged[~merged["degenerate"].astype(bool) & ~diverged]
    varying = [(label, protocol_lrs(run.store, label).reindex(live.index).dropna()) for label in (b, a)]
    varying = [(label, lrs) for label, lrs in varying if len(lrs) >= 2 and lrs.nunique() >= 2]
    if not varying:
        return []
    lr_of, lrs = varying[0]
    reference_lr = fixed_lr(run.store, a if lr_of == b else b)
    gain = (live["b"] - live["a"]).reindex(lrs.index)
    fig = gain_lr_plot(lrs, gain, a, b, reference_lr, run.run_dir / f"gain_{name}.png", int(diverged.sum()), lr_of)
    wa, wb = per_seed(run.sources[a]), per_seed(run.sources[b])
    error = seed_error(wa.reindex(lrs.index), wb.reindex(lrs.index))
    paired = paired_diff_plot(gain, error, lrs, a, b, reference_lr, run.run_dir / f"paired_{name}.png", lr_of)
    line = f"dotted: {a if lr_of == b else b}'s LR" if reference_lr else "the other protocol's LRs vary too"
    return [f"![gain vs the LR used]({fig.name}) ![per-cell differences]({paired.name})", "",
            f"Left: each cell's gain ({b} - {a}) against the LR {lr_of} trained it with (log scale; {line}). Right: "
            "the gain of every cell, sorted by that LR, with its standard error over seeds.", ""]


def pair_lines(run: RunSummary, key: str, comparison: Comparison) -> list[str]:
    """The section of the pair ``key`` (``"B vs A"``)."""
    result, merged, out = comparison.result, comparison.merged, run.run_dir
    a, b = result["a"], result["b"]
    name = f"{slug(a)}_vs_{slug(b)}"
    lines = [f"## {b} vs {a}", "",
             f"A = {a}, B = {b}: every difference is B - A (accuracy points), and the top-K% subsets are A's best K%, "
             "the same cells for every column and curve.", ""]
    lines += [x for note in _notes(run, result) for x in (note, "")]
    if not len(merged):
        return lines + ["No architecture has a finished run under both protocols yet.", ""]
    scatter = plots.scatter_plot(merged, a, b, result["kendall_tau"], out / f"scatter_{name}.png")
    noise = result["seed_noise"]
    topk = topk_band_plot({f"{b} vs {a}": result["topk"]}, {a: noise["a"], b: noise["b"]}, out / f"topk_{name}.png",
                          f"rank agreement at the top ({result['n']} architectures)", f"{a} (A)")
    lines += [f"![accuracy scatter]({scatter.name}) ![top-K tau]({topk.name})", "", *numbers_table(result), ""]
    if (result.get("paired") or {}).get("ci"):
        lines += [f"The mean gain beside its robust companions: {robust_sentence(result['paired'], b, run.names)} "
                  "(a verdict only where the CI at 9,999 resamples excludes 0 and survives dropping the cells "
                  "that move the mean most).", ""]
    note = pearson_note(merged[~merged["degenerate"].astype(bool)], result)
    if note:
        lines += [note, ""]
    per_run = result.get("per_run_kendall_tau")
    if per_run:
        lines.append(f"Single runs compared across protocols give tau {fmt(per_run['kendall_tau'])} (mean of "
                     f"{per_run['pairs']} seed pairs), to set beside the seed-noise tau between one protocol's seeds.")
    lines += ["", *topk_table(result), ""]
    lines += lr_split_lines(run.splits.get(key), a, b)
    return lines + _lr_figures(run, comparison, key, name)


def lr_setting(run: RunSummary, pair: dict | None) -> str:
    """Words for the LR setting a pair ran at: B's base LR and the range of its per-cell LRs."""
    if not pair:
        return ""
    b = pair.get("b")
    protocol = run.store.record.protocols.get(b)
    lrs = protocol_lrs(run.store, b)
    if not len(lrs) or lrs.nunique() < 2:
        return ""
    base = protocol.lr if protocol is not None else None
    head = f"{b}: base LR {base:g} scaled per cell" if isinstance(base, (int, float)) else f"{b}: LR per cell"
    return f"{head}, {lrs.min():.3g} to {lrs.max():.3g}"

