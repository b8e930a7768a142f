"""Two sections of ``report.md``: each protocol against the benchmark reference, and the
pairwise accuracy gaps (paper Fig. 4 right). Both leave degenerate cells out unless asked."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Mapping

import pandas as pd

from ...ranking.compare import aggregate, isomorphic_duplicates
from ...ranking.sources import Source
from ...ranking.bands import MIN_TOPK_ROWS
from ...ranking.text import degenerate_note, fmt, isomorphic_note
from . import plots
from ...report.common.markdown import md_table
from .pair_plots import topk_band_plot
from ...report.common.reference import Comparison

__all__ = ["reference_section", "gap_section"]


def reference_section(spec: str | None, ref: Source | None, missing: str | None,
                      comparisons: Mapping[str, Comparison], out: Path, switch: str,
                      names: Mapping[str, str] | None = None, run_name: str = "PIPELINE") -> list[str]:
    """``## Against the benchmark``: each protocol (B) against the reference (A), from their
    ``comparisons`` (per protocol); ``missing`` says why the reference ``spec`` did not load;
    ``run_name`` is the pipeline the notes' ``nasrescale rank`` commands name."""
    if spec is None:
        return ["## Against the benchmark", "", "The pipeline names no reference.", ""]
    if ref is None:
        return ["## Against the benchmark", "", f"Reference `{spec}` is not available: {missing}", ""]
    lines = [f"## Against the benchmark ({ref.label})", "",
             f"Here A = the reference {ref.label} and B = each protocol: n is the number of architectures ranked, "
             "diff = B - A in accuracy points.", ""]
    rows, curves, bands, points, notes, twins = [], {}, {}, {}, [], {}
    for label, comparison in comparisons.items():
        result, merged = comparison.result, comparison.merged
        ci = result["ci"].get("kendall_tau")
        top = min((e for e in result["topk"] if e["n"] >= MIN_TOPK_ROWS and e["k_percent"] < 100),
                  key=lambda e: e["k_percent"], default=None)
        rows.append([label, result["n"], fmt(result["kendall_tau"]), "" if not ci else f"[{fmt(ci[0])}, {fmt(ci[1])}]",
                     fmt(result["spearman"]), "-" if top is None else f"{fmt(top['kendall_tau'])} ({top['k_percent']}%, "
                     f"n = {top['n']})", fmt(result["mean_diff"], 2), fmt(result["mean_b"], 2),
                     fmt(result["mean_a"], 2)])
        notes.append(degenerate_note(result, switch))
        twins[label] = result
        if len(merged):
            curves[f"{label} vs {ref.label}"] = result["topk"]
            bands[label] = result["seed_noise"]["b"]
            points[label] = merged.rename(columns={"a": "b", "b": "a"})
    lines += md_table(["protocol (B)", "n", "Kendall tau", "95% CI", "Spearman",
                       f"tau, smallest top-K% of {MIN_TOPK_ROWS}+ cells", "diff (B - A)",
                       "mean acc. B (over the n)", "mean acc. A (ref., over the n)"], rows) + [""]
    notes += _isomorphic_notes(twins, f"`nasrescale rank {ref.label} {run_name}:PROTOCOL --include-isomorphic`",
                               dict(names or {}))
    lines += [note for note in dict.fromkeys(notes) if note][:2] + [""]
    if points:
        scatter = plots.reference_plot(points, ref.label, out / "reference_scatter.png")
        topk = topk_band_plot(curves, bands, out / "reference_topk.png", f"rank agreement with {ref.label}",
                              f"{ref.label} (the same cells for every curve)")
        lines += [f"![against the reference]({scatter.name}) ![top-K tau vs the reference]({topk.name})", ""]
    return lines


def _isomorphic_notes(results: Mapping[str, dict], switch: str, names: dict[str, str]) -> list[str]:
    """The isomorphic-duplicate notes of the protocols' ``results``: one note for all of them when
    each dropped the same cells at the same n (``PROTOCOL`` left in ``switch``), else one each."""
    notes = {label: isomorphic_note(result, switch.replace("PROTOCOL", label), names) for label, result in results.items()}
    shared = {isomorphic_note(result, switch, names) for result in results.values()}
    return list(shared) if len(shared) == 1 and len(results) > 1 else list(notes.values())


def _gap_archs(means: dict[str, pd.DataFrame], protocols: list[str], ref: str | None,
               include_degenerate: bool, family: str | None = None) -> tuple[list[str], dict[str, int]]:
    """The architectures the gaps use and why the others are not: ``(archs, {reason: count})``."""
    finished = [set(means[p].index) for p in protocols]
    every = set.intersection(*finished) if finished else set()
    dropped = {"missing": len(set.union(*finished) - every) if finished else 0}
    degenerate = {a for p in protocols for a in means[p].index[means[p]["degenerate"].eq(True)]}
    if not include_degenerate:
        dropped["degenerate"] = len(every & degenerate)
        every -= degenerate
    if ref is not None:
        dropped["reference"] = len(every - set(means[ref].index))
        every &= set(means[ref].index)
    twins = isomorphic_duplicates(sorted(every), family) if family else {}
    dropped["isomorphic"] = len(twins)
    return sorted(every - set(twins)), dropped


def gap_section(sources: dict[str, Source], ref: Source | None, out: Path, include_degenerate: bool,
                switch: str, other_budget: bool = False) -> list[str]:
    """``## Accuracy gaps``: how far each architecture moves between sources, and the gaps between
    architectures under each, on the architectures every protocol (and the reference) has, each
    isomorphism class once. ``other_budget``: the run's budget is not the reference's, so the
    gaps are drawn (and compared) in units of each source's accuracy std."""
    means = {label: aggregate(src) for label, src in sources.items()}
    if ref is not None:
        means[ref.label] = aggregate(ref)
    family = next((s.family for s in sources.values()), None)
    common, dropped = _gap_archs(means, list(sources), ref.label if ref is not None else None, include_degenerate,
                                 family)
    if len(common) < 2:
        return []
    gaps = {label: frame.loc[common, "accuracy"].to_numpy(float) for label, frame in means.items()}
    steady = [f.loc[common, "accuracy"][~f.loc[common].get("diverged", pd.Series(0, index=common)).gt(0)]
              for f in means.values()]  # diverged runs sit at chance: no scale
    other_budget = ref is not None and other_budget  # gaps in points do not compare across budgets
    by_rank = plots.scales_differ(*steady)  # e.g. a short run against the benchmark
    moved = {label: plots.ranks(v) for label, v in gaps.items()} if by_rank else gaps
    diffs = {f"{y} - {x}": moved[y] - moved[x] for x, y in combinations(list(gaps), 2)}
    drawn = {label: v / v.std() if v.std() > 0 else v for label, v in gaps.items()} if other_budget else gaps
    fig = plots.gap_plot(drawn, diffs, out / "gaps.png", by_rank, standardized=other_budget)
    rows = [[label, fmt(float(pd.Series(plots.pairwise_gaps(v)).median()), 2),
             fmt(float(plots.pairwise_gaps(v).mean()), 2), fmt(float(v.std()), 2),
             fmt(float(pd.Series(plots.pairwise_gaps(v)).median() / v.std()) if v.std() > 0 else None, 2)]
            for label, v in gaps.items()]
    why = [f"{len(common)} architectures: those with a finished run under every protocol"
           + (f" and an accuracy in {ref.label}" if ref is not None else "")]
    if dropped.get("missing"):
        why.append(f"{dropped['missing']} lack a finished run under some protocol")
    if dropped.get("degenerate"):
        why.append(f"{dropped['degenerate']} degenerate (no input-output path, at chance by construction) left out; "
                   f"{switch} counts them")
    if dropped.get("reference"):
        why.append(f"{dropped['reference']} are not in the reference")
    if dropped.get("isomorphic"):
        why.append(f"{dropped['isomorphic']} isomorphic duplicate(s) counted once")
    scales = [] if not other_budget else [
        f"{ref.label}'s accuracies come from its own budget, the protocols' from this run's: gaps in points do not "
        "compare across them. The figure draws the gaps in units of each source's accuracy std; the table's last "
        "column (median gap / std) is the scale-free one to compare.", ""]
    return [f"## Accuracy gaps ({len(common)} architectures)", "", "; ".join(why) + ".", "", *scales,
            f"![pairwise gaps]({fig.name})", "",
            *md_table(["source", "median gap (points)", "mean gap (points)", "accuracy std", "median gap / std"],
                      rows), ""]
