"""One record per architecture: what ``nasrescale analyze`` prints.

>>> from nasrescale.space.family_loader import get_family
>>> rec = analyze("3_33_333", get_family("nb201"))
>>> rec.num_paths, rec.path_depths, rec.sum_depth_cubed, round(rec.lr_scale, 4)
(4, [2, 3, 3, 4], 126, 0.0891)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Iterator

import networkx as nx

from ..errors import ArchError
from .encodings import as_graph, format_arch, make_graph
from .families import CellFamily
from .family_loader import as_family
from .topology import (effective_edges, histogram_from_edges, in_degrees_from_edges, moments_from_edges, scale_for,
                       terminals)

__all__ = ["ArchAnalysis", "analyze", "analyze_graph", "enumerate_space", "space_size", "MAX_LISTED_PATHS"]

#: ``path_depths`` is listed only up to this many paths (beyond, it is ``None``; the
#: counts and power sums stay exact).
MAX_LISTED_PATHS = 100_000


@dataclass(frozen=True)
class ArchAnalysis:
    """Topology summary of one architecture.

    Attributes:
        arch: canonical string in the family's encoding.
        family: family name.
        degenerate: no input->output path; the cell's output is identically zero.
        num_paths: number of input->output paths ``P``.
        path_depths: sorted depths ``L_p``; ``None`` when ``P > MAX_LISTED_PATHS``.
        sum_depth_cubed: ``sum_p L_p^3`` (exact integer).
        lr_scale: LR scale against the family's base; ``None`` if degenerate.
        in_degree: effective in-degree of every node but the cell inputs (``1..n-1`` for one input).
    """

    arch: str
    family: str
    degenerate: bool
    num_paths: int
    path_depths: list[int] | None
    sum_depth_cubed: int
    lr_scale: float | None
    in_degree: dict[int, int]

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``analyze --json`` (node ids become string keys)."""
        return {
            "arch": self.arch,
            "family": self.family,
            "degenerate": self.degenerate,
            "num_paths": self.num_paths,
            "path_depths": self.path_depths,
            "sum_depth_cubed": self.sum_depth_cubed,
            "lr_scale": self.lr_scale,
            "in_degree": {str(k): v for k, v in self.in_degree.items()},
        }

    def to_row(self) -> dict[str, Any]:
        """A flat CSV row: depths joined by spaces, one ``in_degree_<v>`` column per node."""
        row = self.to_json()
        row["path_depths"] = "" if self.path_depths is None else " ".join(map(str, self.path_depths))
        row.update({f"in_degree_{k}": v for k, v in self.in_degree.items()})
        del row["in_degree"]
        return row


def analyze(arch: str | nx.DiGraph, family: CellFamily | str, max_listed_paths: int = MAX_LISTED_PATHS) -> ArchAnalysis:
    """Analyze one architecture (string in any encoding, or a graph, which is checked) of
    ``family`` (a family or its name)."""
    family = as_family(family)
    return analyze_graph(as_graph(arch, family), family, max_listed_paths)


def analyze_graph(graph: nx.DiGraph, family: CellFamily, max_listed_paths: int = MAX_LISTED_PATHS) -> ArchAnalysis:
    """Analyze a canonical graph (from :func:`~nasrescale.space.encodings.parse_arch`,
    :func:`~nasrescale.space.encodings.make_graph` or :func:`enumerate_space`) without re-checking it."""
    n = graph.number_of_nodes()
    live = effective_edges(graph, family)  # computed once, shared by the summaries
    ends = terminals(graph, family)
    count, _, _, cubed = moments_from_edges(live, n, family, ends)
    depths = None
    if count <= max_listed_paths:
        depths = [d for d, c in histogram_from_edges(live, n, family, ends).items() for _ in range(c)]
    in_degree = in_degrees_from_edges(live, n, ends.concat)
    for u in ends.sources:
        del in_degree[u]  # input nodes have none
    return ArchAnalysis(
        arch=format_arch(graph, family),
        family=family.name,
        degenerate=count == 0,
        num_paths=count,
        path_depths=depths,
        sum_depth_cubed=cubed,
        lr_scale=scale_for(cubed, family),
        in_degree=in_degree,
    )


def space_size(family: CellFamily) -> int:
    """Number of cells in an enumerable family: ``|ops| ^ (n (n-1) / 2)``."""
    n = _enumerable_nodes(family)
    return len(family.ops) ** (n * (n - 1) // 2)


def _enumerable_nodes(family: CellFamily) -> int:
    if family.nodes is None or family.zero_op is None:
        raise ArchError(
            f"family {family.name!r} is not enumerable: enumeration needs a fixed node count "
            "and a zero op (every pair of nodes then carries one op)"
        )
    return family.nodes


def enumerate_space(family: CellFamily) -> Iterator[nx.DiGraph]:
    """Every cell of an enumerable family, in digit-string order (``0_00_000`` first)."""
    n = _enumerable_nodes(family)
    pairs = [(u, v) for v in range(1, n) for u in range(v)]
    for ops in itertools.product(family.op_names, repeat=len(pairs)):
        yield make_graph([(u, v, op) for (u, v), op in zip(pairs, ops)], family, n)
