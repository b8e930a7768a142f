"""The typed summary of a trend run (``kind = "trend"``) that every section of its report
computes from: the protocols and budgets, every (protocol, budget) source, its comparison with
the reference, the comparison of each protocol B with the first protocol A at each budget, and
the seed-noise floor of a named store.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import NasRescaleError
from ...ranking.compare import compare, per_seed
from ...ranking.rank import bootstrap_cis, seed_noise, topk_mask
from ...ranking.sources import Source, store_source
from ...store.read import StoreData, read_store, store_path
from ...store.record import TrendRecord, trend_label
from ...report.common.held_out import held_out, tuning_cells
from ...report.common.reference import Comparison, baseline_first, load_reference, reference_spec

__all__ = ["TrendSummary", "summarize_trend", "compared_cells", "ranked_cells", "gain_changes",
           "trend_held_out"]


@dataclass(frozen=True)
class TrendSummary:
    """A trend run as its report reads it.

    Attributes:
        run_dir: the run folder (figures go there).
        store: the run's store.
        name: the pipeline's name.
        labels: the protocols, A first (a baseline-like label: ``default``, ``nb201``, ``baseline``,
            ``standard``; else the first in the stored pipeline, whose keys are sorted), then every B.
        epochs: the budgets, ascending.
        sources: ``(label, epochs)`` -> the runs of that protocol at that budget.
        n_boot: bootstrap resamples for every CI.
        top_percent: the top-K% subset of the tau between protocols.
        reference_spec: the reference's spec (``None``: none named).
        reference: the loaded reference (``None``: none, or not available).
        vs_reference: ``(label, epochs)`` -> its comparison with the reference (A = reference).
        pairs: ``(B label, epochs)`` -> the comparison of A with B at that budget.
        noise_store: the store the seed-noise floor is read from (``None``: none named).
        noise: per protocol label of that store that the trend also has: its seed-noise figures
            (:func:`~nasrescale.ranking.rank.seed_noise`) on the trend's cells; ``{"missing": why}``
            when the store cannot be read.
        reuse: the run whose store the trend's runs were copied from (``None``: none named).
        compared: the cells every figure is of: those with a finished run under every protocol at
            every budget that has one (a partial run compares the same cells throughout; the others wait).
        waiting: the ``(label, epochs)`` with no finished run yet (a budget just added, a stage
            not finished): left out of ``compared`` and of the pairs until they have one.
        held_out: the LR tuning's cells (of this store and of the ``reuse`` store, whose tuned
            LRs the trend's protocols may carry) and the cells isomorphic to them, each with why:
            out of ``compared`` (:mod:`~nasrescale.report.common.held_out`).
    """

    run_dir: Path
    store: StoreData
    name: str
    labels: list[str]
    epochs: list[int]
    sources: dict[tuple[str, int], Source]
    n_boot: int
    top_percent: int
    reference_spec: str | None
    reference: Source | None
    vs_reference: dict[tuple[str, int], Comparison]
    pairs: dict[tuple[str, int], Comparison]
    noise_store: str | None
    noise: dict[str, Any]
    reuse: str | None = None
    compared: list[str] = field(default_factory=list)
    waiting: list[tuple[str, int]] = field(default_factory=list)
    held_out: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def cells(self) -> list[str]:
        """Every architecture the trend trained (any protocol, any budget)."""
        trained = {trend_label(label, e) for label in self.labels for e in self.epochs}
        return sorted(set(self.store.jobs.loc[self.store.jobs["protocol"].isin(trained), "arch"]))

    def numbers(self) -> dict[str, Any]:
        """What ``report.json`` holds before the sections' own numbers."""
        return {"name": self.name, "protocols": self.labels, "epochs": self.epochs, "a": self.labels[0],
                "reference": self.reference_spec, "cells": len(self.cells), "top_percent": self.top_percent,
                "reuse": self.reuse, "noise": self.noise_store, "compared": len(self.compared),
                "held_out": self.held_out}


def compared_cells(sources: dict[tuple[str, int], Source]) -> list[str]:
    """The cells with a finished run in every source (sorted).

    >>> import pandas as pd
    >>> runs = lambda *archs: Source("x", "store", pd.DataFrame({"arch": list(archs)}), None, "nb201")
    >>> compared_cells({("a", 6): runs("c1", "c2"), ("a", 12): runs("c2"), ("b", 6): runs("c2", "c3")})
    ['c2']
    """
    cells = [set(src.runs["arch"]) for src in sources.values()]
    return sorted(set.intersection(*cells)) if cells else []


def _noise(name: str | None, results_root: Path, labels: list[str], cells: list[str], top: int) -> dict[str, Any]:
    """The seed-noise figures of store ``name``'s protocols that share a label with the trend, on
    the trend's cells, and at ``top`` % on the best of them by A's (``labels[0]``) mean over its
    seeds there (the same cells for every protocol, as the pairs' top-K% tau takes A's best)."""
    if name is None:
        return {}
    try:
        store = read_store(store_path(name, results_root))
    except NasRescaleError as err:
        return {"missing": str(err)}
    wides = {label: per_seed(store_source(store, label, label)) for label in labels if label in store.protocols}
    wides = {label: wide[wide.index.isin(cells)] for label, wide in wides.items()}
    subsets = None
    if labels and labels[0] in wides and len(wides[labels[0]]):
        mean = wides[labels[0]].mean(axis=1)
        best = mean.index[topk_mask(mean.to_numpy(float), mean.to_numpy(float), top, "first",
                                    mean.index.to_numpy(dtype=object))]
        subsets = {100: list(mean.index), top: list(best)}
    return {label: seed_noise(wide, subsets) for label, wide in wides.items()}


def trend_held_out(store: StoreData, reuse: str | None, results_root: Path, cells: list[str]) -> dict[str, str]:
    """The tuning cells of this store and of the ``reuse`` store among ``cells``, and their isomorphs."""
    tuning = tuning_cells(store)
    if reuse:
        try:
            tuning |= tuning_cells(read_store(store_path(reuse, results_root)))
        except NasRescaleError:
            pass
    return held_out(tuning, cells, store.record.family)


def summarize_trend(run_dir: Path, *, n_boot: int = 1000) -> TrendSummary:
    """Read the trend run in ``run_dir`` into its :class:`TrendSummary`.

    Raises:
        DataError: no readable store in ``run_dir``.
    """
    run_dir = Path(run_dir)
    store = read_store(run_dir / "store.sqlite")
    labels = baseline_first(list(store.record.protocols))  # A first
    trend = store.record.trend or TrendRecord()
    epochs, top = list(trend.epochs), trend.top_percent
    sources = {(label, e): store_source(store, trend_label(label, e), trend_label(label, e))
               for label in labels for e in epochs if trend_label(label, e) in store.protocols}
    waiting = [(label, e) for label in labels for e in epochs
               if (label, e) not in sources or sources[(label, e)].runs.empty]
    sources = {key: src for key, src in sources.items() if key not in waiting}
    compared = compared_cells(sources)
    cells_out = trend_held_out(store, trend.reuse, run_dir.parent, compared)
    compared = [cell for cell in compared if cell not in cells_out]
    sources = {key: dataclasses.replace(src, runs=src.runs[src.runs["arch"].isin(compared)])
               for key, src in sources.items()}
    spec, nats_file = reference_spec(store.record)
    ref, _ = load_reference(spec, nats_file)
    vs_ref = {key: Comparison(*compare(ref, src, n_boot=n_boot)) for key, src in sources.items()
              if ref is not None and not src.runs.empty}
    ks = tuple(sorted({100, top}, reverse=True))
    pairs = {(b, e): Comparison(*compare(sources[(labels[0], e)], sources[(b, e)], n_boot=n_boot, ks=ks))
             for b in labels[1:] for e in epochs if (labels[0], e) in sources and (b, e) in sources}
    name = store.record.name or run_dir.name
    summary = TrendSummary(run_dir, store, name, labels, epochs, sources, n_boot, top, spec, ref, vs_ref, pairs,
                           trend.noise, {}, trend.reuse, compared, waiting, cells_out)
    noise = _noise(trend.noise, run_dir.parent, labels, ranked_cells(pairs, compared), top)
    return TrendSummary(**{**summary.__dict__, "noise": noise})


def ranked_cells(pairs: dict[tuple[str, int], Comparison], compared: list[str]) -> list[str]:
    """The cells every pair ranks (the compared cells less the degenerate ones and the isomorphic
    duplicates :func:`~nasrescale.ranking.compare.compare` leaves out): the cells the seed-noise
    floor is read on, so that it is of the same cells as tau(A, B). ``compared`` when no pair ranks any.

    >>> import pandas as pd
    >>> frame = lambda *archs: Comparison({}, pd.DataFrame(index=list(archs)))
    >>> ranked_cells({("b", 6): frame("c1", "c2"), ("b", 12): frame("c2", "c1")}, ["c1", "c2", "c3"])
    ['c1', 'c2']
    >>> ranked_cells({}, ["c1"])
    ['c1']
    """
    ranked = [set(c.merged.index) for c in pairs.values() if len(c.merged)]
    return sorted(set.intersection(*ranked)) if ranked else list(compared)


def _paired_change(run: TrendSummary, b: str, start: int, end: int) -> dict[str, Any]:
    """The change of B's gain over A from budget ``start`` to ``end``, paired over the cells both rank."""
    first, last = run.pairs[(b, start)].merged, run.pairs[(b, end)].merged
    cells = sorted(set(first.index) & set(last.index))
    g0 = (first.loc[cells, "b"] - first.loc[cells, "a"]).to_numpy(float)
    g1 = (last.loc[cells, "b"] - last.loc[cells, "a"]).to_numpy(float)
    ci = bootstrap_cis(g0, g1, n_boot=run.n_boot)["mean_diff"]
    return {"a": run.labels[0], "b": b, "from": start, "to": end, "n": len(cells),
            "change": float((g1 - g0).mean()) if cells else None, "change_ci": ci}


def gain_changes(run: TrendSummary) -> list[dict[str, Any]]:
    """Per protocol B, how its gain over A changed from the smallest to the largest budget with a
    pair, and, with three budgets or more, over each step between neighbouring budgets
    (``step``: true): the mean over cells of (gain at the later - gain at the earlier budget),
    with its 95% paired-bootstrap CI, on the cells both budgets rank. Pairing the cells makes
    this the test of a change: two budgets' separate CIs overlap more often than the change's CI
    holds 0."""
    out = []
    for b in run.labels[1:]:
        have = sorted(e for (label, e), c in run.pairs.items() if label == b and len(c.merged))
        if len(have) < 2:
            continue
        out.append(_paired_change(run, b, have[0], have[-1]))
        if len(have) > 2:
            out += [{**_paired_change(run, b, x, y), "step": True} for x, y in zip(have, have[1:])]
    return out
