"""Pipeline kinds (``[pipeline] kind``): what each plans and runs after its jobs.

Every kind registers one :class:`PipelineKind` in :data:`KINDS`; the pipeline, its driver and
``nasrescale run`` ask it instead of testing the kind's name. Each kind's report is the entry of
the same name in :data:`nasrescale.report.kinds.REPORTS`, read from the kind the store records:

* ``retrain`` -- architectures x protocols x seeds; a protocol with ``base_lr = "search"`` has
  its base LR chosen by the LR search first; reported by the ranking and ``report.md``.
* ``calibration`` -- one protocol at several candidate budgets (``[budgets.<label>]``) x
  architectures x each candidate's seeds (:mod:`nasrescale.pipeline.calibration`); reported by
  :mod:`nasrescale.report.calibration` (proxy validity against the reference, cost).
* ``lr_validation`` -- each architecture's maximal LR grid-searched (the grid extended past an
  edge argmin, up to ``lr_search.extend`` rounds) and compared with the predicted one
  (:mod:`nasrescale.lrsearch.validation`); reported by its own summary and report.
* ``landscape`` -- one protocol at every LR of a log grid x architectures x seeds, each cell's
  grid extended past an edge best (:mod:`nasrescale.pipeline.landscape`); reported by
  :mod:`nasrescale.report.landscape` (each cell's best LR against the path-depth rule, headroom
  and the ranking each cell's own best LR gives).
* ``trend`` -- a retrain's protocols x architectures x seeds at each of ``trend.epochs``
  (:mod:`nasrescale.pipeline.trend`), reusing finished runs of another store; reported by
  :mod:`nasrescale.report.trend` (each budget's comparison, and how it moves with the budget).

>>> sorted(KINDS), get_kind("retrain").needs_base_lr, get_kind("lr_validation").needs_base_lr
(['calibration', 'landscape', 'lr_validation', 'retrain', 'trend'], True, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..registry import Registry
from ..jobs.job import TrainJob
from ..space.parsed_arch import ParsedArch
from ..store.write import Store
from .calibration import calibration_plan
from .landscape import ANALYSIS_SETTINGS, check_landscape, extend_cells, landscape_plan, refresh_analysis
from .trend import check_reuse, reusing, trend_plan
from .validation import extend_validation, validation_plan
from .protocols import ProtocolEntry, protocol_keys

__all__ = ["PipelineKind", "KINDS", "register_kind", "get_kind", "owned_tables", "staged_tables", "RunJobs"]

#: a :class:`nasrescale.pipeline.spec.Pipeline` (spec.py imports this module, so not by name)
Pipeline = Any
#: runs jobs through the store and executor; returns ``(jobs, new jobs, jobs run now)``
RunJobs = Callable[[list[TrainJob]], tuple[int, int, int]]


@dataclass(frozen=True)
class PipelineKind:
    """What one kind of pipeline needs.

    Attributes:
        name: the ``[pipeline] kind`` value.
        needs_base_lr: every protocol needs a base LR (or ``base_lr = "search"``).
        searches: protocols with ``base_lr = "search"`` run the LR search before their jobs.
        slices: :func:`~nasrescale.pipeline.slices.run_slice` can run it in slices.
        plan: ``(pipeline, archs) -> (jobs, meta)``: the jobs and the store meta they need.
        after: ``(pipeline, archs, store, meta, run_jobs, progress) -> counts``: what runs once
            the planned jobs are stored (``(0, 0, 0)`` when nothing).
        owns: the pipeline tables only this kind reads (``[validation]``, ``[trend]``,
            ``[landscape]``): a pipeline of another kind with one is refused, and the kind's
            resolved pipeline (its store identity) holds them.
        uses: ``pipeline -> tables``: the shared optional tables (``lr_search``, ``tuning``) this
            pipeline of the kind reads, and so resolves (a table no stage reads stays out: older
            stores keep their identity).
        stores_kind: whether the resolved pipeline names its kind (a retrain's does not: its
            stores predate kinds).
        runs: ``(pipeline, store, run_jobs) -> run_jobs``: how every driver (``run``, a slice) runs
            the kind's jobs through the store, its search's and tuning's too (default: as given;
            a trend first copies finished runs of the same jobs from its ``reuse`` store).
        check: ``(pipeline, run_dir) -> None``: what the kind needs beside its run folder (a
            trend's ``reuse`` store), checked before the store is created; raises ConfigError.
        cells_done: ``(pipeline, archs, store, run_jobs) -> counts``: what a time-limited run
            does once a chunk of cells finished (a landscape extends their grids); ``None``: nothing.
        reuse_key: the ``table.key`` naming a store whose finished runs of the same jobs are
            copied in instead of trained (with ``runs=reusing``, ``check=check_reuse``).
        analysis_only: the kind's dotted keys that only say how stored runs are read (a store
            made under other values is the same experiment;
            :func:`~nasrescale.pipeline.identity.analysis_only`).
    """

    name: str
    needs_base_lr: bool
    searches: bool
    slices: bool
    plan: Callable[[Pipeline, Sequence[str]], tuple[list[TrainJob], dict[str, str]]]
    after: Callable[[Pipeline, Sequence[str], Store, dict[str, str], RunJobs, bool], tuple[int, int, int]]
    runs: Callable[[Pipeline, Store, RunJobs], RunJobs] = lambda pipeline, store, run: run
    check: Callable[[Pipeline, Path], None] = lambda pipeline, run_dir: None
    owns: tuple[str, ...] = ()
    uses: Callable[[Pipeline], tuple[str, ...]] = lambda pipeline: ()
    stores_kind: bool = True
    cells_done: Callable[[Pipeline, Sequence[str], Store, RunJobs], tuple[int, int, int]] | None = None
    reuse_key: str | None = None
    analysis_only: tuple[str, ...] = ()


#: the registered kinds, by name
KINDS: Registry[PipelineKind] = Registry("pipeline.kind", "pipeline kinds")


def register_kind(kind: PipelineKind) -> PipelineKind:
    """Add ``kind`` to :data:`KINDS` (replacing one of the same name); returns it."""
    return KINDS.add(kind.name, kind)


#: the registered kind of a name; an unknown name is a ConfigError naming ``pipeline.kind`` and
#: listing the registered kinds
get_kind = KINDS.get


def owned_tables() -> dict[str, str]:
    """``table -> the kind that owns it`` over every registered kind."""
    return {table: kind.name for kind in KINDS.values() for table in kind.owns}


# -- retrain ------------------------------------------------------------------------------
def _retrain_plan(pipeline: Pipeline, archs: Sequence[str]) -> tuple[list[TrainJob], dict[str, str]]:
    """Architecture x protocol x seed; every protocol's base LR must be known, or marked to be
    searched (each job checks its own)."""
    family, data, budget = pipeline.family(), pipeline.data_spec(), pipeline.budget

    def job(cell: ParsedArch, entry: ProtocolEntry, seed: int) -> TrainJob:
        with protocol_keys(entry):  # a job's check of its protocol names the pipeline's key
            return TrainJob(cell, family, data, entry.protocol, seed, budget.width, budget.cells, entry.label)

    return [job(cell, entry, seed) for cell in pipeline.arch_cells(archs) for entry in pipeline.protocols
            for seed in pipeline.pipeline.seeds], {}


def _nothing_after(*_: Any) -> tuple[int, int, int]:
    return 0, 0, 0


def staged_tables(pipeline: Pipeline) -> tuple[str, ...]:
    """``lr_search`` and ``tuning`` where the pipeline's protocols run those stages."""
    return (("lr_search",) if pipeline.needs_search() else ()) + (("tuning",) if pipeline.needs_tuning() else ())


register_kind(PipelineKind("retrain", needs_base_lr=True, searches=True, slices=True, plan=_retrain_plan,
                           after=_nothing_after, uses=staged_tables, stores_kind=False))
register_kind(PipelineKind("lr_validation", needs_base_lr=False, searches=False, slices=False, plan=validation_plan,
                           after=extend_validation, owns=("validation",), uses=lambda pipeline: ("lr_search",)))


# -- calibration --------------------------------------------------------------------------
register_kind(PipelineKind("calibration", needs_base_lr=True, searches=False, slices=False,
                           plan=lambda pipeline, archs: (calibration_plan(pipeline, archs), {}),
                           after=_nothing_after))


# -- trend --------------------------------------------------------------------------------
register_kind(PipelineKind("trend", needs_base_lr=True, searches=True, slices=True, plan=trend_plan,
                           after=_nothing_after, owns=("trend",), uses=staged_tables, runs=reusing,
                           check=check_reuse, reuse_key="trend.reuse",
                           analysis_only=("trend.reuse", "trend.noise", "trend.top_percent")))


# -- landscape ----------------------------------------------------------------------------
def _landscape_after(pipeline: Pipeline, archs: Sequence[str], store: Store, meta: dict[str, str], run: RunJobs,
                     progress: bool) -> tuple[int, int, int]:
    refresh_analysis(pipeline, store)
    return extend_cells(pipeline, archs, store, run, progress)


register_kind(PipelineKind("landscape", needs_base_lr=False, searches=False, slices=True, plan=landscape_plan,
                           after=_landscape_after, owns=("landscape",), runs=reusing, check=check_landscape,
                           reuse_key="landscape.reuse",
                           analysis_only=tuple(f"landscape.{key}" for key in ANALYSIS_SETTINGS),
                           cells_done=lambda pipeline, archs, store, run: extend_cells(pipeline, archs, store, run)))
