"""Proxy calibration: which reduced budget still ranks cells like the benchmark's full protocol.

A ``kind = "calibration"`` pipeline trains its one protocol (the benchmark's default) on its
cells at several candidate budgets, each a ``[budgets.<label>]`` table of the ``[budget]`` keys
(``epochs``, ``batch_size``, ``width``, ``cells``, ``train_subset``, ``test_subset``,
``resolution``) plus its own ``seeds``; keys a candidate leaves out come from ``[budget]``.
Every candidate's runs are stored under its label, so ``nasrescale rank NAME:LABEL
nb201:cifar10`` ranks one candidate, and the report (:mod:`.write`) puts
them side by side with their cost::

    [pipeline]
    name = "calib"
    kind = "calibration"
    reference = "nb201:cifar10"
    [protocols.default]
    protocol = "nb201"
    [budgets.c8_e5]
    width = 8
    cells = 1
    epochs = 5
    seeds = [0, 1]           # a second seed: how much of the ranking is seed noise

>>> table = {"width": 8, "epochs": 5, "seeds": [0, 1]}
>>> c = parse_candidates({"small": table}, Budget(train_subset=100), (0,))[0]
>>> c.label, c.budget.width, c.budget.train_subset, c.seeds
('small', 8, 100, (0, 1))
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ...config import to_table
from ...errors import ConfigError
from ...jobs.job import DataSpec
from ...pipeline.preflight import DataKeys
from ...pipeline.tables import Budget, labelled_table

__all__ = ["Candidate", "parse_candidates", "candidate_data", "candidate_keys", "candidates_table"]

_KEYS = tuple(f.name for f in dataclasses.fields(Budget))


@dataclass(frozen=True)
class Candidate:
    """One candidate budget: its label (the store's protocol label), the merged budget, its seeds."""

    label: str
    budget: Budget
    seeds: tuple[int, ...]


def _candidate(label: str, table: Any, common: Budget, seeds: Sequence[int]) -> Candidate:
    where = f"budgets.{label}"
    table = labelled_table(where, label, table, f"of {', '.join(_KEYS)} and seeds")
    own_seeds = table.pop("seeds", list(seeds))
    if (not isinstance(own_seeds, list) or not own_seeds or len(set(own_seeds)) != len(own_seeds)
            or not all(isinstance(s, int) and not isinstance(s, bool) for s in own_seeds)):
        raise ConfigError(f"{where}.seeds: expected distinct integers, e.g. [0, 1], got {own_seeds!r}")
    for key, value in table.items():
        if key not in _KEYS:
            raise ConfigError(f"{where}.{key}: unknown key; a budget has {', '.join(_KEYS)} and seeds")
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{where}.{key}: must be a positive integer, got {value!r}")
    return Candidate(label, dataclasses.replace(common, **table), tuple(own_seeds))


def parse_candidates(tables: Mapping[str, Any], common: Budget, seeds: Sequence[int]) -> tuple[Candidate, ...]:
    """The ``[budgets.<label>]`` tables over the common ``[budget]`` (``seeds``: the pipeline's).

    Raises:
        ConfigError: no candidate, or a bad label, key or value (naming ``budgets.<label>.<key>``).
    """
    if not isinstance(tables, dict) or not tables:
        raise ConfigError("budgets: a calibration needs at least one [budgets.<label>] table "
                          "(e.g. width = 8, cells = 1, epochs = 5)")
    return tuple(_candidate(label, table, common, seeds) for label, table in tables.items())


def candidate_data(base: DataSpec, candidate: Candidate) -> DataSpec:
    """The data one candidate trains and tests on."""
    b = candidate.budget
    return dataclasses.replace(base, train_subset=b.train_subset, test_subset=b.test_subset, resolution=b.resolution)


def candidate_keys(candidate: Candidate) -> DataKeys:
    """How a candidate's data keys are spelled in errors."""
    where = f"budgets.{candidate.label}"
    return DataKeys("data.path", "data.name", f"{where}.train_subset", f"{where}.test_subset")


def candidates_table(candidates: Sequence[Candidate]) -> dict[str, Any]:
    """The candidates as stored with the run (label -> budget keys and seeds)."""
    return {c.label: {**to_table(c.budget), "seeds": list(c.seeds)} for c in candidates}
