"""The Ray executor: one Ray core task per job, results streamed back with ``ray.wait``.

Each task asks for ``num_cpus = settings.cpus_per_job`` (may be fractional) and, when the run's
device is CUDA, ``num_gpus = 1 / jobs_per_gpu``. A task whose worker dies (killed, segfault,
node lost) is retried by Ray up to ``max_retries`` times; a job that fails with a worker fault
(device OOM, broken CUDA context) raises :class:`~nasrescale.executors.dispatch.WorkerFault`,
which is in the task's ``retry_exceptions``; any other job error is already a ``failed``
outcome (:func:`~nasrescale.executors.base.execute`) and is not retried. Only the driver
writes the store, and this executor reports at most one outcome per job key: a key is
submitted once and its single ``ObjectRef`` resolves once, however often Ray retried it.

Its choices and pitfalls (a fresh worker per GPU task, a GPU request on a CPU-only cluster, token
auth and temp files, tasks in flight, fusion, SIGTERM) are in docs/executors.md.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import secrets
import signal
import socket
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import torch

from ..errors import ConfigError
from ..jobs.grouping import plan_units
from ..plugins import Plugin, loaded_plugins
from ..store.job_status import Status
from .base import ExecutorSettings, OnOutcome, Outcome, RunnableJob, execute_all, unit_keys
from .dispatch import (WorkerFault, deliver, is_worker_fault, job_bar, kill_hook_keys, longest_first, with_kill_hook,
                       with_plugins)
from .threads import use_threads

__all__ = ["RayExecutor", "import_ray", "start_local_ray", "default_temp_dir", "check_reachable"]

_AUTH_VARS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
_MAX_TEMP_DIR = 40  # characters; Ray appends session_<date>_<pid>/sockets/plasma_store (~65)


def import_ray() -> Any:
    """The ``ray`` module, or a ConfigError saying how to install it."""
    try:
        import ray  # optional: the ray extra, imported only when a Ray executor is built
    except ImportError as err:
        raise ConfigError("executor.kind = 'ray' needs Ray: pip install 'nasrescale[ray]' "
                          f"(or set executor.kind = 'local'); import failed: {err}") from None
    return ray


def default_temp_dir() -> Path:
    """A short, per-user folder for a local Ray instance's session files."""
    base = "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()
    return Path(base) / f"nasrescale-ray-{os.getuid() if hasattr(os, 'getuid') else 'user'}"


@contextlib.contextmanager
def _keep_sigterm() -> Iterator[None]:
    """Put back the SIGTERM handler that ``ray.init`` replaces (main thread only, where one is set)."""
    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGTERM) if main else None
    try:
        yield
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


def start_local_ray(temp_dir: Path | None = None, num_cpus: int | None = None) -> dict[str, str | None]:
    """Start a local Ray instance (no dashboard, small object store, quiet workers).

    Returns the auth environment variables as they were before, for :func:`_restore_env`.
    """
    ray = import_ray()
    temp_dir = Path(temp_dir or default_temp_dir()).absolute()
    if len(str(temp_dir)) > _MAX_TEMP_DIR:
        raise ConfigError(f"Ray temp dir {temp_dir} is longer than {_MAX_TEMP_DIR} characters; Ray's "
                          "Unix sockets under it would exceed the OS path limit: use a short path")
    temp_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # private: it holds the auth token
    if hasattr(os, "getuid") and temp_dir.stat().st_uid != os.getuid():
        raise ConfigError(f"Ray temp dir {temp_dir} belongs to another user; remove it or pass "
                          "another temp_dir")
    saved = {name: os.environ.get(name) for name in _AUTH_VARS}
    home_token = Path.home() / ".ray" / "auth_token"
    if not any(saved.values()) and not home_token.exists():
        # Ray would enable token auth and write a new token to ~/.ray; keep it with the session
        token = temp_dir / "auth_token"
        if not token.exists():
            token.touch(mode=0o600)
            # one token per process: Ray keeps the first token it read, so a second local instance
            # started by the same process (another pipeline, another executor) must get the same one
            token.write_text(_process_token())
        os.environ["RAY_AUTH_TOKEN_PATH"] = str(token)
    try:
        with _keep_sigterm():
            ray.init(num_cpus=num_cpus, include_dashboard=False, object_store_memory=96 * 2**20,
                     _temp_dir=str(temp_dir), log_to_driver=False, logging_level=logging.ERROR,
                     ignore_reinit_error=True)  # object store: 96 MiB, jobs and records are small
    except BaseException:
        _restore_env(saved)
        raise
    return saved


@functools.lru_cache(maxsize=1)
def _process_token() -> str:
    """This process's Ray auth token: 256 random bits, as Ray's own generator, drawn once."""
    return secrets.token_hex(32)


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast (ConfigError) if ``host:port`` (or ``ray://host:port``) accepts no connection.

    Ray itself retries an unreachable address for minutes before giving up. ``auto`` and
    other forms without a port are left to Ray.

    >>> check_reachable("127.0.0.1:9", timeout=1)  # nothing listens on the discard port
    Traceback (most recent call last):
    ...
    nasrescale.errors.ConfigError: executor.address = '127.0.0.1:9': ...
    """
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as err:
        raise ConfigError(f"executor.address = {address!r}: no Ray cluster answers there ({err}); "
                          "start one (ray start --head) or leave executor.address unset to "
                          "start a local instance") from None


def _restore_env(saved: dict[str, str | None]) -> None:
    """Put the auth environment variables back as they were before Ray was started."""
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _task(job: RunnableJob, device: str, checkpoint_dir: Path | None,
          kill_keys: frozenset[str], threads: int = 1, plugins: tuple[Plugin, ...] = ()) -> list[Outcome]:
    """Ray task body: run one unit (job or fused group) with ``threads`` intra-op threads on the
    CPU, after the driver's plug-ins; raise :class:`WorkerFault` so Ray retries worker faults."""
    import ray  # optional: the ray extra; this body only runs in a Ray worker

    if device == "cpu":
        use_threads(threads)

    try:  # the attempt number is not public API; the count is informative only
        attempt = ray._private.worker.global_worker.core_worker.get_current_task_attempt_number() + 1
    except Exception:  # noqa: BLE001
        attempt = 1
    outcomes = execute_all(with_plugins(with_kill_hook(job, kill_keys, attempt), plugins), device=device,
                           checkpoint_dir=checkpoint_dir, attempt=attempt)
    for outcome in outcomes:
        if is_worker_fault(outcome):
            raise WorkerFault(outcome.error)
    if device.startswith("cuda"):  # release torch's cached blocks for the GPU's other tasks
        torch.cuda.empty_cache()
    return outcomes


class RayExecutor:
    """Runs jobs as Ray core tasks on ``settings.address`` or on a local instance it starts.

    Args:
        settings: the pipeline's executor settings.
        checkpoint_dir: folder for the jobs' checkpoints; on a multi-node cluster it must be
            on a filesystem every node sees, or resumption after a retry starts over.
        temp_dir: session folder of a local instance (default :func:`default_temp_dir`).
        progress: show the tqdm bar over jobs.
    """

    def __init__(self, settings: ExecutorSettings, checkpoint_dir: Path | None = None,
                 temp_dir: Path | None = None, progress: bool = True) -> None:
        import_ray()
        self.settings = settings
        self.checkpoint_dir = checkpoint_dir
        self.temp_dir = temp_dir
        self.progress = progress

    def _placement(self, ray: Any) -> tuple[float, int]:
        """``(num_gpus per task, tasks the cluster runs at once)``; fails fast if none fits."""
        res = ray.cluster_resources()
        cpus, gpus = float(res.get("CPU", 0)), float(res.get("GPU", 0))
        where = self.settings.address or "the local Ray instance"
        use_gpu = self.settings.device == "cuda" or (self.settings.device == "auto" and gpus > 0)
        if use_gpu and gpus <= 0:
            raise ConfigError(f"executor.device = 'cuda' but {where} has no GPUs (resources: "
                              f"{cpus:g} CPU, 0 GPU), so Ray would wait forever: set "
                              "executor.device = 'cpu' or 'auto', or add GPU nodes")
        if cpus < self.settings.cpus_per_job:
            raise ConfigError(f"executor.cpus_per_job = {self.settings.cpus_per_job:g} but {where} "
                              f"has only {cpus:g} CPUs, so Ray would wait forever: lower it")
        num_gpus = 1.0 / self.settings.jobs_per_gpu if use_gpu else 0.0
        slots = math.floor(cpus / self.settings.cpus_per_job + 1e-9)
        if use_gpu:
            slots = min(slots, math.floor(gpus * self.settings.jobs_per_gpu + 1e-9))
        return num_gpus, max(1, slots)

    def run(self, jobs: Sequence[RunnableJob], on_outcome: OnOutcome,
            on_start: Callable[[str], None] | None = None) -> None:
        """Run every job; report each one's outcome to ``on_outcome`` exactly once."""
        ray = import_ray()
        saved: dict[str, str | None] | None = None
        if not ray.is_initialized():
            if self.settings.address:
                check_reachable(self.settings.address)
                with _keep_sigterm():
                    ray.init(address=self.settings.address, log_to_driver=False, logging_level=logging.ERROR)
                saved = {}
            else:
                saved = start_local_ray(self.temp_dir)
        try:
            self._run(ray, jobs, on_outcome, on_start)
        finally:
            if saved is not None:  # shut down only what this call started
                ray.shutdown()
                _restore_env(saved)

    def _run(self, ray: Any, jobs: Sequence[RunnableJob], on_outcome: OnOutcome,
             on_start: Callable[[str], None] | None) -> None:
        num_gpus, slots = self._placement(ray)
        device = "cuda:0" if num_gpus > 0 else "cpu"  # Ray sets CUDA_VISIBLE_DEVICES per task
        queue = longest_first(plan_units(jobs, fuse=self.settings.fuse, device=device,
                                         max_members=self.settings.max_fused))
        remote = ray.remote(num_cpus=self.settings.cpus_per_job, num_gpus=num_gpus,
                            max_retries=self.settings.max_retries, retry_exceptions=[WorkerFault],
                            max_calls=1 if num_gpus > 0 else 0)(_task)
        kill_keys = kill_hook_keys()
        plugins = loaded_plugins()  # a Ray worker imports them before its job runs
        attempts = self.settings.max_retries + 1
        inflight: dict[Any, RunnableJob] = {}
        reported: set[str] = set()
        failed = 0
        queue = list(reversed(queue))  # pop() from the end takes the longest job
        with job_bar(sum(len(unit_keys(u)) for u in queue), "ray", self.progress) as bar:
            try:
                while queue or inflight:
                    while queue and len(inflight) < slots:
                        job = queue.pop()
                        inflight[remote.remote(job, device, self.checkpoint_dir, kill_keys,
                                               self.settings.threads or max(1, int(self.settings.cpus_per_job)),
                                               plugins)] = job
                        if on_start is not None:
                            for key in unit_keys(job):
                                on_start(key)
                    done, _ = ray.wait(list(inflight), num_returns=1)
                    for ref in done:
                        job = inflight.pop(ref)
                        outcomes = [o for o in self._collect(ray, ref, job, attempts)
                                    if o.key not in reported]  # always all (one ref per key); guard
                        reported.update(o.key for o in outcomes)
                        failed += deliver(job, outcomes, on_outcome, self.checkpoint_dir)
                        bar.set_postfix(failed=failed, refresh=False)
                        bar.update(len(outcomes))
            finally:
                for ref in inflight:  # interrupted: stop what is still running
                    ray.cancel(ref, force=True)

    @staticmethod
    def _collect(ray: Any, ref: Any, job: RunnableJob, attempts: int) -> list[Outcome]:
        """The outcomes behind a finished task (one per job of the unit), or ``failed`` ones
        saying what Ray reported."""
        keys = unit_keys(job)
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as err:
            cause = getattr(err, "cause", None)
            if isinstance(cause, WorkerFault):
                text = (f"WorkerFault on each of {attempts} attempt(s) (max_retries exhausted); "
                        f"last error: {cause}")
                return [Outcome(key, Status.FAILED, None, text, attempts) for key in keys]
            return [Outcome(key, Status.FAILED, None, f"{type(err).__name__}: {err}", 1) for key in keys]
        except ray.exceptions.RayError as err:  # worker died each time, node lost, cancelled
            text = (f"WorkerDied: Ray reported {type(err).__name__} after {attempts} attempt(s) "
                    f"(max_retries exhausted): {err}")
            return [Outcome(key, Status.FAILED, None, text, attempts) for key in keys]
