"""Topology analysis of a cell: pure functions on the canonical graph (docs/design.md §2).

Every function takes the canonical graph (see :mod:`nasrescale.space.encodings`) and its family,
and returns plain Python values. Nodes are numbered in topological order (every edge goes
from a lower to a higher id), which the functions rely on instead of sorting.

The NB201 all-``nor_conv_3x3`` cell, worked by hand: paths 0-3, 0-1-3, 0-2-3, 0-1-2-3 carry
1, 2, 2, 3 convs, so with depth offset 1 the depths are 2, 3, 3, 4 and
``sum L^3 = 8 + 27 + 27 + 64 = 126``; the base (skip chain) has one path of depth 1, so the
LR scale is ``(126)^(-1/2) / 1^(-1/2) = 0.0891``.

>>> from nasrescale.space.family_loader import get_family
>>> from nasrescale.space.encodings import parse_arch
>>> nb201 = get_family("nb201")
>>> g = parse_arch("3_33_333", nb201)
>>> path_depths(g, nb201), sum_depth_cubed(g, nb201), round(lr_scale(g, nb201), 4)
([2, 3, 3, 4], 126, 0.0891)
"""

from __future__ import annotations

import math
from functools import lru_cache
from types import MappingProxyType
from typing import Mapping, NamedTuple

import networkx as nx

from .encodings import parse_arch
from .families import CellFamily
from .structure import cell_spans, input_nodes, node_ops, output_nodes

__all__ = [
    "effective_edges",
    "effective_graph",
    "is_degenerate",
    "effective_in_degrees",
    "in_degrees_from_edges",
    "enumerate_paths",
    "op_paths",
    "path_depths",
    "depth_histogram",
    "histogram_from_edges",
    "path_moments",
    "moments_from_edges",
    "sum_depth_cubed",
    "base_sum_depth_cubed",
    "lr_scale",
    "scale_for",
    "Terminals",
    "terminals",
]

Edge = tuple[int, int]


class Terminals(NamedTuple):
    """What the path functions need of a graph besides its live edges: the nodes paths start
    at (every cell's inputs), end at (every cell's output), the ReLUs each node's own op adds
    (ops on nodes; empty otherwise) and the output nodes that concatenate."""

    sources: tuple[int, ...] = (0,)
    sinks: tuple[int, ...] | None = None  # None: the last node
    node_relu: Mapping[int, int] = MappingProxyType({})
    concat: tuple[int, ...] = ()


def terminals(graph: nx.DiGraph, family: CellFamily) -> Terminals:
    """The :class:`Terminals` of a canonical graph (docs/design.md §2, cells of any structure)."""
    relu = {v: family.op(op).relu_depth for v, op in node_ops(graph).items()}
    outputs = output_nodes(graph)
    return Terminals(input_nodes(graph), outputs, MappingProxyType(relu),
                     outputs if family.structure.concatenates else ())


def effective_edges(graph: nx.DiGraph, family: CellFamily) -> list[tuple[int, int, str]]:
    """The effective graph's edges as ``(u, v, op)`` triples: non-zero edges on a path from a
    cell input to its output. The other functions here are built on this list."""
    n = graph.number_of_nodes()
    nonzero = [(u, v, d["op"]) for u, v, d in graph.edges(data=True) if not family.op(d["op"]).zero]
    forward = [False] * n  # reachable from an input
    for u in input_nodes(graph):
        forward[u] = True
    for u, v, _ in sorted(nonzero, key=lambda e: e[0]):
        forward[v] = forward[v] or forward[u]
    backward = [False] * n  # reaches an output
    for v in output_nodes(graph):
        backward[v] = True
    for u, v, _ in sorted(nonzero, key=lambda e: -e[1]):
        backward[u] = backward[u] or backward[v]
    return [(u, v, op) for u, v, op in nonzero if forward[u] and backward[v]]


def effective_graph(graph: nx.DiGraph, family: CellFamily) -> nx.DiGraph:
    """The cell without zero edges and without edges on no input->output path.

    All nodes are kept, so a dead node shows up with in-degree 0.

    >>> from nasrescale.space.family_loader import get_family
    >>> from nasrescale.space.encodings import parse_arch
    >>> nb201 = get_family("nb201")
    >>> g = parse_arch("|nor_conv_3x3~0|+|skip_connect~0|none~1|+|skip_connect~0|none~1|skip_connect~2|", nb201)
    >>> sorted(effective_graph(g, nb201).edges)   # node 1 is a dead end: 0->1 is dropped
    [(0, 2), (0, 3), (2, 3)]
    """
    eff = nx.MultiDiGraph(family=family.name) if graph.is_multigraph() else nx.DiGraph(family=family.name)
    eff.add_nodes_from(range(graph.number_of_nodes()))
    eff.add_edges_from((u, v, {"op": op}) for u, v, op in effective_edges(graph, family))
    return eff


def is_degenerate(graph: nx.DiGraph, family: CellFamily) -> bool:
    """Whether the cell has no input->output path (its output is identically zero)."""
    return not effective_edges(graph, family)


def effective_in_degrees(graph: nx.DiGraph, family: CellFamily) -> dict[int, int]:
    """In-degree of every node in the effective graph (``d_in`` of the init rule): the number of
    tensors its sum adds, a concatenation counting as one (docs/design.md §2)."""
    return in_degrees_from_edges(effective_edges(graph, family), graph.number_of_nodes(),
                                 terminals(graph, family).concat)


def in_degrees_from_edges(live: list[tuple[int, int, str]], n: int, concat: tuple[int, ...] = (),
                          concat_op: str = "concat") -> dict[int, int]:
    """:func:`effective_in_degrees` from :func:`effective_edges` of an ``n``-node cell; at a node
    in ``concat`` the edges of op ``concat_op`` together count as one summand.

    >>> in_degrees_from_edges([(0, 1, "conv"), (0, 2, "skip"), (1, 2, "conv")], 3)
    {0: 0, 1: 1, 2: 2}
    >>> in_degrees_from_edges([(0, 1, "conv"), (0, 3, "projection"), (1, 3, "concat"), (2, 3, "concat")], 4, (3,))
    {0: 0, 1: 1, 2: 0, 3: 2}
    """
    degrees = dict.fromkeys(range(n), 0)
    joined: set[int] = set()
    for _, v, op in live:
        if v in concat and op == concat_op:
            if v in joined:
                continue
            joined.add(v)
        degrees[v] += 1
    return degrees


def enumerate_paths(graph: nx.DiGraph, family: CellFamily) -> list[list[int]]:
    """Every input->output path of the effective graph (from each cell input to its cell's
    output), as node lists. For display only: the count can be exponential in the node count
    (use :func:`path_moments`). A node that reads one input twice (two ops on one pair of nodes,
    as ENAS's cells do) gives one node list per op: see :func:`op_paths` for which op."""
    return [[start, *(v for _, v in hops)] for start, hops in op_paths(graph, family)]


Hop = tuple[str, int]  # (op, node it leads to)


def op_paths(graph: nx.DiGraph, family: CellFamily) -> list[tuple[int, tuple[Hop, ...]]]:
    """Every input->output path as ``(start, ((op, node), ...))``, one per sequence of edges, so
    two ops on one pair of nodes give two paths; sorted. For display and small cells."""
    live = effective_edges(graph, family)
    if not live:
        return []
    out_edges: dict[int, list[tuple[str, int]]] = {}
    for u, v, op in live:
        out_edges.setdefault(u, []).append((op, v))
    found: list[tuple[int, tuple[Hop, ...]]] = []
    for span in cell_spans(graph):
        for start in span.inputs:
            stack: list[tuple[int, tuple[Hop, ...]]] = [(start, ())]
            while stack:
                node, hops = stack.pop()
                if node == span.output and hops:
                    found.append((start, hops))
                    continue
                stack.extend((v, hops + ((op, v),)) for op, v in out_edges.get(node, ()))
    return sorted(found, key=lambda p: ([p[0], *(v for _, v in p[1])], [op for op, _ in p[1]]))


def _path_depth(family: CellFamily, hops: tuple[Hop, ...], relu: Mapping[int, int]) -> int:
    return family.depth_offset + sum(family.op(op).relu_depth + relu.get(v, 0) for op, v in hops)


def path_depths(graph: nx.DiGraph, family: CellFamily) -> list[int]:
    """Sorted depths ``L_p`` of all paths, by enumeration (small cells and tests)."""
    relu = terminals(graph, family).node_relu
    return sorted(_path_depth(family, hops, relu) for _, hops in op_paths(graph, family))


def depth_histogram(graph: nx.DiGraph, family: CellFamily) -> dict[int, int]:
    """Number of input->output paths of each depth, by dynamic programming (no enumeration).

    >>> from nasrescale.space.family_loader import get_family
    >>> from nasrescale.space.encodings import parse_arch
    >>> nb201 = get_family("nb201")
    >>> depth_histogram(parse_arch("3_33_333", nb201), nb201)
    {2: 1, 3: 2, 4: 1}
    """
    return histogram_from_edges(effective_edges(graph, family), graph.number_of_nodes(), family,
                                terminals(graph, family))


def histogram_from_edges(live: list[tuple[int, int, str]], n: int, family: CellFamily,
                         ends: Terminals = Terminals()) -> dict[int, int]:
    """:func:`depth_histogram` from :func:`effective_edges` of an ``n``-node cell whose paths
    start, end and gain node ReLUs as ``ends`` says (default: one input 0, output ``n-1``)."""
    counts: list[dict[int, int]] = [dict() for _ in range(n)]
    for u in ends.sources:
        counts[u][family.depth_offset] = 1
    for u, v, op in sorted(live, key=lambda e: (e[1], e[0])):
        step = family.op(op).relu_depth + ends.node_relu.get(v, 0)
        into = counts[v]
        for depth, count in counts[u].items():
            into[depth + step] = into.get(depth + step, 0) + count
    if n < 2:
        return {}
    total: dict[int, int] = {}
    for v in ends.sinks if ends.sinks is not None else (n - 1,):
        for depth, count in counts[v].items():
            total[depth] = total.get(depth, 0) + count
    return dict(sorted(total.items()))


def path_moments(graph: nx.DiGraph, family: CellFamily) -> tuple[int, int, int, int]:
    """``(P, sum L_p, sum L_p^2, sum L_p^3)`` over input->output paths, exactly, by DP.

    Each node carries the count and the first three power sums of the ReLU counts of the
    paths reaching it; an edge adding ``r`` ReLUs shifts them by the binomial expansion of
    ``(d + r)^k``; the depth offset is the same shift applied at the output. Linear in the
    number of edges, in exact integer arithmetic, so 10^15 paths cost nothing.
    """
    return moments_from_edges(effective_edges(graph, family), graph.number_of_nodes(), family,
                              terminals(graph, family))


def moments_from_edges(live: list[tuple[int, int, str]], n: int, family: CellFamily,
                       ends: Terminals = Terminals()) -> tuple[int, int, int, int]:
    """:func:`path_moments` from :func:`effective_edges` of an ``n``-node cell whose paths
    start, end and gain node ReLUs as ``ends`` says (default: one input 0, output ``n-1``).
    A summed and a concatenated node alike pass on the union of their in-edges' paths
    (docs/design.md §2); paths of several cells (DARTS's normal and reduction cell) add up."""
    moments = [(0, 0, 0, 0)] * n
    for u in ends.sources:
        moments[u] = (1, 0, 0, 0)
    for u, v, op in sorted(live, key=lambda e: (e[1], e[0])):
        shifted = _shift(moments[u], family.op(op).relu_depth + ends.node_relu.get(v, 0))
        moments[v] = tuple(a + b for a, b in zip(moments[v], shifted))  # type: ignore[assignment]
    sinks = ends.sinks if ends.sinks is not None else (n - 1,)
    total = tuple(sum(moments[v][i] for v in sinks) for i in range(4)) if n >= 2 else (0, 0, 0, 0)
    if total[0] == 0:
        return (0, 0, 0, 0)
    return _shift(total, family.depth_offset)  # type: ignore[arg-type]


def _shift(m: tuple[int, int, int, int], r: int) -> tuple[int, int, int, int]:
    """Power sums of ``d + r`` from those of ``d``."""
    c, s1, s2, s3 = m
    return (c, s1 + r * c, s2 + 2 * r * s1 + r * r * c, s3 + 3 * r * s2 + 3 * r * r * s1 + r**3 * c)


def sum_depth_cubed(graph: nx.DiGraph, family: CellFamily) -> int:
    """``sum_p L_p^3`` (paper eq. 8), by DP; 0 for a degenerate cell."""
    return path_moments(graph, family)[3]


@lru_cache(maxsize=None)
def base_sum_depth_cubed(family: CellFamily) -> int:
    """``sum_p L_p^3`` of the family's base architecture."""
    return sum_depth_cubed(parse_arch(family.base, family), family)


def lr_scale(graph: nx.DiGraph, family: CellFamily) -> float | None:
    """Path-depth LR scale ``(sum L^3)^(-1/2) / (sum_base L^3)^(-1/2)`` (paper eq. 8);
    ``None`` for a degenerate cell, which has no paths to scale by."""
    return scale_for(sum_depth_cubed(graph, family), family)


def scale_for(sum_cubed: int, family: CellFamily) -> float | None:
    """LR scale of a cell whose ``sum L^3`` is ``sum_cubed``; ``None`` when it is 0."""
    return math.sqrt(base_sum_depth_cubed(family) / sum_cubed) if sum_cubed else None
