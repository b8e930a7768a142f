"""A protocol's LR tuning as the report reads it (:class:`TuningView`), finished or still running:
built once by :func:`~nasrescale.report.common.tuning_section.tunings` and
:func:`~nasrescale.report.common.tuning_section.tuning_progress`, read by attribute by the tuning
section, its figure (:mod:`~nasrescale.report.common.tuning_plot`), the budget's LR text and
``nasrescale status``.

>>> view = TuningView(protocol="flat", anchor_lr=0.1, chosen=2.0, lr=0.2, means={"1": 50.0, "2": 60.0})
>>> view.chosen, view.in_progress, view.next, dict(view.means)
(2.0, False, None, {'1': 50.0, '2': 60.0})
"""

from __future__ import annotations

from dataclasses import dataclass

from ...store.stage_records import TuningResult

__all__ = ["TuningView"]


@dataclass(frozen=True)
class TuningView(TuningResult):
    """One protocol's LR tuning as the report reads it, finished or still running: the stored
    tuning's fields (:class:`~nasrescale.store.stage_records.TuningResult`; while running,
    ``anchor_lr`` is NaN where the anchor is not known yet, ``cells`` those with a finished run,
    ``chosen`` and ``lr`` ``None``, ``edge`` where the complete grid's best sits, ``means`` over the
    cells finished at every multiplier of the first grid and each run says ``diverged``), and:

    Attributes:
        added: the multipliers past the pipeline's first grid, which extensions tried (finished).
        in_progress: the tuning is still running; the fields below are set only then.
        cells_planned: the planned tuning cells (``tuning.cells``).
        planned: the runs of every multiplier tried so far on all the planned cells.
        runs_finished: every finished run, whole cell or not.
        best: the complete grid's best multiplier (``None`` until every run of the grid finished).
        next: the multiplier the grid extends by where ``best`` sits at an edge, ``extension``:
            which extension that is, of ``extend`` (``tuning.extend``).
    """

    added: tuple[float, ...] = ()
    in_progress: bool = False
    cells_planned: int | None = None
    planned: int | None = None
    runs_finished: int | None = None
    best: float | None = None
    next: float | None = None
    extension: int | None = None
    extend: int | None = None
