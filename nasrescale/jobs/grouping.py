"""Fusable jobs as one unit of work: :class:`JobGroup` and :func:`plan_units`.

With ``executor.fuse`` on (``None``: :func:`nasrescale.jobs.fusion.fuse_by_default` of the device:
on for CUDA, off for the CPU), every executor hands its jobs to :func:`plan_units` first: jobs
that may train as one fused network (same architecture, family, data, size and protocol but
for seed, init and LR; :func:`nasrescale.jobs.fusion.fusable_groups`) become one :class:`JobGroup`
of at most ``executor.max_fused`` jobs; any other job (degenerate, μP, or alone in its group)
stays itself. A group is scheduled as one unit (its cost is its members' summed cost, longest
first), started once (``on_start`` for each member key) and reports one
:class:`~nasrescale.executors.base.Outcome` per member job, so the store still holds one row per
job. Its fused checkpoint (``checkpoint_dir/fused-<hash>.pt``) is deleted by the executor once
every member's outcome is delivered, as the driver deletes a single job's.

>>> class Fake:  # not a TrainJob: never grouped
...     def key(self): return "k"
>>> [u.key() for u in plan_units([Fake(), Fake()], fuse=True, device="cpu")]
['k']
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

__all__ = ["JobGroup", "plan_units"]


@dataclass(frozen=True)
class JobGroup:
    """Jobs trained as one fused network (picklable: a tuple of frozen TrainJobs).

    Attributes:
        jobs: the member :class:`~nasrescale.jobs.job.TrainJob` s (at least 2, one fusion group).
    """

    jobs: tuple[Any, ...]

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
        from .fusion import group_checkpoint_name

        return Path(checkpoint_dir) / group_checkpoint_name(self.jobs)

    def discard_checkpoint(self, checkpoint_dir: str | Path | None) -> None:
        """Delete the group's checkpoint (every member's result is stored: it has served)."""
        if checkpoint_dir is not None:
            self.checkpoint_path(checkpoint_dir).unlink(missing_ok=True)

    def run(self, *, device: str, checkpoint_dir: Path | None, progress: bool = False,
            on_epoch: Callable[[dict], None] | None = None) -> list[dict[str, Any]]:
        """Train the members fused; one record per member (:func:`nasrescale.jobs.fusion.train_jobs_fused`).

        ``on_epoch(entry)`` gets every member's epoch entries (with the member's ``key`` added).
        """
        from .fusion import train_jobs_fused

        keys = self.member_keys()
        report = None if on_epoch is None else (lambda i, entry: on_epoch({**entry, "key": keys[i]}))
        return train_jobs_fused(list(self.jobs), device=device, checkpoint_dir=checkpoint_dir, progress=progress,
                                on_epoch=report)


def plan_units(jobs: Sequence[Any], *, fuse: bool | None, device: str, max_members: int = 12) -> list[Any]:
    """The units of work for ``jobs``: with fusion on, fusable TrainJobs as :class:`JobGroup` s.

    Args:
        jobs: the jobs (taken once per key, the first occurrence).
        fuse: ``executor.fuse``; ``None``: :func:`nasrescale.jobs.fusion.fuse_by_default` of ``device``.
        device: where the units will run (``cpu``, ``cuda``, ``cuda:0``).
        max_members: ``executor.max_fused``.

    Without fusion, or for jobs that are not :class:`~nasrescale.jobs.job.TrainJob` s, every job is
    its own unit; a group of one stays the job itself, so its record and checkpoint are those
    of an unfused run.
    """
    unique: dict[str, Any] = {}
    for job in jobs:
        unique.setdefault(job.key(), job)
    if fuse is False:
        return list(unique.values())
    from .job import TrainJob

    trainable = [j for j in unique.values() if isinstance(j, TrainJob)]
    if not trainable:
        return list(unique.values())
    from .fusion import fusable_groups, fuse_by_default

    if fuse is None and not fuse_by_default(device):
        return list(unique.values())
    units: list[Any] = [g[0] if len(g) == 1 else JobGroup(tuple(g)) for g in fusable_groups(trainable, max_members)]
    return units + [j for j in unique.values() if not isinstance(j, TrainJob)]
