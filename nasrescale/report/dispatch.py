"""The report of a run, whatever its pipeline kind: :func:`write_run_report`."""

from __future__ import annotations

from pathlib import Path

from ..store.read import pipeline_value, read_store
from .calibration import proxy_validity, write_calibration_report
from .report import write_report

__all__ = ["write_run_report"]


def write_run_report(run_dir: Path, *, n_boot: int = 1000, include_degenerate: bool = False) -> Path:
    """``report.md`` of the run in ``run_dir``: a calibration's (:mod:`.calibration`), else the
    retrain report, which hands an LR validation to its own (:func:`~.report.write_report`;
    ``include_degenerate``: count degenerate cells in its statistics), with the proxy validity of
    the calibration candidate its pipeline names (``pipeline.calibration``, a run under the same
    results root)."""
    store = read_store(Path(run_dir) / "store.sqlite")
    if pipeline_value(store.pipeline, "pipeline.kind") == "calibration":
        return write_calibration_report(Path(run_dir), n_boot=n_boot)
    calibration = pipeline_value(store.pipeline, "pipeline.calibration")
    proxy = proxy_validity(calibration, Path(run_dir).parent, n_boot) if calibration else None
    return write_report(Path(run_dir), n_boot=n_boot, include_degenerate=include_degenerate, proxy=proxy)
