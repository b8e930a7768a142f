"""The intra-op threads of a run's CPU jobs, picked once per run and kept on resume.

A run that leaves ``executor.threads`` out gets, when it first runs a job, the cores other
processes leave free (:func:`~nasrescale.executors.threads.cpu_threads` with the machine read
now); the count goes into the store's meta (:data:`THREADS_META`) and every later slice or
resume of the same store takes it again, so the runs of one store share one order of
floating-point reductions. A count stored on a machine with more cores than this one is picked
again. ``executor.threads`` / ``--threads`` always wins (and is not stored). An executor that
gives each job its own CPUs (Ray's ``cpus_per_job``) is left as it is.

>>> from nasrescale.executors.base import ExecutorSettings
>>> class Meta(dict):
...     def meta(self): return self
...     def set_meta(self, key, value): self[key] = value
>>> store = Meta({THREADS_META: "1"})
>>> run_threads(store, ExecutorSettings()).threads, run_threads(store, ExecutorSettings(threads=2)).threads
(1, 2)
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from ..executors.base import ExecutorSettings
from ..executors.registry import executor_entry
from ..executors.threads import MEASURE, cpu_threads

__all__ = ["THREADS_META", "run_threads"]

#: the store's meta key holding the threads the run picked for its CPU jobs
THREADS_META = "cpu_threads"


def run_threads(store: Any, settings: ExecutorSettings) -> ExecutorSettings:
    """``settings`` with the threads of the run in ``store`` (anything with ``meta()`` and
    ``set_meta``): given, stored by an earlier slice, or picked now from the machine's load and
    stored."""
    if settings.threads is not None or not executor_entry(settings.kind).shares_cores:
        return settings
    stored = store.meta().get(THREADS_META)
    threads = int(stored) if stored is not None and str(stored).isdigit() else 0
    if not 1 <= threads <= (os.cpu_count() or 1):
        threads = cpu_threads(None, busy=MEASURE)
        store.set_meta(THREADS_META, str(threads))
    return dataclasses.replace(settings, threads=threads)
