"""One registry from a run's stored kind (``[pipeline] kind``) to its report: :data:`REPORTS`.

``nasrescale report`` (:func:`write_run_report`) and the end of ``nasrescale run``
(:func:`end_of_run`) read the kind the store records (:attr:`~nasrescale.store.record.RunRecord.kind`,
an older store's migrated by :mod:`nasrescale.store.migration`) and ask its
:class:`KindReport`; adding a pipeline kind adds one entry here (its report's sections are its
own, :mod:`nasrescale.report.common.page`).

>>> REPORTS.names()
('retrain', 'lr_validation', 'calibration', 'trend', 'landscape')
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..ranking.boot_counts import DEFAULT_BOOT, VERDICT_BOOT
from ..registry import Registry
from ..store.read import read_store
from .calibration.write import calibration_text, proxy_validity, write_calibration_report
from .common.links import RunLink
from .landscape.link import LANDSCAPE_LINK
from .landscape.write import landscape_text, write_landscape_report
from .lr_validation.write import summary_text, write_validation_report
from .retrain.write import ranking_text, write_report
from .trend.link import TREND_LINK
from .trend.write import trend_text, write_trend_report

__all__ = ["KindReport", "REPORTS", "RUN_LINKS", "register_report", "write_run_report", "end_of_run"]


@dataclass(frozen=True)
class KindReport:
    """The report of one pipeline kind.

    Attributes:
        name: the kind (``[pipeline] kind``).
        text: ``run_dir -> str``: the summary ``nasrescale run`` prints at the end.
        write: ``(run_dir, n_boot, include_degenerate, include_tuning) -> path``: writes
            ``report.md`` (with ``report.json`` and its figures); ``include_degenerate`` and
            ``include_tuning`` (count the LR tuning's cells) where the kind has a use for them.
    """

    name: str
    text: Callable[[Path], str]
    write: Callable[[Path, int, bool, bool], Path]


#: the report of each pipeline kind, by the kind's name
REPORTS: Registry[KindReport] = Registry("pipeline.kind", "reports of pipeline kinds")

#: the runs of other kinds a study's report quotes (its claims), in the claims' order; the rooms
#: stay siblings: each link is its own room's, handed to the retrain report here
RUN_LINKS: tuple[RunLink, ...] = (TREND_LINK, LANDSCAPE_LINK)


def register_report(report: KindReport) -> KindReport:
    """Add ``report`` to :data:`REPORTS` (replacing one of the same kind); returns it."""
    return REPORTS.add(report.name, report)


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


def _retrain_write(run_dir: Path, n_boot: int, include_degenerate: bool, include_tuning: bool) -> Path:
    """The retrain report, with the proxy validity of the calibration candidate its pipeline
    names (``pipeline.calibration``, a run under the same results root) and the runs of
    :data:`RUN_LINKS` built on it."""
    calibration = read_store(run_dir / "store.sqlite").record.calibration
    proxy = proxy_validity(calibration, run_dir.parent, n_boot) if calibration else None
    return write_report(run_dir, n_boot=n_boot, include_degenerate=include_degenerate, proxy=proxy,
                        include_tuning=include_tuning, links=RUN_LINKS)


register_report(KindReport("retrain", ranking_text, _retrain_write))
register_report(KindReport("lr_validation", summary_text, lambda run_dir, n_boot, degenerate, tuning:
                           write_validation_report(run_dir)))
register_report(KindReport("calibration", calibration_text, lambda run_dir, n_boot, degenerate, tuning:
                           write_calibration_report(run_dir, n_boot=n_boot)))
register_report(KindReport("trend", trend_text, lambda run_dir, n_boot, degenerate, tuning:
                           write_trend_report(run_dir, n_boot=n_boot)))
register_report(KindReport("landscape", landscape_text, lambda run_dir, n_boot, degenerate, tuning:
                           write_landscape_report(run_dir, n_boot=max(n_boot, VERDICT_BOOT))))
