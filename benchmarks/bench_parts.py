"""Pieces of ``train_throughput.py`` (not a test): a configuration's row, the time budget, the
peak-memory wrapper and the ``jobs_per_gpu`` pool configuration."""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

import torch

from nasrescale.executors.base import ExecutorSettings
from nasrescale.executors.pool import PoolExecutor
from nasrescale.jobs.job import DataSpec, TrainJob
from nasrescale.space.families import CellFamily

from arms import ARCH

__all__ = ["START", "Row", "Clock", "with_peak", "pool_train"]

START = time.perf_counter()  # --time-budget counts from here (data loading included)


@dataclass
class Row:
    """One configuration's measurement (and, with ``--accuracy``, its verdict). ``precision`` is the
    one it trains in (the CPU trains in fp32): its ``peak_fraction`` is against that precision's peak."""

    label: str
    ips: float
    runs: int
    precision: str
    peak_mib: float | None = None
    accuracy: str = "-"
    verdict: str | None = None
    note: str = ""
    memory_format: str = "-"
    gflops: float | None = None
    peak_fraction: float | None = None
    epoch_s: float | None = None

    @property
    def counts(self) -> bool:
        """Counts for a speed-up unless its accuracy was shown to differ from its reference's."""
        return self.verdict != "different"

    def to_json(self) -> dict:
        return {**self.__dict__, "model_ips": self.ips * self.runs}


class Clock:
    """``--time-budget``: a step is skipped when the budget is spent or would be by a step as
    long as the longest so far, so the script ends (with its table) inside its time share."""

    def __init__(self, budget: float | None) -> None:
        self.start, self.budget, self.longest, self.skipped = START, budget, 0.0, []

    def run(self, label: str, fn: Callable[[], Any]) -> Any:
        """``fn()``, or ``None`` (recorded as skipped) when it would not end in time."""
        elapsed = time.perf_counter() - self.start
        if self.budget is not None and elapsed + self.longest > self.budget:
            self.skipped.append(label)
            print(f"  {label}: skipped (time budget {self.budget:.0f} s: {elapsed:.0f} s used)", flush=True)
            return None
        t0 = time.perf_counter()
        out = fn()
        self.longest = max(self.longest, time.perf_counter() - t0)
        return out


def with_peak(fn: Callable[[], Any], cuda: bool) -> tuple[Any, float | None]:
    """``(fn(), peak GPU memory in MiB)`` (``None`` on the CPU)."""
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    out = fn()
    return out, (torch.cuda.max_memory_allocated() / 2**20 if cuda else None)


def pool_train(n: int, family: CellFamily, args: argparse.Namespace, protocol, cuda: bool  # noqa: ANN001
               ) -> tuple[float, float]:
    """N single runs (seeds 0..N-1) as N concurrent pool processes on one device: (mean training
    images/s per process, wall-clock images/s of the whole pool, spawn, data and evaluation included)."""
    name = "cifar10" if args.data else "cifar10-subset"
    data = DataSpec(name, args.data, None, args.train_images, 256, args.resolution)  # the timed images
    jobs = [TrainJob.from_arch(ARCH, family, data, protocol, seed=s, width=args.width, cells=args.cells) for s in range(n)]
    devices = ["cuda:0" if cuda else "cpu"] * n  # one GPU, N processes (CPU: N processes share the cores)
    pool = PoolExecutor(ExecutorSettings(device="cuda" if cuda else "cpu", jobs_per_gpu=n, fuse=False),
                        devices=devices, progress=False)
    outcomes: list = []
    start = time.perf_counter()
    pool.run(jobs, outcomes.append)
    wall = time.perf_counter() - start
    failed = [o for o in outcomes if o.status != "done"]
    if failed:
        raise RuntimeError(f"pool run failed: {failed[0].error}")
    rates = [o.record["images_per_s"] for o in outcomes]
    total = sum(o.record["train_images"] * o.record["epochs_run"] for o in outcomes)
    return statistics.mean(rates), total / wall
