"""The record's schema types of the stored pipeline's tables: ``[budget]``, a calibration's
``[budgets.<label>]``, ``[executor]``, ``[lr_search]`` and ``[tuning]``.

Each is a frozen dataclass read once, in :func:`~nasrescale.store.migration.parse_record`, from
the table the store holds (:meth:`StoredTable.of`): a key the table leaves out reads as the
default a pipeline without it runs with, a key it does not know is left out. Each remembers the
keys the store held, in their order, so :meth:`StoredTable.to_json` gives the table back as
stored (``tests/store/test_record_schema.py`` holds every committed store and the tables the
pipeline's settings write to that round trip). A record and the settings the pipeline reads from
a pipeline file (:mod:`nasrescale.pipeline.tables`, :mod:`nasrescale.lrsearch.search`,
:mod:`nasrescale.executors.base`) derive from one fields class of :mod:`.table_fields`, so they
have the same fields and defaults; the settings check values, a record only reads what was stored.

>>> budget = BudgetRecord.of({"width": 16, "epochs": 6})
>>> budget.epochs, budget.train_subset, budget.to_json()
(6, None, {'width': 16, 'epochs': 6})
>>> LrSearchRecord.of({"seeds": [0, 1]}).seeds, LrSearchRecord.of({}).points
((0, 1), 13)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, TypeVar

from .table_fields import BudgetFields, ExecutorFields, LrSearchFields, TuningFields

__all__ = ["StoredTable", "plain", "frozen_json", "BudgetRecord", "CandidateBudget", "ExecutorRecord",
           "LrSearchRecord", "TuningRecord"]

T = TypeVar("T", bound="StoredTable")


def frozen_json(value: Any) -> Any:
    """A decoded JSON value with its lists as tuples (tables stay dicts).

    >>> frozen_json({"a": [1, [2, 3]]})
    {'a': (1, (2, 3))}
    """
    if isinstance(value, list):
        return tuple(frozen_json(v) for v in value)
    if isinstance(value, dict):
        return {k: frozen_json(v) for k, v in value.items()}
    return value


def plain(value: Any) -> Any:
    """The JSON form of a record value: a stored table by its :meth:`StoredTable.to_json`, tuples as lists.

    >>> plain({"a": (1, (2, 3))})
    {'a': [1, [2, 3]]}
    """
    if isinstance(value, StoredTable):
        return value.to_json()
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class StoredTable:
    """A stored JSON table read into typed fields; ``keys``: the keys the store held, in order.

    A subclass names the fields that hold tables of another record type (``field -> type``): in
    :attr:`NESTED` one table, in :attr:`NESTED_EACH` a list of them, in :attr:`NESTED_BY_LABEL`
    tables by label.
    """

    NESTED: ClassVar[Mapping[str, type]] = {}
    NESTED_EACH: ClassVar[Mapping[str, type]] = {}
    NESTED_BY_LABEL: ClassVar[Mapping[str, type]] = {}

    keys: tuple[str, ...] = field(default=(), repr=False, compare=False, kw_only=True)

    @classmethod
    def fields(cls) -> tuple[str, ...]:
        """The stored keys this record reads."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.name != "keys")

    @classmethod
    def of(cls: type[T], table: Any) -> T:
        """The record of a stored table (anything but a table reads as an empty one)."""
        table = table if isinstance(table, Mapping) else {}
        known = [k for k in table if k in cls.fields()]
        return cls(**{k: cls._read(k, table[k]) for k in known}, keys=tuple(known))

    @classmethod
    def _read(cls, key: str, value: Any) -> Any:
        if key in cls.NESTED:
            return cls.NESTED[key].of(value)
        if key in cls.NESTED_EACH:
            return tuple(cls.NESTED_EACH[key].of(v) for v in value) if isinstance(value, list) else ()
        if key in cls.NESTED_BY_LABEL:
            kind = cls.NESTED_BY_LABEL[key]
            return {str(k): kind.of(v) for k, v in value.items()} if isinstance(value, Mapping) else {}
        return frozen_json(value)

    def to_json(self) -> dict[str, Any]:
        """The table as stored: the keys the store held, in their order, values in JSON form."""
        return {k: plain(getattr(self, k)) for k in self.keys}


@dataclass(frozen=True)
class BudgetRecord(StoredTable, BudgetFields):
    """``[budget]`` as stored (its fields: :class:`~.table_fields.BudgetFields`)."""


@dataclass(frozen=True)
class CandidateBudget(BudgetRecord):
    """A calibration's candidate ``[budgets.<label>]``: a budget and the seeds it trains."""

    seeds: tuple[int, ...] = ()


@dataclass(frozen=True)
class ExecutorRecord(StoredTable, ExecutorFields):
    """``[executor]`` as stored: where and how the jobs ran (its fields: :class:`~.table_fields.ExecutorFields`)."""


@dataclass(frozen=True)
class LrSearchRecord(StoredTable, LrSearchFields):
    """``[lr_search]`` as stored: the base-LR search's grid, seeds, epochs and rule (its fields:
    :class:`~.table_fields.LrSearchFields`)."""


@dataclass(frozen=True)
class TuningRecord(StoredTable, TuningFields):
    """``[tuning]`` as stored: the multipliers of a tuned protocol's anchor LR, its cells and seeds
    (its fields: :class:`~.table_fields.TuningFields`)."""
