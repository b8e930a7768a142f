"""The shape every report takes: an ordered list of :class:`Section` objects over one typed
summary of the run.

A report first reads its run into one summary (``RunSummary`` for a retrain run,
``TrendSummary`` for a trend); each section then computes its numbers from that summary alone
(:class:`Computed`: the numbers for ``report.json`` and whatever else its rendering needs) and
renders them as Markdown lines (writing its figures into the run folder). :func:`assemble`
runs the sections in order; :func:`write_markdown_json` writes ``report.md`` and ``report.json``.
A section's numbers go into ``report.json`` under its ``key``, unless they are ``None``.

>>> class Title:
...     key = None
...     def compute(self, run): return Computed(None)
...     def render(self, run, computed): return [f"# {run}", ""]
>>> class Count:
...     key = "count"
...     def compute(self, run): return Computed(len(run), detail=sorted(run))
...     def render(self, run, computed): return [f"{computed.numbers} letters: {computed.detail}", ""]
>>> assemble([Title(), Count()], "cab")
(['# cab', '', "3 letters: ['a', 'b', 'c']", ''], {'count': 3})
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, Sequence, TypeVar

from ...fileio import atomic_write_text
from ...ranking.text import to_json

__all__ = ["Computed", "Section", "assemble", "write_markdown_json"]

S = TypeVar("S", contravariant=True)


@dataclass(frozen=True)
class Computed:
    """What a section computed.

    Attributes:
        numbers: JSON-ready numbers for ``report.json`` (``None``: the section adds none).
        detail: anything else its rendering needs (frames for figures, ...).
    """

    numbers: Any
    detail: Any = None


class Section(Protocol, Generic[S]):
    """One part of a report.

    Attributes:
        key: where its numbers go in ``report.json`` (``None``: they do not).
    """

    key: str | None

    def compute(self, run: S) -> Computed:
        """The section's numbers, from the run's summary alone."""

    def render(self, run: S, computed: Computed) -> list[str]:
        """The section's Markdown lines (empty: the section is left out); writes its figures."""


def assemble(sections: Sequence[Section[Any]], run: Any) -> tuple[list[str], dict[str, Any]]:
    """Compute and render ``sections`` in order: ``(markdown lines, {key: numbers})``."""
    lines: list[str] = []
    numbers: dict[str, Any] = {}
    for section in sections:
        computed = section.compute(run)
        lines += section.render(run, computed)
        if section.key is not None and computed.numbers is not None:
            numbers[section.key] = computed.numbers
    return lines, numbers


def write_markdown_json(run_dir: Path, lines: list[str], numbers: dict[str, Any]) -> Path:
    """Write ``run_dir/report.json`` (strict JSON) and ``run_dir/report.md``; return the latter."""
    atomic_write_text(Path(run_dir) / "report.json", to_json(numbers, indent=1))
    path = Path(run_dir) / "report.md"
    atomic_write_text(path, "\n".join(lines))
    return path
