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

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..registry import Registry
from ..errors import ConfigError
from ..jobs.job import TrainJob
from ..store.write import Store
from .calibration import calibration_plan
from .landscape import extend_cells, landscape_plan
from .trend import check_reuse, reusing, trend_plan, trend_trim
from .protocols import ProtocolEntry, protocol_keys

__all__ = ["PipelineKind", "KINDS", "OWN_TABLES", "register_kind", "get_kind", "RunJobs"]

#: pipeline tables that belong to one kind each (the kind lists them in ``tables``)
OWN_TABLES = ("landscape",)

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
        trim: ``(pipeline, resolved) -> None``: drops the resolved tables the kind does not use.
        runs: ``(pipeline, store, run_jobs) -> run_jobs``: how every driver (``run``, a slice) runs
            the kind's jobs through the store, its search's and tuning's too (default: as given;
            a trend first copies finished runs of the same jobs from its ``reuse`` store).
        check: ``(pipeline, run_dir) -> None``: what the kind needs beside its run folder (a
            trend's ``reuse`` store), checked before the store is created; raises ConfigError.
        tables: the pipeline tables of this kind alone (:data:`OWN_TABLES`) that it reads: only
            its pipelines may have them, and only its resolved pipeline holds them.
        cells_done: ``(pipeline, archs, store, run_jobs) -> counts``: what a time-limited run
            does once a chunk of cells finished (a landscape extends their grids); ``None``: nothing.
        reuse_key: the ``table.key`` naming a store whose finished runs of the same jobs are
            copied in instead of trained (with ``runs=reusing``, ``check=check_reuse``).
    """

    name: str
    needs_base_lr: bool
    searches: bool
    slices: bool
    plan: Callable[[Pipeline, Sequence[str]], tuple[list[TrainJob], dict[str, str]]]
    after: Callable[[Pipeline, Sequence[str], Store, dict[str, str], RunJobs, bool], tuple[int, int, int]]
    trim: Callable[[Pipeline, dict[str, Any]], None]
    runs: Callable[[Pipeline, Store, RunJobs], RunJobs] = lambda pipeline, store, run: run
    check: Callable[[Pipeline, Path], None] = lambda pipeline, run_dir: None
    tables: tuple[str, ...] = ()
    cells_done: Callable[[Pipeline, Sequence[str], Store, RunJobs], tuple[int, int, int]] | None = None
    reuse_key: str | None = None


#: the registered kinds, by name
KINDS: Registry[PipelineKind] = Registry("pipeline.kind", "pipeline kinds")


def register_kind(kind: PipelineKind) -> PipelineKind:
    """Add ``kind`` to :data:`KINDS` (replacing one of the same name); returns it."""
    return KINDS.add(kind.name, kind)


#: the registered kind of a name; an unknown name is a ConfigError naming ``pipeline.kind`` and
#: listing the registered kinds
get_kind = KINDS.get


# -- retrain ------------------------------------------------------------------------------
def _retrain_plan(pipeline: Pipeline, archs: Sequence[str]) -> tuple[list[TrainJob], dict[str, str]]:
    """Architecture x protocol x seed; every protocol's base LR must be known."""
    unresolved = [e.label for e in pipeline.protocols if e.protocol.lr is None]
    if unresolved:
        raise ConfigError(f"protocols.{unresolved[0]}.base_lr: \"search\" is resolved by the run's LR search "
                          "(nasrescale run); no jobs before it")
    family, data, budget = pipeline.family(), pipeline.data_spec(), pipeline.budget

    def job(arch: str, entry: ProtocolEntry, seed: int) -> TrainJob:
        with protocol_keys(entry.label):  # a job's check of its protocol names the pipeline's key
            return TrainJob(arch, family, data, entry.protocol, seed, budget.width, budget.cells, entry.label)

    return [job(arch, entry, seed) for arch in archs for entry in pipeline.protocols
            for seed in pipeline.pipeline.seeds], {}


def _nothing_after(*_: Any) -> tuple[int, int, int]:
    return 0, 0, 0


def _retrain_trim(pipeline: Pipeline, resolved: dict[str, Any]) -> None:
    """Unused tables stay out of the resolved pipeline: older stores keep their identity."""
    resolved["pipeline"].pop("kind")
    resolved.pop("validation")
    resolved.pop("trend")
    if not pipeline.needs_search():
        resolved.pop("lr_search")


# -- lr_validation ------------------------------------------------------------------------
def _validation_plan(pipeline: Pipeline, archs: Sequence[str]) -> tuple[list[TrainJob], dict[str, str]]:
    plan, jobs = pipeline.validation_plan(archs)
    return jobs, {"validation_plan": json.dumps(plan)}


def _extend_validation(pipeline: Pipeline, archs: Sequence[str], store: Store, meta: dict[str, str], run: RunJobs,
                       progress: bool) -> tuple[int, int, int]:
    """Extend the grids where a seed's argmin sits at an edge
    (:func:`~nasrescale.lrsearch.validation.extend_plan`), up to ``lr_search.extend`` rounds, from
    the plan as planned (not as stored: rounds re-derive alike); the stored plan is updated after
    each round's jobs ran. A rerun derives the same rounds from the same stored results, so it
    adds nothing (a killed round resumes)."""
    plan = json.loads(meta["validation_plan"])
    total = new = ran = 0
    for _ in range(pipeline.lr_search.extend):
        jobs = pipeline.extend_validation_plan(plan, store.rows_with_tail())
        if not jobs:
            break
        if progress:
            print(f"extending the LR grid past its edge: {len(jobs)} more runs", file=sys.stderr)
        n, added, todo = run(jobs)
        store.set_meta("validation_plan", json.dumps(plan))
        total, new, ran = total + n, new + added, ran + todo
    # the plan as this run reads it (rule, loss: analysis-only keys a rerun may change)
    store.set_meta("validation_plan", json.dumps(plan))
    store.set_meta("pipeline", json.dumps(pipeline.resolved(archs), sort_keys=True))  # its analysis keys
    return total, new, ran


register_kind(PipelineKind("retrain", needs_base_lr=True, searches=True, slices=True, plan=_retrain_plan,
                           after=_nothing_after, trim=_retrain_trim))
register_kind(PipelineKind("lr_validation", needs_base_lr=False, searches=False, slices=False, plan=_validation_plan,
                           after=_extend_validation, trim=lambda pipeline, resolved: resolved.pop("trend")))


# -- calibration --------------------------------------------------------------------------
def _calibration_trim(pipeline: Pipeline, resolved: dict[str, Any]) -> None:
    resolved.pop("validation")
    resolved.pop("lr_search")
    resolved.pop("trend")


register_kind(PipelineKind("calibration", needs_base_lr=True, searches=False, slices=False,
                           plan=lambda pipeline, archs: (calibration_plan(pipeline, archs), {}),
                           after=_nothing_after, trim=_calibration_trim))


# -- trend --------------------------------------------------------------------------------
register_kind(PipelineKind("trend", needs_base_lr=True, searches=True, slices=True, plan=trend_plan,
                           after=_nothing_after, trim=trend_trim, runs=reusing, check=check_reuse,
                           reuse_key="trend.reuse"))


# -- landscape ----------------------------------------------------------------------------
def _landscape_trim(pipeline: Pipeline, resolved: dict[str, Any]) -> None:
    for table in ("validation", "lr_search", "trend"):
        resolved.pop(table)


def _landscape_after(pipeline: Pipeline, archs: Sequence[str], store: Store, meta: dict[str, str], run: RunJobs,
                     progress: bool) -> tuple[int, int, int]:
    return extend_cells(pipeline, archs, store, run, progress)


register_kind(PipelineKind("landscape", needs_base_lr=False, searches=False, slices=True, plan=landscape_plan,
                           after=_landscape_after, trim=_landscape_trim, runs=reusing, check=check_reuse,
                           tables=("landscape",), reuse_key="landscape.reuse",
                           cells_done=lambda pipeline, archs, store, run: extend_cells(pipeline, archs, store, run)))
