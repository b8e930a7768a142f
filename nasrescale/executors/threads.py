"""How many intra-op threads a CPU job takes: ``executor.threads`` / ``--threads`` where given,
else a count a run picks once, from the cores other processes leave free when it starts.

The threads of one parallel region wait on the slowest, so a job with two threads on a 2-core
machine runs at the pace of whichever core is shared the most. ``benchmarks/threads_under_load.py``
times the quickstart alone and beside one busy single-thread process (docs/benchmarks.md). On a
2-core AMD EPYC: two threads 132 s alone and 402 s beside it (3.0x); one thread 187 s alone (1.41x
the two threads' time) and 195 s beside it (1.05x). No fixed count serves both an idle and a shared
machine, so the count is read from the machine (:func:`busy_cores`). It is read once per run, not
per job: the thread count sets the order of the floating-point reductions, so a count that
followed the load would give one seed another result within a run (13.0 against 13.5 % once).
A pipeline run stores the count it picked and a resumed run keeps it
(:func:`nasrescale.pipeline.run_threads.run_threads`); every job's record names its threads, and
``--threads N`` repeats them. ``nasrescale train`` stores its count in its checkpoint, and a
resumed run keeps it (:func:`resume_threads`). An executor used without a run (the API) takes
every core.

>>> cpu_threads(3), cpu_threads(None, jobs_at_once=10**6), cpu_threads(None, busy=0.0) == (os.cpu_count() or 1)
(3, 1, True)
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Sequence

__all__ = ["MEASURE", "busy_cores", "cpu_threads", "resume_threads", "use_threads", "ThreadPolicy"]

_STAT = Path("/proc/stat")
#: ``busy`` default of :func:`cpu_threads`: measure the machine now
MEASURE = -1.0


def _sample() -> tuple[float, float, float]:
    """(the machine's busy CPU seconds, this process's CPU seconds, wall seconds)."""
    ticks = [int(v) for v in _STAT.read_text().split("\n", 1)[0].split()[1:9]]
    busy = sum(ticks) - ticks[3] - ticks[4]  # every state but idle and iowait
    own = os.times()
    return busy / os.sysconf("SC_CLK_TCK"), own.user + own.system, time.monotonic()


def busy_cores(window: float = 0.25) -> float | None:
    """The cores other processes keep busy: the machine's busy CPU time over ``window`` seconds,
    less this process's own, per second of wall time; ``None`` where ``/proc/stat`` cannot be
    read (a machine without Linux's proc filesystem).

    >>> value = busy_cores(0.05)
    >>> value is None or 0.0 <= value <= (os.cpu_count() or 1)
    True
    """
    try:
        busy0, own0, wall0 = _sample()
        time.sleep(window)
        busy1, own1, wall1 = _sample()
    except (OSError, ValueError, IndexError):
        return None
    cores = float(os.cpu_count() or 1)
    return min(cores, max(0.0, ((busy1 - busy0) - (own1 - own0)) / max(wall1 - wall0, 1e-9)))


def cpu_threads(requested: int | None, jobs_at_once: int = 1, *, busy: float | None = None) -> int:
    """The threads a CPU job takes: ``requested``; else the cores other processes leave free,
    shared among ``jobs_at_once`` jobs, at least 1. ``busy`` is the cores they keep busy
    (:data:`MEASURE`: measured now with :func:`busy_cores`; default ``None``: not read, every
    core counts as free, so the count does not follow the load).

    >>> cpu_threads(None, busy=float(os.cpu_count() or 1))  # every core busy elsewhere: one thread
    1
    """
    if requested:
        return int(requested)
    if busy is not None and busy < 0:
        busy = busy_cores()
    cores = os.cpu_count() or 1
    free = cores if busy is None else max(1, round(cores - busy))
    return max(1, free // max(1, jobs_at_once))


def resume_threads(requested: int | None, checkpoints: Sequence[str | Path | None]) -> int:
    """The threads of a command that may resume from ``checkpoints``: ``requested``; else the count
    stored in the first of them that holds one, so a resumed run reduces in the order of the run
    it continues and ends with the figures an uninterrupted run would have; else the cores other
    processes leave free now (:func:`cpu_threads` with :data:`MEASURE`).

    >>> resume_threads(3, []), resume_threads(None, [None]) >= 1
    (3, True)
    """
    if requested:
        return int(requested)
    from ..train.checkpoint import stored_threads  # torch: loaded only where a run may resume

    stored = next((n for n in map(stored_threads, checkpoints) if n is not None), None)
    return stored if stored is not None else cpu_threads(None, busy=MEASURE)


def use_threads(threads: int) -> None:
    """Give this process's CPU work ``threads`` intra-op threads (OpenMP's before torch loads,
    torch's own once it has)."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


class ThreadPolicy:
    """:func:`cpu_threads` for the jobs of one executor run, applied with :func:`use_threads` as each starts
    (the count is computed once: ``requested``, else every core shared among ``jobs_at_once``).

    >>> policy = ThreadPolicy(2)
    >>> policy.apply(), policy.apply()
    (2, 2)
    """

    def __init__(self, requested: int | None, jobs_at_once: int = 1) -> None:
        self.threads = cpu_threads(requested, jobs_at_once)

    def apply(self) -> int:
        """Set and return the threads for the job that starts now."""
        use_threads(self.threads)
        return self.threads
