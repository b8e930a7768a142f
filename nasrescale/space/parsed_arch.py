"""An architecture parsed once: its canonical string and its canonical graph, as one value.

A :class:`ParsedArch` is what a job holds: the string keys and stores it (the family's canonical
form, exactly what :func:`~nasrescale.space.encodings.format_arch` writes), the graph builds,
initializes and analyzes it. The graph is frozen (:func:`networkx.freeze`): every job of one
cell may share it, and none can change it under the others.

>>> from nasrescale.space.family_loader import get_family
>>> nb201 = get_family("nb201")
>>> cell = ParsedArch.parse("3_34_131", nb201)
>>> cell.text
'|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|'
>>> cell == ParsedArch.parse(cell.text, nb201), nx.is_frozen(cell.graph)
(True, True)

:class:`CellMemo` parses each string once, however often a pipeline's planners ask for it:

>>> memo = CellMemo(nb201, [cell])
>>> memo.get(cell.text) is cell, memo.get("3_34_131") is cell
(True, True)
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Iterable, Iterator

import networkx as nx

from .encodings import format_arch, parse_arch
from .families import CellFamily

__all__ = ["ParsedArch", "CellMemo", "collecting", "remember"]


@dataclass(frozen=True)
class ParsedArch:
    """One architecture of a family, parsed.

    Attributes:
        text: the family's canonical string (what a job's key and the store hold).
        graph: the canonical graph, frozen (not compared: ``text`` says which cell it is).
    """

    text: str
    graph: nx.DiGraph = field(compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not isinstance(self.graph, nx.DiGraph):
            raise TypeError(f"ParsedArch(text: str, graph: nx.DiGraph); got {type(self.text).__name__}, "
                            f"{type(self.graph).__name__} (parse a string with ParsedArch.parse)")
        if not nx.is_frozen(self.graph):
            object.__setattr__(self, "graph", nx.freeze(self.graph.copy()))

    @classmethod
    def of_graph(cls, graph: nx.DiGraph, family: CellFamily) -> ParsedArch:
        """The cell of a canonical ``graph`` (what :func:`~nasrescale.space.encodings.parse_arch`
        returns); nothing is parsed."""
        return cls(format_arch(graph, family), graph)

    @classmethod
    def parse(cls, arch: str | nx.DiGraph, family: CellFamily) -> ParsedArch:
        """Parse ``arch`` (any of the family's encodings, or the canonical graph) once.

        Raises:
            ArchError: the architecture is not one of the family's.
        """
        if isinstance(arch, nx.DiGraph):
            return cls.of_graph(arch, family)
        return cls.of_graph(parse_arch(arch, family), family)


class CellMemo:
    """The cells of one family by any string that named them: each string parsed once."""

    def __init__(self, family: CellFamily, known: Iterable[ParsedArch] = ()) -> None:
        self.family = family
        self._cells: dict[str, ParsedArch] = {c.text: c for c in known}

    def get(self, arch: str) -> ParsedArch:
        """The cell ``arch`` names (parsed on first sight, then remembered under ``arch`` and
        its canonical string)."""
        cell = self._cells.get(arch)
        if cell is None:
            cell = ParsedArch.parse(arch, self.family)
            cell = self._cells.setdefault(cell.text, cell)
            self._cells[arch] = cell
        return cell

    def add(self, cells: Iterable[ParsedArch]) -> None:
        """Remember ``cells`` (parsed elsewhere) under their canonical strings."""
        for cell in cells:
            self._cells.setdefault(cell.text, cell)

    def cells(self, archs: Iterable[str]) -> list[ParsedArch]:
        """:meth:`get` of each of ``archs``, in order."""
        return [self.get(a) for a in archs]


#: the cells parsed while :func:`collecting` (``None``: not collecting)
_SEEN: ContextVar[dict[str, ParsedArch] | None] = ContextVar("nasrescale_parsed_cells", default=None)


def remember(cell: ParsedArch) -> ParsedArch:
    """Note ``cell`` for the :func:`collecting` block around this call (if any); returns it."""
    seen = _SEEN.get()
    if seen is not None:
        seen.setdefault(cell.text, cell)
    return cell


@contextlib.contextmanager
def collecting(family: CellFamily) -> Iterator[CellMemo]:
    """A :class:`CellMemo` that holds, once the block ends, every cell :func:`remember` noted in
    it: what code that returns strings (a selection method) parsed on the way is not parsed again."""
    memo, token = CellMemo(family), _SEEN.set({})
    try:
        yield memo
    finally:
        seen = _SEEN.get() or {}
        _SEEN.reset(token)
        memo.add(seen.values())
