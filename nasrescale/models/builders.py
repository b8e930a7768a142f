"""Builder registry: the ``nn.Module`` of one cell edge, keyed by op-kind name.

:mod:`nasrescale.space.ops` describes what an op kind means to the topology analysis; this module
says how to build it. A builder takes the family's :class:`~nasrescale.space.ops.CellOp` (kind plus
kernel) and the cell width (channels, or features for MLP cells) and returns a module that maps
a tensor to one of the same shape, since a cell node sums its in-edges' outputs.

Zero kinds are never built: a zero edge has no module and no parameters (NB201 counts none).

Contract a new builder must keep: a kind registered with ``parametric=False`` must map an
all-zero tensor to an all-zero tensor (identity and pooling do), because the pruned cell skips
such edges out of nodes that are known to be exactly zero. ReLUs are never in-place: a node's
tensor feeds several edges.

>>> from nasrescale.space.family_loader import get_family
>>> conv = build_op(get_family("nb201").op("nor_conv_3x3"), 8)
>>> [type(m).__name__ for m in conv], conv[1].padding, conv[1].bias
(['ReLU', 'Conv2d', 'BatchNorm2d'], (1, 1), None)
"""

from __future__ import annotations

from typing import Callable

from torch import nn

from ..registry import Registry
from ..errors import ArchError, FamilyError
from ..space.ops import CellOp

__all__ = ["Builder", "BUILDERS", "register_builder", "build_op", "builders"]

#: ``builder(op, width) -> module``
Builder = Callable[[CellOp, int], nn.Module]

#: the registered builders, by op-kind name
BUILDERS: Registry[Builder] = Registry(
    "op kind", "op kinds with a model builder", error=FamilyError, unique=True,
    hint="register one with @nasrescale.models.register_builder(kind_name) in the module that registers the kind")


def register_builder(kind_name: str) -> Callable[[Builder], Builder]:
    """Decorator registering ``builder(op, width)`` for op kind ``kind_name``.

    Args:
        kind_name: the op kind's registry name (as in :func:`nasrescale.space.ops.register_op_kind`).

    Returns:
        A decorator that registers the function and returns it unchanged.

    Raises:
        FamilyError: if another function is already registered for ``kind_name``.
    """
    return BUILDERS.decorator(kind_name)


def builders() -> dict[str, Builder]:
    """All registered builders, by op-kind name (a copy)."""
    return dict(BUILDERS.items())


def build_op(op: CellOp, width: int, *, stride: int = 1, c_in: int | None = None) -> nn.Module:
    """Build the module of one non-zero cell edge (or, for ops on nodes, one node's op).

    Args:
        op: the family's op (kind and kernel).
        width: channels (conv cells) or features (MLP cells) of every cell node: the output's.
        stride: 2 on the edges out of a DARTS reduction cell's inputs; only kinds whose builder
            takes ``stride`` accept another value than 1.
        c_in: input channels when they differ from ``width`` (NAS-Bench-101's projections);
            only kinds whose builder takes ``c_in`` accept it.

    Returns:
        A module mapping ``(batch, c_in or width, H, W)`` to ``(batch, width, H / stride, W / stride)``.

    Raises:
        ArchError: if ``op`` is a zero op (zero edges have no module).
        FamilyError: if no builder is registered for the op's kind, its kernel is even, or
            it takes no ``stride``/``c_in`` and one was given.
    """
    if op.kind.zero:
        raise ArchError(f"op {op.name!r} is a zero op; zero edges are not built (they have no module)")
    builder = BUILDERS.get(op.kind.name, f"op {op.name!r}: kind")
    if op.kernel is not None and op.kernel % 2 == 0:
        # padding k // 2 keeps the spatial size only for odd k; cell nodes must keep it
        raise FamilyError(f"op {op.name!r}: kernel {op.kernel} is even; cell ops need an odd kernel (same-size output)")
    extra = {**({"stride": stride} if stride != 1 else {}), **({"c_in": c_in} if c_in not in (None, width) else {})}
    if not extra:
        return builder(op, width)
    try:
        return builder(op, width, **extra)
    except TypeError:
        raise FamilyError(f"op {op.name!r}: op kind {op.kind.name!r} cannot be built with "
                          f"{', '.join(f'{k}={v}' for k, v in extra.items())}") from None


def _kernel(op: CellOp) -> int:
    if op.kernel is None:  # the family parser enforces kernels for these kinds
        raise FamilyError(f"op {op.name!r} of kind {op.kind.name!r} needs a kernel size")
    return op.kernel


@register_builder("identity")
def _identity(op: CellOp, width: int) -> nn.Module:
    return nn.Identity()


@register_builder("avg_pool")
def _avg_pool(op: CellOp, width: int, stride: int = 1) -> nn.Module:
    k = _kernel(op)
    # NB201 avg_pool_3x3 and DARTS's: the mean over the window's in-image pixels only
    return nn.AvgPool2d(k, stride=stride, padding=k // 2, count_include_pad=False)


@register_builder("relu_conv_bn")
def _relu_conv_bn(op: CellOp, width: int) -> nn.Module:
    k = _kernel(op)
    return nn.Sequential(
        nn.ReLU(inplace=False),
        nn.Conv2d(width, width, k, stride=1, padding=k // 2, bias=False),
        nn.BatchNorm2d(width),  # affine, running stats, eps 1e-5, momentum 0.1 (NB201)
    )


@register_builder("linear_relu")
def _linear_relu(op: CellOp, width: int) -> nn.Module:
    return nn.Sequential(nn.Linear(width, width, bias=True), nn.ReLU(inplace=False))


@register_builder("conv_relu")
def _conv_relu(op: CellOp, width: int) -> nn.Module:
    k = _kernel(op)
    return nn.Sequential(nn.Conv2d(width, width, k, stride=1, padding=k // 2, bias=True), nn.ReLU(inplace=False))
