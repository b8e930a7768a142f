"""The contract between the pipeline driver and its executors.

An executor takes jobs (anything with ``key()``, ``cost()`` and ``run(...)``, in practice
:class:`nasrescale.jobs.job.TrainJob`), runs them wherever it runs them, and hands every finished
job back to the driver as an :class:`Outcome` through a callback. Only the driver writes the
result store, so an executor never touches it: a retried or duplicated task can at worst
deliver an outcome twice, and the driver stores a job's first final outcome only.

Worker side, every executor calls :func:`execute_all`, which turns whatever a unit of work does
(a result, a divergence, an exception) into one :class:`Outcome` per job, so the kinds of
executor cannot differ in how a failure is recorded. A unit is a job, or a group of jobs
trained as one fused network (:class:`~nasrescale.jobs.grouping.JobGroup`: its
``member_keys()`` name the jobs and its ``run`` returns one record per job; if it raises, every
member fails with the error).

>>> class Job:
...     def key(self): return "k1"
...     def cost(self): return 1.0
...     def run(self, options):
...         return {"test_accuracy": 50.0, "diverged": False}
>>> execute(Job(), device="cpu", checkpoint_dir=None).status == Status.DONE
True
>>> class Bad(Job):
...     def run(self, options): raise RuntimeError("boom")
>>> o = execute(Bad(), device="cpu", checkpoint_dir=None)
>>> str(o.status), "RuntimeError: boom" in o.error
('failed', True)
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from ..errors import ConfigError
from ..jobs.interfaces import RunnableJob
from ..store.job_status import Status
from ..store.table_fields import ExecutorFields
from ..train.options import RunOptions
from .executor_registry import executor_entry

__all__ = ["ExecutorSettings", "Outcome", "RunnableJob", "Executor", "OnOutcome", "execute", "execute_all",
           "unit_keys"]


@dataclass(frozen=True)
class ExecutorSettings(ExecutorFields):
    """How a pipeline's jobs are run (the ``[executor]`` table of a pipeline file), checked (its
    fields, shared with the stored record :class:`~nasrescale.store.schema.ExecutorRecord`:
    :class:`~nasrescale.store.table_fields.ExecutorFields`)."""

    def __post_init__(self) -> None:
        executor_entry(self.kind)  # an unknown kind: ConfigError listing the registered ones
        if self.jobs_per_gpu < 1:
            raise ConfigError(f"executor.jobs_per_gpu: must be >= 1, got {self.jobs_per_gpu}")
        if self.cpus_per_job <= 0:
            raise ConfigError(f"executor.cpus_per_job: must be > 0, got {self.cpus_per_job}")
        if self.max_retries < 0:
            raise ConfigError(f"executor.max_retries: must be >= 0, got {self.max_retries}")
        if self.max_fused < 1:
            raise ConfigError(f"executor.max_fused: must be >= 1, got {self.max_fused}")
        if self.threads is not None and self.threads < 1:
            raise ConfigError(f"executor.threads: intra-op threads per CPU job, >= 1, got {self.threads} "
                              "(leave it out for the default: the cores other processes leave free when the run starts)")


@dataclass(frozen=True)
class Outcome:
    """A job's final word, as the driver stores it.

    Attributes:
        key: the job's content key.
        status: ``done``, ``diverged`` (NaN/inf loss; a result without test metrics) or
            ``failed`` (an exception; ``error`` holds its text).
        record: the job's JSON-ready result (metrics, history, provenance); ``None`` if failed.
        error: the exception's type, message and traceback, for ``failed``.
        attempts: how many times the job was started (retries included).
    """

    key: str
    status: Status
    record: dict[str, Any] | None = None
    error: str | None = None
    attempts: int = 1


OnOutcome = Callable[[Outcome], None]


class Executor(Protocol):
    """Runs jobs and reports each one's :class:`Outcome` to ``on_outcome`` as it finishes.

    ``on_start(key)`` (optional) is called when a job starts, so the driver can mark it running.
    ``run`` returns when every job has an outcome; it shows a tqdm bar over jobs with an ETA.
    """

    def run(self, jobs: Sequence[RunnableJob], on_outcome: OnOutcome,
            on_start: Callable[[str], None] | None = None) -> None: ...  # noqa: D102


def unit_keys(unit: Any) -> list[str]:
    """The job keys a unit of work stands for: a group's ``member_keys()``, else ``[key()]``.

    >>> class Job:
    ...     def key(self): return "k1"
    >>> unit_keys(Job())
    ['k1']
    """
    keys = getattr(unit, "member_keys", None)
    return list(keys()) if callable(keys) else [unit.key()]


def execute(job: RunnableJob, *, device: str, checkpoint_dir: Path | None, attempt: int = 1,
            progress: bool = False) -> Outcome:
    """Run one job where the caller is (a worker) and describe how it ended.

    An exception becomes a ``failed`` outcome carrying its traceback; a result whose
    ``diverged`` is true becomes ``diverged``. ``KeyboardInterrupt`` and ``SystemExit``
    propagate: they are the process ending, not the job failing.
    """
    return execute_all(job, device=device, checkpoint_dir=checkpoint_dir, attempt=attempt, progress=progress)[0]


def execute_all(unit: RunnableJob, *, device: str, checkpoint_dir: Path | None, attempt: int = 1,
                progress: bool = False) -> list[Outcome]:
    """Run a job or a group of jobs (see the module docstring); one :class:`Outcome` per job.

    A group's exception fails every member with the same error text (and is retried as a
    whole where it is a worker fault).

    >>> class Pair:
    ...     def member_keys(self): return ["a", "b"]
    ...     def key(self): return "group"
    ...     def run(self, options): return [{"diverged": False}, {"diverged": True}]
    >>> [(o.key, str(o.status)) for o in execute_all(Pair(), device="cpu", checkpoint_dir=None)]
    [('a', 'done'), ('b', 'diverged')]
    """
    keys = unit_keys(unit)
    try:
        result = unit.run(RunOptions(device=device, checkpoint_dir=checkpoint_dir, progress=progress))
        records = result if isinstance(result, list) else [result]
        if len(records) != len(keys):
            raise RuntimeError(f"a unit of {len(keys)} job(s) returned {len(records)} record(s)")
    except Exception as err:  # noqa: BLE001 - any job error is recorded, never lost
        text = "".join(traceback.format_exception(type(err), err, err.__traceback__))
        return [Outcome(key, Status.FAILED, None, f"{type(err).__name__}: {err}\n{text}", attempt) for key in keys]
    return [Outcome(key, Status.DIVERGED if record.get("diverged") else Status.DONE, record, None, attempt)
            for key, record in zip(keys, records)]
