"""Which training runs fuse into one network, and how a fused group's members are built.

Runs fuse (train as one :class:`~nasrescale.models.fused.FusedNetwork`, see
:func:`nasrescale.train.train_fused`) when they share everything but seed, init rule, LR and
weight decay: the architecture, the cell family, the dataset (and its test split and subsets),
the model size, and the protocol's :func:`~nasrescale.train.members.fusion_key` (epochs, batch
size, augmentation, schedule shape, warmup, momentum, Nesterov, label smoothing, precision). A
pipeline's seeds x {default, rescaled} of one cell are exactly such a group, and so are a
landscape cell's grid LRs x seeds.

* :func:`group_key` / :func:`fusable_groups` -- group job-like objects (``arch``, ``family``,
  ``data``, ``protocol``, ``width``, ``cells``; :class:`nasrescale.jobs.job.TrainJob` has them) into
  fusable groups of at most ``max_members`` (:func:`nasrescale.jobs.grouping.group_jobs`);
* :func:`build_member` -- one run's network, seeded and initialized as a single run is
  (:func:`nasrescale.scaling.init_rules.init_model`), with its param groups and LR plan;
* :func:`train_jobs_fused` -- train :class:`~nasrescale.jobs.job.TrainJob` s as one fused network and
  return, per job, the record :meth:`TrainJob.run <nasrescale.jobs.job.TrainJob.run>` returns.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, TypeVar

import networkx as nx

from ..data.types import ImageData
from ..errors import ConfigError
from ..protocol import Protocol
from ..scaling.lr import LrPlan
from ..scaling.init_rules import get_init_rule, init_model
from ..space.families import CellFamily
from ..train import train_fused
from ..train.members import FusedMember, fusion_key
from ..train.options import RunOptions
from .job_steps import start_run
from .grouping import DEFAULT_MAX_MEMBERS, fuse_by_default, group_checkpoint_name, group_jobs
from .record_fields import discard_unreadable, provenance, resolve_device
from .interfaces import TrainSpec

__all__ = ["build_member", "group_key", "fusable_key", "fusable_groups", "fuse_by_default", "DEFAULT_MAX_MEMBERS",
           "train_jobs_fused", "group_checkpoint_name"]

J = TypeVar("J")


def build_member(arch: str | nx.DiGraph, family: CellFamily, data: ImageData, protocol: Protocol, seed: int, *,
                 width: int | None = None, cells: int | None = None,
                 identity: Mapping[str, Any] | None = None) -> tuple[FusedMember, LrPlan]:
    """Build one member exactly as its single run would start: seed, build, init rule, groups.

    >>> from nasrescale.space.family_loader import get_family
    >>> from nasrescale.data import load_dataset
    >>> from nasrescale.protocol import load_protocol
    >>> data = load_dataset("cifar10-subset")
    >>> m, plan = build_member("3_33_333", get_family("nb201"), data, load_protocol("rescaled", ["lr=0.5"]), 1,
    ...                        width=4, cells=1)
    >>> m.seed, round(plan.lr_scale, 4), round(m.param_groups[0]["lr"], 4)
    (1, 0.0891, 0.0445)
    """
    run = init_model(arch, family, data, protocol, seed, width=width, cells=cells)
    return FusedMember(run.model, protocol, run.param_groups(), seed, identity), run.plan


def group_key(job: TrainSpec) -> str:
    """16 hex digits equal for jobs that may train in one fused network.

    ``job`` needs ``arch``, ``family`` (a :class:`CellFamily`), ``data`` (with ``identity()``,
    or any value with a stable ``repr``), ``protocol``, and ``width``/``cells`` (or ``size()``).
    """
    data = job.data.identity() if hasattr(job.data, "identity") else repr(job.data)
    size = job.size() if hasattr(job, "size") else {"width": job.width, "cells": job.cells}
    key = {"arch": job.arch, "family": job.family.digest(), "data": data, "size": size,
           "protocol": json.loads(fusion_key(job.protocol))}
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


def fusable_groups(jobs: Iterable[J], max_members: int = DEFAULT_MAX_MEMBERS) -> list[list[J]]:
    """Group jobs that can train fused; each group has at most ``max_members`` jobs.

    Groups appear in the order of their first job, jobs keep their order; a group larger than
    ``max_members`` is split evenly (13 jobs, at most 12 -> 7 + 6). Degenerate jobs (attribute
    ``degenerate`` true) are never trained, and jobs whose init rule does not fuse (μP, which
    trains with its own optimizer) train alone: each of those is a group of its own (:func:`fusable_key`).

    >>> from dataclasses import dataclass
    >>> from nasrescale.space.family_loader import get_family
    >>> from nasrescale.protocol import load_protocol
    >>> @dataclass
    ... class Job:
    ...     arch: str; family: object; data: str; protocol: object; seed: int
    ...     width: int = 16; cells: int = 5
    >>> nb201, rescaled = load_protocol("nb201"), load_protocol("rescaled", ["lr=0.5"])
    >>> jobs = [Job(a, get_family("nb201"), "cifar10", p, s) for a in ("3_33_333", "1_11_111")
    ...         for p in (nb201, rescaled) for s in range(3)]
    >>> [[(j.arch, j.protocol.name, j.seed) for j in g][:2] for g in fusable_groups(jobs, max_members=4)][:2]
    [[('3_33_333', 'nb201', 0), ('3_33_333', 'nb201', 1)], [('3_33_333', 'rescaled', 0), ('3_33_333', 'rescaled', 1)]]
    >>> [len(g) for g in fusable_groups(jobs, max_members=4)]  # 6 jobs per cell, at most 4: 3 + 3
    [3, 3, 3, 3]
    >>> [len(g) for g in fusable_groups(jobs)]  # one group per cell
    [6, 6]
    """
    return group_jobs(jobs, fusable_key, max_members)


def fusable_key(job: TrainSpec) -> str | None:
    """:func:`group_key`, or ``None`` for a job that trains alone: a degenerate one (attribute
    ``degenerate`` true; never trained), one whose init rule does not fuse (μP's optimizer) or one
    of a family whose cells concatenate along channels (the fused layout cannot keep members apart)."""
    family = getattr(job, "family", None)
    if family is not None and family.structure.concatenates:
        return None
    if getattr(job, "degenerate", False) or not get_init_rule(job.protocol.init).fusable:
        return None
    return group_key(job)


def train_jobs_fused(jobs: Sequence[TrainSpec], options: RunOptions) -> list[dict[str, Any]]:
    """Train ``jobs`` as one fused network; return each job's record as :meth:`TrainJob.run` would.

    Each record has the keys of ``TrainJob.run``'s (``key`` = ``job.key()``; the identity in the
    fused checkpoint is ``job.identity()``), with its own metrics and history (equal to its
    independent run up to float reordering). ``wall_time_s`` is the member's share of the group's
    wall time (group time / members, so that a run's times add up to the time spent);
    ``provenance`` adds ``fused_members`` and ``group_wall_time_s``. Degenerate jobs are recorded
    by ``TrainJob.run`` (chance accuracy, not trained) and the rest train as one group.

    Args:
        jobs: the jobs; all non-degenerate ones must share :func:`group_key` (and not be μP).
        options: as for ``TrainJob.run``: ``checkpoint_dir`` holds the group's checkpoint
            (:func:`group_checkpoint_name`; a torn one is moved aside and reported in
            ``checkpoint_discarded``), ``checkpoint`` names the file instead; each
            ``on_epoch`` entry carries its job's ``key``.

    Raises:
        ConfigError: no jobs, jobs that cannot fuse (named), or a checkpoint of other members.

    >>> from nasrescale.jobs.job import DataSpec, TrainJob
    >>> from nasrescale.space.family_loader import get_family
    >>> from nasrescale.protocol import load_protocol
    >>> data = DataSpec("cifar10-subset", train_subset=60, test_subset=20)
    >>> jobs = [TrainJob.from_arch("3_31_013", get_family("nb201"), data,
    ...                            load_protocol("nb201", ["epochs=1", "batch_size=30"]), seed=s, width=2, cells=1) for s in (0, 1)]
    >>> [(r["key"] == j.key(), r["epochs_run"], r["provenance"]["fused_members"]) for r, j in
    ...  zip(train_jobs_fused(jobs, RunOptions()), jobs)]
    [(True, 1, 2), (True, 1, 2)]
    """
    start, jobs = time.perf_counter(), list(jobs)
    if not jobs:
        raise ConfigError("train_jobs_fused: no jobs; pass at least one TrainJob")
    options = options.replace(device=resolve_device(options.device))
    records: list[dict[str, Any] | None] = [None] * len(jobs)
    trained = [i for i, j in enumerate(jobs) if not j.degenerate]
    for i in set(range(len(jobs))) - set(trained):  # chance accuracy, nothing to train
        records[i] = jobs[i].run(RunOptions(device=options.device))
    if not trained:
        return [r for r in records if r is not None]
    _check_fusable([jobs[i] for i in trained])
    data = jobs[trained[0]].data.load()
    members, heads = [], []
    for i in trained:
        run, head = start_run(jobs[i], data, options)
        members.append(FusedMember(run.model, jobs[i].protocol, run.param_groups(), jobs[i].seed, jobs[i].identity()))
        heads.append(head)
    path = _group_checkpoint([jobs[i] for i in trained], options, heads)
    on_epoch, keys = options.on_epoch, [jobs[i].key() for i in trained]
    report = None if on_epoch is None else (lambda e: on_epoch({**e, "key": keys[e["member"]]}))
    results = train_fused(members, data, options.replace(checkpoint=path, on_epoch=report))
    wall = time.perf_counter() - start
    where = {**provenance(options.device), "fused_members": len(trained), "group_wall_time_s": wall}
    for i, head, result in zip(trained, heads, results):
        head.update(result.to_json())
        head["wall_time_s"] = wall / len(trained)  # this member's share of the group's time
        head["provenance"] = dict(where)
        records[i] = head
    return [r for r in records if r is not None]


def _group_checkpoint(jobs: Sequence[TrainSpec], options: RunOptions, heads: list[dict[str, Any]]) -> Path | None:
    """The group's checkpoint: ``options.checkpoint``, else :func:`group_checkpoint_name` in
    ``options.checkpoint_dir`` (a torn one moved aside, noted in each head's
    ``checkpoint_discarded``), else ``None``."""
    if options.checkpoint is not None:
        return Path(options.checkpoint)
    if options.checkpoint_dir is None:
        return None
    path = Path(options.checkpoint_dir) / group_checkpoint_name(jobs)
    discarded = discard_unreadable(path)
    for head in heads:
        head["checkpoint_discarded"] = discarded
    return path


def _check_fusable(jobs: Sequence[TrainSpec]) -> None:
    """ConfigError naming the first job that cannot train fused with the first one."""
    first = group_key(jobs[0])
    for job in jobs:
        family = getattr(job, "family", None)
        if family is not None and family.structure.concatenates:
            raise ConfigError(f"job {job.key()} (family {family.name!r}) cannot train fused: its cells concatenate "
                              "along channels, which would mix the members' channels; train it alone")
        if fusable_key(job) is None:
            raise ConfigError(f"job {job.key()} ({job.arch}, seed {job.seed}) cannot train fused: its protocol "
                              f"{job.protocol.name!r} uses init rule {job.protocol.init!r}, which trains with its own "
                              "optimizer; run it alone (TrainJob.run)")
        if group_key(job) != first:
            raise ConfigError(f"job {job.key()} ({job.arch}, protocol {job.protocol.name!r}, seed {job.seed}) cannot "
                              f"train fused with job {jobs[0].key()}: they differ in more than seed, init, LR and "
                              "weight decay (architecture, family, data, model size, epochs, batch size, ...); group "
                              "them with fusable_groups")
