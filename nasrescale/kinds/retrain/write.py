"""``report.md`` for a retrain run: plots and the numbers behind them.

:func:`write_report` reads the run's store (read-only; a partial run works) into its
:class:`~nasrescale.kinds.retrain.summary.RunSummary` (every pair of its protocols compared, and each
protocol against the benchmark reference), then computes and renders the sections of
:data:`~nasrescale.kinds.retrain.sections.RETRAIN_SECTIONS` into ``report.md``, its PNG figures
and ``report.json`` (every number) in the run folder. The figures follow the paper's Fig. 4:
accuracy scatter with y = x, Kendall tau at top-K% with the seed-noise band, pairwise
accuracy-gap distributions; plus accuracy gain against the LR scale and a few training curves.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any, Sequence

from ...ranking.compare import compare
from ...ranking.sources import store_source
from ...ranking.text import fmt, format_table
from ...store.read import read_store
from ...report.common.links import RunLink
from ...report.common.page import Section, assemble, write_markdown_json
from ...report.common.reference import load_reference, protocol_order, reference_spec
from .sections import RETRAIN_SECTIONS
from .summary import summarize

__all__ = ["write_report", "ranking_text"]


def write_report(run_dir: Path, *, n_boot: int = 1000, include_degenerate: bool = False,
                 proxy: dict[str, Any] | None = None, include_tuning: bool = False,
                 sections: Sequence[Section[Any]] = RETRAIN_SECTIONS, links: Sequence[RunLink] = ()) -> Path:
    """Write ``run_dir/report.md`` (with its PNGs and ``report.json``) and return its path.

    Args:
        run_dir: the run folder holding ``store.sqlite`` (``results/<pipeline>/``).
        n_boot: bootstrap resamples for the confidence intervals.
        include_degenerate: count degenerate cells in every statistic (default: left out, and
            the page says how many).
        proxy: the calibrated proxy validity of the run's budget
            (:func:`nasrescale.kinds.calibration.write.proxy_validity`), for the claims section.
        include_tuning: count the LR tuning's cells and the cells isomorphic to them in every
            statistic (default: left out, and the page says which).
        sections: the page's sections, in order (default: :data:`RETRAIN_SECTIONS`, where a new
            section is one entry).
        links: how the claims quote the runs of other kinds built on this one (the trends and
            landscapes: :func:`nasrescale.report.kind_reports.run_links`; none by default).

    Raises:
        DataError: no readable store in ``run_dir``.
    """
    run = summarize(Path(run_dir), n_boot=n_boot, include_degenerate=include_degenerate, proxy=proxy,
                    include_tuning=include_tuning, links=links)
    lines, numbers = assemble(sections, run)
    # the calibration's figures, read from another run, come last
    return write_markdown_json(run.run_dir, lines, {**run.numbers(), **numbers, "proxy": proxy})


def ranking_text(run_dir: Path, *, n_boot: int = 1000) -> str:
    """The ranking table(s) ``nasrescale rank`` would print for a run: every pair of its
    protocols, then each protocol against the reference in one line (what ``run`` prints at
    the end). Reads the store read-only, so a partial run works."""
    store = read_store(Path(run_dir) / "store.sqlite")
    labels = protocol_order(store)
    sources = {p: store_source(store, p, p) for p in labels}
    parts = [format_table(compare(sources[x], sources[y], n_boot=n_boot)[0]) for x, y in combinations(labels, 2)]
    ref, _ = load_reference(*reference_spec(store.record))
    for label, src in sources.items():
        if ref is not None and not src.runs.empty:
            r = compare(ref, src, n_boot=0)[0]
            left_out = r["counts"]["degenerate_excluded"]
            parts.append(f"{label} vs {ref.label}: n {r['n']}, Kendall tau {fmt(r['kendall_tau'])}, "
                         f"mean diff {fmt(r['mean_diff'], 2)} points"
                         + (f" ({left_out} degenerate left out)" if left_out else ""))
    return "\n\n".join(parts) if parts else "no finished jobs yet"
