"""The landscape's figures, typed: what :func:`~nasrescale.kinds.landscape.summary.analyze`
computes and ``report.json`` holds, key for key (:class:`~nasrescale.report.common.typed.Plain`).

:class:`LandscapeAnalysis` holds the run's plan facts and, once 3 cells have finished, the slope
(:class:`Slope`), the arms' LRs (:class:`ArmLrs`), the headroom (:class:`Headroom` of
:class:`Gap`), the ranking (:class:`Ranking` of :class:`PairTau`), the strata (:class:`Stratum`),
the effective steps (:class:`Elr`), the calibrated verdicts (their own mapping,
:mod:`~nasrescale.kinds.landscape.verdicts`) and the criterion rows (:class:`CriterionRow`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...report.common.typed import ABSENT, Absent, Plain, jfield

__all__ = ["CellRow", "Slope", "ArmLrs", "Gap", "Headroom", "PairTau", "Ranking", "Stratum", "ElrSeries",
           "SpreadDiff", "Elr", "CriterionRow", "LandscapeAnalysis"]


@dataclass(frozen=True)
class CellRow(Plain):
    """One finished cell: its scale, best LR (argmax; the quadratic's vertex with its bootstrap
    interval), whether the best is at its grid's edge, and its mean accuracy per grid LR."""

    arch: str
    lr_scale: float
    sum_l3: float
    best_lr: float
    vertex_lr: float
    vertex_ci: list[float] | None
    edge: str | None
    best_mean: float
    lrs: list[float]
    mean_acc: list[float]


@dataclass(frozen=True)
class Slope(Plain):
    """Slope of log(best LR) on log(path-depth scale) with its CI, where 1 and 0 fall, Pearson r."""

    n: int
    slope: float | None
    slope_ci: list[float] | None
    pearson_log: float | None
    rule_in_ci: bool | None
    global_in_ci: bool | None


@dataclass(frozen=True)
class ArmLrs(Plain):
    """The LR an arm chose per cell (the global arm: among ``options``, the LRs every cell has)."""

    lr: list[float]
    options: list[float] | Absent = ABSENT


@dataclass(frozen=True)
class Gap(Plain):
    """A paired difference of two arms over cells: mean with its CI, median, share that gains."""

    mean: float
    ci: list[float] | None
    median: float
    share_gain: float


@dataclass(frozen=True)
class Headroom(Plain):
    """Mean accuracy per arm, the arms' gaps, and the share of the oracle's gain the rule captures."""

    n: int
    mean: dict[str, float]
    oracle_global: Gap = jfield(key="oracle-global", of=Gap)
    rule_global: Gap = jfield(key="rule-global", of=Gap)
    oracle_rule: Gap = jfield(key="oracle-rule", of=Gap)
    captured: float | None = None
    captured_ci: list[float] | Absent = ABSENT


@dataclass(frozen=True)
class PairTau(Plain):
    """Tau between two arms' rankings: seed means, the oracle's top K%, single runs."""

    tau: float | None
    tau_top: float | None
    tau_single: float | None


@dataclass(frozen=True)
class Ranking(Plain):
    """The rankings each arm gives, the seed floor, and each arm against the benchmark."""

    n: int
    seed_floor: float | None
    global_oracle: PairTau = jfield(key="global-oracle", of=PairTau)
    rule_oracle: PairTau = jfield(key="rule-oracle", of=PairTau)
    global_rule: PairTau = jfield(key="global-rule", of=PairTau)
    reference: dict[str, float | None] | Absent = ABSENT
    reference_n: int | Absent = ABSENT

    def pair(self, name: str) -> PairTau:
        """The pair ``global-oracle``, ``rule-oracle`` or ``global-rule``."""
        return {"global-oracle": self.global_oracle, "rule-oracle": self.rule_oracle,
                "global-rule": self.global_rule}[name]


@dataclass(frozen=True)
class Stratum(Plain):
    """One path-depth stratum: its scale range (``None``: open above), cells, medians, convs."""

    scale: list[float | None]
    n: int
    median_scale: float | None
    median_best_lr: float | None
    conv_bearing: int | Absent = ABSENT


@dataclass(frozen=True)
class ElrSeries(Plain):
    """One series over cells (the nominal best LR or an effective step): spread, slope, median."""

    sd_log: float
    slope: float | None
    slope_ci: list[float] | None
    median: float


@dataclass(frozen=True)
class SpreadDiff(Plain):
    """Spread at the best LR minus spread at one fixed LR, with its bootstrap CI."""

    diff: float
    ci: list[float]


@dataclass(frozen=True)
class Elr(Plain):
    """The effective step at each cell's best LR against one fixed LR
    (:func:`~nasrescale.kinds.landscape.stats.elr_stats`)."""

    n: int
    fixed_lr: float | None
    nominal: ElrSeries = jfield(of=ElrSeries)
    elr_first: ElrSeries = jfield(of=ElrSeries)
    elr_last: ElrSeries = jfield(of=ElrSeries)
    fixed_first: ElrSeries | Absent = jfield(of=ElrSeries, default=ABSENT)
    fixed_last: ElrSeries | Absent = jfield(of=ElrSeries, default=ABSENT)
    spread_diff_first: SpreadDiff | Absent = jfield(of=SpreadDiff, default=ABSENT)
    spread_diff_last: SpreadDiff | Absent = jfield(of=SpreadDiff, default=ABSENT)

    def series(self, name: str) -> ElrSeries | Absent:
        """The series ``name`` (``nominal``, ``elr_first``, ..., ``fixed_last``)."""
        return getattr(self, name)


@dataclass(frozen=True)
class CriterionRow(Plain):
    """One row of the criterion table (``of``: ``landscape`` or ``criterion``; ``run``: the
    criterion run it reads)."""

    of: str
    source: str
    n: int
    slope: float | None
    slope_ci: list[float] | None
    note: str
    run: str | Absent = ABSENT


@dataclass(frozen=True)
class LandscapeAnalysis(Plain):
    """Everything the landscape report states (the figures past ``per_cell`` once 3 cells have
    finished; ``verdicts`` once :data:`~nasrescale.kinds.landscape.stats.MIN_CELLS` have)."""

    label: str
    seeds: list[int]
    epochs: int | None
    settings: dict[str, Any]
    cells: int
    pending: int
    degenerate: int
    per_cell: tuple[CellRow, ...] = jfield(each=CellRow)
    slope: Slope | Absent = jfield(of=Slope, default=ABSENT)
    slope_argmax: Slope | Absent = jfield(of=Slope, default=ABSENT)
    rule_constant: float | Absent = ABSENT
    arms: dict[str, ArmLrs] | Absent = jfield(values=ArmLrs, default=ABSENT)
    rule_clipped: int | Absent = ABSENT
    headroom: Headroom | Absent = jfield(of=Headroom, default=ABSENT)
    ranking: Ranking | Absent = jfield(of=Ranking, default=ABSENT)
    strata: tuple[Stratum, ...] | Absent = jfield(each=Stratum, default=ABSENT)
    elr: Elr | None | Absent = jfield(of=Elr, default=ABSENT)
    verdicts: dict[str, Any] | Absent = ABSENT
    criterion: tuple[CriterionRow, ...] | Absent = jfield(each=CriterionRow, default=ABSENT)
