"""The fields of the stored pipeline's tables, defined once: ``[budget]``, ``[executor]``,
``[lr_search]``, ``[tuning]`` and ``[landscape]`` (names, types, defaults and what each means).

Two kinds of class derive from each and add no field of their own: the settings the pipeline
reads from a pipeline file, which check the values (:class:`~nasrescale.pipeline.tables.Budget`,
:class:`~nasrescale.executors.base.ExecutorSettings`,
:class:`~nasrescale.lrsearch.search.LrSearchSettings`,
:class:`~nasrescale.pipeline.tables.TuningSettings`,
:class:`~nasrescale.kinds.landscape.settings.LandscapeSettings`), and the record's schema types a
store's tables read into (:mod:`.schema`, :class:`~.plans.LandscapeSettingsRecord`). So a table
a pipeline writes reads back with the same keys and defaults, and a key a stored table leaves out
reads as the default a pipeline without it runs with.

>>> BudgetFields().epochs, ExecutorFields().kind, LrSearchFields().points, TuningFields().cells
(None, 'local', 13, 12)
>>> LandscapeFields(centers={"a": 0.4}).centers
{'a': 0.4}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..config import KEEP_NONE

__all__ = ["BudgetFields", "ExecutorFields", "LrSearchFields", "TuningFields", "LandscapeFields"]


@dataclass(frozen=True)
class BudgetFields:
    """``[budget]``: overrides of every protocol (epochs, batch size) and the model/data size
    (``None``: not set, the protocol's or the family's); ``norm`` the network's normalization
    (:mod:`nasrescale.models.norms`: ``batch``, the skeleton's own, or ``none``, every BatchNorm
    removed)."""

    epochs: int | None = None
    batch_size: int | None = None
    width: int | None = None
    cells: int | None = None
    train_subset: int | None = None
    test_subset: int | None = None
    resolution: int | None = None
    norm: str | None = field(default=None, metadata=KEEP_NONE)  # "none" is a norm, not an absent key


@dataclass(frozen=True)
class ExecutorFields:
    """``[executor]``: how a pipeline's jobs are run.

    Attributes:
        kind: a registered executor (:func:`~nasrescale.executors.executor_registry.executor_kinds`):
            ``local`` (this machine: in-process on the CPU, a process pool on GPUs) or ``ray``
            (Ray core tasks; needs the ``ray`` extra).
        jobs_per_gpu: concurrent jobs per visible GPU (local pool: processes; Ray: the task's
            ``num_gpus`` is ``1 / jobs_per_gpu``).
        cpus_per_job: CPUs reserved per job (Ray's ``num_cpus``; may be fractional).
        address: Ray cluster address; ``None`` starts a local Ray instance.
        max_retries: how often a job whose worker died is retried before it counts as failed.
        device: ``auto`` (CUDA if available, else CPU), ``cpu`` or ``cuda``.
        fuse: train jobs that differ only in seed, init, LR and weight decay as one fused network, one
            unit of work per group (``None``: :func:`nasrescale.jobs.fusion.fuse_by_default` of the
            executor's device: on for CUDA, off for the CPU, where it measured slower).
        max_fused: the most jobs in one fused group (larger groups are split evenly; the default is
            :data:`nasrescale.jobs.grouping.DEFAULT_MAX_MEMBERS`).
        threads: intra-op threads per CPU job (``None``: a run picks them once, from the cores
            other processes leave free when it first runs a job, and keeps them on resume:
            :func:`~nasrescale.executors.threads.cpu_threads`; Ray: ``cpus_per_job``).
    """

    kind: str = "local"
    jobs_per_gpu: int = 1
    cpus_per_job: float = 1.0
    address: str | None = None
    max_retries: int = 2
    device: Literal["auto", "cpu", "cuda"] = "auto"
    fuse: bool | None = None
    max_fused: int = 12  # jobs.grouping.DEFAULT_MAX_MEMBERS (a sibling layer: tests hold them equal)
    threads: int | None = None


@dataclass(frozen=True)
class LrSearchFields:
    """``[lr_search]``: the base-LR search's grid and how each LR is tried.

    Attributes:
        lr_min: smallest LR of the grid.
        lr_max: largest LR of the grid.
        points: LRs in the grid, log-spaced (default 13: ``10^(1/4)`` steps from 0.01 to 10).
        seeds: seeds per LR (the mean final loss over them is compared).
        epochs: training epochs per run (the paper: 1).
        rel_tol: relative tolerance of a tie between mean losses (default 0.01 = 1%, the
            selection's :data:`~nasrescale.lrsearch.select.DEFAULT_REL_TOL`; the ``within_tol``
            rule only).
        arch: the architecture searched (``None``: the family's base architecture).
        rule: the maximal-LR rule, ``argmin`` (the paper's: per seed, then the geometric
            mean) or ``within_tol`` (the largest LR within ``rel_tol`` of the best mean loss);
            :mod:`nasrescale.lrsearch.select`.
        loss: which final training loss a run is judged by: ``epoch`` (the last epoch's mean
            training loss: what the paper's released code logs and compares) or ``tail`` (mean
            over the last 10% of the last epoch's steps, :data:`~nasrescale.train.run_setup.TAIL_FRACTION`).
        extend: how many times a grid whose argmin sits at an edge is extended past that edge
            (``lr_validation``: per architecture; ``base_lr = "search"``: the search's grid,
            4 grid steps each time); 0: only flag it.
        protocol: ``base_lr = "search"`` in a pipeline: the label of the protocol the one search
            trains, whose choice every ``base_lr = "search"`` protocol takes (``None``: each
            such protocol is searched with its own settings).
    """

    lr_min: float = 0.01
    lr_max: float = 10.0
    points: int = 13
    seeds: tuple[int, ...] = (0, 1, 2)
    epochs: int = 1
    rel_tol: float = 0.01  # lrsearch.select.DEFAULT_REL_TOL (tests hold them equal)
    arch: str | None = None
    rule: str = "argmin"
    loss: str = "epoch"
    extend: int = 6
    protocol: str | None = None


@dataclass(frozen=True)
class TuningFields:
    """``[tuning]``: how a protocol with ``tune = true`` gets its LR multiplier
    (:mod:`nasrescale.lrsearch.tuning`).

    Attributes:
        multipliers: the grid of multipliers of the protocol's anchor LR (ascending).
        cells: how many tuning cells.
        offset: the tuning cells are the pipeline's cells at positions ``offset`` to
            ``offset + cells - 1`` of the order slices visit them (spread order): cells the
            evaluation reaches only later, so the cells compared first are not the cells tuned on.
        seeds: the tuning runs' seeds: none of them an evaluation seed (a pipeline with both
            refuses to load), so the tuning's runs are never the evaluation's own jobs.
        extend: how many times a best multiplier at the grid's edge extends the grid past it.
    """

    multipliers: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)
    cells: int = 12
    offset: int = 0
    seeds: tuple[int, ...] = (100,)
    extend: int = 2


@dataclass(frozen=True)
class LandscapeFields:
    """``[landscape]`` of a ``kind = "landscape"`` pipeline: its LR grid
    (``lr_min * 2^(k / points_per_octave)``), its extensions, its strata and what its report reads.

    Attributes:
        lr_min: the grid's smallest LR (``k = 0``).
        lr_max: the grid's largest LR (rounded down to a grid point).
        points_per_octave: grid points per doubling of the LR (2: ``2^(1/2)`` apart).
        extend: extension rounds per cell at most (0: never extend).
        strata: path-depth scale thresholds (ascending); each stratum they cut must hold a cell
            of the selection (the report shows the strata; empty: no stratification asked).
        top_percent: the top-K% subset whose tau the report shows.
        reuse: a store to copy finished runs of the same jobs from (a run name or folder).
        study: the retrain run (name) whose claims quote this landscape (report only); ``None``:
            the run ``reuse`` names, if any.
        criterion: ``lr_validation`` runs (names or folders) whose maximal LRs (the paper's
            one-epoch criterion) the report shows beside the accuracy-optimal ones, on the cells
            both have (analysis only: never changes a stored result).
        centers: ``arch -> LR``, each a grid LR: every cell's initial grid is ``center_points``
            grid points around its own LR instead of ``lr_min .. lr_max`` (a longer budget's
            landscape around each cell's best LR at a shorter one; ``tools/landscape_centers.py``
            writes the table from a finished landscape). Empty: the one grid for every cell.
        center_points: points of a centred grid: ``(center_points - 1) // 2`` below the centre,
            the rest above it.
        recipe: ``RUN:LABEL`` names of stored protocol arms (e.g. ``nb201_cifar10_cpu:default``,
            the benchmark's recipe) whose runs of the same cells and seeds the report tests as
            one more fixed arm (analysis only: never changes a stored result).
        compare: another landscape run (name or folder) sharing cells with this one, e.g. the
            same cells at another budget: the report sets each cell's best LR here beside its
            best there and tests whether the shift follows path depth (analysis only).
    """

    lr_min: float = 0.1
    lr_max: float = 1.6
    points_per_octave: int = 2
    extend: int = 3
    strata: tuple[float, ...] = ()
    top_percent: int = 50
    reuse: str | None = None
    study: str | None = None
    criterion: tuple[str, ...] = ()
    centers: dict[str, float] = field(default_factory=dict)
    center_points: int = 6
    recipe: tuple[str, ...] = ()
    compare: str | None = None
