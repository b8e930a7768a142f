"""A cell as an ``nn.Module``: one module per non-zero edge, run by a static plan.

Node 0 is the cell input; node ``v`` is the sum of its in-edges' outputs, added in ascending
source order; the cell returns node ``n-1``. Every non-zero edge gets a module, including
edges that can never influence the output, so that parameter counts equal the benchmark's
(NB201 builds every op of the architecture string).

Two execution plans, both fixed at construction (a pure function of graph and family, so the
forward pass has no data-dependent control flow and compiles to one graph):

* ``prune=False`` -- the full definition, as NB201 computes it: every edge runs, a zero edge
  is ``x.mul(0.)``.
* ``prune=True`` -- the same function with the work that provably adds exactly zero, or cannot
  reach the output, left out. A node is *known zero* when none of its in-edges contributes
  (node 0 never is). Skipped: zero edges; edges whose target cannot reach the output; and
  non-parametric edges (identity, pooling: they map 0 to 0) out of known-zero nodes.
  A *parametric* edge out of a known-zero node is **not** skipped, although it is off the
  effective graph of docs/design.md §2: it maps 0 to a learned constant (BatchNorm's shift, a bias),
  which the full definition adds at its target. It runs on ``zeros_like(x)``.

Skipped terms are exact zeros and the order of the remaining additions is unchanged, so the
two plans give bit-identical outputs (``a + 0 == a``), in train and eval mode.

>>> import torch
>>> from nasrescale.space.family_loader import get_family
>>> from nasrescale.space.encodings import parse_arch
>>> nb201 = get_family("nb201")
>>> cell = Cell(parse_arch("0_03_101", nb201), nb201, 4)  # node 1 is zero; 1->2 is a conv
>>> cell.computed_edges  # in run order: node 2's in-edges, then node 3's
[(1, 2), (0, 3), (2, 3)]
>>> x = torch.randn(2, 4, 5, 5)
>>> torch.equal(cell(x), x + cell.edges["1_2"](torch.zeros_like(x)))
True
"""

from __future__ import annotations

from typing import Iterator

import networkx as nx
import torch
from torch import nn

from ..errors import ArchError
from ..space.families import CellFamily
from .builders import build_op

__all__ = ["Cell", "edge_key"]

# how a plan step feeds its edge module
_RUN = 0        # the source node's tensor
_ON_ZERO = 1    # zeros_like(x): a parametric edge out of a known-zero node (pruned plan)
_TIMES_ZERO = 2  # a zero edge, computed as source.mul(0.) (full plan only; no module)

Step = tuple[int, str, int]  # (source node, module key, mode)


def edge_key(u: int, v: int) -> str:
    """ModuleDict key of edge ``u -> v`` (``"u_v"``; module names may not contain dots)."""
    return f"{u}_{v}"


def _check_graph(graph: nx.DiGraph) -> int:
    n = graph.number_of_nodes()
    if n < 2 or set(graph.nodes) != set(range(n)):
        raise ArchError(f"a cell graph needs nodes 0..n-1 with n >= 2, got {sorted(graph.nodes)}")
    for u, v, data in graph.edges(data=True):
        if u >= v:
            raise ArchError(f"edge {u}->{v}: the source must be smaller than the target")
        if "op" not in data:
            raise ArchError(f"edge {u}->{v} has no 'op' attribute")
    return n


def _plans(graph: nx.DiGraph, family: CellFamily, prune: bool) -> tuple[list[tuple[int, tuple[Step, ...]]], bool]:
    """The execution plan: ``[(node, steps), ...]`` in node order, and whether the output is
    known to be zero (then no node is computed)."""
    n = graph.number_of_nodes()
    ops = {(u, v): family.op(d["op"]) for u, v, d in graph.edges(data=True)}
    if not prune:
        plan = []
        for v in range(1, n):
            steps = tuple(
                (u, edge_key(u, v), _TIMES_ZERO if ops[u, v].zero else _RUN)
                for u in sorted(graph.predecessors(v))
            )
            plan.append((v, steps))
        return plan, False
    # nodes from which the output is reachable along non-zero edges (edges go low -> high)
    reaches = [False] * n
    reaches[n - 1] = True
    for u, v in sorted(ops, key=lambda e: -e[1]):
        if not ops[u, v].zero and reaches[v]:
            reaches[u] = True
    known_zero = [False] * n
    plan = []
    for v in range(1, n):
        steps: list[Step] = []
        if reaches[v]:
            for u in sorted(graph.predecessors(v)):
                op = ops[u, v]
                if op.zero or (known_zero[u] and not op.parametric):
                    continue  # contributes exactly 0
                steps.append((u, edge_key(u, v), _ON_ZERO if known_zero[u] else _RUN))
        known_zero[v] = not steps
        if steps:
            plan.append((v, tuple(steps)))
    return plan, known_zero[n - 1]


class Cell(nn.Module):
    """One cell of a network: modules on every non-zero edge, a static forward plan.

    Args:
        graph: canonical cell graph (nodes ``0..n-1``, edges ``u -> v``, ``u < v``, attribute ``op``).
        family: the graph's cell family (op names -> kinds).
        width: channels (or features) of every node.
        prune: run the pruned plan (default) or the full definition (see module docstring).

    Attributes:
        graph: the cell graph (shared, not copied).
        family: the cell family.
        width: node width.
        prune: which plan runs.
        edges: ``nn.ModuleDict`` of the non-zero edges, keyed ``"u_v"``.
        computed_edges: edges ``(u, v)`` whose module the forward pass runs, in run order.

    Raises:
        ArchError: if the graph is not a canonical cell graph or names an unknown op.
        FamilyError: if an op kind has no builder.
    """

    def __init__(self, graph: nx.DiGraph, family: CellFamily, width: int, prune: bool = True) -> None:
        super().__init__()
        self.num_nodes = _check_graph(graph)
        self.graph = graph
        self.family = family
        self.width = width
        self.prune = prune
        self.edges = nn.ModuleDict()
        for u, v in sorted(graph.edges):
            op = family.op(graph.edges[u, v]["op"])
            if not op.zero:
                self.edges[edge_key(u, v)] = build_op(op, width)
        self._plan, self._output_zero = _plans(graph, family, prune)
        self.computed_edges: list[tuple[int, int]] = [
            (u, v) for v, steps in self._plan for u, _, mode in steps if mode != _TIMES_ZERO
        ]

    def edge_items(self) -> Iterator[tuple[tuple[int, int], nn.Module]]:
        """Every built edge as ``((u, v), module)``, in ``(u, v)`` order, run or not."""
        for u, v in sorted(self.graph.edges):
            key = edge_key(u, v)
            if key in self.edges:
                yield (u, v), self.edges[key]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Node ``n-1`` of the cell with node 0 = ``x``; same shape, dtype and layout as ``x``."""
        if self._output_zero:
            return torch.zeros_like(x)
        nodes: list[torch.Tensor | None] = [x] + [None] * (self.num_nodes - 1)
        zeros: torch.Tensor | None = None
        for v, steps in self._plan:
            total: torch.Tensor | None = None
            for u, key, mode in steps:
                if mode == _TIMES_ZERO:
                    out = nodes[u].mul(0.0)  # type: ignore[union-attr]
                elif mode == _ON_ZERO:
                    if zeros is None:
                        zeros = torch.zeros_like(x)  # every node has x's shape
                    out = self.edges[key](zeros)
                else:
                    out = self.edges[key](nodes[u])
                total = out if total is None else total + out
            # a node without in-edges (possible only in families without a zero op) is 0
            nodes[v] = torch.zeros_like(x) if total is None else total
        return nodes[-1]  # type: ignore[return-value]

    def extra_repr(self) -> str:
        return f"nodes={self.num_nodes}, width={self.width}, prune={self.prune}"
