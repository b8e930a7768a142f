"""The in-process executor: jobs run one after another in the driving process (CPU runs).

Jobs run longest first (by :meth:`cost`), so the bar's ETA errs on the safe side. A tqdm bar
over jobs shows the ETA, and its postfix the running job's epoch and loss. With
``executor.fuse`` on (default off on the CPU), fusable jobs run as fused groups
(:mod:`nasrescale.jobs.grouping`), one outcome per job.

>>> class Job:
...     def __init__(self, k): self.k = k
...     def key(self): return self.k
...     def cost(self): return float(len(self.k))
...     def run(self, options):
...         return {"test_accuracy": 50.0, "diverged": False}
>>> seen = []
>>> LocalExecutor(ExecutorSettings(device="cpu"), progress=False).run([Job("a"), Job("bbb")], seen.append)
>>> [(o.key, str(o.status)) for o in seen]
[('bbb', 'done'), ('a', 'done')]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

from tqdm.auto import tqdm

from ..jobs.grouping import plan_units
from ..train.options import RunOptions
from .base import ExecutorSettings, OnOutcome, RunnableJob, execute_all, unit_keys
from .dispatch import JobWrapper, deliver
from .threads import ThreadPolicy

__all__ = ["LocalExecutor"]


class _Watched(JobWrapper):
    """A job whose ``run`` also reports each epoch to ``on_epoch`` (for the bar's postfix)."""

    def __init__(self, job: RunnableJob, on_epoch: Callable[[dict], None]) -> None:
        super().__init__(job)
        self.on_epoch = on_epoch

    def run(self, options: RunOptions) -> Any:
        return self.job.run(options if options.on_epoch is not None else options.replace(on_epoch=self.on_epoch))


class LocalExecutor:
    """Run jobs in this process, one at a time.

    Args:
        settings: the ``[executor]`` settings (``device``: ``auto`` means CUDA if available).
        checkpoint_dir: folder of the jobs' checkpoints (``None``: no checkpoints).
        progress: show the bar over jobs.
    """

    def __init__(self, settings: ExecutorSettings, checkpoint_dir: str | Path | None = None,
                 progress: bool = True) -> None:
        from ..jobs.record_fields import resolve_device  # local: loads torch, which the CLI defers until work starts

        self.settings = settings
        self.device = resolve_device(settings.device)
        self.checkpoint_dir = None if checkpoint_dir is None else Path(checkpoint_dir)
        self.progress = progress

    def run(self, jobs: Sequence[RunnableJob], on_outcome: OnOutcome,
            on_start: Callable[[str], None] | None = None) -> None:
        """Run every job; report each :class:`Outcome` as it ends (failures included)."""
        threads = ThreadPolicy(self.settings.threads) if str(self.device).startswith("cpu") else None
        units = plan_units(jobs, fuse=self.settings.fuse, device=self.device, max_members=self.settings.max_fused)
        ordered = sorted(units, key=lambda u: -u.cost())
        total = sum(len(unit_keys(u)) for u in ordered)
        with tqdm(total=total, unit="job", desc="jobs", disable=not self.progress, smoothing=0.05) as bar:
            for unit in ordered:
                def epoch(entry: dict, bar: Any = bar) -> None:
                    bar.set_postfix(epoch=entry["epoch"], loss=f"{entry['train_loss']:.3f}", refresh=True)

                keys = unit_keys(unit)
                if threads is not None:  # the cores other processes leave free now (executors.threads)
                    threads.apply()
                if on_start is not None:
                    for key in keys:
                        on_start(key)
                outcomes = execute_all(_Watched(unit, epoch), device=self.device, checkpoint_dir=self.checkpoint_dir)
                deliver(unit, outcomes, on_outcome, self.checkpoint_dir)
                bar.update(len(keys))
