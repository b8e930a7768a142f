"""One registry from a run's stored kind (``[pipeline] kind``) to its report: :data:`REPORTS`.

``nasrescale report`` (:func:`write_run_report`) and the end of ``nasrescale run``
(:func:`end_of_run`) read the kind the store records (:attr:`~nasrescale.store.record.RunRecord.kind`,
an older store's migrated by :mod:`nasrescale.store.migration`) and ask its
:class:`KindReport`; so does the results index (:attr:`KindReport.index`). Each kind's package
(:mod:`nasrescale.kinds`) registers its report with its one
:class:`~nasrescale.kinds.entry.KindEntry`; :data:`REPORTS` imports :mod:`nasrescale.kinds`
(by name) before it is first read.

>>> REPORTS.get("trend").name, REPORTS.get("trend").link is not None
('trend', True)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..ranking.boot_counts import DEFAULT_BOOT
from ..registry import Registry
from ..store.read import read_store
from .common.links import RunLink

__all__ = ["KindReport", "REPORTS", "register_report", "run_links", "write_run_report", "end_of_run"]


@dataclass(frozen=True)
class KindReport:
    """The report of one pipeline kind.

    Attributes:
        name: the kind (``[pipeline] kind``).
        text: ``run_dir -> str``: the summary ``nasrescale run`` prints at the end.
        write: ``(run_dir, n_boot, include_degenerate, include_tuning) -> path``: writes
            ``report.md`` (with ``report.json`` and its figures); ``include_degenerate`` and
            ``include_tuning`` (count the LR tuning's cells) where the kind has a use for them.
        index: ``run_dir -> lines``: what the results index (``results/README.md``) shows of a
            run of the kind after its provenance: its report's headline; ``None``: the ranking
            table of its protocols and the report's verdict lines.
        link: how a study's report quotes the runs of this kind built on it (its claims);
            ``None``: not quoted.
        proxy: ``(RUN:LABEL, results root, n_boot) -> figures``: the proxy validity of a run's
            candidate, which a study's claims quote (``pipeline.calibration``); ``None``: none.
    """

    name: str
    text: Callable[[Path], str]
    write: Callable[[Path, int, bool, bool], Path]
    index: Callable[[Path], list[str]] | None = None
    link: RunLink | None = None
    proxy: Callable[[str, Path, int], dict[str, Any]] | None = None


#: the report of each pipeline kind, by the kind's name (the built-in ones from :mod:`nasrescale.kinds`)
REPORTS: Registry[KindReport] = Registry("pipeline.kind", "reports of pipeline kinds", load="nasrescale.kinds")


def register_report(report: KindReport) -> KindReport:
    """Add ``report`` to :data:`REPORTS` (replacing one of the same kind); returns it."""
    return REPORTS.add(report.name, report)


def run_links() -> tuple[RunLink, ...]:
    """The runs of other kinds a study's report quotes (its claims), in registration order."""
    return tuple(report.link for report in REPORTS.values() if report.link is not None)


def write_run_report(run_dir: Path, *, n_boot: int = DEFAULT_BOOT, include_degenerate: bool = False,
                     include_tuning: bool = False) -> Path:
    """``report.md`` of the run in ``run_dir``, by its stored kind (``include_degenerate``: count
    degenerate cells in the statistics, ``include_tuning``: count the LR tuning's cells and those
    isomorphic to them, where the kind's report has them). Returns its path."""
    store = read_store(Path(run_dir) / "store.sqlite")
    return REPORTS.get(store.record.kind).write(Path(run_dir), n_boot, include_degenerate, include_tuning)


def end_of_run(run_dir: Path) -> None:
    """The end of ``nasrescale run``: print the kind's summary, then write its report; a failing
    report leaves the stored results as they are and says how to redo it."""
    try:
        report = REPORTS.get(read_store(Path(run_dir) / "store.sqlite").record.kind)
        print(report.text(Path(run_dir)))
        print(f"report: {report.write(Path(run_dir), 1000, False, False)}", file=sys.stderr)
    except Exception as err:  # noqa: BLE001 - the results are stored; the report can be redone
        print(f"nasrescale run: the results are stored, but the report failed ({type(err).__name__}: {err}); "
              "retry with `nasrescale report`", file=sys.stderr)
