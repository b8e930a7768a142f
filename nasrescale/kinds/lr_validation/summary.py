"""An LR-rule validation run read once from its store: :class:`ValidationSummary`.

Its analysis (measured against predicted maximal LR per architecture, the statistics overall
and per group; :class:`~nasrescale.report.common.validation_run.ValidationAnalysis`), the
censored fits where the run's cell family is installed
(:class:`~nasrescale.kinds.lr_validation.censored.CensoredFits`), the plan and job rows it was
read from, and the records of its finished runs. ``report.json`` is :meth:`ValidationSummary.to_json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import NasRescaleError
from ...store.job_status import FINAL
from ...store.plans import ValidationPlanRecord
from ...store.read import reading
from ...store.record import RunRecord
from ...report.common.validation_run import ValidationAnalysis, read_validation
from .censored import CensoredFits, criterion_fits

__all__ = ["PAPER_R", "ValidationSummary", "summarize_validation"]

#: the paper's Pearson r between predicted and measured maximal LR (CIFAR-10; Chen et al., ICLR
#: 2024, Figs. 2, 3 and 5), by the family the experiment runs on
PAPER_R = {"mlp_dag": [("MLP topologies (Fig. 2)", 0.838)],
           "mlp_chain": [("MLP depth (Fig. 5)", 0.962)],
           "cnn_dag": [("CNN topologies and kernel sizes (Fig. 3)", 0.856)]}


@dataclass(frozen=True)
class ValidationSummary:
    """A validation run, read once.

    Attributes:
        run_dir, name: the run folder and the run's name.
        record: the run's typed record (its protocols, ``[lr_search]`` and budget as stored, its plan).
        family: its cell family's name (``?`` where none is recorded).
        plan, rows: the stored validation plan and job rows (the sensitivity reads them again
            under every rule and loss).
        analysis: the analysis under the plan's own rule and loss.
        censored: the censored fits (``None``: the family is not installed here).
        finished: the records of the finished runs (their provenance).
    """

    run_dir: Path
    name: str
    record: RunRecord
    family: str
    plan: ValidationPlanRecord
    rows: list[dict[str, Any]]
    analysis: ValidationAnalysis
    censored: CensoredFits | None
    finished: list[dict[str, Any]]

    @property
    def paper(self) -> list[tuple[str, float]]:
        """The paper's figures for the run's family (``(what, r)``; none for another family)."""
        return PAPER_R.get(self.family, [])

    def to_json(self) -> dict[str, Any]:
        """``report.json``: the analysis, then the censored fits where there are some."""
        return {**self.analysis.to_plain(), **({"censored": self.censored.to_plain()} if self.censored else {})}


def _censored(analysis: ValidationAnalysis, family: str) -> CensoredFits | None:
    from ...space.family_loader import get_family

    try:
        cells = get_family(family)
    except NasRescaleError:  # a family this install does not ship: no topology to read
        return None
    return criterion_fits(analysis.points, cells)


def summarize_validation(run_dir: Path, censored: bool = True) -> ValidationSummary:
    """Read the validation run in ``run_dir`` (``censored``: fit the censored slopes too).

    Raises:
        DataError: no store, or the store is not an ``lr_validation`` run.
    """
    run = read_validation(Path(run_dir))
    record = run.record
    family = record.family or "?"
    with reading(Path(run_dir)) as store:
        finished = [store.record(r["key"]) or {} for r in store.rows() if r["status"] in FINAL]
    return ValidationSummary(Path(run_dir), record.name or Path(run_dir).name, record, family, run.plan,
                             run.rows, run.analysis, _censored(run.analysis, family) if censored else None, finished)
