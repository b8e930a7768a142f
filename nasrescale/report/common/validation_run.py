"""An LR-rule validation run (``kind = "lr_validation"``) read from its store, as its own report
and a landscape's criterion rows read it: :func:`read_validation`.

Its analysis (:func:`nasrescale.lrsearch.validation.analyze`: measured against predicted maximal
LR per architecture, and the statistics) comes back typed: one :class:`Point` per architecture,
:class:`Correlation` figures overall and per group (:class:`GroupStats`, with and without the
base architecture), in :class:`ValidationAnalysis`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import DataError
from ...lrsearch.validation import analyze
from ...store.migration import parse_record
from ...store.plans import ValidationPlanRecord
from ...store.read import reading
from ...store.record import RunRecord
from .typed import ABSENT, Absent, Plain, jfield

__all__ = ["Point", "Correlation", "GroupStats", "ValidationAnalysis", "ValidationRun", "read_validation",
           "analysis_of"]


@dataclass(frozen=True)
class Point(Plain):
    """One architecture's measured and predicted maximal LR (``edge``: ``low``/``high`` where a
    seed's argmin is still at its grid's edge; ``curve``: ``[lr, mean loss]`` per grid LR)."""

    group: str
    kernel: Any
    arch: str
    lr_scale: float
    kernel_factor: float
    sum_l3: float | None
    measured_lr: float
    predicted_lr: float
    edge: str | None
    base: bool
    seed_lrs: list[float | None]
    seed_min: float
    seed_max: float
    curve: list[list[float | None]]


@dataclass(frozen=True)
class Correlation(Plain):
    """Pearson r (log LR, LR), Spearman rho and the log-log slopes on the prediction and on
    ``sum L^3`` with their 95% CIs (``None`` where undefined)."""

    n: int
    pearson_log: float | None
    pearson: float | None
    spearman: float | None
    slope: float | None
    slope_ci: list[float] | None
    slope_l3: float | None
    slope_l3_ci: list[float] | None


@dataclass(frozen=True)
class GroupStats(Correlation):
    """:class:`Correlation` of every point, ``without_base``, and (where a measured LR is at its
    grid's edge) ``interior``: without the base and those points."""

    without_base: Correlation = jfield(of=Correlation, default=None)
    interior: Correlation | Absent = jfield(of=Correlation, default=ABSENT)


@dataclass(frozen=True)
class ValidationAnalysis(Plain):
    """Every point, the statistics overall and per group, and what was left out."""

    points: tuple[Point, ...] = jfield(each=Point)
    overall: GroupStats = jfield(of=GroupStats)
    groups: dict[str, GroupStats] = jfield(values=GroupStats)
    skipped: int = 0
    rule: str = "within_tol"
    loss: str = "epoch"
    degenerate: int = 0
    at_edge: int = 0


@dataclass(frozen=True)
class ValidationRun:
    """A validation run's record, its stored plan and job rows, and its analysis."""

    record: RunRecord
    plan: ValidationPlanRecord
    rows: list[dict[str, Any]]
    analysis: ValidationAnalysis


def analysis_of(plan: ValidationPlanRecord, rows: list[dict[str, Any]]) -> ValidationAnalysis:
    """The analysis of ``rows`` under ``plan`` (its rule and loss; under another's:
    :meth:`~nasrescale.store.plans.ValidationPlanRecord.under`), typed."""
    return ValidationAnalysis.from_plain(analyze(plan.to_json(), rows))


def read_validation(run_dir: Path) -> ValidationRun:
    """The validation run in ``run_dir``.

    Raises:
        DataError: no store, or the store is not an ``lr_validation`` run.
    """
    with reading(Path(run_dir)) as store:
        record, rows = parse_record(store.meta(), str(store.path)), store.rows_with_tail()
    if record.validation_plan is None:
        raise DataError(f"{str(run_dir)!r} holds no lr_validation run (no validation plan in its store)")
    return ValidationRun(record, record.validation_plan, rows, analysis_of(record.validation_plan, rows))
