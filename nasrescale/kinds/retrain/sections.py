"""The sections of a retrain run's ``report.md``, in order (:data:`RETRAIN_SECTIONS`), each
computing from the run's :class:`~nasrescale.kinds.retrain.summary.RunSummary` and then rendering.

The page: title (interim when cells are still to run; protocols identical to another run by
run, left out of every statistic), what the budget can say about the paper's claims, the 2x2 of
init x LR rule (when the run has its arms), the budget, base-LR searches, LR tunings, job status, the Method table (where the run follows the released code
or its budget rather than the paper's text), provenance, the tau matrix (3+ protocols), each
protocol pair (:mod:`nasrescale.kinds.retrain.pair_section`), each protocol against the benchmark, the
accuracy gaps, the effective learning rates, the per-architecture table, a few training curves
and a note on the statistics.
"""

from __future__ import annotations

from typing import Any

from ...ranking.boot_counts import VERDICT_BOOT
from ...ranking.compare import aggregate
from ...store.job_status import Status
from ...store.read import StoreData
from .archs import arch_lines, arch_rows
from .budget import budget_lines, search_lines
from .claims import claims_pair, claims_section
from ...report.common.held_out import held_out_note
from ...report.common.identical import identical_note
from ...report.common.method import method_section
from .pair_section import lr_setting, pair_lines
from .curves import curve_jobs, curves_lines
from ...report.common.markdown import status_table
from .elr_section import elr_lines, elr_table
from .tau_matrix import tau_matrix, tau_matrix_lines
from ...report.common.provenance import provenance_lines
from .cross_run import CrossRun
from .extrapolated import Extrapolated
from ...report.common.links import quote_links
from ...report.common.page import Computed, Section
from .reference_gaps import gap_section, reference_section
from .summary import RunSummary
from ...report.common.tuning_section import tuning_lines, tuning_numbers
from .two_by_two import TwoByTwo

__all__ = ["RETRAIN_SECTIONS"]

_NOTHING = Computed(None)


class _Lines:
    """A section with no numbers of its own: lines from the summary."""

    key: str | None = None

    def compute(self, run: RunSummary) -> Computed:
        return _NOTHING

    def render(self, run: RunSummary, computed: Computed) -> list[str]:
        return self.lines(run)

    def lines(self, run: RunSummary) -> list[str]:
        raise NotImplementedError


def _interim_line(run: RunSummary) -> str:
    """The interim line; where the protocols have finished different numbers of cells, it says
    each one's and that every comparison is of the cells both its protocols finished."""
    jobs = run.store.jobs
    done = jobs[jobs["status"].isin([Status.DONE, Status.DIVERGED])]
    counts = {label: done.loc[done["protocol"] == label, "arch"].nunique() for label in run.compared}
    head = f"**Interim:** {run.cells[0]} of {run.cells[1]} cells have a finished run under every protocol"
    if len(set(counts.values())) < 2:
        return head + "; every figure below is of those cells and will change as the rest finish."
    return (head + " (cells finished per protocol: " + ", ".join(f"{k} {v}" for k, v in counts.items())
            + "); each comparison is of the cells both its protocols finished, and every figure below will change "
            "as the rest finish.")


class Title(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        facts = {"dataset": run.store.record.dataset, "family": run.family, "created": run.store.record.created_at}
        lines = [f"# Report: {run.name}", "",
                 ", ".join(f"{k}: `{v}`" for k, v in facts.items() if isinstance(v, str)) or "(no pipeline metadata)",
                 ""]
        if run.interim:
            lines += [_interim_line(run), ""]
        notes = [identical_note(run.identical),
                 held_out_note(run.held_out, run.names, f"`nasrescale report {run.name} --include-tuning-cells`",
                               run.include_tuning)]
        return lines + [x for note in notes if note for x in (note, "")]


class Claims(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        numbers = run.numbers()
        pair = claims_pair(numbers["pairs"], run.store.record.protocols)
        key = f"{pair.get('b')} vs {pair.get('a')}" if pair else ""
        dataset = run.store.record.dataset
        trends = quote_links(run.links, run.run_dir, run.name, dataset)
        return claims_section(pair, numbers["reference"], dataset, run.proxy,
                              split=run.splits.get(key), setting=lr_setting(run, pair), trends=trends,
                              effects=run.effects, names=run.names)


class Budget(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        return budget_lines(run.budget) + search_lines(run.store, run.searches)


class Tuning:
    key = "tuning"

    def compute(self, run: RunSummary) -> Computed:
        return Computed(tuning_numbers(run.tunings))

    def render(self, run: RunSummary, computed: Computed) -> list[str]:
        return tuning_lines(run.tunings, run.run_dir)


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


class Method(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        return method_section(run.store.record)


class Provenance(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        return provenance_lines(run.store) + _failed_lines(run.store, run.names)


class TauMatrix:
    key = "tau_matrix"

    def compute(self, run: RunSummary) -> Computed:
        numbers = run.numbers()
        return Computed(tau_matrix(run.compared, numbers["pairs"], numbers["reference"],
                                   run.reference.label if run.reference is not None else None))

    def render(self, run: RunSummary, computed: Computed) -> list[str]:
        return tau_matrix_lines(computed.numbers, len(run.compared), run.run_dir)


class Pairs(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        return [line for key, comparison in run.pairs.items() for line in pair_lines(run, key, comparison)]


class Reference(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        return reference_section(run.reference_spec, run.reference, run.reference_missing, run.vs_reference,
                                 run.run_dir, run.switch, run.names, run.name)


class Gaps(_Lines):
    def lines(self, run: RunSummary) -> list[str]:
        usable = {p: run.sources[p] for p in run.compared if not run.sources[p].runs.empty}
        return gap_section(usable, run.reference, run.run_dir, run.include_degenerate, run.switch,
                           other_budget=bool(run.budget.get("limits")))


class Elr:
    key = "elr"

    def compute(self, run: RunSummary) -> Computed:
        runs, numbers, rows = elr_table(run.store, run.compared)
        return Computed(None if runs.empty else numbers, (runs, rows))

    def render(self, run: RunSummary, computed: Computed) -> list[str]:
        runs, rows = computed.detail
        return elr_lines(runs, run.compared, rows, run.run_dir, run.store)


class Archs:
    key = "archs"

    def compute(self, run: RunSummary) -> Computed:
        ref = aggregate(run.reference)["accuracy"] if run.reference is not None else None
        return Computed(arch_rows(run.store, run.trained, run.names, ref, run.family))

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
                + "; isomorphic cells (one function, several strings) count once"
                + f"; CIs are paired bootstrap over architectures ({run.n_boot} resamples, but {VERDICT_BOOT:,} for the "
                "mean gains the verdicts read; seed 0; BCa, or "
                "percentile where BCa degenerates or above 2,000 architectures); the top-K% subset is chosen by "
                "the first source (A), and every top-K% column and curve (the seed noise too) is computed on it, "
                "with 95% percentile bootstrap bands; top-K% subsets of fewer than 10 cells are not read as figures.",
                ""]


#: the retrain report's sections, in the page's order: a new section is a class with ``key``,
#: ``compute`` and ``render`` (:class:`~nasrescale.report.common.page.Section`) in a module of
#: this room, and one entry here
RETRAIN_SECTIONS: tuple[Section[Any], ...] = (
    Title(),
    Claims(),
    TwoByTwo(),
    Budget(),
    Tuning(),
    Extrapolated(),
    JobStatus(),
    Method(),
    CrossRun(),
    Provenance(),
    TauMatrix(),
    Pairs(),
    Reference(),
    Gaps(),
    Elr(),
    Archs(),
    Curves(),
    Statistics(),
)
