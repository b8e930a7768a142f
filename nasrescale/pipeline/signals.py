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

A library waiting in native code may turn the handler's exception into a KeyboardInterrupt of
its own (Ray's waits do): :func:`terminated` still tells that SIGTERM stopped the block, so the
record and the exit code say so.

>>> try:
...     with sigterm_as_interrupt():
...         try:
...             os.kill(os.getpid(), signal.SIGTERM)
...             for _ in range(10**6):
...                 pass
...         except Terminated:
...             raise KeyboardInterrupt from None  # as such a library does
... except KeyboardInterrupt as err:
...     print(type(err).__name__, terminated(err))
KeyboardInterrupt True
>>> try:
...     with sigterm_as_interrupt():
...         raise KeyboardInterrupt  # Ctrl-C
... except KeyboardInterrupt as err:
...     print(terminated(err))
False
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Iterator

__all__ = ["Terminated", "sigterm_as_interrupt", "terminated", "INTERRUPTED", "TERMINATED"]

#: a slice's ``stopped`` when Ctrl-C or SIGINT ended it (its record is still written)
INTERRUPTED = "interrupted (Ctrl-C or SIGINT): the jobs it was running are not finished; the next slice runs them"
#: a slice's ``stopped`` when SIGTERM ended it: ``kill``, ``scancel``, a SLURM job's time limit
TERMINATED = ("terminated (SIGTERM: kill, scancel or a SLURM time limit): the jobs it was running are not "
              "finished; the next slice runs them")


class Terminated(KeyboardInterrupt):
    """SIGTERM received inside :func:`sigterm_as_interrupt` (the command exits 143, 128 + 15)."""


#: whether SIGTERM reached the handler since the outermost block began
_RECEIVED = {"sigterm": False}


def _raise(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the record after it is not cut short
    _RECEIVED["sigterm"] = True
    raise Terminated(f"signal {signum} (SIGTERM)")


def terminated(err: BaseException) -> bool:
    """Whether the KeyboardInterrupt ``err`` ends a block that SIGTERM stopped: a
    :class:`Terminated`, or any KeyboardInterrupt once SIGTERM has reached the handler (a
    library may have raised its own in place of the handler's)."""
    return isinstance(err, Terminated) or _RECEIVED["sigterm"]


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated`; the former handler is restored after.
    Off the main thread (where Python cannot set a handler) it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, _raise)
    if before is not _raise:  # the outermost block: no SIGTERM seen yet
        _RECEIVED["sigterm"] = False
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if before is None else before)  # None: set outside Python
