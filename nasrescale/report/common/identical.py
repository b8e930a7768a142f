"""Protocols that are one protocol run by run: left out of the statistics, and said so.

Two protocol labels can train identically (the workbench's ``elr_warmup`` with its controller
never acting equals ``default`` to the digit). Counting both would put one ranking twice into
every comparison, the tau matrix and the gaps. :func:`identical_protocols` finds each label
whose finished runs equal an earlier label's, run for run: the same (architecture, seed)
pairs, and the same test accuracy to the last bit.

>>> import pandas as pd
>>> jobs = pd.DataFrame({"protocol": ["a", "a", "b", "b", "c", "c"], "arch": ["x", "y"] * 3,
...                      "seed": [0] * 6, "status": ["done"] * 6,
...                      "test_accuracy": [70.0, 71.5, 70.0, 71.5, 70.0, 71.0]})
>>> identical_protocols(jobs, ["a", "b", "c"])
{'b': 'a'}
"""

from __future__ import annotations

import pandas as pd

from ...store.job_status import Status

__all__ = ["identical_protocols", "identical_note"]


def _runs(jobs: pd.DataFrame, label: str) -> pd.Series:
    done = jobs[(jobs["protocol"] == label) & (jobs["status"] == Status.DONE)]
    return done.set_index(["arch", "seed"])["test_accuracy"].sort_index()


def identical_protocols(jobs: pd.DataFrame, labels: list[str]) -> dict[str, str]:
    """``{label: the earlier label it equals}`` for every label (in ``labels`` order) whose
    finished runs are an earlier one's exactly (at least one run; same runs, same accuracies)."""
    runs = {label: _runs(jobs, label) for label in labels}
    same: dict[str, str] = {}
    for i, label in enumerate(labels):
        mine = runs[label]
        for earlier in labels[:i]:
            if earlier not in same and len(mine) and mine.index.equals(runs[earlier].index) \
                    and (mine.to_numpy() == runs[earlier].to_numpy()).all():
                same[label] = earlier
                break
    return same


def identical_note(same: dict[str, str]) -> str:
    """The report's sentence for the protocols left out (empty for none).

    >>> identical_note({"elr_warmup": "default"})
    'Left out of every statistic: `elr_warmup`, identical to `default` run by run (every finished run, the same test accuracy to the last digit); its runs stay in the per-architecture table.'
    """
    if not same:
        return ""
    parts = ", ".join(f"`{label}`, identical to `{kept}`" for label, kept in same.items())
    return (f"Left out of every statistic: {parts} run by run (every finished run, the same test accuracy to the last "
            f"digit); {'its' if len(same) == 1 else 'their'} runs stay in the per-architecture table.")
