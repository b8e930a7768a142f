"""The sections of a retrain run's ``report.md``, in order (:data:`RETRAIN_SECTIONS`), each
computing from the run's :class:`~nasrescale.report.summary.RunSummary` and then rendering.

The page: title, what the budget can say about the paper's claims, the budget, base-LR
searches, job status, provenance, the tau matrix (3+ protocols), each protocol pair (paper
Fig. 4: accuracy scatter with y = x, Kendall tau at top-K% with the seed-noise band, accuracy
gain against the LR scale), each protocol against the benchmark, the accuracy gaps, the
effective learning rates, the per-architecture table, a few training curves and a note on the
statistics.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from ..ranking.compare import aggregate
from ..ranking.text import degenerate_note, fmt
from ..store.job_status import Status
from ..store.read import StoreData, dataset_name, pipeline_value
from . import plots
from .archs import arch_lines, arch_rows
from .budget import budget_lines, search_lines
from .claims import claims_pair, claims_section
from .curves import curve_jobs, curves_lines
from .markdown import numbers_table, status_table, topk_table
from .protocols import elr_lines, elr_table, tau_matrix, tau_matrix_lines
from .provenance import provenance_lines
from .section import Computed, Section
from .sections import gap_section, reference_section
from .summary import Comparison, RunSummary

__all__ = ["RETRAIN_SECTIONS"]

_NOTHING = Computed(None)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


class _Lines:
    """A section with no numbers of its own: lines from the summary."""

    key: str | None = None

    def compute(self, run: RunSummary) -> Computed:
        return _NOTHING

    def render(self, run: RunSummary, computed: Computed) -> list[str]:
        return self.lines(run)

    def lines(self, run: RunSummary) -> list[str]:
        raise NotImplementedError


class Title(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        facts = {"dataset": dataset_name(run.store.pipeline), "family": run.family,
                 "created": run.store.meta.get("created_at")}
        return [f"# Report: {run.name}", "",
                ", ".join(f"{k}: `{v}`" for k, v in facts.items() if isinstance(v, str)) or "(no pipeline metadata)",
                ""]


class Claims(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        numbers = run.numbers()
        pair = claims_pair(numbers["pairs"], pipeline_value(run.store.pipeline, "protocols"))
        return claims_section(pair, numbers["reference"], dataset_name(run.store.pipeline), run.proxy)


class Budget(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        return budget_lines(run.budget) + search_lines(run.store, run.searches)


class JobStatus(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        return status_table(run.store, run.labels) + [""]


def _failed_lines(store: StoreData, names: dict[str, str]) -> list[str]:
    failed = store.jobs[store.jobs["status"] == Status.FAILED]
    if not len(failed):
        return []
    lines = [f"Failed jobs ({len(failed)}):", ""]
    for _, row in failed.head(10).iterrows():
        first = str(row.get("error") or "").strip().splitlines()
        lines.append(f"- `{names.get(row['arch'], row['arch'])}` {row['protocol']} seed {row['seed']}: "
                     f"{first[-1] if first else '?'}")
    return lines + [""]


class Provenance(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        return provenance_lines(run.store) + _failed_lines(run.store, run.names)


class TauMatrix:
    key = "tau_matrix"

    def compute(self, run: RunSummary) -> Computed:
        numbers = run.numbers()
        return Computed(tau_matrix(run.labels, numbers["pairs"], numbers["reference"],
                                   run.reference.label if run.reference is not None else None))

    def render(self, run: RunSummary, computed: Computed) -> list[str]:
        return tau_matrix_lines(computed.numbers, len(run.labels), run.run_dir)


def _lr_scales(store: StoreData, a: str, b: str) -> pd.Series:
    """Per architecture, the LR scale of whichever of the two protocols varies it."""
    best = pd.Series(dtype=float)
    for label in (b, a):
        s = store.jobs[store.jobs["protocol"] == label].groupby("arch")["lr_scale"].median().dropna()
        if len(s) > 1 and s.std() > 0 and (best.empty or s.std() > best.std()):
            best = s
    return best


def _pair_lines(run: RunSummary, comparison: Comparison) -> list[str]:
    """``## B vs A``: scatter, top-K tau, the numbers, and the gain against the LR scale."""
    result, merged, out = comparison.result, comparison.merged, run.run_dir
    a, b = result["a"], result["b"]
    slug = f"{_slug(a)}_vs_{_slug(b)}"
    lines = [f"## {b} vs {a}", "",
             f"A = {a}, B = {b}: every difference is B - A (accuracy points), and the top-K% subsets are A's best K%.",
             ""]
    if degenerate_note(result, run.switch):
        lines += [degenerate_note(result, run.switch), ""]
    if not len(merged):
        return lines + ["No architecture has a finished run under both protocols yet.", ""]
    scatter = plots.scatter_plot(merged, a, b, result["kendall_tau"], out / f"scatter_{slug}.png")
    noise = result["seed_noise"]
    topk = plots.topk_plot({f"{b} vs {a}": result["topk"]}, {a: noise["a"], b: noise["b"]}, out / f"topk_{slug}.png",
                           f"rank agreement at the top ({result['n']} architectures)")
    lines += [f"![accuracy scatter]({scatter.name}) ![top-K tau]({topk.name})", "", *numbers_table(result), ""]
    per_run = result.get("per_run_kendall_tau")
    if per_run:
        lines.append(f"Single runs compared across protocols give tau {fmt(per_run['kendall_tau'])} (mean of "
                     f"{per_run['pairs']} seed pairs), to set beside the seed-noise tau between one protocol's seeds.")
    lines += ["", *topk_table(result), ""]
    diverged = (merged["diverged_a"] > 0) | (merged["diverged_b"] > 0)
    live = merged[~merged["degenerate"].astype(bool) & ~diverged]
    scales = _lr_scales(run.store, a, b).reindex(live.index).dropna()
    if len(scales) >= 2:
        gain = (live["b"] - live["a"]).reindex(scales.index)
        fig = plots.gain_plot(scales, gain, a, b, out / f"gain_{slug}.png", int(diverged.sum()))
        lines += [f"![gain vs LR scale]({fig.name})", ""]
    return lines


class Pairs(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        return [line for comparison in run.pairs.values() for line in _pair_lines(run, comparison)]


class Reference(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        return reference_section(run.reference_spec, run.reference, run.reference_missing, run.vs_reference,
                                 run.run_dir, run.switch)


class Gaps(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        usable = {p: s for p, s in run.sources.items() if not s.runs.empty}
        return gap_section(usable, run.reference, run.run_dir, run.include_degenerate, run.switch)


class Elr:
    key = "elr"

    def compute(self, run: RunSummary) -> Computed:
        runs, numbers, rows = elr_table(run.store, run.labels)
        return Computed(None if runs.empty else numbers, (runs, rows))

    def render(self, run: RunSummary, computed: Computed) -> list[str]:
        runs, rows = computed.detail
        return elr_lines(runs, run.labels, rows, run.run_dir)


class Archs:
    key = "archs"

    def compute(self, run: RunSummary) -> Computed:
        ref = aggregate(run.reference)["accuracy"] if run.reference is not None else None
        return Computed(arch_rows(run.store, run.sources, run.names, ref))

    def render(self, run: RunSummary, computed: Computed) -> list[str]:
        label = run.reference.label if run.reference is not None else None
        return arch_lines(run.store, computed.numbers, run.labels, run.names, run.names_key, label)


class Curves:
    key = "curves"

    def compute(self, run: RunSummary) -> Computed:
        picked = curve_jobs(run.store, run.labels, run.names)
        return Computed([{"key": k, **v} for k, v in picked.items()] if picked else None, picked)

    def render(self, run: RunSummary, computed: Computed) -> list[str]:
        return curves_lines(run.store, computed.detail, run.run_dir)


class Statistics(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        return ["Differences are B - A in accuracy points; diverged runs count as chance accuracy; degenerate cells "
                + ("are counted in every statistic" if run.include_degenerate else "are left out of every statistic")
                + f"; CIs are paired bootstrap over architectures ({run.n_boot} resamples, seed 0; BCa, or "
                "percentile where BCa degenerates or above 2,000 architectures); the top-K% subset is chosen by "
                "the first source (A).", ""]


#: the retrain report's sections, in the page's order
RETRAIN_SECTIONS: tuple[Section[Any], ...] = (
    Title(), Claims(), Budget(), JobStatus(), Provenance(), TauMatrix(), Pairs(), Reference(), Gaps(), Elr(), Archs(),
    Curves(), Statistics())
