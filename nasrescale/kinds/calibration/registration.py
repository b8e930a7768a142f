"""The calibration kind's one entry: one protocol at several candidate budgets
(``[budgets.<label>]``) x architectures x each candidate's seeds; reported by each candidate's
proxy validity against the reference and its cost, which a study quotes for its own budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ...pipeline.kind_registry import KindTable, PipelineKind, nothing_after
from ...pipeline.preflight import DataKeys
from ...jobs.job import DataSpec
from ...report.kind_reports import KindReport
from ..entry import KindEntry, register_entry
from .budgets import candidate_data, candidate_keys, candidates_table, parse_candidates
from .plan import calibration_plan

__all__ = ["CALIBRATION"]


def _read_budgets(table: Any, shared: Mapping[str, Any]) -> Any:
    return parse_candidates({} if table is None else table, shared["budget"], shared["pipeline"].seeds)


def _data_specs(pipeline: Any) -> list[tuple[DataSpec, DataKeys]]:
    """Every candidate's data, each once."""
    specs = {candidate_data(pipeline.data_spec(), c): candidate_keys(c) for c in pipeline.table("budgets")}
    return list(specs.items())


def _identity(identity: dict[str, Any]) -> dict[str, Any]:
    """A calibration may grow by seeds: more seeds add jobs, change none."""
    identity["pipeline"].pop("seeds", None)
    for table in identity["budgets"].values():
        table.pop("seeds", None)
    return identity


def _text(run_dir: Path) -> str:
    from .write import calibration_text

    return calibration_text(run_dir)


def _write(run_dir: Path, n_boot: int, include_degenerate: bool, include_tuning: bool) -> Path:
    from .write import write_calibration_report

    return write_calibration_report(run_dir, n_boot=n_boot)


def _proxy(spec: str, results_root: Path, n_boot: int) -> dict[str, Any]:
    from .write import proxy_validity

    return proxy_validity(spec, results_root, n_boot)


CALIBRATION = register_entry(KindEntry(
    PipelineKind("calibration", needs_base_lr=True, searches=False, slices=False,
                 plan=lambda pipeline, archs: (calibration_plan(pipeline, archs), {}), after=nothing_after,
                 tables=(KindTable("budgets", _read_budgets, candidates_table),), data_specs=_data_specs,
                 identity=_identity),
    KindReport("calibration", _text, _write, proxy=_proxy)))
