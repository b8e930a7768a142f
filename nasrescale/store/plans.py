"""The record's schema types of the plans a run stores when it plans its jobs: an LR validation's
(meta ``validation_plan``, :class:`ValidationPlanRecord`) and a landscape's (meta
``landscape_plan``, :class:`LandscapePlanRecord`).

Read once, in :func:`~nasrescale.store.migration.parse_record`; :meth:`~.schema.StoredTable.to_json`
gives a plan back as stored (the form the analyses in :mod:`nasrescale.lrsearch` read).

>>> plan = ValidationPlanRecord.of({"base_arch": "a", "rel_tol": 0.01, "step": 1.2, "groups": {"g": {
...     "protocol": "p", "kernel": None, "base_group": "g", "archs": [{"arch": "a", "runs": [[0.1, "k1"]]}]}}})
>>> plan.rule, plan.groups["g"].archs[0].runs, plan.runs
('within_tol', ((0.1, 'k1'),), 1)
>>> plan.under("argmin", "tail").to_json()["rule"]
'argmin'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar, Mapping

from .schema import StoredTable
from .table_fields import LandscapeFields

__all__ = ["PlannedArch", "ValidationGroup", "ValidationPlanRecord", "LandscapeCell", "LandscapeSettingsRecord",
           "LandscapePlanRecord"]


@dataclass(frozen=True)
class PlannedArch(StoredTable):
    """One architecture of an LR validation's group: its LR factors and its runs (``(lr, job key)``)."""

    arch: str = ""
    degenerate: bool = False
    lr_scale: float | None = None
    kernel_factor: float | None = None
    sum_l3: float | None = None
    runs: tuple[tuple[float, str], ...] = ()


@dataclass(frozen=True)
class ValidationGroup(StoredTable):
    """One group of an LR validation: a protocol at a kernel size, its base group and architectures."""

    NESTED_EACH: ClassVar[Mapping[str, type]] = {"archs": PlannedArch}

    protocol: str | None = None
    kernel: int | None = None
    base_group: str | None = None
    archs: tuple[PlannedArch, ...] = ()


@dataclass(frozen=True)
class ValidationPlanRecord(StoredTable):
    """An LR validation's plan (meta ``validation_plan``).

    Attributes:
        base_arch: the architecture every predicted LR is relative to.
        rel_tol: the tie tolerance of the selection rule.
        rule, loss: the selection rule and the loss it reads (a plan without them: ``within_tol``
            on the ``epoch`` loss, as the analysis reads it).
        step: the grid's ratio between neighbouring LRs.
        groups: label -> its :class:`ValidationGroup`.
    """

    NESTED_BY_LABEL: ClassVar[Mapping[str, type]] = {"groups": ValidationGroup}

    base_arch: str | None = None
    rel_tol: float = 0.01
    rule: str = "within_tol"
    loss: str = "epoch"
    step: float | None = None
    groups: Mapping[str, ValidationGroup] = field(default_factory=dict, repr=False)

    @property
    def runs(self) -> int:
        """How many runs the plan holds."""
        return sum(len(m.runs) for g in self.groups.values() for m in g.archs)

    def under(self, rule: str, loss: str) -> ValidationPlanRecord:
        """The plan read under another selection ``rule`` and ``loss``."""
        keys = self.keys + tuple(k for k in ("rule", "loss") if k not in self.keys)
        return dataclasses.replace(self, rule=rule, loss=loss, keys=keys)


@dataclass(frozen=True)
class LandscapeCell(StoredTable):
    """One cell of a landscape's plan: degenerate or not, its path-depth LR scale and sum of L^3."""

    degenerate: bool = False
    lr_scale: float = 1.0
    sum_l3: float = 0.0


@dataclass(frozen=True)
class LandscapeSettingsRecord(StoredTable, LandscapeFields):
    """A landscape's ``[landscape]`` settings as planned (its fields and defaults, the pipeline's:
    :class:`~.table_fields.LandscapeFields`)."""


@dataclass(frozen=True)
class LandscapePlanRecord(StoredTable):
    """A landscape's plan (meta ``landscape_plan``): the protocol's label, its epochs and seeds,
    the settings and each cell (label -> :class:`LandscapeCell`, in the plan's order)."""

    NESTED: ClassVar[Mapping[str, type]] = {"settings": LandscapeSettingsRecord}
    NESTED_BY_LABEL: ClassVar[Mapping[str, type]] = {"cells": LandscapeCell}

    label: str | None = None
    epochs: int | None = None
    seeds: tuple[int, ...] = ()
    settings: LandscapeSettingsRecord = field(default_factory=LandscapeSettingsRecord)
    cells: Mapping[str, LandscapeCell] = field(default_factory=dict, repr=False)
