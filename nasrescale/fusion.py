"""Which training runs fuse into one network, and how a fused group's members are built.

Runs fuse (train as one :class:`~nasrescale.models.fused.FusedNetwork`, see
:func:`nasrescale.train.fused.train_fused`) when they share everything but seed, init rule and
LR: the architecture, the cell family, the dataset (and its test split and subsets), the model
size, and the protocol's :func:`~nasrescale.train.fused.fusion_key` (epochs, batch size,
augmentation, schedule shape, warmup, momentum, Nesterov, weight decay, label smoothing,
precision). A pipeline's seeds x {default, rescaled} of one cell are exactly such a group.

* :func:`group_key` / :func:`fusable_groups` -- group job-like objects (``arch``, ``family``,
  ``data``, ``protocol``, ``width``, ``cells``; :class:`nasrescale.job.TrainJob` has them) into
  fusable groups of at most ``max_members``;
* :func:`build_member` -- one run's network, seeded and initialized as a single run is
  (``torch.manual_seed(seed)``, build, ``apply_init``), with its param groups and LR plan.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Iterable, Mapping, Sequence, TypeVar

import networkx as nx

from .data.types import ImageData
from .families import CellFamily
from .protocol import Protocol
from .scaling.lr import LrPlan
from .train.fused import FusedMember, fusion_key

__all__ = ["build_member", "group_key", "fusable_groups", "fuse_by_default", "DEFAULT_MAX_MEMBERS"]

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

    >>> from nasrescale.registry import get_family
    >>> from nasrescale.data import load_dataset
    >>> from nasrescale.protocol import load_protocol
    >>> data = load_dataset("cifar10-subset")
    >>> m, plan = build_member("3_33_333", get_family("nb201"), data, load_protocol("rescaled", ["lr=0.5"]), 1,
    ...                        width=4, cells=1)
    >>> m.seed, round(plan.lr_scale, 4), round(m.param_groups[0]["lr"], 4)
    (1, 0.0891, 0.0445)
    """
    import torch

    from .models import build_model
    from .scaling import apply_init, lr_plan, param_groups

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
    ``degenerate`` true) are never trained, so each is a group of its own.

    >>> from dataclasses import dataclass
    >>> from nasrescale.registry import get_family
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
        from .errors import ConfigError

        raise ConfigError(f"max_members must be >= 1, got {max_members}")
    buckets: dict[str, list[J]] = {}  # insertion order = order of each group's first job
    for i, job in enumerate(jobs):
        key = f"degenerate-{i}" if getattr(job, "degenerate", False) else group_key(job)
        buckets.setdefault(key, []).append(job)
    return [chunk for members in buckets.values() for chunk in _even_chunks(members, max_members)]
