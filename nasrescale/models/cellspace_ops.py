"""The ops of the DARTS and NAS-Bench-101 cell spaces, registered as model builders.

Each layout follows its paper's description (docs/design.md §6 counts their parameters):

* ``sep_conv`` (DARTS, Liu et al. 2019): a separable convolution applied twice,
  ``ReLU -> depthwise kxk (stride s) -> pointwise 1x1 -> BN``, then
  ``ReLU -> depthwise kxk -> pointwise 1x1 -> BN``; no conv has a bias;
* ``dil_conv`` (DARTS): ``ReLU -> depthwise kxk, dilation 2 (stride s) -> pointwise 1x1 -> BN``;
* ``conv_1xk_kx1`` (NASNet's ``conv_7x1_1x7``): ``ReLU -> Conv 1xk (stride 1xs) -> Conv kx1
  (stride sx1) -> BN``, no bias;
* ``factorized_reduce`` (DARTS's identity at stride 2): ``ReLU``, then two 1x1 convs of stride 2
  with ``C/2`` outputs each, the second on the input shifted by one pixel, concatenated, ``BN``;
* ``max_pool``: ``MaxPool(k, stride s, same padding)`` (DARTS ``max_pool_3x3``, NB101 ``maxpool3x3``);
* ``conv_bn_relu`` (NAS-Bench-101, Ying et al. 2019): ``Conv kxk (no bias) -> BN -> ReLU``,
  also the 1x1 projection of a cell's input.

Every BatchNorm is affine. A module whose weights do not all write into the node sum lists
the ones that do in ``summand_layers()``; the in-degree init divides only those
(:mod:`~nasrescale.models.scaling_map`), the inner ones write into a chain of in-degree 1.

>>> from nasrescale.space.ops import CellOp, get_op_kind
>>> sep = build_sep_conv(CellOp("sep_conv_3x3", get_op_kind("sep_conv"), 3), 8)
>>> sum(p.numel() for p in sep.parameters()) == 2 * (8 * 9 + 8 * 8) + 4 * 8
True
"""

from __future__ import annotations

import torch
from torch import nn

from ..errors import FamilyError
from ..space.ops import CellOp
from .builders import register_builder

__all__ = ["SepConv", "DilConv", "FactorizedConv", "FactorizedReduce", "build_sep_conv", "build_dil_conv",
           "build_factorized_conv", "build_factorized_reduce", "build_max_pool", "build_conv_bn_relu"]


def _kernel(op: CellOp) -> int:
    if op.kernel is None:
        raise FamilyError(f"op {op.name!r} of kind {op.kind.name!r} needs a kernel size")
    return op.kernel


class SepConv(nn.Sequential):
    """DARTS's separable convolution, applied twice (the first one strided)."""

    def __init__(self, channels: int, kernel: int, stride: int = 1) -> None:
        pad = kernel // 2
        super().__init__(
            nn.ReLU(inplace=False),
            nn.Conv2d(channels, channels, kernel, stride, pad, groups=channels, bias=False),
            nn.Conv2d(channels, channels, 1, bias=False),
            nn.BatchNorm2d(channels),
            nn.ReLU(inplace=False),
            nn.Conv2d(channels, channels, kernel, 1, pad, groups=channels, bias=False),
            nn.Conv2d(channels, channels, 1, bias=False),
            nn.BatchNorm2d(channels),
        )

    def summand_layers(self) -> list[nn.Module]:
        """The last pointwise conv: the only one whose output reaches the node sum."""
        return [self[6]]


class DilConv(nn.Sequential):
    """DARTS's dilated separable convolution (dilation 2, padding ``k - 1``)."""

    def __init__(self, channels: int, kernel: int, stride: int = 1) -> None:
        super().__init__(
            nn.ReLU(inplace=False),
            nn.Conv2d(channels, channels, kernel, stride, kernel - 1, dilation=2, groups=channels, bias=False),
            nn.Conv2d(channels, channels, 1, bias=False),
            nn.BatchNorm2d(channels),
        )

    def summand_layers(self) -> list[nn.Module]:
        """The pointwise conv."""
        return [self[2]]


class FactorizedConv(nn.Sequential):
    """NASNet's factorized ``k x k`` conv: ``ReLU -> Conv(1 x k) -> Conv(k x 1) -> BN``, the
    stride split between the two convs, no bias."""

    def __init__(self, channels: int, kernel: int, stride: int = 1) -> None:
        pad = kernel // 2
        super().__init__(
            nn.ReLU(inplace=False),
            nn.Conv2d(channels, channels, (1, kernel), (1, stride), (0, pad), bias=False),
            nn.Conv2d(channels, channels, (kernel, 1), (stride, 1), (pad, 0), bias=False),
            nn.BatchNorm2d(channels),
        )

    def summand_layers(self) -> list[nn.Module]:
        """The ``k x 1`` conv."""
        return [self[2]]


class FactorizedReduce(nn.Module):
    """Halves the resolution: two 1x1 stride-2 convs on the input and on it shifted by a pixel,
    ``c_out / 2`` channels each, concatenated, then BN (a ReLU first)."""

    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        if c_out % 2:
            raise FamilyError(f"factorized reduce needs an even channel count, got {c_out}")
        self.relu = nn.ReLU(inplace=False)
        self.conv_1 = nn.Conv2d(c_in, c_out // 2, 1, stride=2, bias=False)
        self.conv_2 = nn.Conv2d(c_in, c_out // 2, 1, stride=2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``BN(cat(conv_1(relu x), conv_2(relu x shifted by one pixel)))``."""
        x = self.relu(x)
        return self.bn(torch.cat([self.conv_1(x), self.conv_2(x[:, :, 1:, 1:])], dim=1))

    def summand_layers(self) -> list[nn.Module]:
        """Both convs (their outputs sit side by side in the sum)."""
        return [self.conv_1, self.conv_2]


@register_builder("sep_conv")
def build_sep_conv(op: CellOp, width: int, stride: int = 1) -> nn.Module:
    """Builder of kind ``sep_conv``."""
    return SepConv(width, _kernel(op), stride)


@register_builder("dil_conv")
def build_dil_conv(op: CellOp, width: int, stride: int = 1) -> nn.Module:
    """Builder of kind ``dil_conv``."""
    return DilConv(width, _kernel(op), stride)


@register_builder("conv_1xk_kx1")
def build_factorized_conv(op: CellOp, width: int, stride: int = 1) -> nn.Module:
    """Builder of kind ``conv_1xk_kx1``."""
    return FactorizedConv(width, _kernel(op), stride)


@register_builder("factorized_reduce")
def build_factorized_reduce(op: CellOp, width: int, c_in: int | None = None) -> nn.Module:
    """Builder of kind ``factorized_reduce`` (always stride 2)."""
    return FactorizedReduce(c_in or width, width)


@register_builder("max_pool")
def build_max_pool(op: CellOp, width: int, stride: int = 1) -> nn.Module:
    """Builder of kind ``max_pool``."""
    k = _kernel(op)
    return nn.MaxPool2d(k, stride=stride, padding=k // 2)


@register_builder("conv_bn_relu")
def build_conv_bn_relu(op: CellOp, width: int, c_in: int | None = None) -> nn.Module:
    """Builder of kind ``conv_bn_relu``: ``c_in`` (default ``width``) to ``width`` channels."""
    k = _kernel(op)
    return nn.Sequential(nn.Conv2d(c_in or width, width, k, padding=k // 2, bias=False), nn.BatchNorm2d(width),
                         nn.ReLU(inplace=False))
