"""The DAG networks of Chen et al. (ICLR 2024), §4.1 (MLP) and §4.2 (CNN).

One cell between a stem and a readout, no normalization layers:

* MLP (``kind = "mlp"``): flatten -> ``Linear(in_features, width)`` + ReLU -> cell (edges
  ``Linear(width, width)`` + ReLU, identity or zero) -> ``Linear(width, classes)``.
* CNN (``kind = "cnn"``): ``Conv2d(in_channels, width, q, same padding, bias)`` + ReLU -> cell
  (edges ``Conv2d(width, width, q, same, bias)`` + ReLU, identity or zero) -> global average
  pool -> ``Linear(width, classes)``. The stem kernel ``q`` is the largest conv kernel among
  the family's ops, so the stem matches the cell's convs (3 in ``cells/cnn_dag.toml``).

The paper's released code initializes these networks with ``fan_out`` (NB201: ``fan_in``).
"""

from __future__ import annotations

import math
from typing import ClassVar

import networkx as nx
import torch
from torch import nn

from ..errors import FamilyError
from ..space.families import CellFamily
from ..space.edge_factors import stem_kernel
from .cell import Cell
from .network import CellNetwork, register_macro

__all__ = ["MLPNetwork", "CNNNetwork", "stem_kernel", "build_mlp", "build_cnn"]

class MLPNetwork(CellNetwork):
    """MLP with a DAG of hidden layers (paper §4.1).

    Args:
        graph: canonical cell graph.
        family: the cell family.
        num_classes: readout outputs.
        width: hidden features of every cell node.
        in_features: features of a flattened input.
        prune: whether the cell runs the pruned plan.

    Attributes:
        stem: ``Linear(in_features, width)`` -> ReLU.
        cell: the cell.
        readout: ``Linear(width, num_classes)``.
    """

    released_fan_mode: ClassVar[str] = "fan_out"

    def __init__(self, graph: nx.DiGraph, family: CellFamily, num_classes: int = 10, width: int = 256,
                 in_features: int = 3 * 32 * 32, prune: bool = True) -> None:
        super().__init__(graph, family)
        self.width = width
        self.stem = nn.Sequential(nn.Linear(in_features, width), nn.ReLU(inplace=False))
        self.cell = Cell(graph, family, width, prune=prune)
        self.readout = nn.Linear(width, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, num_classes)`` of inputs ``(batch, ...)`` (flattened first)."""
        return self.readout(self.cell(self.stem(x.flatten(1))))


class CNNNetwork(CellNetwork):
    """CNN with a DAG of conv layers (paper §4.2).

    Args:
        graph: canonical cell graph.
        family: the cell family.
        num_classes: readout outputs.
        width: channels of every cell node.
        in_channels: channels of the input image.
        prune: whether the cell runs the pruned plan.

    Attributes:
        stem: ``Conv2d(in_channels, width, q, same padding, bias)`` -> ReLU, ``q`` = :func:`~nasrescale.space.edge_factors.stem_kernel`.
        cell: the cell.
        pool: global average pool -> flatten.
        readout: ``Linear(width, num_classes)``.

    Raises:
        FamilyError: if the stem kernel is even (no symmetric same padding).
    """

    released_fan_mode: ClassVar[str] = "fan_out"

    def __init__(self, graph: nx.DiGraph, family: CellFamily, num_classes: int = 10, width: int = 32,
                 in_channels: int = 3, prune: bool = True) -> None:
        super().__init__(graph, family)
        self.width = width
        k = stem_kernel(family)
        if k % 2 == 0:
            raise FamilyError(f"family {family.name!r}: CNN stem kernel {k} is even; conv ops need odd kernels")
        self.stem = nn.Sequential(nn.Conv2d(in_channels, width, k, padding=k // 2, bias=True), nn.ReLU(inplace=False))
        self.cell = Cell(graph, family, width, prune=prune)
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1))
        self.readout = nn.Linear(width, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, num_classes)`` of images ``(batch, in_channels, H, W)``."""
        return self.readout(self.pool(self.cell(self.stem(x))))


@register_macro("mlp", keys=("width",))
def build_mlp(graph: nx.DiGraph, family: CellFamily, *, num_classes: int, in_shape: tuple[int, int, int],
              prune: bool, width: int) -> MLPNetwork:
    """Macro factory of ``kind = "mlp"``; the input is flattened to ``prod(in_shape)`` features."""
    return MLPNetwork(graph, family, num_classes, width=width, in_features=math.prod(in_shape), prune=prune)


@register_macro("cnn", keys=("width",))
def build_cnn(graph: nx.DiGraph, family: CellFamily, *, num_classes: int, in_shape: tuple[int, int, int],
              prune: bool, width: int) -> CNNNetwork:
    """Macro factory of ``kind = "cnn"``."""
    return CNNNetwork(graph, family, num_classes, width=width, in_channels=in_shape[0], prune=prune)
