"""How many intra-op threads a CPU job takes: the cores shared among the jobs running at once,
unless ``executor.threads`` / ``--threads`` says otherwise.

The threads of one parallel region wait on the slowest, so a job with two threads on a 2-core
machine runs at the pace of whichever core is shared the most. ``benchmarks/threads_under_load.py``
times the quickstart alone and beside one busy single-thread process (docs/benchmarks.md). On a
2-core AMD EPYC: two threads 132 s alone and 402 s beside it (3.0x); one thread 187 s alone (1.41x
the two threads' time) and 195 s beside it (1.05x). On a 2-core Intel Xeon (``nasrescale train``,
3 epochs) a second thread bought 13% alone and cost 3.6x beside a busy process. No fixed count
serves both an idle and a shared machine, so the default keeps the idle speed (every core, shared
among the jobs that run at once) and ``--threads 1`` is the choice on a machine other work shares.

>>> cpu_threads(3), cpu_threads(None, jobs_at_once=10**6)
(3, 1)
"""

from __future__ import annotations

import os
import sys

__all__ = ["cpu_threads", "use_threads"]


def cpu_threads(requested: int | None, jobs_at_once: int = 1) -> int:
    """The threads a CPU job takes: ``requested``, or the cores shared among ``jobs_at_once`` jobs."""
    if requested:
        return int(requested)
    return max(1, (os.cpu_count() or 1) // max(1, jobs_at_once))


def use_threads(threads: int) -> None:
    """Give this process's CPU work ``threads`` intra-op threads (OpenMP's before torch loads,
    torch's own once it has)."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
