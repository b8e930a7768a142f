"""Pipeline kinds (``[pipeline] kind``): what the pipeline loader, its runner and its drivers ask
of a kind, instead of testing its name.

Each kind is one package of :mod:`nasrescale.kinds` (``kinds/<kind>/``: its tables, its plan,
its report) that registers one :class:`~nasrescale.kinds.entry.KindEntry`: its
:class:`PipelineKind` lands in :data:`KINDS` here, its report in
:data:`nasrescale.report.kind_reports.REPORTS`. The registries sit low, the kinds above the pipeline:
:data:`KINDS` imports :mod:`nasrescale.kinds` (by name) before it is first read, so that every
built-in kind is there whoever asks first (a plug-in kind registers from the module a pipeline
file's ``imports`` names).

>>> get_kind("retrain").needs_base_lr, get_kind("lr_validation").needs_base_lr
(True, False)
>>> owned_tables()["trend"]
'trend'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..config import from_table, to_table
from ..jobs.job import DataSpec, TrainJob
from ..registry import Registry
from ..store.sqlite_store import Store
from .preflight import DataKeys

__all__ = ["PipelineKind", "KindTable", "KINDS", "register_kind", "get_kind", "owned_tables", "kind_tables", "staged_tables",
           "nothing_after", "RunJobs"]

#: a :class:`nasrescale.pipeline.spec.Pipeline` (spec.py imports this module, so not by name)
Pipeline = Any
#: runs jobs through the store and executor; returns ``(jobs, new jobs, jobs run now)``
RunJobs = Callable[[list[TrainJob]], tuple[int, int, int]]


@dataclass(frozen=True)
class KindTable:
    """A top-level table of a pipeline file that only one kind reads (``[trend]``, ``[landscape]``,
    ``[validation]``, a calibration's ``[budgets.<label>]``).

    Attributes:
        name: the table's name in the file (and in the stored pipeline).
        read: ``(the table as written or None, the shared tables typed by name) -> the typed
            table``; raises ConfigError naming its keys.
        write: the typed table as the stored pipeline holds it (JSON).
        grows: ``(stored, new)`` JSON of the table: whether ``new`` only adds jobs to those of
            ``stored`` (a trend's budgets), so a store of ``stored`` is a store of ``new`` too;
            ``None``: the table must be unchanged.
    """

    name: str
    read: Callable[[Any, Mapping[str, Any]], Any]
    write: Callable[[Any], Any] = to_table
    grows: Callable[[Any, Any], bool] | None = None

    @classmethod
    def of(cls, name: str, settings: type, grows: Callable[[Any, Any], bool] | None = None) -> "KindTable":
        """The table ``name`` read into the dataclass ``settings`` (every key optional)."""
        return cls(name, lambda table, shared: from_table(settings, {} if table is None else table, name),
                   to_table, grows)


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
            the planned jobs are stored (:func:`nothing_after`: nothing).
        tables: the pipeline tables only this kind reads (:class:`KindTable`): a pipeline of
            another kind with one is refused, and the kind's resolved pipeline (its store
            identity) holds them.
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
        bound: ``(pipeline, store) -> None``: what the kind brings up to date in its store each
            time a driver binds it (``run``, a slice), before any job runs (a landscape's
            analysis-only settings in its stored plan); default: nothing.
        cells_done: ``(pipeline, archs, store, run_jobs) -> counts``: what a time-limited run
            does once a chunk of cells finished (a landscape extends their grids); ``None``: nothing.
        reuse_key: the ``table.key`` naming a store whose finished runs of the same jobs are
            copied in instead of trained (:mod:`nasrescale.pipeline.reuse`).
        analysis_only: the kind's dotted keys that only say how stored runs are read (a store
            made under other values is the same experiment;
            :func:`~nasrescale.pipeline.identity.analysis_only`).
        data_specs: ``pipeline -> [(data, how its keys are spelled)]``: every distinct dataset
            its jobs use, where that is not the pipeline's one (a calibration's candidates).
        identity: ``identity -> identity``: what the kind leaves out of its store identity
            beside the shared keys (a calibration's seeds: more seeds add jobs, change none).
    """

    name: str
    needs_base_lr: bool
    searches: bool
    slices: bool
    plan: Callable[[Pipeline, Sequence[str]], tuple[list[TrainJob], dict[str, str]]]
    after: Callable[[Pipeline, Sequence[str], Store, dict[str, str], RunJobs, bool], tuple[int, int, int]]
    runs: Callable[[Pipeline, Store, RunJobs], RunJobs] = lambda pipeline, store, run: run
    check: Callable[[Pipeline, Path], None] = lambda pipeline, run_dir: None
    bound: Callable[[Pipeline, Store], None] = lambda pipeline, store: None
    tables: tuple[KindTable, ...] = ()
    uses: Callable[[Pipeline], tuple[str, ...]] = lambda pipeline: ()
    stores_kind: bool = True
    cells_done: Callable[[Pipeline, Sequence[str], Store, RunJobs], tuple[int, int, int]] | None = None
    reuse_key: str | None = None
    analysis_only: tuple[str, ...] = ()
    data_specs: Callable[[Pipeline], list[tuple[DataSpec, DataKeys]]] | None = None
    identity: Callable[[dict[str, Any]], dict[str, Any]] = lambda identity: identity

    @property
    def owns(self) -> tuple[str, ...]:
        """The names of the kind's own tables."""
        return tuple(table.name for table in self.tables)


#: the registered kinds, by name (the built-in ones from :mod:`nasrescale.kinds`)
KINDS: Registry[PipelineKind] = Registry("pipeline.kind", "pipeline kinds", load="nasrescale.kinds")


def register_kind(kind: PipelineKind) -> PipelineKind:
    """Add ``kind`` to :data:`KINDS` (replacing one of the same name); returns it."""
    return KINDS.add(kind.name, kind)


#: the registered kind of a name; an unknown name is a ConfigError naming ``pipeline.kind`` and
#: listing the registered kinds
get_kind = KINDS.get


def owned_tables() -> dict[str, str]:
    """``table -> the kind that owns it`` over every registered kind."""
    return {table: kind.name for kind in KINDS.values() for table in kind.owns}


def kind_tables() -> dict[str, KindTable]:
    """``table -> its KindTable`` over every registered kind."""
    return {table.name: table for kind in KINDS.values() for table in kind.tables}


def staged_tables(pipeline: Pipeline) -> tuple[str, ...]:
    """``lr_search`` and ``tuning`` where the pipeline's protocols run those stages."""
    return (("lr_search",) if pipeline.needs_search() else ()) + (("tuning",) if pipeline.needs_tuning() else ())


def nothing_after(*_: Any) -> tuple[int, int, int]:
    """A kind's ``after`` where nothing runs once its planned jobs are stored."""
    return 0, 0, 0
