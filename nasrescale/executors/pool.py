"""The local process pool: ``jobs_per_gpu`` concurrent jobs per visible GPU, one process each.

Every job runs in a fresh process started with the ``spawn`` method, so nothing of the parent
(a CUDA context, torch's thread pools, open files) leaks into it and a job that crashes or
leaks GPU memory takes only its own process down; the parent never initialises CUDA (it only
counts devices). Jobs start longest first (``job.cost()``). A process that dies without
reporting (killed, segfault, the OOM killer) or reports a worker fault (device OOM, broken
CUDA context; see :mod:`nasrescale.executors.dispatch`) is retried up to
``settings.max_retries`` times, then reported ``failed`` with a message saying so. Every job
gets exactly one outcome, delivered by this (the driving) process. A worker whose driver is
gone (``kill -9``) ends itself within a second or so, so a rerun never races an orphan.

With ``executor.fuse`` on (default: on when the slots are GPUs), fusable jobs run as fused groups
(:mod:`nasrescale.jobs.grouping`): a group takes one slot, is ordered by its summed cost,
is retried as a whole, and reports one outcome per member job.

Programs that use the pool from a script need the usual ``if __name__ == "__main__":`` guard,
since ``spawn`` re-imports the main script in each worker.

Example (on CPU; tests use two CPU "devices" the same way)::

    pool = PoolExecutor(ExecutorSettings(max_retries=1), devices=["cpu", "cpu"])
    pool.run(jobs, on_outcome=outcomes.append)
"""

from __future__ import annotations

import heapq
import multiprocessing as mp
import os
import pickle
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import ConfigError
from ..jobs.grouping import plan_units
from ..plugins import Plugin, loaded_plugins
from ..store.job_status import Status
from .base import ExecutorSettings, OnOutcome, Outcome, RunnableJob, execute_all, unit_keys
from .dispatch import deliver, is_worker_fault, job_bar, kill_hook_keys, longest_first, with_kill_hook, with_plugins
from .threads import cpu_threads

__all__ = ["PoolExecutor", "pool_devices", "pin_gpu"]


def pool_devices(settings: ExecutorSettings) -> list[str]:
    """One entry per worker slot: each visible GPU ``jobs_per_gpu`` times, or ``["cpu"]``.

    Counting GPUs does not create a CUDA context in this process (workers are spawned anyway).
    """
    if settings.device == "cpu":
        return ["cpu"]
    import torch  # local: counting GPUs is the only use; the CLI defers loading torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count == 0:
        if settings.device == "cuda":
            raise ConfigError("executor.device = 'cuda' but no CUDA device is visible "
                              "(check CUDA_VISIBLE_DEVICES and the driver), or set "
                              "executor.device = 'auto' or 'cpu'")
        return ["cpu"]
    # interleaved (cuda:0, cuda:1, cuda:0, ...) so the first jobs spread over the GPUs
    return [f"cuda:{i}" for _ in range(settings.jobs_per_gpu) for i in range(count)]


def pin_gpu(device: str, visible: str | None) -> tuple[str | None, str]:
    """``(CUDA_VISIBLE_DEVICES for the worker, its device name)`` for a pool slot.

    A worker sees only its own GPU (as ``cuda:0``): otherwise any CUDA call without a device
    (seeding all devices, say) would create a context, ~0.5 GB, on every GPU in every worker.
    ``visible`` is the parent's ``CUDA_VISIBLE_DEVICES`` (``None``: unset, all GPUs).

    >>> pin_gpu("cuda:1", None), pin_gpu("cuda:1", "4,6"), pin_gpu("cpu", "4,6")
    (('1', 'cuda:0'), ('6', 'cuda:0'), (None, 'cpu'))
    """
    if not device.startswith("cuda:"):
        return None, device
    index = int(device.split(":", 1)[1])
    ids = [v.strip() for v in visible.split(",")] if visible else None
    return (ids[index] if ids else str(index)), "cuda:0"


def _exit_with_parent(parent: int, every: float = 1.0) -> None:
    """End this worker (thread body) once its parent is gone, e.g. after ``kill -9`` of the
    driver, so that no orphan keeps training and writing a checkpoint that a rerun also uses."""
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(70)  # no cleanup: the job's outcome has nobody to go to


def _worker(conn: Connection, job_bytes: bytes, device: str, checkpoint_dir: Path | None,
            attempt: int, kill_keys: frozenset[str], threads: int, parent: int,
            plugins: tuple[Plugin, ...] = ()) -> None:
    """Worker process body: run one unit (a job or a fused group), after the driver's plug-ins;
    send its outcomes to the parent."""
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    pinned, device = pin_gpu(device, os.environ.get("CUDA_VISIBLE_DEVICES"))
    if pinned is not None:  # before anything initialises CUDA in this process
        os.environ["CUDA_VISIBLE_DEVICES"] = pinned
    if device == "cpu":
        # CPU slots share the cores: cap each job's intra-op threads (set before torch loads)
        os.environ["OMP_NUM_THREADS"] = str(threads)
    job = pickle.loads(job_bytes)  # here, after the thread cap, since a job may import torch
    if device == "cpu" and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    outcomes = execute_all(with_plugins(with_kill_hook(job, kill_keys, attempt), plugins), device=device,
                           checkpoint_dir=checkpoint_dir, attempt=attempt)
    conn.send(outcomes)
    conn.close()


def _death_text(exitcode: int | None, attempts: int) -> str:
    """Why a job failed when its worker process died on every attempt."""
    if exitcode is not None and exitcode < 0:
        try:
            how = f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"killed by signal {-exitcode}"
    else:
        how = f"exited with code {exitcode} without reporting a result"
    return (f"WorkerDied: the worker process {how} on each of {attempts} attempt(s) "
            f"(max_retries exhausted); see the job's log or dmesg for the cause (OOM killer?)")


class PoolExecutor:
    """Runs jobs in spawned processes, ``jobs_per_gpu`` per visible GPU, longest job first.

    Args:
        settings: the pipeline's executor settings (``jobs_per_gpu``, ``max_retries``,
            ``device``).
        devices: explicit worker slots, e.g. ``["cuda:0", "cuda:0", "cuda:1"]`` or
            ``["cpu", "cpu"]``; ``None`` derives them with :func:`pool_devices`.
        checkpoint_dir: folder for the jobs' checkpoints (passed to ``job.run``).
        progress: show the tqdm bar over jobs.
    """

    def __init__(self, settings: ExecutorSettings, devices: Sequence[str] | None = None,
                 checkpoint_dir: Path | None = None, progress: bool = True) -> None:
        self.settings = settings
        self.devices = list(devices) if devices is not None else pool_devices(settings)
        if not self.devices:
            raise ConfigError("PoolExecutor: devices is empty; give at least one, e.g. ['cuda:0']")
        self.checkpoint_dir = checkpoint_dir
        self.progress = progress

    def run(self, jobs: Sequence[RunnableJob], on_outcome: OnOutcome,
            on_start: Callable[[str], None] | None = None) -> None:
        """Run every job; report each one's outcome to ``on_outcome`` as it finishes."""
        ctx = mp.get_context("spawn")
        gpu = any(d.startswith("cuda") for d in self.devices)
        ordered = longest_first(plan_units(jobs, fuse=self.settings.fuse, device="cuda" if gpu else "cpu",
                                           max_members=self.settings.max_fused))
        # heap entries: (-cost, order, attempt, job); a retried job goes back by its cost
        queue: list[tuple[float, int, int, Any]] = [(-float(j.cost()), i, 1, j)
                                                    for i, j in enumerate(ordered)]
        heapq.heapify(queue)
        free = list(self.devices)
        threads = cpu_threads(self.settings.threads, self.devices.count("cpu"))
        kill_keys = kill_hook_keys()
        plugins = loaded_plugins()  # a spawned worker imports them again before its job runs
        running: dict[Connection, tuple[Any, Any, str, int, float, int]] = {}
        failed = 0
        with job_bar(sum(len(unit_keys(u)) for u in ordered), "pool", self.progress) as bar:
            try:
                while queue or running:
                    while queue and free:
                        neg_cost, order, attempt, job = heapq.heappop(queue)
                        device = free.pop(0)
                        reader, writer = ctx.Pipe(duplex=False)
                        # not daemonic: a job may start processes of its own (data loaders)
                        proc = ctx.Process(target=_worker, name=f"nasrescale-{job.key()}",
                                           args=(writer, pickle.dumps(job), device, self.checkpoint_dir,
                                                 attempt, kill_keys, threads, os.getpid(), plugins))
                        proc.start()
                        writer.close()  # the child holds the only write end: EOF means it died
                        running[reader] = (proc, job, device, attempt, neg_cost, order)
                        if on_start is not None:
                            for key in unit_keys(job):
                                on_start(key)
                    for reader in wait(list(running)):
                        proc, job, device, attempt, neg_cost, order = running.pop(reader)
                        try:
                            outcomes: list[Outcome] | None = reader.recv()
                        except (EOFError, OSError):
                            outcomes = None  # died before reporting
                        reader.close()
                        proc.join()
                        free.append(device)
                        retry = attempt <= self.settings.max_retries
                        if outcomes is None:
                            if retry:
                                heapq.heappush(queue, (neg_cost, order, attempt + 1, job))
                                continue
                            text = _death_text(proc.exitcode, attempt)
                            outcomes = [Outcome(key, Status.FAILED, None, text, attempt) for key in unit_keys(job)]
                        elif any(is_worker_fault(o) for o in outcomes) and retry:
                            heapq.heappush(queue, (neg_cost, order, attempt + 1, job))
                            continue
                        failed += deliver(job, outcomes, on_outcome, self.checkpoint_dir)
                        bar.set_postfix(failed=failed, refresh=False)
                        bar.update(len(outcomes))
            finally:
                for proc, *_ in running.values():  # interrupted: end only our own workers
                    proc.kill()
                    proc.join()
