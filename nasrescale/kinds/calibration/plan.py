"""A calibration's plan: every candidate budget (:mod:`.budgets`) x architecture x seed under
the pipeline's one protocol, each candidate's runs stored under its label."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ...errors import ConfigError
from ...jobs.job import TrainJob
from .budgets import candidate_data

__all__ = ["calibration_plan"]


def calibration_plan(pipeline: Any, archs: Sequence[str]) -> list[TrainJob]:
    """Candidate x architecture x seed under the pipeline's one protocol (label = the candidate's).

    Raises:
        ConfigError: not exactly one protocol, or a candidate the protocol cannot take
            (e.g. warm-up epochs beyond the candidate's epochs), naming the key.
    """
    if len(pipeline.protocols) != 1:
        labels = ", ".join(e.label for e in pipeline.protocols)
        raise ConfigError(f"protocols: a calibration trains one protocol (the benchmark's default, "
                          f"protocol = \"nb201\"); got {labels}")
    entry, family, base = pipeline.protocols[0], pipeline.family(), pipeline.data_spec()
    cells = pipeline.arch_cells(archs)
    jobs: list[tuple[int, TrainJob]] = []
    for c in pipeline.table("budgets"):
        overrides = {k: getattr(c.budget, k) for k in ("epochs", "batch_size") if getattr(c.budget, k) is not None}
        try:
            protocol = dataclasses.replace(entry.protocol, **overrides)
        except (ConfigError, ValueError) as err:
            raise ConfigError(f"budgets.{c.label}: {err}") from None
        data = candidate_data(base, c)
        jobs += [(i, TrainJob(cell, family, data, protocol, seed, c.budget.width, c.budget.cells, c.label))
                 for i, seed in enumerate(c.seeds) for cell in cells]
    # every candidate's first seed before any second one: a partial run already ranks each candidate
    return [job for _, job in sorted(jobs, key=lambda pair: pair[0])]
