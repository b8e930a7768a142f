"""A pipeline kind's one registration: :class:`KindEntry`, what it plans and runs
(:class:`~nasrescale.pipeline.kind_registry.PipelineKind`) and how its runs are reported
(:class:`~nasrescale.report.kind_reports.KindReport`), under one name.

Each kind's package registers exactly one entry (``kinds/<kind>/registration.py``);
:func:`register_entry` puts its two halves where their readers look them up: the pipeline
loader, runner and drivers in :data:`~nasrescale.pipeline.kind_registry.KINDS`, ``nasrescale report``,
the end of ``nasrescale run`` and the results index in :data:`~nasrescale.report.kind_reports.REPORTS`.
Nothing outside the kind's package names it.

>>> from nasrescale.pipeline.kind_registry import KINDS
>>> from nasrescale.report.kind_reports import REPORTS
>>> entry = KindEntry(KINDS.get("trend"), REPORTS.get("trend"))
>>> entry.name, register_entry(entry) is entry
('trend', True)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..pipeline.kind_registry import PipelineKind, register_kind
from ..report.kind_reports import KindReport, register_report

__all__ = ["KindEntry", "register_entry"]


@dataclass(frozen=True)
class KindEntry:
    """One pipeline kind: what it plans and runs, and its report.

    Attributes:
        pipeline: its tables, its plan and what runs after it (``[pipeline] kind`` = its name).
        report: its report, its line in the results index, how a study quotes its runs.
    """

    pipeline: PipelineKind
    report: KindReport

    def __post_init__(self) -> None:
        if self.pipeline.name != self.report.name:
            raise ValueError(f"a kind entry's halves name one kind; got {self.pipeline.name!r} and {self.report.name!r}")

    @property
    def name(self) -> str:
        """The kind's name (``[pipeline] kind``, the kind its stores record)."""
        return self.pipeline.name


def register_entry(entry: KindEntry) -> KindEntry:
    """Register the kind ``entry`` (replacing one of the same name) for the pipeline and the
    reports alike; returns it."""
    register_kind(entry.pipeline)
    register_report(entry.report)
    return entry
