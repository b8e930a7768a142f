"""The LR validation kind (``kind = "lr_validation"``): its plan and its grid extensions.

Each architecture's maximal LR is grid-searched (:mod:`.grid`); where
a seed's argmin sits at an edge, the grid is extended past it, up to ``lr_search.extend``
rounds. The plan is stored as meta ``validation_plan``, so the report needs only the store.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from ...jobs.job import TrainJob
from ...store.record import PIPELINE_KEY, VALIDATION_PLAN_KEY
from ...store.sqlite_store import Store
from ...pipeline.execute import RunJobs, extend_rounds
from .grid import extend_plan, validation_plan as plan_validation

__all__ = ["validation_plan", "plan_of", "extend_validation"]


def plan_of(pipeline: Any, archs: Sequence[str]) -> tuple[dict[str, Any], list[TrainJob]]:
    """The plan (JSON: per group and architecture its scale, kernel factor and job keys) and the jobs
    of an ``lr_validation`` pipeline on ``archs``."""
    return plan_validation(archs, pipeline.family(), pipeline.protocols, pipeline.data_spec(), pipeline.lr_search,
                           pipeline.table("validation").kernels, pipeline.budget.width, pipeline.budget.cells)


def _announce(jobs: list[TrainJob]) -> str:
    return f"extending the LR grid past its edge: {len(jobs)} more runs"


def validation_plan(pipeline: Any, archs: Sequence[str]) -> tuple[list[TrainJob], dict[str, str]]:
    """Every architecture x grid LR x search seed, and the plan meta."""
    plan, jobs = plan_of(pipeline, archs)
    return jobs, {VALIDATION_PLAN_KEY: json.dumps(plan)}


def extend_validation(pipeline: Any, archs: Sequence[str], store: Store, meta: dict[str, str], run: RunJobs,
                      progress: bool) -> tuple[int, int, int]:
    """Extend the grids where a seed's argmin sits at an edge
    (:func:`~.grid.extend_plan`), up to ``lr_search.extend`` rounds, from
    the plan as planned (not as stored: rounds re-derive alike); the stored plan is updated after
    each round's jobs ran. A rerun derives the same rounds from the same stored results, so it
    adds nothing (a killed round resumes)."""
    plan = json.loads(meta[VALIDATION_PLAN_KEY])

    def next_jobs() -> list[TrainJob]:
        return extend_plan(plan, store.rows_with_tail(), pipeline.family(), pipeline.protocols, pipeline.data_spec(),
                           pipeline.lr_search, pipeline.table("validation").kernels, pipeline.budget.width,
                           pipeline.budget.cells)

    counts = extend_rounds(pipeline.lr_search.extend, next_jobs, run,
                           _announce if progress else None,
                           lambda: store.set_meta(VALIDATION_PLAN_KEY, json.dumps(plan)))
    # the plan as this run reads it (rule, loss: analysis-only keys a rerun may change)
    store.set_meta(VALIDATION_PLAN_KEY, json.dumps(plan))
    store.set_meta(PIPELINE_KEY, json.dumps(pipeline.resolved(archs), sort_keys=True))  # its analysis keys
    return counts
