"""The ETA of ``nasrescale status``: the jobs left, timed by the jobs of the run in progress or of
the last slice, with that basis said.

A machine's speed changes between sessions (another load beside it, another device, a slice
on a GPU after one on the CPU), so the time a job takes is read from the most recent jobs only:
those finished since the last recorded slice (the run in progress, or the run after the last
slice), else those of the last slice that finished any (meta ``visit:<n>``: its end and wall time
give its window), else every finished job. The estimate is the median time per epoch of those
jobs times the epochs of the jobs left: with one epoch count throughout, the jobs left times
the median job time. Only trained jobs count: a degenerate cell trains nothing, a diverged job
stops early, and a failed one is listed apart.

>>> e = Eta(seconds=1540.0, jobs=11, epochs=66, per_epoch=140.0 / 6, uniform=True,
...         basis="the median job time of slice 3 (12 jobs)")
>>> eta_text(e)
'0:25:40 of sequential job time: 11 jobs x 140 s, the median job time of slice 3 (12 jobs)'
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .job_status import FINAL, Status
from .record import visit_entries
from .sqlite_store import Store

__all__ = ["Eta", "estimate_eta", "eta_text", "clock"]

#: slack around a slice's window: the stored times are to the second
_SLACK = timedelta(seconds=2)


@dataclass(frozen=True)
class Eta:
    """An ETA and what it rests on.

    Attributes:
        seconds: the estimate (``None``: no job is timed yet; 0: nothing left to train).
        jobs: the jobs left to train (pending, or left running).
        epochs: their epochs in all.
        per_epoch: the median seconds per epoch of the basis jobs (``None``: none).
        uniform: every job left and every basis job has the same epoch count.
        basis: which jobs were timed, in words.
    """

    seconds: float | None
    jobs: int
    epochs: int
    per_epoch: float | None
    uniform: bool
    basis: str


def clock(seconds: float) -> str:
    """``h:mm:ss`` of ``seconds``.

    >>> clock(3725.4)
    '1:02:05'
    """
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _when(text: Any) -> datetime | None:
    """A stored UTC time (``...+00:00`` or ``...Z``), or ``None``."""
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def _timed(rows: list[dict[str, Any]], jobs: dict[str, dict[str, Any]]) -> list[tuple[datetime, float, int]]:
    """``(finished at, seconds per epoch, epochs)`` of every finished job that trained in full."""
    out = []
    for r in rows:
        epochs = int((jobs[r["key"]].get("protocol") or {}).get("epochs") or 0)
        at = _when(r["updated_at"])
        if r["status"] == Status.DONE and not r["degenerate"] and (r["wall_time_s"] or 0) > 0 and epochs and at:
            out.append((at, r["wall_time_s"] / epochs, epochs))
    return out


def _jobs(n: int) -> str:
    return f"{n} job{'' if n == 1 else 's'}"


def _basis(timed: list[tuple[datetime, float, int]], visits: list[dict[str, Any]],
           driver: bool | None) -> tuple[list[tuple[datetime, float, int]], str]:
    """The jobs the estimate reads and whose they are, in words (see the module's docstring)."""
    windows = [(_when(v.get("finished_at")), float(v.get("wall_s") or 0.0)) for v in visits]
    last_end = windows[-1][0] if windows else None
    since = [t for t in timed if last_end is None or t[0] > last_end + _SLACK]
    if since and last_end is not None:
        run = "the run in progress" if driver else f"the run after slice {len(visits)}"
        return since, f"{run} ({_jobs(len(since))})"
    for n in range(len(windows), 0, -1):
        end, wall = windows[n - 1]
        if end is None:
            continue
        inside = [t for t in timed if end - timedelta(seconds=wall) - _SLACK <= t[0] <= end + _SLACK]
        if inside:
            return inside, f"slice {n} ({_jobs(len(inside))})"
    return timed, f"the {_jobs(len(timed))} finished"


def estimate_eta(store: Store, driver: bool | None = None) -> Eta:
    """The ETA of the jobs ``store`` has left to train, from its most recent timed jobs
    (``driver``: whether a driver runs the folder now, for the words)."""
    rows = store.rows()
    jobs = {r["key"]: store.job_json(r["key"]) for r in rows}
    left = [jobs[r["key"]] for r in rows if r["status"] not in FINAL and r["status"] != Status.FAILED
            and float(jobs[r["key"]].get("cost") or 0.0) > 0]
    epochs_left = [int((j.get("protocol") or {}).get("epochs") or 0) for j in left]
    basis, whose = _basis(_timed(rows, jobs), visit_entries_of(store), driver)
    if not basis:
        return Eta(None if left else 0.0, len(left), sum(epochs_left), None, True, "no job finished yet")
    per_epoch = statistics.median(t[1] for t in basis)
    uniform = len({*epochs_left, *(t[2] for t in basis)}) == 1
    what = "the median job time" if uniform else "the median time per epoch"
    return Eta(per_epoch * sum(epochs_left), len(left), sum(epochs_left), per_epoch, uniform, f"{what} of {whose}")


def visit_entries_of(store: Store) -> list[dict[str, Any]]:
    """The store's slice records (meta ``visit:<n>``), in order; a record that does not parse is skipped."""
    out = []
    for value in visit_entries(store.meta()):
        try:
            out.append(json.loads(value))
        except (TypeError, ValueError):
            continue
    return out


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


def eta_text(eta: Eta) -> str:
    """The ETA and its basis, in words."""
    if eta.jobs == 0:
        return "0:00:00 (no job left to train)"
    if eta.seconds is None or eta.per_epoch is None:
        return f"unknown ({_jobs(eta.jobs)} left, {eta.basis})"
    if eta.uniform:
        how = f"{_jobs(eta.jobs)} x {_seconds(eta.per_epoch * eta.epochs / eta.jobs)}"
    else:
        how = f"{_jobs(eta.jobs)}, {eta.epochs} epochs x {_seconds(eta.per_epoch)}"
    return f"{clock(eta.seconds)} of sequential job time: {how}, {eta.basis}"
