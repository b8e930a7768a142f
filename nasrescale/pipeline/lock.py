"""One driver per run folder: the lock that makes the driver the store's only writer.

:func:`driver_lock` holds ``<run folder>/.driver.lock`` (a :class:`filelock.FileLock`: an OS
lock, released by the operating system when the process dies, so a killed driver leaves no
stale lock) while a driver runs, and records its process id in ``.driver.pid`` for the message
a second driver gets. :func:`driver_active` asks, without waiting, whether a driver holds it
now: a job left ``running`` in the store with no driver was interrupted.

The lock is taken before anything is loaded: ``nasrescale run`` takes it with
:func:`lock_if_present` as soon as it knows the run folder (before the pipeline, its data or
its reference are loaded), so a second driver is refused at once rather than after its checks. A
process that holds a run folder's lock may enter :func:`driver_lock` for it again (the library's
drivers do, under the command's lock); only another process is refused. The pid file is
removed however the block ends; ``nasrescale run`` turns SIGTERM into an interrupt
(:mod:`nasrescale.pipeline.signals`), so a ``kill`` or Ctrl-C leaves none behind.
"""

from __future__ import annotations

import os
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import ContextManager, Iterator

from filelock import FileLock, Timeout

from ..errors import ConfigError

__all__ = ["LOCK_FILE", "PID_FILE", "driver_lock", "lock_if_present", "driver_active"]

#: the lock file of a run folder
LOCK_FILE = ".driver.lock"
#: the process id of the driver holding the lock (removed when it lets go)
PID_FILE = ".driver.pid"

#: how long a driver waits for the lock: far longer than a `status` probing it holds it (the
#: instant of one try), short enough that a second driver is refused within a second
_WAIT_S = 0.5

#: the run folders (resolved) whose lock this process holds, each with how deep it is entered
_HELD: dict[Path, int] = {}


@contextmanager
def driver_lock(run_dir: Path) -> Iterator[None]:
    """Hold the run folder's driver lock (creating the folder) for the ``with`` block; within a
    block of this process that already holds it, only enter it again.

    Raises:
        ConfigError: another driver holds it (naming its process id), or the folder cannot be
            written (naming it and the operating system's reason).
    """
    key = Path(run_dir).resolve()
    if key in _HELD:  # this process drives the folder already: the outer block holds the lock
        _HELD[key] += 1
        try:
            yield
        finally:
            _HELD[key] -= 1
        return
    lock = FileLock(str(run_dir / LOCK_FILE))
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        lock.acquire(timeout=_WAIT_S)
    except Timeout:
        raise ConfigError(f"another `nasrescale run` (pid {_holder(run_dir)}) is driving {str(run_dir)!r}; "
                          "wait for it, or watch it with `nasrescale status`") from None
    except OSError as err:
        raise ConfigError(f"cannot write the run folder {str(run_dir)!r} ({err.strerror or err}): results need "
                          "a folder that can be written; choose another results folder") from None
    _HELD[key] = 1
    try:
        (run_dir / PID_FILE).write_text(str(os.getpid()))
        yield
    finally:
        del _HELD[key]
        (run_dir / PID_FILE).unlink(missing_ok=True)
        lock.release()


def lock_if_present(run_dir: Path | None) -> ContextManager[None]:
    """:func:`driver_lock` of ``run_dir`` where that folder exists already (a run drove it before, so
    a driver may be at work there now); nothing where it does not (or for ``None``): no folder is
    created for a run that its checks may still refuse, and the driver takes the lock when it
    creates the folder."""
    return driver_lock(run_dir) if run_dir is not None and run_dir.is_dir() else nullcontext()


def driver_active(run_dir: Path) -> bool | None:
    """Whether a driver holds ``run_dir``'s lock right now: ``False`` when none does (or none ever
    ran there), ``None`` when the lock cannot be probed (a folder this process cannot write)."""
    path = run_dir / LOCK_FILE
    if not path.is_file():
        return False
    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    except OSError:
        return None
    lock.release()
    return False


def _holder(run_dir: Path) -> str:
    """The recorded process id of the driver holding the lock, or ``?``."""
    try:
        return (run_dir / PID_FILE).read_text().strip() or "?"
    except OSError:
        return "?"
