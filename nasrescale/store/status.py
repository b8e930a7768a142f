"""A run's progress for ``nasrescale status``: counts by status and protocol, ETA, failures; and,
for ``status --commands``, the ``nasrescale train`` command of each job (:mod:`nasrescale.store.reproduce`).

Reads the store read-only (:func:`~nasrescale.store.read.reading`), so it works while the driver
is still writing. The ETA and its basis come from :mod:`nasrescale.store.eta`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .eta import estimate_eta, eta_text
from .read import reading
from .job_status import FINAL, Status
from .reproduce import command_text, not_rerunnable, stored_pipeline, train_command

__all__ = ["status_text", "commands_text"]


def status_text(run_dir: Path, driver: bool | None = None,
                group: Callable[[str], tuple[str, str] | None] = lambda label: None) -> str:
    """A few lines on a run's progress: counts by status and protocol, ETA, failures.

    ``driver`` says whether a driver is running the folder now (``None``: not known). Without
    one, the jobs the store still calls ``running`` were interrupted and show as such. ``group``
    folds labels into one line: ``(line name, member)`` for a label that belongs to one (a
    tuning's multipliers), ``None`` for a label that keeps its own line.
    """
    with reading(run_dir) as store:
        rows, counts = store.rows(), store.counts()
        total = len(rows)
        final = sum(counts[s] for s in FINAL)
        stale = counts.get(Status.RUNNING, 0) if driver is False else 0
        lines = [f"pipeline {store.get_meta('name')!r} in {run_dir}: {final}/{total} jobs finished "
                 f"({100.0 * final / total if total else 0:.0f}%)",
                 "  " + ", ".join(f"{'interrupted' if s == Status.RUNNING and stale else s} {n}" for s, n in counts.items())]
        if stale:
            lines.append(f"  no driver is running: {stale} job(s) were interrupted (killed mid-run); "
                         "run the pipeline again to finish them")
        lines += _label_lines(rows, group)
        lines.append("  ETA: " + eta_text(estimate_eta(store, driver)))
        for r in rows:
            if r["status"] == Status.FAILED:
                lines.append(f"  failed {r['key']} ({r['arch']}, {r['protocol']}, seed {r['seed']}): "
                             f"{(r['error'] or '').splitlines()[0] if r['error'] else ''}")
        return "\n".join(lines)


def _label_lines(rows: list, group: Callable[[str], tuple[str, str] | None]) -> list[str]:
    """One line per protocol label, or per group of labels (its members listed), in store order."""
    lines: dict[str, list] = {}  # line name -> [members, finished, total]
    for r in rows:
        folded = group(r["protocol"])
        name, member = folded if folded else (f"protocol {r['protocol']}", None)
        entry = lines.setdefault(name, [[], 0, 0])
        if member is not None and member not in entry[0]:
            entry[0].append(member)
        entry[1] += r["status"] in FINAL
        entry[2] += 1
    return [f"  {name}: {fin}/{total} finished" + (f" ({', '.join(members)})" if members else "")
            for name, (members, fin, total) in lines.items()]


def commands_text(run_dir: Path) -> str:
    """Per job of the run, a comment line (key, architecture, protocol, seed, status) and the
    ``nasrescale train`` command that reruns it, in the store's order."""
    lines = []
    with reading(run_dir) as store:
        pipeline = stored_pipeline(store.get_meta("pipeline"))
        for r in store.rows():
            job = store.job_json(r["key"])
            lines.append(f"# {r['key']}: {r['arch']}, {r['protocol']}, seed {r['seed']}, {r['status']}")
            why = "no stored job definition" if not job.get("arch") else not_rerunnable(job, pipeline)
            lines.append(f"# not rerunnable by nasrescale train: {why}" if why else
                         command_text(train_command(job, pipeline)))
    return "\n".join(lines)
