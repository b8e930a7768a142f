"""What ``nasrescale status`` adds for a run whose LR stages are not finished: the stored jobs
are only those planned so far (the tuning stores one tuning cell's runs at a time, and a tuned
protocol's evaluation jobs only once its multiplier is chosen), so counts and ETA per stored
label understate the work left. These lines say how far each tuning is, from the stored
pipeline and jobs (:func:`~nasrescale.report.common.tuning_section.tuning_progress`).
"""

from __future__ import annotations

from pathlib import Path

from ..report.common.tuning_section import tuning_progress
from ..store.read import StoreData, read_store

__all__ = ["stage_lines"]


def stage_lines(run_dir: Path) -> list[str]:
    """One line per tuning still running in the store of ``run_dir``, and one on what the ETA
    leaves out; none once every tuning has chosen (or where none runs)."""
    store = read_store(Path(run_dir) / "store.sqlite")
    running = {label: view for label, view in tuning_progress(store).items() if not store.record.tuned(label)}
    if not running:
        return []
    lines = [f"  tuning of {label}: {view.runs_finished} of {view.planned or '?'} runs finished on "
             f"{len(view.cells)} of {view.cells_planned or '?'} tuning cells; no multiplier chosen yet"
             for label, view in running.items()]
    waiting = [label for label in running if not _has_jobs(store, label)]
    if waiting:
        lines.append(f"  not stored yet: the evaluation jobs of {', '.join(waiting)} (stored once the tuning "
                     "chooses) and the tuning's later cells; the counts and the ETA above leave them out")
    return lines


def _has_jobs(store: StoreData, label: str) -> bool:
    return bool((store.jobs["protocol"] == label).any()) and label in store.record.protocols
