"""A trend's plan: each protocol's retrain job at each budget of ``[trend]``
(:class:`~.settings.TrendSettings`), stored under ``<protocol>@<epochs>ep``.

>>> trend_label("default", 12)
'default@12ep'
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ...errors import ConfigError
from ...jobs.job import TrainJob
from ...store.record import trend_label
from ...pipeline.protocols import protocol_keys

__all__ = ["trend_label", "trend_plan"]


def trend_plan(pipeline: Any, archs: Sequence[str]) -> tuple[list[TrainJob], dict[str, str]]:
    """Budget x architecture x protocol x seed, the smallest budget first (a partial run ranks it first).

    Raises:
        ConfigError: a protocol whose base LR is not known yet, or one a budget cannot take
            (e.g. warm-up epochs beyond it), naming the key.
    """
    family, data, budget = pipeline.family(), pipeline.data_spec(), pipeline.budget
    cells, jobs = pipeline.arch_cells(archs), []
    for epochs in pipeline.table("trend").epochs:
        for entry in pipeline.protocols:
            try:
                protocol = dataclasses.replace(entry.protocol, epochs=epochs)
            except (ConfigError, ValueError) as err:
                raise ConfigError(f"trend.epochs: {epochs} epochs for protocols.{entry.label}: {err}") from None
            with protocol_keys(entry):
                jobs += [TrainJob(cell, family, data, protocol, seed, budget.width, budget.cells,
                                  trend_label(entry.label, epochs))
                         for cell in cells for seed in pipeline.pipeline.seeds]
    return jobs, {}
