"""The NAS-Bench-201 network (docs/design.md §3): a 3-stage ResNet-like skeleton around one cell.

Layout at width ``C`` and ``N`` cells per stage::

    stem      Conv3x3(3 -> C, pad 1, no bias) -> BN(C)
    stage 1   N cells at C channels                      (H x W)
    reduce    ResNet basic block C -> 2C, stride 2       (H/2 x W/2)
    stage 2   N cells at 2C
    reduce    ResNet basic block 2C -> 4C, stride 2      (H/4 x W/4)
    stage 3   N cells at 4C
    head      BN(4C) -> ReLU -> global average pool -> Linear(4C, classes)

The basic block is ``shortcut(x) + conv_b(conv_a(x))`` with ``conv_a`` = ReLU -> Conv3x3
(stride 2, no bias) -> BN, ``conv_b`` = ReLU -> Conv3x3 (stride 1, no bias) -> BN and
``shortcut`` = AvgPool2x2 (stride 2) -> Conv1x1 (no bias); nothing follows the sum. Every BN
is affine with running statistics and PyTorch's default eps/momentum, as in the benchmark.
The parameter count therefore matches NB201's published figures: 1,531,546 for the
all-``nor_conv_3x3`` cell at C = 16, N = 5 and 10 classes; 73,306 for a cell without convs.
"""

from __future__ import annotations

from typing import ClassVar

import networkx as nx
import torch
from torch import nn

from ..space.families import CellFamily
from .cell import Cell
from .network import CellNetwork, register_macro

__all__ = ["ResNetBasicBlock", "NB201Network", "build_nb201"]


class ResNetBasicBlock(nn.Module):
    """NB201's reduction block between stages: halves the resolution, changes the channels.

    Args:
        c_in: input channels.
        c_out: output channels.
        stride: stride of ``conv_a`` and of the shortcut's pooling (2 in NB201).
    """

    def __init__(self, c_in: int, c_out: int, stride: int = 2) -> None:
        super().__init__()
        self.conv_a = nn.Sequential(
            nn.ReLU(inplace=False),
            nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(c_out),
        )
        self.conv_b = nn.Sequential(
            nn.ReLU(inplace=False),
            nn.Conv2d(c_out, c_out, 3, stride=1, padding=1, bias=False),
            nn.BatchNorm2d(c_out),
        )
        self.shortcut = nn.Sequential(
            nn.AvgPool2d(kernel_size=stride, stride=stride, padding=0),
            nn.Conv2d(c_in, c_out, 1, stride=1, padding=0, bias=False),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``shortcut(x) + conv_b(conv_a(x))``, no activation after the sum."""
        return self.shortcut(x) + self.conv_b(self.conv_a(x))


class NB201Network(CellNetwork):
    """The NB201 network of one cell (see the module docstring for the layout).

    Args:
        graph: canonical cell graph, shared by all ``3N`` cells.
        family: the cell family.
        num_classes: readout outputs.
        width: ``C``, channels of the first stage.
        cells: ``N``, cells per stage.
        in_channels: channels of the input image.
        prune: whether the cells run the pruned plan.

    Attributes:
        stem: Conv3x3 + BN.
        body: the ``3N`` cells and two reduction blocks, in forward order.
        head: BN -> ReLU -> global average pool -> flatten.
        readout: ``Linear(4C, num_classes)``.
    """

    released_fan_mode: ClassVar[str] = "fan_in"

    def __init__(self, graph: nx.DiGraph, family: CellFamily, num_classes: int = 10, width: int = 16,
                 cells: int = 5, in_channels: int = 3, prune: bool = True) -> None:
        super().__init__(graph, family)
        self.width = width
        self.num_cells = cells
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, width, 3, stride=1, padding=1, bias=False),
            nn.BatchNorm2d(width),
        )
        body: list[nn.Module] = []
        for stage, channels in enumerate((width, 2 * width, 4 * width)):
            if stage > 0:
                body.append(ResNetBasicBlock(channels // 2, channels, stride=2))
            body += [Cell(graph, family, channels, prune=prune) for _ in range(cells)]
        self.body = nn.ModuleList(body)
        self.head = nn.Sequential(
            nn.BatchNorm2d(4 * width),
            nn.ReLU(inplace=False),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(1),
        )
        self.readout = nn.Linear(4 * width, num_classes)

    def trunk(self) -> list[tuple[str, nn.Module]]:
        """Stem, every block of the body (cells and reduction blocks), head, readout."""
        return [("stem", self.stem), *[(f"body.{i}", b) for i, b in enumerate(self.body)], ("head", self.head),
                ("readout", self.readout)]

    def skeleton_init_divisors(self) -> dict[nn.Module, tuple[float, float]]:
        """The reduction blocks' convs -> ``(target, released)`` init divisors.

        The block is a small DAG ``x -> h = conv_a(x)``, ``out = conv_b(h) + shortcut(x)``:
        under the target rule each conv is divided by the in-degree of the node it writes
        into (``conv_a`` -> ``h``: 1; ``conv_b`` and the 1x1 shortcut -> ``out``: 2). The
        paper's released code divides ``conv_a`` by 2, ``conv_b`` by 1 and the shortcut by 2.
        """
        divisors: dict[nn.Module, tuple[float, float]] = {}
        for block in self.body:
            if isinstance(block, ResNetBasicBlock):
                divisors[block.conv_a[1]] = (1.0, 2.0)
                divisors[block.conv_b[1]] = (2.0, 1.0)
                divisors[block.shortcut[1]] = (2.0, 2.0)
        return divisors

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, num_classes)`` of images ``(batch, in_channels, H, W)``."""
        x = self.stem(x)
        for block in self.body:
            x = block(x)
        return self.readout(self.head(x))


@register_macro("nb201", keys=("width", "cells"))
def build_nb201(graph: nx.DiGraph, family: CellFamily, *, num_classes: int, in_shape: tuple[int, int, int],
                prune: bool, width: int, cells: int) -> NB201Network:
    """Macro factory of ``kind = "nb201"`` (see :func:`~nasrescale.models.build_model`)."""
    return NB201Network(graph, family, num_classes, width=width, cells=cells, in_channels=in_shape[0], prune=prune)
