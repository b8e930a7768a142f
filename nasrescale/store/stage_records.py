"""The record's schema types of what a run's stages stored in its meta: an LR search's selection
(``lr_search:<label>``, :class:`SearchSelection`), a finished LR tuning (``tuning:<label>``,
:class:`TuningResult` of :class:`TuningRun`), a slice's visit (``visit:<n>``, :class:`Visit`) and
what a run copied from another (``reused``, :class:`Reused`).

Read once, in :func:`~nasrescale.store.migration.parse_record`; a key the entry leaves out reads
as ``None`` (or empty): not recorded. An older entry holds fewer keys (a visit from before slices
named their device has no ``device``).

>>> visit = Visit.of({"jobs_run": 4, "stopped": "slice finished", "cells_run": ["a"]})
>>> visit.jobs_run, visit.device, visit.cells_run
(4, None, ('a',))
>>> TuningResult.of({"chosen": 2.0, "runs": {"2": [{"arch": "a", "seed": 0, "test_accuracy": 60.0}]}}).runs["2"][0].arch
'a'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

from .schema import StoredTable

__all__ = ["SeedArgmin", "LrResult", "SearchSelection", "TuningRun", "TuningResult", "Visit", "Reused"]


@dataclass(frozen=True)
class SeedArgmin(StoredTable):
    """One seed's argmin LR of an LR search."""

    seed: int | None = None
    lr: float | None = None


@dataclass(frozen=True)
class LrResult(StoredTable):
    """One grid LR of an LR search: each seed's final loss, their mean, diverged or tied with the best."""

    lr: float | None = None
    mean_loss: float | None = None
    losses: tuple[float | None, ...] = ()
    diverged: bool = False
    tied: bool = False


@dataclass(frozen=True)
class SearchSelection(StoredTable):
    """An LR search's selection: the LR it chose and how (meta ``lr_search:<label>``).

    Attributes:
        chosen_lr: the LR chosen (``None``: not recorded).
        best_lr: the grid LR of the smallest mean loss.
        rule, rule_text, combined_by: the selection rule, its steps in words, how seeds combine.
        on_grid: whether the chosen LR is one of the grid's.
        grid: the LRs tried, ascending (an extension's too).
        seed_argmins: each seed's argmin LR.
        losses: grid LR (as text) -> each seed's final training loss.
        per_lr: each grid LR's result.
        diverged, tied: the grid LRs where a run diverged, and those tied with the best.
        rel_tol: the tie tolerance.
        edge, edge_message: ``low``/``high`` where the best sits at the grid's edge, and why.
        extensions: how often the grid was extended past an edge.
        arch, protocol: the architecture searched and the protocol searched for.
        plot: the figure's path as stored.
    """

    NESTED_EACH: ClassVar[Mapping[str, type]] = {"seed_argmins": SeedArgmin, "per_lr": LrResult}

    chosen_lr: float | None = None
    best_lr: float | None = None
    rule: str | None = None
    rule_text: tuple[str, ...] = ()
    combined_by: str | None = None
    on_grid: bool | None = None
    grid: tuple[float, ...] = ()
    seed_argmins: tuple[SeedArgmin, ...] = ()
    losses: Mapping[str, tuple[float, ...]] = field(default_factory=dict, repr=False)
    per_lr: tuple[LrResult, ...] = field(default=(), repr=False)
    diverged: tuple[float, ...] = ()
    tied: tuple[float, ...] = ()
    rel_tol: float | None = None
    edge: str | None = None
    edge_message: str | None = None
    extensions: int | None = None
    arch: str | None = None
    protocol: str | None = None
    plot: str | None = None


@dataclass(frozen=True)
class TuningRun(StoredTable):
    """One run of an LR tuning: its cell, seed, job key and test accuracy (chance where it diverged)."""

    arch: str = ""
    seed: int | None = None
    key: str | None = None
    test_accuracy: float | None = None
    diverged: bool | None = None


@dataclass(frozen=True)
class TuningResult(StoredTable):
    """A finished LR tuning (meta ``tuning:<label>``).

    Attributes:
        protocol: the tuned protocol's label.
        anchor_lr: the LR the multipliers scale (its fixed LR, or the LR search's choice).
        criterion: what chose the multiplier, in words.
        cells, seeds: the tuning cells and seeds.
        chosen: the multiplier chosen; lr: the LR it gives (``anchor_lr * chosen``).
        edge: ``low``/``high`` where the choice sits at the grid's edge (flagged), else ``None``.
        means: multiplier (as text) -> mean test accuracy over the tuning cells and seeds.
        diverged: multiplier (as text) -> how many of its runs diverged.
        runs: multiplier (as text) -> its runs.
    """

    protocol: str | None = None
    anchor_lr: float | None = None
    criterion: str | None = None
    cells: tuple[str, ...] = ()
    seeds: tuple[int, ...] = ()
    chosen: float | None = None
    edge: str | None = None
    means: Mapping[str, float] = field(default_factory=dict)
    diverged: Mapping[str, int] = field(default_factory=dict)
    lr: float | None = None
    runs: Mapping[str, tuple[TuningRun, ...]] = field(default_factory=dict, repr=False)

    @classmethod
    def _read(cls, key: str, value: Any) -> Any:
        if key == "runs":
            return {str(m): tuple(TuningRun.of(r) for r in rs if isinstance(r, Mapping))
                    for m, rs in value.items() if isinstance(rs, list)} if isinstance(value, Mapping) else {}
        return super()._read(key, value)


@dataclass(frozen=True)
class Visit(StoredTable):
    """One slice's visit (meta ``visit:<n>``): where it ran, what it ran and where the store stood
    after it (``None``: not recorded by the slice that wrote it)."""

    device: str | None = None
    data_copy: str | None = None
    cells_run: tuple[str, ...] = ()
    jobs_run: int | None = None
    stage_jobs_run: int | None = None
    jobs_done: int | None = None
    jobs_total: int | None = None
    cells_done: int | None = None
    cells_total: int | None = None
    wall_s: float | None = None
    stopped: str | None = None
    failed: int | None = None
    job_s: float | None = None
    waiting: tuple[str, ...] = ()
    finished_at: str | None = None


@dataclass(frozen=True)
class Reused(StoredTable):
    """What a run copied from another run's store (meta ``reused``): the run and how many finished runs."""

    source: str | None = None
    runs: int = 0
