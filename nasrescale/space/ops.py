"""Registry of op kinds and their topology properties.

An *op kind* is what an edge computes, described only by the properties the topology
analysis needs: whether it is the zero op, how many ReLUs it contributes to a path
(``relu_depth``), whether it takes a kernel size, and whether it has weights. A cell family
maps its op names (``nor_conv_3x3``) to a kind plus a kernel size (:class:`CellOp`).

Model building is separate: :mod:`nasrescale.models` keeps its own builder registry keyed by
the same kind names, so analysis never imports torch. A genuinely new op kind is one call to
:func:`register_op_kind` here and one builder registration there.

>>> get_op_kind("relu_conv_bn").relu_depth
1
>>> get_op_kind("zero").zero
True
"""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import Registry
from ..errors import FamilyError

__all__ = ["OpKind", "CellOp", "OP_KINDS", "register_op_kind", "get_op_kind", "op_kinds"]


@dataclass(frozen=True)
class OpKind:
    """Topology properties of one kind of edge operation.

    Attributes:
        name: registry key, used by family files (``kind = "relu_conv_bn"``).
        zero: the op outputs zeros; its edges are dropped from the effective graph.
        relu_depth: ReLU activations the op adds to a path's depth ``L_p``.
        parametric: the op has trainable weights (init and LR rules apply to it).
        needs_kernel: a family op of this kind must give ``kernel`` (conv or pool window).
        description: one line for ``nasrescale cells``.
    """

    name: str
    zero: bool = False
    relu_depth: int = 0
    parametric: bool = False
    needs_kernel: bool = False
    description: str = ""


@dataclass(frozen=True)
class CellOp:
    """One op of a cell family: a name bound to a kind and, for conv/pool kinds, a kernel.

    Attributes:
        name: the op's name in architecture strings (``nor_conv_3x3``).
        kind: its :class:`OpKind`.
        kernel: kernel size ``q`` (conv) or window (pool); ``None`` for kernel-less kinds.
    """

    name: str
    kind: OpKind
    kernel: int | None = None

    @property
    def zero(self) -> bool:
        """Whether the op is the zero op."""
        return self.kind.zero

    @property
    def relu_depth(self) -> int:
        """ReLUs the op contributes to a path."""
        return self.kind.relu_depth

    @property
    def parametric(self) -> bool:
        """Whether the op has weights."""
        return self.kind.parametric

    @property
    def conv_kernel(self) -> int | None:
        """The kernel size that the kernel-factor rule (paper eq. 9) sees, if any.

        Only parametric ops have one: a pooling window is not a learned kernel.
        """
        return self.kernel if self.kind.parametric else None


#: the registered op kinds, by name; a name keeps its first kind (families hold the kind itself)
OP_KINDS: Registry[OpKind] = Registry(
    "op kind", "op kinds", error=FamilyError, unique=True,
    hint="a new kind needs a module that calls nasrescale.space.ops.register_op_kind (list it under `imports` "
         "in the family file)")


def register_op_kind(kind: OpKind) -> OpKind:
    """Add an op kind to the registry and return it.

    Raises:
        FamilyError: if a different kind is already registered under the same name.
    """
    return OP_KINDS.add(kind.name, kind)


#: the op kind registered as a name; an unknown name is a FamilyError listing the registered ones
get_op_kind = OP_KINDS.get


def op_kinds() -> dict[str, OpKind]:
    """All registered op kinds, by name (a copy)."""
    return dict(OP_KINDS.items())


for _kind in (
    OpKind("zero", zero=True, description="outputs zeros; edge absent from the effective graph"),
    OpKind("identity", description="skip connection"),
    OpKind("avg_pool", needs_kernel=True,
           description="average pool, stride 1, same padding, padding excluded from the mean"),
    OpKind("relu_conv_bn", relu_depth=1, parametric=True, needs_kernel=True,
           description="ReLU -> Conv(kxk, no bias) -> BatchNorm (NB201 nor_conv)"),
    OpKind("linear_relu", relu_depth=1, parametric=True,
           description="Linear(width, width) -> ReLU (MLP-DAG edge)"),
    OpKind("conv_relu", relu_depth=1, parametric=True, needs_kernel=True,
           description="Conv(kxk, same padding) -> ReLU (CNN-DAG edge)"),
    OpKind("max_pool", needs_kernel=True, description="max pool, same padding (DARTS max_pool, NB101 maxpool3x3)"),
    OpKind("sep_conv", relu_depth=2, parametric=True, needs_kernel=True,
           description="DARTS sep_conv: (ReLU -> depthwise kxk -> pointwise 1x1 -> BN) twice"),
    OpKind("conv_1xk_kx1", relu_depth=1, parametric=True, needs_kernel=True,
           description="NASNet/AmoebaNet conv_7x1_1x7: ReLU -> Conv(1xk, stride 1xs) -> Conv(kx1, stride sx1) -> BN"),
    OpKind("dil_conv", relu_depth=1, parametric=True, needs_kernel=True,
           description="DARTS dil_conv: ReLU -> depthwise kxk, dilation 2 -> pointwise 1x1 -> BN"),
    OpKind("factorized_reduce", relu_depth=1, parametric=True,
           description="DARTS stride-2 identity: ReLU -> two offset 1x1 convs (stride 2, C/2 each) -> concat -> BN"),
    OpKind("conv_bn_relu", relu_depth=1, parametric=True, needs_kernel=True,
           description="Conv(kxk, no bias) -> BatchNorm -> ReLU (NB101 op and projection)"),
):
    register_op_kind(_kind)
