"""The intra-op threads of a run's CPU jobs, picked once per run and kept on resume.

A run that leaves ``executor.threads`` out gets, when it first runs a job, the cores other
processes leave free (:func:`~nasrescale.executors.threads.cpu_threads` with the machine read
now); the count goes into the store's meta (:data:`~nasrescale.store.record.THREADS_KEY`, read as the record's ``cpu_threads``) and every later slice or
resume of the same store takes it again, so the runs of one store share one order of
floating-point reductions. A count stored on a machine with more cores than this one is picked
again. ``executor.threads`` / ``--threads`` always wins (and is not stored). An executor that
gives each job its own CPUs (Ray's ``cpus_per_job``) is left as it is.

>>> from nasrescale.executors.base import ExecutorSettings
>>> class Meta(dict):
...     def meta(self): return self
...     def set_meta(self, key, value): self[key] = value
>>> store = Meta({"cpu_threads": "1"})
>>> run_threads(store, ExecutorSettings()).threads, run_threads(store, ExecutorSettings(threads=2)).threads
(1, 2)
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from ..executors.base import ExecutorSettings
from ..executors.executor_registry import executor_entry
from ..executors.threads import MEASURE, cpu_threads
from ..store.migration import parse_record
from ..store.record import THREADS_KEY

__all__ = ["run_threads"]


def run_threads(store: Any, settings: ExecutorSettings) -> ExecutorSettings:
    """``settings`` with the threads of the run in ``store`` (anything with ``meta()`` and
    ``set_meta``): given, stored by an earlier slice, or picked now from the machine's load and
    stored."""
    if settings.threads is not None or not executor_entry(settings.kind).shares_cores:
        return settings
    threads = parse_record(store.meta()).cpu_threads or 0
    if not 1 <= threads <= (os.cpu_count() or 1):
        threads = cpu_threads(None, busy=MEASURE)
        store.set_meta(THREADS_KEY, str(threads))
    return dataclasses.replace(settings, threads=threads)
