"""The typed summary of a retrain run that every section of its report computes from.

:func:`summarize` reads the run's store once and computes what several sections share: the
protocols in report order, their sources, the short names of the architectures, the budget,
the base-LR searches, every pairwise comparison and each protocol's comparison with the
benchmark reference. The sections (:mod:`nasrescale.kinds.retrain.sections`) read only this; what other
report kinds share (the reference, the protocol order) is :mod:`nasrescale.report.common.reference`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any, Sequence

from ...ranking.compare import compare
from ...ranking.paired import paired_robust
from ...ranking.sources import Source, store_source
from ...store.job_status import Status
from ...store.read import StoreData, read_store
from ...report.common.links import RunLink
from ...report.common.held_out import held_out, tuning_cells, without
from ...report.common.names import short_names
from ...report.common.reference import Comparison, load_reference, protocol_order, reference_spec
from .budget import budget_facts, budget_limits, searches
from .effects import effect_rows
from ...report.common.tuning_section import tuning_progress, tunings
from ...report.common.tuning_view import TuningView
from ...report.common.identical import identical_protocols
from .lr_split import lr_split

__all__ = ["RunSummary", "summarize"]


@dataclass(frozen=True)
class RunSummary:
    """A retrain run as its report reads it.

    Attributes:
        run_dir: the run folder (figures go there).
        store: the run's store.
        name: the pipeline's name.
        labels: the protocols in report order (:func:`protocol_order`).
        sources: each protocol's source, in that order.
        names: each architecture's short name (:func:`~nasrescale.report.common.names.short_names`).
        names_key: the sentence saying how to read the short names.
        n_boot: bootstrap resamples for every CI.
        include_degenerate: degenerate cells count in every statistic.
        switch: the command that counts degenerate cells (for the notes that say they are left out).
        budget: the budget's facts and limits (:func:`~nasrescale.kinds.retrain.budget.budget_facts`).
        searches: the base-LR searches (:func:`~nasrescale.kinds.retrain.budget.searches`).
        tunings: label -> its LR tuning, finished (:func:`~nasrescale.report.common.tuning_section.tunings`)
            or still running (:func:`~nasrescale.report.common.tuning_section.tuning_progress`).
        pairs: ``"B vs A"`` -> the comparison of every pair of protocols.
        reference_spec: the reference's spec (``None``: the pipeline names none).
        reference: the loaded reference (``None``: none, or not available).
        reference_missing: why the named reference could not be loaded (``None``: it could).
        vs_reference: per protocol with runs, its comparison with the reference (A = reference).
        proxy: the calibrated proxy validity of the run's budget, read from its calibration run.
        identical: protocol -> the earlier protocol it equals run by run
            (:func:`~nasrescale.report.common.identical.identical_protocols`); those are left out of
            :attr:`compared`, and so of every statistic.
        splits: ``"B vs A"`` -> the pair compared on each side of A's fixed LR
            (:func:`~nasrescale.kinds.retrain.lr_split.lr_split`), for pairs where B's LR varies.
        cells: ``(cells with a finished run, cells the pipeline declares)``.
        effects: the 2x2's effects among the protocols present
            (:func:`~nasrescale.kinds.retrain.effects.effect_rows`; empty without two arms of one).
        held_out: the tuning cells and the cells isomorphic to them, each with why
            (:func:`~nasrescale.report.common.held_out.held_out`): out of :attr:`sources`, and so of
            every statistic, unless ``include_tuning``.
        include_tuning: the held-out cells are counted (a sensitivity check).
        trained: each protocol's source with every cell it trained (the per-architecture table).
    """

    run_dir: Path
    store: StoreData
    name: str
    labels: list[str]
    sources: dict[str, Source]
    names: dict[str, str]
    names_key: str
    n_boot: int
    include_degenerate: bool
    switch: str
    budget: dict[str, Any]
    searches: dict[str, dict[str, Any]]
    tunings: dict[str, TuningView]
    pairs: dict[str, Comparison]
    reference_spec: str | None
    reference: Source | None
    reference_missing: str | None
    vs_reference: dict[str, Comparison]
    proxy: dict[str, Any] | None
    identical: dict[str, str]
    splits: dict[str, dict[str, Any]]
    cells: tuple[int, int]
    effects: list[dict[str, Any]]
    held_out: dict[str, str]
    include_tuning: bool
    trained: dict[str, Source]
    links: tuple[RunLink, ...] = ()

    @property
    def compared(self) -> list[str]:
        """The protocols the statistics compare: :attr:`labels` less the :attr:`identical` ones."""
        return [label for label in self.labels if label not in self.identical]

    @property
    def interim(self) -> bool:
        """Whether cells the pipeline declares have no finished run yet."""
        return self.cells[0] < self.cells[1]

    @property
    def family(self) -> str | None:
        """The pipeline's cell family (as stored)."""
        return self.store.record.family

    def numbers(self) -> dict[str, Any]:
        """What ``report.json`` holds before the sections' own numbers."""
        return {"name": self.name, "protocols": self.labels, "budget": self.budget,
                "pairs": {k: c.result for k, c in self.pairs.items()},
                "reference": {k: c.result for k, c in self.vs_reference.items()},
                "include_degenerate": self.include_degenerate, "identical_protocols": self.identical,
                "held_out": self.held_out, "include_tuning_cells": self.include_tuning,
                "lr_split": self.splits, "cells": {"finished": self.cells[0], "declared": self.cells[1]},
                "lr_search": {label: {k: v for k, v in found.items() if k != "selection"}
                              for label, found in self.searches.items()}}


def _archs(store: StoreData, labels: list[str]) -> list[str]:
    """The architectures the protocols trained, in the pipeline's order (the LR search's own not among them)."""
    trained = set(store.jobs.loc[store.jobs["protocol"].isin(labels), "arch"])
    order = [a for a in store.record.archs if a in trained]
    return order + sorted(trained - set(order))


def _cells(store: StoreData, labels: list[str]) -> tuple[int, int]:
    """``(cells with a finished run under every protocol, cells the pipeline declares)``."""
    done = store.jobs[store.jobs["protocol"].isin(labels) & store.jobs["status"].isin([Status.DONE, Status.DIVERGED])]
    per_protocol = [set(done.loc[done["protocol"] == label, "arch"]) for label in labels]
    finished = len(set.intersection(*per_protocol)) if per_protocol else 0
    trained = store.jobs.loc[store.jobs["protocol"].isin(labels), "arch"].nunique()
    return finished, max(len(store.record.archs), trained)


def _with_paired(comparison: Comparison) -> Comparison:
    """The comparison with the robust companions of its gain in its result (``paired``)."""
    merged = comparison.merged
    comparison.result["paired"] = paired_robust(merged["b"] - merged["a"]) if len(merged) else None
    return comparison


def summarize(run_dir: Path, *, n_boot: int = 1000, include_degenerate: bool = False,
              proxy: dict[str, Any] | None = None, include_tuning: bool = False,
              links: Sequence[RunLink] = ()) -> RunSummary:
    """Read the run in ``run_dir`` into its :class:`RunSummary` (see its attributes).

    Raises:
        DataError: no readable store in ``run_dir``.
    """
    run_dir = Path(run_dir)
    store = read_store(run_dir / "store.sqlite")
    name = store.record.name or run_dir.name
    labels = protocol_order(store)
    trained = {p: store_source(store, p, p) for p in labels}
    family = store.record.family
    evaluated = sorted({a for src in trained.values() for a in src.runs["arch"].astype(str)})
    cells_out = held_out(tuning_cells(store), evaluated, family)
    sources = trained if include_tuning else {p: without(s, cells_out) for p, s in trained.items()}
    names, key = short_names(_archs(store, labels), family, [store.record.family_file])
    budget = budget_facts(store)
    budget["limits"] = budget_limits(budget)
    same = identical_protocols(store.jobs, labels)
    compared = [label for label in labels if label not in same]
    pairs = {f"{y} vs {x}": _with_paired(Comparison(*compare(sources[x], sources[y], n_boot=n_boot,
                                                             include_degenerate=include_degenerate)))
             for x, y in combinations(compared, 2)}
    splits = {f"{y} vs {x}": split for x, y in combinations(compared, 2)
              if (split := lr_split(store, sources[x], sources[y], n_boot, include_degenerate)) is not None}
    spec, nats_file = reference_spec(store.record)
    ref, missing = load_reference(spec, nats_file)
    usable = {p: sources[p] for p in compared if not sources[p].runs.empty}
    vs_ref = {p: Comparison(*compare(ref, s, n_boot=n_boot, include_degenerate=include_degenerate))
              for p, s in usable.items()} if ref is not None else {}
    return RunSummary(run_dir, store, name, labels, sources, names, key, n_boot, include_degenerate,
                      f"`nasrescale report {name} --include-degenerate`", budget, searches(store), {**tuning_progress(store), **tunings(store)}, pairs, spec, ref,
                      missing, vs_ref, proxy, same, splits, _cells(store, compared),
                      effect_rows(usable, n_boot=n_boot, include_degenerate=include_degenerate), cells_out,
                      include_tuning, trained, tuple(links))
