"""The LR validation kind's one entry: each architecture's maximal LR grid-searched (the grid
extended past an edge argmin, up to ``lr_search.extend`` rounds) and compared with the one its
LR rule predicts; its own ``[validation]`` table; reported by its correlations and fits."""

from __future__ import annotations

from pathlib import Path

from ...pipeline.kind_registry import KindTable, PipelineKind
from ...report.kind_reports import KindReport
from ..entry import KindEntry, register_entry
from .plan import extend_validation, validation_plan
from .settings import ValidationSettings

__all__ = ["LR_VALIDATION", "index_lines"]


def _text(run_dir: Path) -> str:
    from .write import summary_text

    return summary_text(run_dir)


def _write(run_dir: Path, n_boot: int, include_degenerate: bool, include_tuning: bool) -> Path:
    from .write import write_validation_report

    return write_validation_report(run_dir)


def index_lines(run_dir: Path) -> list[str]:
    """An LR-validation run's headline in the results index (its report's statistics sentence)
    instead of a ranking."""
    report = run_dir / "report.md"
    heads = [ln for ln in report.read_text(encoding="utf-8").splitlines() if "r (log LR)" in ln and ln.startswith("**")] \
        if report.is_file() else []
    return (heads or ["LR validation (no report yet: `nasrescale report` writes it)."]) + [""]


LR_VALIDATION = register_entry(KindEntry(
    PipelineKind("lr_validation", needs_base_lr=False, searches=False, slices=False, plan=validation_plan,
                 after=extend_validation, tables=(KindTable.of("validation", ValidationSettings),),
                 uses=lambda pipeline: ("lr_search",)),
    KindReport("lr_validation", _text, _write, index=index_lines)))
