"""The status of a job: the one vocabulary the store, the executors, the ranking and the reports
share.

A :class:`Status` is a ``str``: its value is what the store's ``jobs.status`` column holds, so a
member compares equal to the stored text (``Status.DONE == "done"``), works as a dict key for it,
and formats as it. A job is planned ``pending``, ``running`` once started, and ends ``done``,
``diverged`` (NaN/inf loss) or ``failed`` (an exception).

>>> Status.DONE == "done", f"{Status.FAILED}", Status("diverged") in FINAL
(True, 'failed', True)
>>> [str(s) for s in RUNNABLE]
['pending', 'running', 'failed']
"""

from __future__ import annotations

import enum

__all__ = ["Status", "FINAL", "RUNNABLE"]


class Status(str, enum.Enum):
    """One job status; the value is the stored text."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    DIVERGED = "diverged"
    FAILED = "failed"

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__  # f"{status}" is the stored text on every Python version


#: statuses that end a job for good (its result is usable: diverged counts as chance)
FINAL = (Status.DONE, Status.DIVERGED)
#: statuses a (re)run picks up
RUNNABLE = (Status.PENDING, Status.RUNNING, Status.FAILED)
