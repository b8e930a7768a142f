"""The registry of the encodings of structured cell spaces (DARTS genotypes, NAS-Bench-101 JSON).

:func:`nasrescale.space.encodings.parse_arch` and ``format_arch`` dispatch here for a family whose
structure (:mod:`nasrescale.space.structure`) is not ``edge_dag``; the ``edge_dag`` encodings
(``nb201``, ``digits``, ``edges``) are :mod:`nasrescale.space.encodings`' own. A structure's module
(:mod:`nasrescale.space.darts_codec`, :mod:`nasrescale.space.nb101_codec`) registers its encoding when imported,
which :mod:`nasrescale.space.family_loader` does.

>>> import nasrescale.space.family_loader  # registers the shipped encodings
>>> ENCODERS.names()
('darts', 'nb101')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import networkx as nx

from ..registry import Registry
from ..errors import ArchError
from .families import CellFamily

__all__ = ["Encoding", "ENCODERS", "register_encoding"]


@dataclass(frozen=True)
class Encoding:
    """How one string form reads and writes the canonical graph of a family's cells.

    Attributes:
        name: registry key (a family's ``encoding``; a structure lists the ones it allows).
        parse: ``parse(text, family) -> graph``, the text stripped; raises ``ArchError``.
        format: ``format(graph, family) -> text``, the canonical string.
        description: one line.
    """

    name: str
    parse: Callable[[str, CellFamily], nx.DiGraph]
    format: Callable[[nx.DiGraph, CellFamily], str]
    description: str = ""


#: the encodings of the structured cell spaces (DARTS genotypes, NAS-Bench-101 JSON), by name;
#: the ``edge_dag`` encodings ``nb201``, ``digits``, ``edges`` are this module's own
ENCODERS: Registry[Encoding] = Registry("family.encoding", "encodings", error=ArchError, unique=True,
                                        hint="a cell structure's module registers its encoding")


def register_encoding(encoding: Encoding) -> Encoding:
    """Add an encoding to :data:`ENCODERS` and return it."""
    return ENCODERS.add(encoding.name, encoding)
