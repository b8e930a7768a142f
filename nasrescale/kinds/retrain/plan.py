"""A retrain's plan: architecture x protocol x seed (a protocol with ``base_lr = "search"`` is
planned with its LR still to be searched, and searched before its jobs run)."""

from __future__ import annotations

from typing import Any, Sequence

from ...jobs.job import TrainJob
from ...pipeline.protocols import ProtocolEntry, protocol_keys
from ...space.parsed_arch import ParsedArch

__all__ = ["KIND", "retrain_plan"]

#: the kind's name (``[pipeline] kind``; a pipeline without one)
KIND = "retrain"


def retrain_plan(pipeline: Any, archs: Sequence[str]) -> tuple[list[TrainJob], dict[str, str]]:
    """Architecture x protocol x seed; every protocol's base LR must be known, or marked to be
    searched (each job checks its own)."""
    family, data, budget = pipeline.family(), pipeline.data_spec(), pipeline.budget

    def job(cell: ParsedArch, entry: ProtocolEntry, seed: int) -> TrainJob:
        with protocol_keys(entry):  # a job's check of its protocol names the pipeline's key
            return TrainJob(cell, family, data, entry.protocol, seed, budget.width, budget.cells, entry.label)

    return [job(cell, entry, seed) for cell in pipeline.arch_cells(archs) for entry in pipeline.protocols
            for seed in pipeline.pipeline.seeds], {}
