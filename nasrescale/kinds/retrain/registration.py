"""The retrain kind's one entry: architectures x protocols x seeds, a protocol with
``base_lr = "search"`` having its base LR chosen by the LR search first (and tuned where
``tune = true``); reported by the study's report (the ranking against the reference and
between protocols)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ...jobs.job import TrainJob
from ...pipeline.kinds import PipelineKind, nothing_after, staged_tables
from ...pipeline.protocols import ProtocolEntry, protocol_keys
from ...report.kinds import REPORTS, KindReport, run_links
from ...space.parsed_arch import ParsedArch
from ...store.read import read_store
from ..entry import KindEntry, register_entry

__all__ = ["RETRAIN", "retrain_plan"]


def retrain_plan(pipeline: Any, archs: Sequence[str]) -> tuple[list[TrainJob], dict[str, str]]:
    """Architecture x protocol x seed; every protocol's base LR must be known, or marked to be
    searched (each job checks its own)."""
    family, data, budget = pipeline.family(), pipeline.data_spec(), pipeline.budget

    def job(cell: ParsedArch, entry: ProtocolEntry, seed: int) -> TrainJob:
        with protocol_keys(entry):  # a job's check of its protocol names the pipeline's key
            return TrainJob(cell, family, data, entry.protocol, seed, budget.width, budget.cells, entry.label)

    return [job(cell, entry, seed) for cell in pipeline.arch_cells(archs) for entry in pipeline.protocols
            for seed in pipeline.pipeline.seeds], {}


def _text(run_dir: Path) -> str:
    from ...report.retrain.write import ranking_text

    return ranking_text(run_dir)


def _proxy(spec: str, results_root: Path, n_boot: int) -> dict[str, Any] | None:
    """The proxy validity of the candidate ``spec`` (``RUN:LABEL``), from the kind that reports one."""
    quote = next((report.proxy for report in REPORTS.values() if report.proxy is not None), None)
    return None if quote is None else quote(spec, results_root, n_boot)


def _write(run_dir: Path, n_boot: int, include_degenerate: bool, include_tuning: bool) -> Path:
    """The study's report, with the proxy validity of the calibration candidate its pipeline
    names (``pipeline.calibration``, a run under the same results root) and the runs of other
    kinds built on it (:func:`~nasrescale.report.kinds.run_links`)."""
    from ...report.retrain.write import write_report

    calibration = read_store(run_dir / "store.sqlite").record.calibration
    proxy = _proxy(calibration, run_dir.parent, n_boot) if calibration else None
    return write_report(run_dir, n_boot=n_boot, include_degenerate=include_degenerate, proxy=proxy,
                        include_tuning=include_tuning, links=run_links())


RETRAIN = register_entry(KindEntry(
    PipelineKind("retrain", needs_base_lr=True, searches=True, slices=True, plan=retrain_plan, after=nothing_after,
                 uses=staged_tables, stores_kind=False),
    KindReport("retrain", _text, _write)))
