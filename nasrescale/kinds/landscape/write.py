"""``report.md`` of a landscape run: the rule's slope, the headroom, the ranking, each cell.

:func:`write_landscape_report` reads the run into its
:class:`~nasrescale.kinds.landscape.summary.LandscapeSummary` (every figure recomputed from the
store) and writes the sections of :data:`~nasrescale.kinds.landscape.sections.LANDSCAPE_SECTIONS`
into ``report.md`` (with its figures) and the summary into ``report.json``; :func:`landscape_text`
is what ``nasrescale run`` prints at the end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ...store.read import read_store
from ...report.common.page import Section, assemble, write_markdown_json
from .lines import signed
from .sections import LANDSCAPE_SECTIONS
from .summary import analyze, summarize_landscape

__all__ = ["write_landscape_report", "landscape_text"]


def write_landscape_report(run_dir: Path, n_boot: int = 9999,
                           sections: Sequence[Section[Any]] = LANDSCAPE_SECTIONS) -> Path:
    """Write ``report.md``, ``report.json`` and the figures into ``run_dir``; return the .md path
    (``sections``: the page's sections in order, where a new section is one entry)."""
    run = summarize_landscape(Path(run_dir), n_boot)
    lines, numbers = assemble(sections, run)
    while lines and not lines[-1].strip():  # the page ends with one newline
        lines.pop()
    return write_markdown_json(run.run_dir, [*lines[:-1], lines[-1].rstrip(), ""] if lines else [""],
                               {**run.to_json(), **numbers})


def landscape_text(run_dir: Path) -> str:
    """One paragraph for the end of ``nasrescale run``."""
    res = analyze(read_store(Path(run_dir) / "store.sqlite"), 999, n_sim=0)
    if res.cells < 3:
        return f"landscape: {res.cells} cell(s) finished, {res.pending} pending"
    h = res.headroom
    return (f"landscape: {res.cells} cells; slope of log best LR on log path-depth scale "
            f"{signed(res.slope.slope, 2)} (rule 1, global 0); oracle - global {h.oracle_global.mean:+.2f} points, "
            f"rule - global {h.rule_global.mean:+.2f}; tau(global, oracle) {signed(res.ranking.global_oracle.tau, 3)}")
