"""The report of a budget trend (``kind = "trend"``): :func:`write_trend_report` writes
``report.md`` from the sections of :data:`~nasrescale.kinds.trend.sections.TREND_SECTIONS`,
:func:`trend_text` is what ``nasrescale run`` prints at the end.
"""

from __future__ import annotations

from pathlib import Path

from ...report.common.page import assemble, write_markdown_json
from .changes import estimate
from .rows import pair_row, shown_ci
from .sections import TREND_SECTIONS
from .summary import summarize_trend

__all__ = ["write_trend_report", "trend_text"]


def write_trend_report(run_dir: Path, n_boot: int = 1000) -> Path:
    """Write ``run_dir/report.md`` with ``report.json`` and its figures; return the report's path."""
    run = summarize_trend(Path(run_dir), n_boot=n_boot)
    lines, numbers = assemble(TREND_SECTIONS, run)
    return write_markdown_json(run.run_dir, lines, {**run.numbers(), **numbers})


def trend_text(run_dir: Path, n_boot: int = 1000) -> str:
    """Per budget, each pair's gain and tau(A, B) as text (what ``nasrescale run`` prints at the end)."""
    run = summarize_trend(Path(run_dir), n_boot=n_boot)
    rows = [pair_row(run, b, e) for b in run.labels[1:] for e in run.epochs]
    return "\n".join([f"{run.name}: B against A = {run.labels[0] if run.labels else '?'}, per budget"] + [
        f"{r['epochs']:>4} ep  {r['b']}: n {r['n']}, gain {estimate(r['gain'], shown_ci(r, 'gain_ci'), 2)}, "
        f"tau(A, B) {estimate(r['kendall_tau'], shown_ci(r, 'kendall_tau_ci'))}" for r in rows])
