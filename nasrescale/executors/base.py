"""The contract between the pipeline driver and its executors.

An executor takes jobs (anything with ``key()``, ``cost()`` and ``run(...)``, in practice
:class:`nasrescale.job.TrainJob`), runs them wherever it runs them, and hands every finished
job back to the driver as an :class:`Outcome` through a callback. Only the driver writes the
result store, so an executor never touches it: a retried or duplicated task can at worst
deliver an outcome twice, and the driver stores a job's first final outcome only.

Worker side, every executor calls :func:`execute`, which turns whatever a job does (a result,
a divergence, an exception) into an :class:`Outcome`, so the kinds of executor cannot differ in
how a failure is recorded.

>>> class Job:
...     def key(self): return "k1"
...     def cost(self): return 1.0
...     def run(self, *, device, checkpoint_dir, progress=False, on_epoch=None):
...         return {"test_accuracy": 50.0, "diverged": False}
>>> execute(Job(), device="cpu", checkpoint_dir=None).status
'done'
>>> class Bad(Job):
...     def run(self, **kw): raise RuntimeError("boom")
>>> o = execute(Bad(), device="cpu", checkpoint_dir=None)
>>> o.status, "RuntimeError: boom" in o.error
('failed', True)
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Protocol, Sequence

__all__ = ["ExecutorSettings", "Outcome", "RunnableJob", "Executor", "OnOutcome", "execute", "STATUSES"]

#: every status a job row can have; ``running`` and ``pending`` exist only in the store
STATUSES = ("pending", "running", "done", "diverged", "failed")


@dataclass(frozen=True)
class ExecutorSettings:
    """How a pipeline's jobs are run (the ``[executor]`` table of a pipeline file).

    Attributes:
        kind: ``local`` (this machine: in-process on the CPU, a process pool on GPUs) or
            ``ray`` (Ray core tasks; needs the ``ray`` extra).
        jobs_per_gpu: concurrent jobs per visible GPU (local pool: processes; Ray: the task's
            ``num_gpus`` is ``1 / jobs_per_gpu``).
        cpus_per_job: CPUs reserved per job (Ray's ``num_cpus``; may be fractional).
        address: Ray cluster address; ``None`` starts a local Ray instance.
        max_retries: how often a job whose worker died is retried before it counts as failed.
        device: ``auto`` (CUDA if available, else CPU), ``cpu`` or ``cuda``.
        fuse: train jobs that differ only in seed, init and LR as one fused network
            (``None``: on where it pays off, decided by the executor from the device).
    """

    kind: Literal["local", "ray"] = "local"
    jobs_per_gpu: int = 1
    cpus_per_job: float = 1.0
    address: str | None = None
    max_retries: int = 2
    device: Literal["auto", "cpu", "cuda"] = "auto"
    fuse: bool | None = None

    def __post_init__(self) -> None:
        from ..errors import ConfigError

        if self.jobs_per_gpu < 1:
            raise ConfigError(f"executor.jobs_per_gpu: must be >= 1, got {self.jobs_per_gpu}")
        if self.cpus_per_job <= 0:
            raise ConfigError(f"executor.cpus_per_job: must be > 0, got {self.cpus_per_job}")
        if self.max_retries < 0:
            raise ConfigError(f"executor.max_retries: must be >= 0, got {self.max_retries}")


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
    status: Literal["done", "diverged", "failed"]
    record: dict[str, Any] | None = None
    error: str | None = None
    attempts: int = 1


class RunnableJob(Protocol):
    """What an executor needs of a job."""

    def key(self) -> str: ...  # noqa: D102 - content hash of what determines the result

    def cost(self) -> float: ...  # noqa: D102 - relative run time, for longest-first order

    def run(self, *, device: str, checkpoint_dir: Path | None, progress: bool = False,
            on_epoch: Callable[[dict], None] | None = None) -> dict[str, Any]: ...  # noqa: D102


OnOutcome = Callable[[Outcome], None]


class Executor(Protocol):
    """Runs jobs and reports each one's :class:`Outcome` to ``on_outcome`` as it finishes.

    ``on_start(key)`` (optional) is called when a job starts, so the driver can mark it running.
    ``run`` returns when every job has an outcome; it shows a tqdm bar over jobs with an ETA.
    """

    def run(self, jobs: Sequence[RunnableJob], on_outcome: OnOutcome,
            on_start: Callable[[str], None] | None = None) -> None: ...  # noqa: D102


def execute(job: RunnableJob, *, device: str, checkpoint_dir: Path | None, attempt: int = 1,
            progress: bool = False) -> Outcome:
    """Run one job where the caller is (a worker) and describe how it ended.

    An exception becomes a ``failed`` outcome carrying its traceback; a result whose
    ``diverged`` is true becomes ``diverged``. ``KeyboardInterrupt`` and ``SystemExit``
    propagate: they are the process ending, not the job failing.
    """
    try:
        record = job.run(device=device, checkpoint_dir=checkpoint_dir, progress=progress)
    except Exception as err:  # noqa: BLE001 - any job error is recorded, never lost
        text = "".join(traceback.format_exception(type(err), err, err.__traceback__))
        return Outcome(job.key(), "failed", None, f"{type(err).__name__}: {err}\n{text}", attempt)
    status = "diverged" if record.get("diverged") else "done"
    return Outcome(job.key(), status, record, None, attempt)
