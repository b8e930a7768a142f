"""The plain tables of a pipeline file: ``[pipeline]``, ``[data]``, ``[archs]`` and ``[budget]``.

Frozen dataclasses read with :mod:`nasrescale.config` (see :mod:`nasrescale.pipeline.spec`, which
re-exports them); each checks its own values and raises :class:`ConfigError` naming the key.

>>> Budget(epochs=3).epochs, ArchSettings().select
(3, 'uniform')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..config import KEEP_NONE, check_seeds
from ..errors import ConfigError
from ..models.norms import check_norm
from ..space.selection import check_selection
from ..store.record import DEFAULT_KIND
from ..store.table_fields import BudgetFields, TuningFields

__all__ = ["PipelineSettings", "DataSettings", "ArchSettings", "Budget", "TuningSettings", "labelled_table"]


def labelled_table(where: str, label: str, table: object, expected: str) -> dict:
    """A copy of the table ``[<where>]`` of a labelled group (``[protocols.<label>]``,
    ``[budgets.<label>]``): the label must be letters, digits, ``_`` or ``-`` (it names stored
    runs), the value a table (``expected`` says of what); else a ConfigError naming ``where``.

    >>> labelled_table("budgets.short", "short", {"epochs": 2}, "budget keys")
    {'epochs': 2}
    >>> labelled_table("budgets.a b", "a b", {}, "budget keys")
    Traceback (most recent call last):
    ...
    nasrescale.errors.ConfigError: budgets.a b: a label must be letters, digits, _ or -
    """
    if not label or not all(c.isalnum() or c in "_-" for c in label):
        raise ConfigError(f"{where}: a label must be letters, digits, _ or -")
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table {expected}")
    return dict(table)


@dataclass(frozen=True)
class PipelineSettings:
    """``[pipeline]``: name (results folder), family, seeds, the reference to compare with, and
    the kind (a registered one, :mod:`nasrescale.kinds`: by default a retrain, architectures x
    protocols x seeds)."""

    name: str
    kind: str = DEFAULT_KIND  # a registered kind (nasrescale.pipeline.kind_registry), checked by load_pipeline
    description: str = ""
    family: str | None = None  # None: the family of family_file, else nb201
    family_file: str | None = None
    seeds: tuple[int, ...] = (0,)
    reference: str | None = field(default=None, metadata=KEEP_NONE)  # None: the default; "none": no reference
    calibration: str | None = None  # "RUN:LABEL", the calibration candidate of this budget (report only)
    imports: tuple[str, ...] = ()  # plug-ins imported before the rest is read (module names, .py files)

    def __post_init__(self) -> None:
        if self.calibration is not None and ":" not in self.calibration:
            raise ConfigError(f"pipeline.calibration: {self.calibration!r} must be RUN:LABEL, a calibration run's name "
                              "and the label of its candidate at this pipeline's budget")
        if not self.name or not all(c.isalnum() or c in "_-." for c in self.name) or self.name.startswith("."):
            raise ConfigError(f"pipeline.name: {self.name!r} must be letters, digits, _, - or . (it names a folder)")
        check_seeds(self.seeds, "pipeline.seeds")


@dataclass(frozen=True)
class DataSettings:
    """``[data]``: the dataset, where its files are (not part of any result's identity) and the test split."""

    name: str = "cifar10-subset"
    path: str | None = None
    test_split: Literal["full", "x-test", "x-valid"] | None = None


@dataclass(frozen=True)
class ArchSettings:
    """``[archs]``: how the architectures are chosen.

    Attributes:
        select: a selection method registered in :mod:`nasrescale.space.selection`
            (:func:`~nasrescale.space.selection.selection_methods`): ``uniform`` (a seeded
            uniform sample of the family's space), ``stratified`` (one cell per equal-size
            stratum of benchmark accuracy), ``list`` (``names``) or ``file`` (one architecture
            per line).
        count: cells in all for ``uniform``/``stratified`` (``include`` counts towards it).
        seed: seed of the draw.
        include: cells always taken (e.g. a degenerate one), any encoding.
        names: the architectures of ``select = "list"``.
        file: the file of ``select = "file"`` (relative to the pipeline file).
        stratify_by: benchmark column for ``stratified`` (default: the pipeline's dataset).
        sample_degenerate: whether ``uniform``/``stratified`` may draw degenerate cells (no
            input-output path; chance accuracy). Default ``false``: the paper's released code
            exits on them, so its samples never hold one; ``include`` still takes any cell.
        unique: take one cell per isomorphism class (cells that compute the same function,
            :mod:`nasrescale.space.isomorphism`): ``uniform``/``stratified`` draw classes, not
            strings; ``list``/``file`` keep the first cell of each class. Default ``false``,
            which keeps the selections of pipelines stored before the option existed.
    """

    select: str = "uniform"
    count: int = 12
    seed: int = 0
    include: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    file: str | None = None
    stratify_by: str | None = None
    sample_degenerate: bool = False
    unique: bool = False

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ConfigError(f"archs.count: must be >= 1, got {self.count}")
        check_seeds([self.seed], "archs.seed")
        check_selection(self)  # a registered method, and the archs key it needs is set


@dataclass(frozen=True)
class Budget(BudgetFields):
    """``[budget]``: overrides of every protocol and the model/data size, checked (its fields,
    shared with the stored record :class:`~nasrescale.store.schema.BudgetRecord`:
    :class:`~nasrescale.store.table_fields.BudgetFields`)."""

    def __post_init__(self) -> None:
        for key in ("epochs", "batch_size", "width", "cells", "train_subset", "test_subset", "resolution"):
            value = getattr(self, key)
            if value is not None and value < 1:
                raise ConfigError(f"budget.{key}: must be a positive integer, got {value}")
        if self.norm is not None:
            check_norm(self.norm, "budget.norm")


@dataclass(frozen=True)
class TuningSettings(TuningFields):
    """``[tuning]``: how a protocol with ``tune = true`` gets its LR multiplier
    (:mod:`nasrescale.lrsearch.tuning`), checked (its fields, shared with the stored record
    :class:`~nasrescale.store.schema.TuningRecord`: :class:`~nasrescale.store.table_fields.TuningFields`)."""

    def __post_init__(self) -> None:
        if not self.multipliers or any(not (m > 0) for m in self.multipliers) \
                or list(self.multipliers) != sorted(set(self.multipliers)):
            raise ConfigError(f"tuning.multipliers: expected distinct positive numbers in ascending order, "
                              f"got {list(self.multipliers)}")
        if self.cells < 1 or self.offset < 0 or self.extend < 0:
            raise ConfigError(f"tuning: cells must be >= 1, offset and extend >= 0 "
                              f"(got cells = {self.cells}, offset = {self.offset}, extend = {self.extend})")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ConfigError(f"tuning.seeds: expected distinct integers, got {list(self.seeds)}")
