"""Which training runs fuse into one network, and how a fused group's members are built.

Runs fuse (train as one :class:`~nasrescale.models.fused.FusedNetwork`, see
:func:`nasrescale.train.fused.train_fused`) when they share everything but seed, init rule and
LR: the architecture, the cell family, the dataset (and its test split and subsets), the model
size, and the protocol's :func:`~nasrescale.train.fused.fusion_key` (epochs, batch size,
augmentation, schedule shape, warmup, momentum, Nesterov, weight decay, label smoothing,
precision). A pipeline's seeds x {default, rescaled} of one cell are exactly such a group.

* :func:`group_key` / :func:`fusable_groups` -- group job-like objects (``arch``, ``family``,
  ``data``, ``protocol``, ``width``, ``cells``; :class:`nasrescale.jobs.job.TrainJob` has them) into
  fusable groups of at most ``max_members``;
* :func:`build_member` -- one run's network, seeded and initialized as a single run is
  (``torch.manual_seed(seed)``, build, ``apply_init``), with its param groups and LR plan;
* :func:`train_jobs_fused` -- train :class:`~nasrescale.jobs.job.TrainJob` s as one fused network and
  return, per job, the record :meth:`TrainJob.run <nasrescale.jobs.job.TrainJob.run>` returns.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

import networkx as nx

from ..data.types import ImageData
from ..errors import ConfigError
from ..protocol import Protocol
from ..scaling.lr import LrPlan
from ..space.families import CellFamily
from ..train.fused import FusedMember, fusion_key
from .job import TrainJob, discard_unreadable, provenance, resolve_device

__all__ = ["build_member", "group_key", "fusable_groups", "fuse_by_default", "DEFAULT_MAX_MEMBERS",
           "train_jobs_fused", "group_checkpoint_name"]

#: largest group by default: the issue's K = 12 (an NB201 network at C = 16 per member)
DEFAULT_MAX_MEMBERS = 12

J = TypeVar("J")


def fuse_by_default(device: str) -> bool:
    """Whether fusing pays off on ``device``: on CUDA yes (one small NB201 network leaves a GPU
    launch-bound), on the CPU no: measured on this project's idle 2-core CPU, full-size NB201
    (C = 16, N = 5, batch 256) fused K = 2 / 6 gives 0.74x / 0.50x the model throughput of
    single runs (the CPU is compute-bound and grouped convolutions are slower per FLOP there).

    >>> fuse_by_default("cuda:0"), fuse_by_default("cpu")
    (True, False)
    """
    return str(device).startswith("cuda")


def build_member(arch: str | nx.DiGraph, family: CellFamily, data: ImageData, protocol: Protocol, seed: int, *,
                 width: int | None = None, cells: int | None = None,
                 identity: Mapping[str, Any] | None = None) -> tuple[FusedMember, LrPlan]:
    """Build one member exactly as its single run would start: seed, build, init rule, groups.

    >>> from nasrescale.space.registry import get_family
    >>> from nasrescale.data import load_dataset
    >>> from nasrescale.protocol import load_protocol
    >>> data = load_dataset("cifar10-subset")
    >>> m, plan = build_member("3_33_333", get_family("nb201"), data, load_protocol("rescaled", ["lr=0.5"]), 1,
    ...                        width=4, cells=1)
    >>> m.seed, round(plan.lr_scale, 4), round(m.param_groups[0]["lr"], 4)
    (1, 0.0891, 0.0445)
    """
    import torch

    from ..models import build_model
    from ..scaling import apply_init, lr_plan, param_groups

    protocol.require_lr()
    torch.manual_seed(seed)
    model = build_model(arch, family, data.num_classes, in_shape=data.image_shape, width=width, cells=cells)
    apply_init(model, protocol.init)
    return FusedMember(model, protocol, param_groups(model, protocol), seed, identity), lr_plan(model, protocol)


def group_key(job: Any) -> str:
    """16 hex digits equal for jobs that may train in one fused network.

    ``job`` needs ``arch``, ``family`` (a :class:`CellFamily`), ``data`` (with ``identity()``,
    or any value with a stable ``repr``), ``protocol``, and ``width``/``cells`` (or ``size()``).
    """
    data = job.data.identity() if hasattr(job.data, "identity") else repr(job.data)
    size = job.size() if hasattr(job, "size") else {"width": job.width, "cells": job.cells}
    key = {"arch": job.arch, "family": job.family.digest(), "data": data, "size": size,
           "protocol": json.loads(fusion_key(job.protocol))}
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _even_chunks(items: Sequence[J], limit: int) -> list[list[J]]:
    """Split into the fewest chunks of at most ``limit``, as even in size as possible."""
    n = max(1, math.ceil(len(items) / limit))
    bounds = [round(i * len(items) / n) for i in range(n + 1)]
    return [list(items[a:b]) for a, b in zip(bounds, bounds[1:])]


def fusable_groups(jobs: Iterable[J], max_members: int = DEFAULT_MAX_MEMBERS) -> list[list[J]]:
    """Group jobs that can train fused; each group has at most ``max_members`` jobs.

    Groups appear in the order of their first job, jobs keep their order; a group larger than
    ``max_members`` is split evenly (13 jobs, at most 12 -> 7 + 6). Degenerate jobs (attribute
    ``degenerate`` true) are never trained, and μP jobs (``protocol.init == "mup"``) train with
    their own optimizer, so each of those is a group of its own.

    >>> from dataclasses import dataclass
    >>> from nasrescale.space.registry import get_family
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
    if max_members < 1:
        raise ConfigError(f"max_members must be >= 1, got {max_members}")
    buckets: dict[str, list[J]] = {}  # insertion order = order of each group's first job
    for i, job in enumerate(jobs):
        key = f"alone-{i}" if not _fusable(job) else group_key(job)
        buckets.setdefault(key, []).append(job)
    return [chunk for members in buckets.values() for chunk in _even_chunks(members, max_members)]


def _fusable(job: Any) -> bool:
    """Whether a job may train in a fused group at all (degenerate and μP jobs may not)."""
    return not getattr(job, "degenerate", False) and getattr(job.protocol, "init", None) != "mup"


def group_checkpoint_name(jobs: Sequence[TrainJob]) -> str:
    """File name of a fused group's checkpoint: ``fused-<hash of the members' keys, in order>.pt``."""
    return "fused-" + hashlib.sha256("|".join(j.key() for j in jobs).encode()).hexdigest()[:16] + ".pt"


def train_jobs_fused(jobs: Sequence[TrainJob], *, device: str = "cpu", checkpoint_dir: str | Path | None = None,
                     checkpoint: str | Path | None = None, checkpoint_every: int = 1, compile: bool = False,
                     progress: bool = False, keep_checkpoint: bool = True,
                     on_epoch: Callable[[int, dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Train ``jobs`` as one fused network; return each job's record as :meth:`TrainJob.run` would.

    Each record has the keys of ``TrainJob.run``'s (``key`` = ``job.key()``; the identity in the
    fused checkpoint is ``job.identity()``), with its own metrics and history (equal to its
    independent run up to float reordering). ``wall_time_s`` is the member's share of the group's
    wall time (group time / members, so that a run's times add up to the time spent);
    ``provenance`` adds ``fused_members`` and ``group_wall_time_s``. Degenerate jobs are recorded
    by ``TrainJob.run`` (chance accuracy, not trained) and the rest train as one group.

    Args:
        jobs: the jobs; all non-degenerate ones must share :func:`group_key` (and not be μP).
        device, progress, checkpoint_every, compile, keep_checkpoint: as for ``TrainJob.run``.
        checkpoint_dir: folder of the group's checkpoint (:func:`group_checkpoint_name`); a torn
            one is moved aside and reported in ``checkpoint_discarded``, as ``TrainJob.run`` does.
        checkpoint: an explicit checkpoint file (overrides ``checkpoint_dir``).
        on_epoch: ``on_epoch(i, entry)`` after each epoch, ``i`` indexing ``jobs``.

    Raises:
        ConfigError: no jobs, jobs that cannot fuse (named), or a checkpoint of other members.

    >>> from nasrescale.jobs.job import DataSpec
    >>> from nasrescale.space.registry import get_family
    >>> from nasrescale.protocol import load_protocol
    >>> jobs = [TrainJob("3_31_013", get_family("nb201"), DataSpec("cifar10-subset", train_subset=60, test_subset=20),
    ...                  load_protocol("nb201", ["epochs=1", "batch_size=30"]), seed=s, width=2, cells=1) for s in (0, 1)]
    >>> [(r["key"] == j.key(), r["epochs_run"], r["provenance"]["fused_members"]) for r, j in
    ...  zip(train_jobs_fused(jobs), jobs)]
    [(True, 1, 2), (True, 1, 2)]
    """
    from ..train.fused import train_fused

    start, jobs = time.perf_counter(), list(jobs)
    if not jobs:
        raise ConfigError("train_jobs_fused: no jobs; pass at least one TrainJob")
    device = resolve_device(device)
    records: list[dict[str, Any] | None] = [None] * len(jobs)
    trained = [i for i, j in enumerate(jobs) if not j.degenerate]
    for i in set(range(len(jobs))) - set(trained):  # chance accuracy, nothing to train
        records[i] = jobs[i].run(device=device)
    if trained:
        _check_fusable([jobs[i] for i in trained])
        data = jobs[trained[0]].data.load()
        members, heads = [], []
        for i in trained:
            job = jobs[i]
            member, plan = build_member(job.arch, job.family, data, job.protocol, job.seed, **job.size(),
                                        identity=job.identity())
            members.append(member)
            heads.append(job.base_record(member.model, plan, data, device))
        path = Path(checkpoint) if checkpoint is not None else None
        if path is None and checkpoint_dir is not None:
            path = Path(checkpoint_dir) / group_checkpoint_name([jobs[i] for i in trained])
            discarded = discard_unreadable(path)
            for head in heads:
                head["checkpoint_discarded"] = discarded
        results = train_fused(members, data, device=device, checkpoint=path, checkpoint_every=checkpoint_every,
                              compile=compile, progress=progress, keep_checkpoint=keep_checkpoint,
                              on_epoch=None if on_epoch is None else lambda k, e: on_epoch(trained[k], e))
        wall = time.perf_counter() - start
        where = {**provenance(device), "fused_members": len(trained), "group_wall_time_s": wall}
        for i, head, result in zip(trained, heads, results):
            head.update(result.to_json())
            head["wall_time_s"] = wall / len(trained)  # this member's share of the group's time
            head["provenance"] = dict(where)
            records[i] = head
    return [r for r in records if r is not None]


def _check_fusable(jobs: Sequence[TrainJob]) -> None:
    """ConfigError naming the first job that cannot train fused with the first one."""
    first = group_key(jobs[0])
    for job in jobs:
        if not _fusable(job):
            raise ConfigError(f"job {job.key()} ({job.arch}, seed {job.seed}) cannot train fused: its protocol "
                              f"{job.protocol.name!r} uses μP (init = 'mup'); run it alone (TrainJob.run)")
        if group_key(job) != first:
            raise ConfigError(f"job {job.key()} ({job.arch}, protocol {job.protocol.name!r}, seed {job.seed}) cannot "
                              f"train fused with job {jobs[0].key()}: they differ in more than seed, init and LR "
                              "(architecture, family, data, model size, epochs, batch size, ...); group them with "
                              "fusable_groups")
