"""The benchmark's own recipe as a fixed arm of a landscape: its runs, read from stored runs.

``landscape.recipe`` names protocol arms of other stored runs, each ``RUN:LABEL`` (e.g. the CPU
study's ``nb201_cifar10_cpu:default``: NAS-Bench-201's recipe, PyTorch init at LR 0.1, at the same
size and budget). Their finished runs of the landscape's cells, per seed, form one arm, and the
report tests its distortion against each cell's own best LR like any fixed LR
(:mod:`.verdicts`): the distortion of the benchmark's recipe itself, not only of a tuned global
LR. Several names merge their seeds (the first run of a cell and seed wins). Analysis only: it
never changes a stored result.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import NasRescaleError
from ...store.job_status import Status
from ...store.read import read_store, store_path
from .cells import CellLandscape

__all__ = ["recipe_scores"]


def _runs(name: str, results: Path) -> dict[tuple[str, int], float]:
    """``(arch, seed) -> test accuracy`` of the finished runs of ``RUN:LABEL``."""
    run, _, label = name.partition(":")
    if not run or not label:
        raise NasRescaleError(f"landscape.recipe: {name!r} is not RUN:LABEL (a stored run and one of its protocol "
                              "labels, e.g. 'nb201_cifar10_cpu:default')")
    jobs = read_store(store_path(run, results)).jobs
    done = jobs[(jobs["protocol"] == label) & (jobs["status"] == Status.DONE)]
    return {(str(r["arch"]), int(r["seed"])): float(r["test_accuracy"]) for r in done.to_dict("records")
            if r["test_accuracy"] is not None and math.isfinite(r["test_accuracy"])}


def recipe_scores(names: Sequence[str], cells: Sequence[CellLandscape], seeds: Sequence[int],
                  results: Path) -> dict[str, Any]:
    """The recipe arm on the landscape's ``cells`` and ``seeds``: ``{"names", "rows"}`` with
    ``rows`` the indices of the cells every seed of which the recipe has, ``scores`` their
    ``(cells, seeds)`` accuracies and ``missing`` the names whose run has no store yet (where
    any), or ``{"names", "error"}`` where a name cannot be read."""
    found: dict[tuple[str, int], float] = {}
    read, missing = [], []
    try:
        for name in names:
            if ":" in name.strip(":") and not _stored(name, results):  # a malformed name is refused below
                missing.append(name)
                continue
            for key, acc in _runs(name, results).items():
                found.setdefault(key, acc)
            read.append(name)
    except (NasRescaleError, OSError) as err:
        return {"names": list(names), "error": str(err)}
    rows = [i for i, c in enumerate(cells) if all((c.arch, s) in found for s in seeds)]
    scores = np.array([[found[(cells[i].arch, s)] for s in seeds] for i in rows]).reshape(len(rows), len(seeds))
    return {"names": read, "rows": rows, "scores": scores, **({"missing": missing} if missing else {})}


def _stored(name: str, results: Path) -> bool:
    """Whether ``RUN:LABEL``'s run has a store yet (a run not started is left out of the arm, and
    named, rather than failing the arm's other runs)."""
    path = store_path(name.partition(":")[0], results)
    return path.is_file() or path.with_name(path.name + ".gz").is_file()
