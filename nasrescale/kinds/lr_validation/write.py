"""The report of an ``lr_validation`` run: measured vs predicted maximal LR (paper Figs. 2, 3, 5).

:func:`write_validation_report` reads the run's store (read-only; a partial run reports what
is finished) into its :class:`~nasrescale.kinds.lr_validation.summary.ValidationSummary` and
writes the sections of :data:`~nasrescale.kinds.lr_validation.sections.VALIDATION_SECTIONS` into
``report.md`` (the paper's statistics beside the paper's r, the budget and the provenance of the
runs), ``lr_validation.png`` (predicted vs measured, log-log, y = x, per-seed spread),
``lr_validation_curves.png`` (loss vs LR per architecture) and the summary into ``report.json``.
:func:`summary_text` is the table ``nasrescale run`` prints at the end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ...lrsearch.rule_stats import PREDICTED_SLOPE
from ...report.common.page import Section, assemble, write_markdown_json
from .sections import VALIDATION_SECTIONS, fmt3
from .summary import summarize_validation

__all__ = ["write_validation_report", "summary_text"]


def write_validation_report(run_dir: Path, sections: Sequence[Section[Any]] = VALIDATION_SECTIONS) -> Path:
    """Write ``report.md``, the two figures and ``report.json`` into ``run_dir``; return the .md path
    (``sections``: the page's sections in order, where a new section is one entry)."""
    run = summarize_validation(Path(run_dir))
    lines, numbers = assemble(sections, run)
    return write_markdown_json(run.run_dir, lines, {**run.to_json(), **numbers})


def summary_text(run_dir: Path) -> str:
    """Per-architecture measured and predicted LR, and the statistics, as plain text."""
    run = summarize_validation(Path(run_dir), censored=False)
    res = run.analysis
    lines = [f"{'group':<10} {'arch':<36} {'lr_scale':>8} {'predicted':>10} {'measured':>10} {'seeds':>17}  note"]
    for p in res.points:
        note = ("base" if p.base else "") + (f" argmin at grid {p.edge} edge" if p.edge else "")
        spread = f"{p.seed_min:.3g}-{p.seed_max:.3g}"
        lines.append(f"{p.group:<10} {p.arch:<36} {p.lr_scale:>8.4f} {p.predicted_lr:>10.4g} "
                     f"{p.measured_lr:>10.4g} {spread:>17}  {note.strip()}")
    for label, c in (("all", res.overall), ("without base", res.overall.without_base)):
        lines.append(f"{label}: n = {c.n}, Pearson r (log LR) = {fmt3(c.pearson_log)}, "
                     f"Pearson r (LR) = {fmt3(c.pearson)}, Spearman rho = {fmt3(c.spearman)}, "
                     f"log-log slope = {fmt3(c.slope)} (predicted {PREDICTED_SLOPE:g})")
    if run.paper:
        lines.append("paper (CIFAR-10, full size): " + "; ".join(f"{what} r = {r}" for what, r in run.paper))
    if res.skipped:
        lines.append(f"{res.skipped} architecture(s) not finished yet (rerun `nasrescale run` to finish)")
    if res.at_edge:
        lines.append(f"{res.at_edge} measured LR(s) with a seed's argmin at the grid's edge after the grid "
                     "extensions: widen [lr_search] (or raise lr_search.extend) for those")
    return "\n".join(lines)
