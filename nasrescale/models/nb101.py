"""The NAS-Bench-101 network (Ying et al., ICML 2019, §2.2 and its released description).

Layout at stem width ``C`` (128), ``cells`` cells per stack (3) and ``stacks`` stacks (3)::

    stem      Conv3x3(3 -> C, no bias) -> BN -> ReLU
    stack s   a 2x2 max pool (stride 2) and twice the channels before every stack but the
              first; then `cells` cells, the first from the previous width to the new one
    head      global average pool -> Linear(channels, classes)

A cell with ``c_out`` output channels gives each vertex a width: the ``k`` vertices feeding the
output split ``c_out`` (``c_out // k`` each, the first ``c_out % k`` of them one more), and a
vertex feeding only other vertices takes the largest width among its successors. Vertex ``t``
sums its inputs: earlier vertices' outputs, truncated to its width (their first channels), and,
if the input feeds it, a projection of the cell input (``Conv1x1 -> BN -> ReLU`` to its width),
added last; then applies its op (``Conv kxk -> BN -> ReLU`` or a 3x3 max pool, same size). The
output concatenates the vertices that feed it and adds a projection of the input to
``c_out`` channels if the input feeds it. Every BN is affine; convs have no bias.

>>> from nasrescale.space.family_loader import get_family
>>> cell = ('{"matrix": [[0, 1, 1, 1, 0, 1, 0], [0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 1], '
...         '[0, 0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 0]], '
...         '"ops": ["input", "conv1x1-bn-relu", "conv3x3-bn-relu", "conv3x3-bn-relu", "conv3x3-bn-relu", '
...         '"maxpool3x3", "output"]}')
>>> net = build_model(cell, get_family("nb101"))
>>> sum(p.numel() for p in net.parameters())     # counted by hand in docs/design.md §6
2694282
"""

from __future__ import annotations

from typing import ClassVar, Iterator

import networkx as nx
import torch
from torch import nn

from ..space.families import CellFamily
from ..space.topology import effective_in_degrees
from .builders import build_op
from .network import CellNetwork, build_model, register_macro

__all__ = ["vertex_channels", "NB101Cell", "NB101Network", "build_nb101"]


def vertex_channels(graph: nx.DiGraph, c_in: int, c_out: int) -> list[int]:
    """Each vertex's width in a cell from ``c_in`` to ``c_out`` channels (module docstring).

    >>> g = nx.DiGraph([(0, 1), (0, 2), (1, 3), (2, 3)])
    >>> vertex_channels(g, 8, 9)
    [8, 5, 4, 9]
    """
    n = graph.number_of_nodes()
    channels = [0] * n
    channels[0], channels[-1] = c_in, c_out
    feeding = [v for v in range(1, n - 1) if graph.has_edge(v, n - 1)]
    if not feeding:
        return channels
    share, extra = divmod(c_out, len(feeding))
    for i, v in enumerate(feeding):
        channels[v] = share + (1 if i < extra else 0)
    for v in range(n - 3, 0, -1):
        if not graph.has_edge(v, n - 1):
            channels[v] = max(channels[d] for d in graph.successors(v) if d < n - 1)
    return channels


class NB101Cell(nn.Module):
    """One NAS-Bench-101 cell from ``c_in`` to ``c_out`` channels.

    Attributes:
        channels: each vertex's width; ``width`` = ``c_out``.
        vertex_ops: op module of each interior vertex, keyed by its id.
        projections: the input's projection to each vertex it feeds, keyed by the vertex id.
    """

    def __init__(self, graph: nx.DiGraph, family: CellFamily, c_in: int, c_out: int) -> None:
        super().__init__()
        self.graph, self.num_nodes, self.width = graph, graph.number_of_nodes(), c_out
        self.channels = vertex_channels(graph, c_in, c_out)
        projection = family.op("projection")
        self.projections = nn.ModuleDict({str(v): build_op(projection, self.channels[v], c_in=c_in)
                                          for v in sorted(graph.successors(0))})
        self.vertex_ops = nn.ModuleDict({str(v): build_op(family.op(graph.nodes[v]["op"]), self.channels[v])
                                         for v in range(1, self.num_nodes - 1)})

    def edge_items(self) -> Iterator[tuple[tuple[int, int], nn.Module]]:
        """None: the weights sit on vertices and projections (the network declares them)."""
        return iter(())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The cell's output (``c_out`` channels, the input's resolution)."""
        return self.node_values(x)[self.num_nodes - 1]

    def node_values(self, x: torch.Tensor) -> dict[int, torch.Tensor]:
        """Every vertex's tensor, the input's and the output's included."""
        n, out = self.num_nodes, self.num_nodes - 1
        tensors: list[torch.Tensor] = [x]
        for t in range(1, out):
            inputs = [tensors[u][:, :self.channels[t]] for u in sorted(self.graph.predecessors(t)) if u > 0]
            if self.graph.has_edge(0, t):
                inputs.append(self.projections[str(t)](x))
            total = inputs[0]
            for more in inputs[1:]:
                total = total + more
            tensors.append(self.vertex_ops[str(t)](total))
        feeding = [tensors[u] for u in range(1, out) if self.graph.has_edge(u, n - 1)]
        result = torch.cat(feeding, dim=1) if feeding else None
        if self.graph.has_edge(0, out):
            projected = self.projections[str(out)](x)
            result = projected if result is None else result + projected
        return {**dict(enumerate(tensors)), out: result}  # type: ignore[dict-item]


class NB101Network(CellNetwork):
    """The NAS-Bench-101 network of one cell (see the module docstring)."""

    released_fan_mode: ClassVar[str] = "fan_in"

    def __init__(self, graph: nx.DiGraph, family: CellFamily, num_classes: int = 10, width: int = 128,
                 cells: int = 3, stacks: int = 3, in_channels: int = 3) -> None:
        super().__init__(graph, family)
        self.width, self.num_cells = width, cells
        self.stem = nn.Sequential(nn.Conv2d(in_channels, width, 3, padding=1, bias=False), nn.BatchNorm2d(width),
                                  nn.ReLU(inplace=False))
        body: list[nn.Module] = []
        c_in = c_out = width
        for stack in range(stacks):
            if stack > 0:
                body.append(nn.MaxPool2d(2, stride=2))
                c_out *= 2
            for _ in range(cells):
                body.append(NB101Cell(graph, family, c_in, c_out))
                c_in = c_out
        self.body = nn.ModuleList(body)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1))
        self.readout = nn.Linear(c_out, num_classes)

    def cells(self) -> list[NB101Cell]:  # type: ignore[override]
        """The cells, in forward order."""
        return [m for m in self.body if isinstance(m, NB101Cell)]

    def trunk(self) -> list[tuple[str, nn.Module]]:
        """Stem, every block of the body (cells and pools), head, readout."""
        return [("stem", self.stem), *[(f"body.{i}", b) for i, b in enumerate(self.body)], ("head", self.head),
                ("readout", self.readout)]

    def skeleton_init_divisors(self) -> dict[nn.Module, tuple[float, float]]:
        """Vertex convs: the vertex's in-degree (they consume its sum, ``W sum h = sum W h``);
        projections of every cell but the first: the in-degree of the previous cell's output
        (its concatenation counts once, the projected input once; docs/design.md §2); 1 for the
        first cell's."""
        degree = effective_in_degrees(self.graph, self.family)
        out: dict[nn.Module, tuple[float, float]] = {}
        for i, cell in enumerate(self.cells()):
            for v, op in cell.vertex_ops.items():
                out.update({m: (float(max(1, degree[int(v)])),) * 2 for m in op.modules() if isinstance(m, nn.Conv2d)})
            d = 1.0 if i == 0 else float(max(1, degree[cell.num_nodes - 1]))
            out.update({m: (d, d) for p in cell.projections.values() for m in p.modules() if isinstance(m, nn.Conv2d)})
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, num_classes)``."""
        x = self.stem(x)
        for block in self.body:
            x = block(x)
        return self.readout(self.head(x))


@register_macro("nb101", keys=("width", "cells", "stacks"))
def build_nb101(graph: nx.DiGraph, family: CellFamily, *, num_classes: int, in_shape: tuple[int, int, int],
                prune: bool, width: int, cells: int, stacks: int) -> NB101Network:
    """Macro factory of ``kind = "nb101"`` (cells are pruned when parsed; ``prune`` changes nothing)."""
    return NB101Network(graph, family, num_classes, width=width, cells=cells, stacks=stacks, in_channels=in_shape[0])
