"""Fusable jobs as one unit of work: :class:`JobGroup` and :func:`plan_units`.

With ``executor.fuse`` on (``None``: :func:`fuse_by_default` of the device: on for CUDA, off for
the CPU), every executor hands its jobs to :func:`plan_units` first: jobs whose optional
``fusion_key()`` method returns the same key (for a :class:`~nasrescale.jobs.job.TrainJob`: same
architecture, family, data, size and protocol but for seed, init, LR and weight decay) become one
:class:`JobGroup` of at most ``executor.max_fused`` jobs, trained by the first job's
``run_group(jobs, ...)``; any other job (no ``fusion_key``, a key of ``None`` such as a
degenerate or μP job, or alone in its group) stays itself. A group is scheduled as one unit (its
cost is its members' summed cost, longest first), started once (``on_start`` for each member
key) and reports one :class:`~nasrescale.executors.base.Outcome` per member job, so the store
still holds one row per job. Its fused checkpoint (``checkpoint_dir/fused-<hash>.pt``) is
deleted by the executor once every member's outcome is delivered, as the driver deletes a
single job's.

>>> class Fake:  # no fusion_key: never grouped
...     def key(self): return "k"
>>> [u.key() for u in plan_units([Fake(), Fake()], fuse=True, device="cpu")]
['k']
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, TypeVar

from ..errors import ConfigError
from .interfaces import RunnableJob, TrainSpec

if TYPE_CHECKING:
    from ..train.options import RunOptions

__all__ = ["JobGroup", "plan_units", "group_jobs", "group_checkpoint_name", "fuse_by_default", "DEFAULT_MAX_MEMBERS"]

#: largest fused group by default (``executor.max_fused``): K = 12 members (an NB201 network
#: at C = 16 per member)
DEFAULT_MAX_MEMBERS = 12

J = TypeVar("J")


def fuse_by_default(device: str) -> bool:
    """Whether fusing pays off on ``device``: on CUDA yes (one small NB201 network leaves a GPU
    launch-bound), on the CPU no: measured on an idle 2-core x86_64 CPU, full-size NB201
    (C = 16, N = 5, batch 256) fused K = 2 / 6 gives 0.74x / 0.50x the model throughput of
    single runs (the CPU is compute-bound and grouped convolutions are slower per FLOP there).

    >>> fuse_by_default("cuda:0"), fuse_by_default("cpu")
    (True, False)
    """
    return str(device).startswith("cuda")


def group_checkpoint_name(jobs: Sequence[RunnableJob]) -> str:
    """File name of a fused group's checkpoint: ``fused-<hash of the members' keys, in order>.pt``."""
    return "fused-" + hashlib.sha256("|".join(j.key() for j in jobs).encode()).hexdigest()[:16] + ".pt"


def _even_chunks(items: Sequence[J], limit: int) -> list[list[J]]:
    """Split into the fewest chunks of at most ``limit``, as even in size as possible."""
    n = max(1, math.ceil(len(items) / limit))
    bounds = [round(i * len(items) / n) for i in range(n + 1)]
    return [list(items[a:b]) for a, b in zip(bounds, bounds[1:])]


def group_jobs(jobs: Iterable[J], key: Callable[[J], str | None], max_members: int = DEFAULT_MAX_MEMBERS
               ) -> list[list[J]]:
    """Group jobs of equal ``key(job)`` (``None``: a group of its own); each group has at most
    ``max_members`` jobs. Groups appear in the order of their first job, jobs keep their order;
    a larger group is split evenly (13 jobs, at most 12 -> 7 + 6).

    >>> group_jobs(["a1", "b1", "a2", "c", "a3"], lambda j: None if j == "c" else j[0], max_members=2)
    [['a1', 'a2'], ['a3'], ['b1'], ['c']]
    """
    if max_members < 1:
        raise ConfigError(f"max_members must be >= 1, got {max_members}")
    buckets: dict[str, list[J]] = {}  # insertion order = order of each group's first job
    for i, job in enumerate(jobs):
        k = key(job)
        buckets.setdefault(f"alone-{i}" if k is None else f"key-{k}", []).append(job)
    return [chunk for members in buckets.values() for chunk in _even_chunks(members, max_members)]


def _fusion_key(job: RunnableJob) -> str | None:
    """A job's ``fusion_key()``, or ``None`` for a job without one."""
    method = getattr(job, "fusion_key", None)
    return method() if callable(method) else None


@dataclass(frozen=True)
class JobGroup:
    """Jobs trained as one fused network (picklable: a tuple of frozen jobs).

    Attributes:
        jobs: the member jobs (at least 2 of one ``fusion_key``; the first's ``run_group`` trains them).
    """

    jobs: tuple[TrainSpec, ...]

    def member_keys(self) -> list[str]:
        """The members' job keys, in order (one outcome each)."""
        return [job.key() for job in self.jobs]

    def key(self) -> str:
        """``group-`` + a hash of the member keys (never a job key)."""
        return "group-" + hashlib.sha256("|".join(self.member_keys()).encode()).hexdigest()[:16]

    def cost(self) -> float:
        """The members' summed cost: the fused network does every member's work."""
        return float(sum(job.cost() for job in self.jobs))

    def checkpoint_path(self, checkpoint_dir: str | Path) -> Path:
        """The group's fused checkpoint file in ``checkpoint_dir``."""
        return Path(checkpoint_dir) / group_checkpoint_name(self.jobs)

    def discard_checkpoint(self, checkpoint_dir: str | Path | None) -> None:
        """Delete the group's checkpoint (every member's result is stored: it has served)."""
        if checkpoint_dir is not None:
            self.checkpoint_path(checkpoint_dir).unlink(missing_ok=True)

    def run(self, options: RunOptions) -> list[dict[str, Any]]:
        """Train the members fused (the first job's ``run_group``); one record per member.

        ``options.on_epoch`` gets every member's epoch entries (with the member's ``key`` added).
        """
        return self.jobs[0].run_group(list(self.jobs), options)


def plan_units(jobs: Sequence[RunnableJob], *, fuse: bool | None, device: str,
               max_members: int = DEFAULT_MAX_MEMBERS) -> list[RunnableJob]:
    """The units of work for ``jobs``: with fusion on, jobs of one ``fusion_key`` as :class:`JobGroup` s.

    Args:
        jobs: the jobs (taken once per key, the first occurrence).
        fuse: ``executor.fuse``; ``None``: :func:`fuse_by_default` of ``device``.
        device: where the units will run (``cpu``, ``cuda``, ``cuda:0``).
        max_members: ``executor.max_fused``.

    Without fusion, or for jobs without a ``fusion_key``, every job is its own unit; a group of
    one stays the job itself, so its record and checkpoint are those of an unfused run.
    """
    unique: dict[str, RunnableJob] = {}
    for job in jobs:
        unique.setdefault(job.key(), job)
    if fuse is False or (fuse is None and not fuse_by_default(device)):
        return list(unique.values())
    return [g[0] if len(g) == 1 else JobGroup(tuple(g)) for g in group_jobs(unique.values(), _fusion_key, max_members)]
