"""The retrain kind's one entry: architectures x protocols x seeds, a protocol with
``base_lr = "search"`` having its base LR chosen by the LR search first (and tuned where
``tune = true``); reported by the study's report (the ranking against the reference and
between protocols)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...pipeline.kind_registry import PipelineKind, nothing_after, staged_tables
from ...report.kind_reports import REPORTS, KindReport, run_links
from ...store.read import read_store
from ..entry import KindEntry, register_entry
from .plan import KIND, retrain_plan

__all__ = ["RETRAIN"]


def _text(run_dir: Path) -> str:
    from .write import ranking_text

    return ranking_text(run_dir)


def _proxy(spec: str, results_root: Path, n_boot: int) -> dict[str, Any] | None:
    """The proxy validity of the candidate ``spec`` (``RUN:LABEL``), from the kind that reports one."""
    quote = next((report.proxy for report in REPORTS.values() if report.proxy is not None), None)
    return None if quote is None else quote(spec, results_root, n_boot)


def _write(run_dir: Path, n_boot: int, include_degenerate: bool, include_tuning: bool) -> Path:
    """The study's report, with the proxy validity of the calibration candidate its pipeline
    names (``pipeline.calibration``, a run under the same results root) and the runs of other
    kinds built on it (:func:`~nasrescale.report.kind_reports.run_links`)."""
    from .write import write_report

    calibration = read_store(run_dir / "store.sqlite").record.calibration
    proxy = _proxy(calibration, run_dir.parent, n_boot) if calibration else None
    return write_report(run_dir, n_boot=n_boot, include_degenerate=include_degenerate, proxy=proxy,
                        include_tuning=include_tuning, links=run_links())


RETRAIN = register_entry(KindEntry(
    PipelineKind(KIND, needs_base_lr=True, searches=True, slices=True, plan=retrain_plan, after=nothing_after,
                 uses=staged_tables, stores_kind=False),
    KindReport(KIND, _text, _write)))
