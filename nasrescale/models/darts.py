"""The DARTS evaluation network for CIFAR-10 (Liu et al., ICLR 2019, §3.2 and appendix A.2).

Layout at width ``C`` (36) with ``cells`` cells (20) and stem multiplier ``m`` (3)::

    stem      Conv3x3(3 -> mC, pad 1, no bias) -> BN
    cells     cell i reads the outputs of cells i-2 and i-1 (the stem's output for the first);
              cells i = cells // 3 and 2 cells // 3 are reduction cells, and there the
              channels C double; the others are normal cells
    head      global average pool -> Linear(channels of the last cell, classes)

A cell first preprocesses its two inputs to ``C`` channels: ``ReLU -> Conv1x1 -> BN`` each, or
for the first input a factorized reduce when the previous cell reduced (that input then has
twice the resolution). Intermediate node ``k`` sums its two ops; in a reduction cell the ops
on the inputs have stride 2 (skip connections become factorized reduces). The output
concatenates the listed intermediate nodes, ``len(concat) x C`` channels. Every conv is
bias-free and every BN affine. The optional auxiliary head (DARTS's, after the cell at 2/3 of
the depth) is ``ReLU -> AvgPool5 (stride 3) -> Conv1x1(-> 128) -> BN -> ReLU -> Conv2x2(-> 768)
-> BN -> ReLU -> Linear(768, classes)``; it is built for counting only (its logits are kept in
``aux_logits`` in training mode; the training loop adds no auxiliary loss). Not built: drop
path, a regularizer of DARTS's training recipe. docs/design.md §6 counts DARTS-V2's parameters.

>>> from nasrescale.space.family_loader import get_family
>>> from nasrescale.space.darts_codec import DARTS_V2
>>> net = build_model(DARTS_V2, get_family("darts"))
>>> sum(p.numel() for p in net.parameters())     # the published 3.3 M
3349342
"""

from __future__ import annotations

from typing import ClassVar, Iterator

import networkx as nx
import torch
from torch import nn

from ..errors import ConfigError
from ..space.families import CellFamily
from ..space.structure import CellSpan, cell_spans
from .builders import build_op
from .cell import edge_key
from .cellspace_ops import FactorizedReduce
from .network import CellNetwork, build_model, register_macro

__all__ = ["MIN_DARTS_CELLS", "require_normal_cell", "DartsCell", "DartsBody", "AuxiliaryHead", "DartsNetwork",
           "build_darts", "relu_conv_bn"]


#: the fewest cells a DARTS network needs to hold a normal cell (1 and 2 are all reductions)
MIN_DARTS_CELLS = 3


def require_normal_cell(cells: int) -> None:
    """Refuse a cell count that leaves no normal cell (every cell a reduction).

    Raises:
        ConfigError: ``cells`` below :data:`MIN_DARTS_CELLS`, naming the minimum.
    """
    if cells < MIN_DARTS_CELLS:
        raise ConfigError(f"--cells {cells}: a DARTS network of {cells} cell{'s' if cells > 1 else ''} has only "
                          f"reduction cells (at cells // 3 and 2 cells // 3) and no normal cell; --cells counts "
                          f"all cells of a DARTS network and must be at least {MIN_DARTS_CELLS} (default 20)")


def relu_conv_bn(c_in: int, c_out: int) -> nn.Sequential:
    """DARTS's input preprocessing: ``ReLU -> Conv1x1 (no bias) -> BN``."""
    return nn.Sequential(nn.ReLU(inplace=False), nn.Conv2d(c_in, c_out, 1, bias=False), nn.BatchNorm2d(c_out))


class DartsCell(nn.Module):
    """One normal or reduction cell of a DARTS genotype (one span of the canonical graph).

    Attributes:
        edges: the op modules, keyed ``"u_v"`` by the canonical graph's node ids.
        concat: the concatenated nodes (cell-local ids); ``multiplier`` = how many.
        width: ``C`` of the cell's nodes.
    """

    def __init__(self, graph: nx.DiGraph, family: CellFamily, span: CellSpan, c_pp: int, c_p: int, c: int,
                 reduction: bool, reduction_prev: bool) -> None:
        super().__init__()
        self.width, self.reduction, self.base = c, reduction, span.nodes.start
        self.num_nodes = len(span.nodes)
        self.preprocess0 = FactorizedReduce(c_pp, c) if reduction_prev else relu_conv_bn(c_pp, c)
        self.preprocess1 = relu_conv_bn(c_p, c)
        self.edges = nn.ModuleDict()
        self._plan: list[tuple[int, tuple[tuple[int, str], ...]]] = []
        for v in range(self.base + 2, span.output):
            steps = []
            for u, _, name in sorted(graph.in_edges(v, data="op")):
                op = family.op(name)
                if op.zero:
                    continue
                strided = reduction and u - self.base < 2 and op.kind.name != "factorized_reduce"
                key = edge_key(u, v)
                if key in self.edges:  # a second op on u -> v (a node reading one input twice): key u_v_1
                    key += f"_{sum(k == key or k.startswith(key + '_') for k in self.edges)}"
                self.edges[key] = build_op(op, c, stride=2 if strided else 1)
                steps.append((u - self.base, key))
            self._plan.append((v - self.base, tuple(steps)))
        self.concat = sorted(u - self.base for u in graph.predecessors(span.output))
        self.multiplier = len(self.concat)

    def edge_items(self) -> Iterator[tuple[tuple[int, int], nn.Module]]:
        """Every op module as ``((u, v), module)``, canonical node ids, in ``(u, v)`` order (a node
        reading one input twice gives two modules of one ``(u, v)``, keys ``u_v`` and ``u_v_1``)."""
        for key in sorted(self.edges, key=lambda k: tuple(map(int, k.split("_")))):
            u, v = map(int, key.split("_")[:2])
            yield (u, v), self.edges[key]

    def forward(self, s0: torch.Tensor, s1: torch.Tensor) -> torch.Tensor:
        """The concatenated nodes, from the outputs of the two previous cells."""
        return self.node_values(s0, s1)[self.num_nodes - 1]

    def node_values(self, s0: torch.Tensor, s1: torch.Tensor) -> dict[int, torch.Tensor]:
        """Every node's tensor (cell-local ids: 0, 1 the preprocessed inputs, last the output)."""
        states = [self.preprocess0(s0), self.preprocess1(s1)]
        for _, steps in self._plan:
            total = None
            for u, key in steps:
                out = self.edges[key](states[u])
                total = out if total is None else total + out
            if total is None:  # only zero ops: an exact zero of the node's shape
                ref = states[1][:, :, ::2, ::2] if self.reduction else states[1]
                total = torch.zeros_like(ref)
            states.append(total)
        return {**dict(enumerate(states)), self.num_nodes - 1: torch.cat([states[k] for k in self.concat], dim=1)}


class AuxiliaryHead(nn.Module):
    """DARTS's auxiliary classifier for 8x8 CIFAR features."""

    def __init__(self, channels: int, num_classes: int) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.ReLU(inplace=False), nn.AvgPool2d(5, stride=3, padding=0, count_include_pad=False),
            nn.Conv2d(channels, 128, 1, bias=False), nn.BatchNorm2d(128), nn.ReLU(inplace=False),
            nn.Conv2d(128, 768, 2, bias=False), nn.BatchNorm2d(768), nn.ReLU(inplace=False))
        self.classifier = nn.Linear(768, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of the auxiliary head."""
        return self.classifier(self.features(x).flatten(1))


class DartsBody(nn.Module):
    """The chain of cells, each reading the two previous outputs; returns the last cell's."""

    def __init__(self, cells: list[DartsCell], aux_index: int | None, aux: AuxiliaryHead | None) -> None:
        super().__init__()
        self.cells = nn.ModuleList(cells)
        self.aux_index, self.aux = aux_index, aux
        self.aux_logits: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Run every cell on the stem output ``x``."""
        s0 = s1 = x
        for i, cell in enumerate(self.cells):
            s0, s1 = s1, cell(s0, s1)
            if self.aux is not None and i == self.aux_index and self.training:
                self.aux_logits = self.aux(s1)
        return s1


class DartsNetwork(CellNetwork):
    """DARTS's CIFAR network of a genotype (see the module docstring)."""

    released_fan_mode: ClassVar[str] = "fan_in"

    def __init__(self, graph: nx.DiGraph, family: CellFamily, num_classes: int = 10, width: int = 36,
                 cells: int = 20, stem_multiplier: int = 3, in_channels: int = 3, auxiliary: bool = False) -> None:
        super().__init__(graph, family)
        self.width, self.num_cells = width, cells
        spans = {span.type: span for span in cell_spans(graph)}
        c_curr = stem_multiplier * width
        self.stem = nn.Sequential(nn.Conv2d(in_channels, c_curr, 3, padding=1, bias=False), nn.BatchNorm2d(c_curr))
        c_pp, c_p, c_curr = c_curr, c_curr, width
        built: list[DartsCell] = []
        reduction_prev, aux_channels = False, c_p
        for i in range(cells):
            reduction = i in (cells // 3, 2 * cells // 3)
            c_curr *= 2 if reduction else 1
            cell = DartsCell(graph, family, spans["reduce" if reduction else "normal"], c_pp, c_p, c_curr,
                             reduction, reduction_prev)
            built.append(cell)
            reduction_prev = reduction
            c_pp, c_p = c_p, cell.multiplier * c_curr
            if i == 2 * cells // 3:
                aux_channels = c_p
        aux = AuxiliaryHead(aux_channels, num_classes) if auxiliary else None
        self.body = DartsBody(built, 2 * cells // 3, aux)
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1))
        self.readout = nn.Linear(c_p, num_classes)

    def cells(self) -> list[DartsCell]:  # type: ignore[override]
        """The cells, in forward order."""
        return list(self.body.cells)

    def trunk(self) -> list[tuple[str, nn.Module]]:
        """Stem, the cells as one block (a cell reads the two before it: no chain of cells), pool, readout."""
        return [("stem", self.stem), ("cells", self.body), ("head", self.pool), ("readout", self.readout)]

    def skeleton_init_divisors(self) -> dict[nn.Module, tuple[float, float]]:
        """The preprocessing convs and the auxiliary head's layers: divisor 1 (each writes into a
        node of in-degree 1; a concatenation's in-degree is in its consumer's fan-in, docs/design.md §2)."""
        layers = [m for cell in self.cells() for pre in (cell.preprocess0, cell.preprocess1) for m in pre.modules()]
        if self.body.aux is not None:
            layers += list(self.body.aux.modules())
        return {m: (1.0, 1.0) for m in layers if isinstance(m, (nn.Conv2d, nn.Linear))}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, num_classes)``."""
        return self.readout(self.pool(self.body(self.stem(x))))


@register_macro("darts", keys=("width", "cells", "stem_multiplier"))
def build_darts(graph: nx.DiGraph, family: CellFamily, *, num_classes: int, in_shape: tuple[int, int, int],
                prune: bool, width: int, cells: int, stem_multiplier: int) -> DartsNetwork:
    """Macro factory of ``kind = "darts"`` (``prune`` changes nothing: every op of a genotype runs).

    Raises:
        ConfigError: ``cells`` below 3, where cells ``cells // 3`` and ``2 cells // 3`` (the
            reductions) leave no normal cell.
    """
    require_normal_cell(cells)
    return DartsNetwork(graph, family, num_classes, width=width, cells=cells, stem_multiplier=stem_multiplier,
                        in_channels=in_shape[0])
