"""``report.md`` for a retrain run: plots and the numbers behind them.

:func:`write_report` reads the run's store (read-only; a partial run works) into its
:class:`~nasrescale.report.summary.RunSummary` (every pair of its protocols compared, and each
protocol against the benchmark reference), then computes and renders the sections of
:data:`~nasrescale.report.retrain_sections.RETRAIN_SECTIONS` into ``report.md``, its PNG figures
and ``report.json`` (every number) in the run folder. The figures follow the paper's Fig. 4:
accuracy scatter with y = x, Kendall tau at top-K% with the seed-noise band, pairwise
accuracy-gap distributions; plus accuracy gain against the LR scale and a few training curves.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

from ..errors import NasRescaleError
from ..ranking.compare import compare
from ..ranking.sources import load_source, store_source
from ..ranking.text import fmt, format_table
from ..store.read import read_store
from .retrain_sections import RETRAIN_SECTIONS
from .section import assemble, write_markdown_json
from .summary import protocol_order, reference_spec, summarize

__all__ = ["write_report", "ranking_text", "reference_spec", "protocol_order"]


def write_report(run_dir: Path, *, n_boot: int = 1000, include_degenerate: bool = False,
                 proxy: dict[str, Any] | None = None, include_tuning: bool = False) -> Path:
    """Write ``run_dir/report.md`` (with its PNGs and ``report.json``) and return its path.

    Args:
        run_dir: the run folder holding ``store.sqlite`` (``results/<pipeline>/``).
        n_boot: bootstrap resamples for the confidence intervals.
        include_degenerate: count degenerate cells in every statistic (default: left out, and
            the page says how many).
        proxy: the calibrated proxy validity of the run's budget
            (:func:`nasrescale.report.calibration.proxy_validity`), for the claims section.
        include_tuning: count the LR tuning's cells and the cells isomorphic to them in every
            statistic (default: left out, and the page says which).

    Raises:
        DataError: no readable store in ``run_dir``.
    """
    run = summarize(Path(run_dir), n_boot=n_boot, include_degenerate=include_degenerate, proxy=proxy,
                    include_tuning=include_tuning)
    lines, numbers = assemble(RETRAIN_SECTIONS, run)
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
    spec, nats_file = reference_spec(store.record)
    try:
        ref = load_source(spec, nats_file=nats_file) if spec else None
    except NasRescaleError:
        ref = None
    for label, src in sources.items():
        if ref is not None and not src.runs.empty:
            r = compare(ref, src, n_boot=0)[0]
            left_out = r["counts"]["degenerate_excluded"]
            parts.append(f"{label} vs {ref.label}: n {r['n']}, Kendall tau {fmt(r['kendall_tau'])}, "
                         f"mean diff {fmt(r['mean_diff'], 2)} points"
                         + (f" ({left_out} degenerate left out)" if left_out else ""))
    return "\n\n".join(parts) if parts else "no finished jobs yet"
