"""A new op kind: a dilated convolution, ReLU -> Conv(k x k, dilation 2, no bias) -> BatchNorm.

An op kind is known in two registries: the topology analysis's (what the op is: its ReLU
depth, whether it has weights and a kernel) and the model builder's (its module). This module
fills both when it is imported; the family file ``nb201_dilated.toml`` beside it names it
under ``imports``, and every process that reads or unpickles the family imports it from there.
"""

from __future__ import annotations

from torch import nn

from nasrescale.models import register_builder
from nasrescale.space.ops import CellOp, OpKind, register_op_kind

__all__ = ["build_dilated_conv"]

register_op_kind(OpKind("relu_dilconv_bn", relu_depth=1, parametric=True, needs_kernel=True,
                        description="ReLU -> Conv(kxk, dilation 2, no bias) -> BatchNorm"))


@register_builder("relu_dilconv_bn")
def build_dilated_conv(op: CellOp, width: int) -> nn.Module:
    """The op's module; the padding ``k - 1`` keeps the node's size (a cell node sums its in-edges)."""
    k = op.kernel
    return nn.Sequential(nn.ReLU(inplace=False),
                         nn.Conv2d(width, width, k, padding=k - 1, dilation=2, bias=False),
                         nn.BatchNorm2d(width))
