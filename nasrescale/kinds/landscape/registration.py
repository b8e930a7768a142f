"""The landscape kind's one entry: one protocol at every LR of a log grid x architectures x
seeds, each cell's grid extended past an edge best; its own ``[landscape]`` table; reported by
each cell's best LR against the path-depth rule, the headroom and the ranking each cell's own
best LR gives, which a study's claims quote."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ...pipeline.kind_registry import KindTable, PipelineKind, RunJobs
from ...pipeline.reuse import reusing
from ...ranking.boot_counts import VERDICT_BOOT
from ...report.kind_reports import KindReport
from ...store.sqlite_store import Store
from ..entry import KindEntry, register_entry
from .link import LANDSCAPE_LINK
from .plan import ANALYSIS_SETTINGS, check_landscape, extend_cells, landscape_plan, refresh_analysis
from .settings import LandscapeSettings

__all__ = ["LANDSCAPE", "index_lines"]


def _after(pipeline: Any, archs: Sequence[str], store: Store, meta: dict[str, str], run: RunJobs,
           progress: bool) -> tuple[int, int, int]:
    return extend_cells(pipeline, archs, store, run, progress)


def _bound(pipeline: Any, store: Store) -> None:
    refresh_analysis(pipeline, store)  # every driver, sliced or not, reports under the settings it ran with


def _text(run_dir: Path) -> str:
    from .write import landscape_text

    return landscape_text(run_dir)


def _write(run_dir: Path, n_boot: int, include_degenerate: bool, include_tuning: bool) -> Path:
    from .write import write_landscape_report

    return write_landscape_report(run_dir, n_boot=max(n_boot, VERDICT_BOOT))


def index_lines(run_dir: Path) -> list[str]:
    """A landscape's headline in the results index: its report's one bold line."""
    report = run_dir / "report.md"
    heads = [ln for ln in report.read_text(encoding="utf-8").splitlines() if ln.startswith("**")][:1] \
        if report.is_file() else []
    return heads + ([""] if heads else [])


LANDSCAPE = register_entry(KindEntry(
    PipelineKind("landscape", needs_base_lr=False, searches=False, slices=True, plan=landscape_plan, after=_after,
                 bound=_bound, tables=(KindTable.of("landscape", LandscapeSettings),), runs=reusing, check=check_landscape,
                 reuse_key="landscape.reuse", analysis_only=tuple(f"landscape.{key}" for key in ANALYSIS_SETTINGS),
                 cells_done=lambda pipeline, archs, store, run: extend_cells(pipeline, archs, store, run)),
    KindReport("landscape", _text, _write, index=index_lines, link=LANDSCAPE_LINK)))
