"""What the process-pool and Ray executors share: job order, worker faults, the progress bar.

A *worker fault* is a failure of the process a job ran in rather than of the job: the process
died (killed, segfault, host OOM killer), or the job failed with an error that says the device
ran out of memory or its CUDA context broke. Both executors retry worker faults up to
``ExecutorSettings.max_retries`` times (a retried job resumes from its checkpoint); any other
job error is final at once, since rerunning the same deterministic job would fail the same way.

>>> from nasrescale.executors.base import Outcome
>>> is_worker_fault(Outcome("k", Status.FAILED, error="OutOfMemoryError: CUDA out of memory."))
True
>>> is_worker_fault(Outcome("k", Status.FAILED, error="ValueError: bad width"))
False
"""

from __future__ import annotations

import os
import signal
from typing import Any, Iterable, Sequence

from tqdm.auto import tqdm

from ..plugins import Plugin, load_plugins
from ..store.job_status import Status
from ..train.options import RunOptions
from .base import OnOutcome, Outcome, RunnableJob, unit_keys

__all__ = ["WorkerFault", "is_worker_fault", "longest_first", "job_bar", "kill_hook_keys",
           "with_kill_hook", "with_plugins", "KILL_HOOK_ENV", "deliver", "JobWrapper"]

#: exception type names (the first word of ``Outcome.error``) that mean the worker, not the job,
#: failed: torch's CUDA OOM (``torch.OutOfMemoryError``), host ``MemoryError``, and torch's
#: ``AcceleratorError`` (a sticky CUDA error that leaves the process's context unusable)
_FAULT_TYPES = ("OutOfMemoryError", "MemoryError", "AcceleratorError")

#: TEST-ONLY hook. Comma-separated job keys (or ``*``), each optionally ``KEY@E``: on the first
#: attempt of such a job the worker SIGKILLs itself when epoch E (default 1) ends, to test that
#: a worker killed mid-job is retried and its outcome delivered once (with E >= 2 the retry
#: resumes from the checkpoint of epoch E - 1). Read by the driver and passed to the workers.
KILL_HOOK_ENV = "NASRESCALE_TEST_KILL_FIRST_ATTEMPT"


class WorkerFault(RuntimeError):
    """Raised in a worker so that the executor (Ray: ``retry_exceptions``) retries the job."""


def is_worker_fault(outcome: Outcome) -> bool:
    """Whether a failed outcome is a worker fault worth a retry (see the module docstring)."""
    if outcome.status != Status.FAILED or not outcome.error:
        return False
    first_line = outcome.error.split("\n", 1)[0]
    type_name = first_line.split(":", 1)[0].rsplit(".", 1)[-1]
    return type_name in _FAULT_TYPES or "CUDA error" in first_line


def longest_first(jobs: Iterable[RunnableJob]) -> list[RunnableJob]:
    """The jobs, one per key (first occurrence kept), by ``cost()`` descending (stable).

    Longest first keeps the last straggler short: the run ends about when its longest job would.

    >>> class J:
    ...     def __init__(self, k, c): self.k, self.c = k, c
    ...     def key(self): return self.k
    ...     def cost(self): return self.c
    >>> [j.key() for j in longest_first([J("a", 1), J("b", 3), J("a", 9), J("c", 3)])]
    ['b', 'c', 'a']
    """
    unique: dict[str, RunnableJob] = {}
    for job in jobs:
        unique.setdefault(job.key(), job)
    return sorted(unique.values(), key=lambda j: -float(j.cost()))


def job_bar(total: int, desc: str, enabled: bool = True) -> Any:
    """A tqdm bar over jobs (its rate gives the ETA); ``enabled=False`` gives a silent one."""
    return tqdm(total=total, desc=desc, unit="job", disable=not enabled, dynamic_ncols=True,
                smoothing=0.1)  # jobs differ in length: weight the long-run average for the ETA


def kill_hook_keys(environ: dict[str, str] | None = None) -> frozenset[str]:
    """The job keys named by the test-only :data:`KILL_HOOK_ENV` (empty when unset)."""
    text = (os.environ if environ is None else environ).get(KILL_HOOK_ENV, "")
    return frozenset(k.strip() for k in text.split(",") if k.strip())


class JobWrapper:
    """A :class:`RunnableJob` standing for ``job``: the same key, member keys and cost; ``run``
    calls ``job.run`` (subclasses wrap it).

    >>> class J:
    ...     def key(self): return "k1"
    ...     def cost(self): return 2.0
    ...     def run(self, options): return ("ran", options.device)
    >>> w = JobWrapper(J())
    >>> w.key(), w.member_keys(), w.cost(), w.run(RunOptions(device="cpu"))
    ('k1', ['k1'], 2.0, ('ran', 'cpu'))
    """

    def __init__(self, job: RunnableJob) -> None:
        self.job = job

    def key(self) -> str:
        return self.job.key()

    def member_keys(self) -> list[str]:
        return unit_keys(self.job)

    def cost(self) -> float:
        return self.job.cost()

    def run(self, options: RunOptions) -> Any:
        return self.job.run(options)


class _KillAtEpoch(JobWrapper):
    """TEST-ONLY: a job wrapper whose process SIGKILLs itself when epoch ``epoch`` ends."""

    def __init__(self, job: RunnableJob, epoch: int) -> None:
        super().__init__(job)
        self.epoch = epoch

    def run(self, options: RunOptions) -> Any:
        inner = options.on_epoch

        def on_epoch(info: dict) -> None:
            if inner is not None:
                inner(info)
            if int(info.get("epoch", 1)) >= self.epoch:
                os.kill(os.getpid(), signal.SIGKILL)  # a worker dying mid-job, as the OOM killer does

        return self.job.run(options.replace(on_epoch=on_epoch))


def with_kill_hook(job: RunnableJob, keys: Sequence[str] | frozenset[str], attempt: int) -> RunnableJob:
    """``job`` itself, or (test hook, first attempt, its key -- or, for a fused group, a member's
    key -- listed, or ``*``) a self-killing wrapper.

    >>> class J:
    ...     def key(self): return "k1"
    >>> type(with_kill_hook(J(), frozenset({"k1@2"}), attempt=1)).__name__
    '_KillAtEpoch'
    >>> with_kill_hook(J(), frozenset({"k1@2"}), attempt=2).key(), with_kill_hook(J(), frozenset(), 1).key()
    ('k1', 'k1')
    """
    if attempt != 1 or not keys:
        return job
    for item in keys:
        key, _, epoch = item.partition("@")
        if key == "*" or key in unit_keys(job):
            return _KillAtEpoch(job, int(epoch or 1))
    return job


class _WithPlugins(JobWrapper):
    """A job that imports the driver's plug-ins (:mod:`nasrescale.plugins`) in its worker first."""

    def __init__(self, job: RunnableJob, plugins: Sequence[Plugin]) -> None:
        super().__init__(job)
        self.plugins = tuple(plugins)

    def run(self, options: RunOptions) -> Any:
        load_plugins(self.plugins, "imports")  # a plug-in that fails here fails the job, naming it
        return self.job.run(options)


def with_plugins(job: RunnableJob, plugins: Sequence[Plugin]) -> RunnableJob:
    """``job`` run in a worker process after the ``plugins`` the driver imported (the LR and init
    rules of a pipeline's ``imports``, which a fresh process has not registered); ``job`` itself
    where there are none.

    >>> class J:
    ...     def key(self): return "k1"
    ...     def run(self, options): return "ran"
    >>> with_plugins(J(), [Plugin("json")]).run(RunOptions()), type(with_plugins(J(), [])).__name__
    ('ran', 'J')
    """
    return _WithPlugins(job, plugins) if plugins else job


def deliver(unit: Any, outcomes: Sequence[Outcome], on_outcome: OnOutcome, checkpoint_dir: Any) -> int:
    """Hand a unit's outcomes to the driver, one per job; returns how many failed.

    Once every member of a fused group has a final result (none failed), the group's checkpoint
    has served and is deleted (the driver deletes single jobs' own ``<key>.pt``); a failed group
    keeps it, so its retry resumes.
    """
    for outcome in outcomes:
        on_outcome(outcome)
    failed = sum(o.status == Status.FAILED for o in outcomes)
    discard = getattr(unit, "discard_checkpoint", None)
    if failed == 0 and callable(discard):
        discard(checkpoint_dir)
    return failed
