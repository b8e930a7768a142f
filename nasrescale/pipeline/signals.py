"""SIGTERM as an interrupt: a slice stopped by ``kill``, ``scancel`` or a SLURM job's time limit
ends as on Ctrl-C, with its record written.

SLURM sends SIGTERM when a job reaches its ``--time`` (then SIGKILL after ``KillWait``, 30 s by
default); Python's default for SIGTERM ends the process at once, with nothing written. Inside
:func:`sigterm_as_interrupt` SIGTERM raises :class:`Terminated`, a :class:`KeyboardInterrupt`,
so the code that records an interrupted slice records this one too. A second SIGTERM while
that record is written is ignored (a double ``kill``, or ``srun`` forwarding one), so the
record is not cut short.

>>> import os, signal
>>> before = signal.getsignal(signal.SIGTERM)
>>> try:
...     with sigterm_as_interrupt():
...         os.kill(os.getpid(), signal.SIGTERM)
...         for _ in range(10**6):  # the handler runs at the next bytecode
...             pass
... except Terminated as err:
...     print(type(err).__name__, isinstance(err, KeyboardInterrupt))
Terminated True
>>> signal.getsignal(signal.SIGTERM) is before
True
>>> with sigterm_as_interrupt():  # an ordinary end puts the handler back too
...     pass
>>> signal.getsignal(signal.SIGTERM) is before
True
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Iterator

__all__ = ["Terminated", "sigterm_as_interrupt", "INTERRUPTED", "TERMINATED"]

#: a slice's ``stopped`` when Ctrl-C or SIGINT ended it (its record is still written)
INTERRUPTED = "interrupted (Ctrl-C or SIGINT): the jobs it was running are not finished; the next slice runs them"
#: a slice's ``stopped`` when SIGTERM ended it: ``kill``, ``scancel``, a SLURM job's time limit
TERMINATED = ("terminated (SIGTERM: kill, scancel or a SLURM time limit): the jobs it was running are not "
              "finished; the next slice runs them")


class Terminated(KeyboardInterrupt):
    """SIGTERM received inside :func:`sigterm_as_interrupt` (the command exits 143, 128 + 15)."""


def _raise(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the record after it is not cut short
    raise Terminated(f"signal {signum} (SIGTERM)")


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated`; the former handler is restored after.
    Off the main thread (where Python cannot set a handler) it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if before is None else before)  # None: set outside Python
