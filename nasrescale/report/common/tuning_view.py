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

from dataclasses import dataclass, field
from typing import Mapping

from ...store.stage_records import TuningRun

__all__ = ["TuningView"]


@dataclass(frozen=True)
class TuningView:
    """One protocol's LR tuning as the report reads it, finished or still running.

    Attributes:
        protocol: the tuned protocol's label.
        anchor_lr: the LR the multipliers scale (NaN while running and the anchor is not known).
        criterion: what chooses the multiplier, in words (``None``: a finished tuning stored none).
        cells, seeds: the tuning cells (while running: those with a finished run) and seeds.
        chosen: the multiplier chosen (``None`` while running); lr: the LR it gives.
        edge: ``low``/``high`` where the choice (while running: the complete grid's best) sits
            at the grid's edge, else ``None``.
        means: multiplier (as text) -> mean test accuracy (while running: over the cells finished
            at every multiplier of the first grid).
        diverged: multiplier (as text) -> how many of its runs diverged.
        runs: multiplier (as text) -> its runs (a running tuning's always say ``diverged``, a
            finished one's where it was stored).
        added: the multipliers past the pipeline's first grid, which extensions tried (finished).
        in_progress: the tuning is still running; the fields below are set only then.
        cells_planned: the planned tuning cells (``tuning.cells``).
        planned: the runs of every multiplier tried so far on all the planned cells.
        runs_finished: every finished run, whole cell or not.
        best: the complete grid's best multiplier (``None`` until every run of the grid finished).
        next: the multiplier the grid extends by where ``best`` sits at an edge, ``extension``:
            which extension that is, of ``extend`` (``tuning.extend``).
    """

    protocol: str | None = None
    anchor_lr: float | None = None
    criterion: str | None = None
    cells: tuple[str, ...] = ()
    seeds: tuple[int, ...] = ()
    chosen: float | None = None
    edge: str | None = None
    means: Mapping[str, float] = field(default_factory=dict)
    diverged: Mapping[str, int] = field(default_factory=dict)
    lr: float | None = None
    runs: Mapping[str, tuple[TuningRun, ...]] = field(default_factory=dict, repr=False)
    added: tuple[float, ...] = ()
    in_progress: bool = False
    cells_planned: int | None = None
    planned: int | None = None
    runs_finished: int | None = None
    best: float | None = None
    next: float | None = None
    extension: int | None = None
    extend: int | None = None
