"""The trend kind's one entry: a retrain's protocols x architectures x seeds at each of
``trend.epochs``, reusing finished runs of another store; its own ``[trend]`` table, which may
grow by budgets; reported by each budget's comparison and how it moves with the budget, which a
study's claims quote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...pipeline.kind_registry import KindTable, PipelineKind, nothing_after, staged_tables
from ...pipeline.reuse import check_reuse, reusing
from ...report.kind_reports import KindReport
from ..entry import KindEntry, register_entry
from .link import TREND_LINK
from .plan import trend_plan
from .settings import TrendSettings

__all__ = ["TREND", "budgets_grow"]


def budgets_grow(before: Any, after: Any) -> bool:
    """Whether ``[trend]`` ``after`` is ``before`` with budgets added to ``epochs`` and nothing else
    changed (the stored jobs are then jobs of the grown trend too).

    >>> budgets_grow({"epochs": [6, 12], "noise": None}, {"epochs": [6, 12, 24], "noise": None})
    True
    >>> budgets_grow({"epochs": [6, 12]}, {"epochs": [6]}), budgets_grow({"epochs": [6]}, {"epochs": [6, 12], "noise": "x"})
    (False, False)
    """
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return False
    rest = {k: v for k, v in before.items() if k != "epochs"} == {k: v for k, v in after.items() if k != "epochs"}
    return rest and set(after.get("epochs", [])) > set(before.get("epochs", []))


def _text(run_dir: Path) -> str:
    from .write import trend_text

    return trend_text(run_dir)


def _write(run_dir: Path, n_boot: int, include_degenerate: bool, include_tuning: bool) -> Path:
    from .write import write_trend_report

    return write_trend_report(run_dir, n_boot=n_boot)


TREND = register_entry(KindEntry(
    PipelineKind("trend", needs_base_lr=True, searches=True, slices=True, plan=trend_plan, after=nothing_after,
                 tables=(KindTable.of("trend", TrendSettings, grows=budgets_grow),), uses=staged_tables,
                 runs=reusing, check=check_reuse, reuse_key="trend.reuse",
                 analysis_only=("trend.reuse", "trend.noise", "trend.top_percent")),
    KindReport("trend", _text, _write, link=TREND_LINK)))
