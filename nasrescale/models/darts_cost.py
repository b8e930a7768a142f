"""Parameters and FLOPs of a DARTS-style network from its layers' shapes, without building it.

:func:`~nasrescale.models.cost.model_cost` builds a network and runs one image through it; for
the DARTS skeleton (``[macro] kind = "darts"``) every layer's shape follows from the genotype and
the sizes alone, so this module adds them up directly, in the same convention (NB201's: a conv
counts ``k_h k_w C_in C_out / groups`` multiply-accumulates per output position, a linear layer
``in * out + out``, BatchNorm 2 parameters per channel and no FLOPs; pools, skips and sums
nothing). Every op of a genotype runs, so the effective figures equal the built ones. Layouts as
:mod:`nasrescale.models.darts` and :mod:`nasrescale.models.cellspace_ops` build them; a test
compares both for published genotypes at several sizes.

>>> from nasrescale.space.family_loader import get_family
>>> from nasrescale.space.encodings import parse_arch
>>> darts = get_family("darts")
>>> cost = darts_cost(parse_arch("DARTS_V2", darts), darts, 10, width=36, cells=20, in_shape=(3, 32, 32))
>>> cost["params"], round(cost["flops_m"], 2)
(3349342, 528.36)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import networkx as nx

from ..errors import ConfigError
from ..space.families import CellFamily
from ..space.structure import cell_spans
from .darts import require_normal_cell

__all__ = ["Cost", "darts_cost", "op_cost"]

#: op kinds whose layers this module knows (any other falls back to building the network)
KNOWN_KINDS = ("zero", "identity", "max_pool", "avg_pool", "sep_conv", "dil_conv", "conv_1xk_kx1", "factorized_reduce")


class Cost(NamedTuple):
    """Parameters and multiply-accumulates of one part, and its output's side length."""

    params: int
    macs: int
    side: int


def _out(side: int, kernel: int, stride: int, pad: int, dilation: int = 1) -> int:
    return (side + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1


def _factorized_reduce(c_in: int, c_out: int, side: int) -> Cost:
    """ReLU, two 1x1 stride-2 convs to ``c_out / 2`` (the second on the input shifted by one pixel), BN."""
    first, second = _out(side, 1, 2, 0), _out(side - 1, 1, 2, 0)
    half = c_out // 2
    return Cost(2 * c_in * half + 2 * c_out, c_in * half * (first * first + second * second), first)


def op_cost(kind: str, kernel: int | None, c: int, side: int, stride: int) -> Cost:
    """One op at ``c`` channels on a ``side x side`` input (``stride`` 1 or 2)."""
    k = kernel or 1
    if kind == "sep_conv":
        mid = _out(side, k, stride, k // 2)
        per = c * k * k + c * c
        return Cost(2 * per + 4 * c, per * mid * mid * 2, mid)
    if kind == "dil_conv":
        mid = _out(side, k, stride, k - 1, 2)
        return Cost(c * k * k + c * c + 2 * c, (c * k * k + c * c) * mid * mid, mid)
    if kind == "conv_1xk_kx1":
        cols = _out(side, k, stride, k // 2)  # the 1xk conv strides the columns, the kx1 the rows
        return Cost(2 * k * c * c + 2 * c, k * c * c * side * cols + k * c * c * cols * cols, cols)
    if kind == "factorized_reduce":
        return _factorized_reduce(c, c, side)
    if kind in ("zero", "identity", "max_pool", "avg_pool"):
        return Cost(0, 0, _out(side, k, stride, k // 2) if kind.endswith("pool") else (side + stride - 1) // stride)
    raise ConfigError(f"op kind {kind!r}: no shape rule; the network is built to count it")


def _cell_cost(graph: nx.DiGraph, family: CellFamily, span: Any, ins: tuple[int, int, int, int], c: int,
               reduction: bool, reduction_prev: bool) -> Cost:
    """One cell: its two preprocessings and its ops. ``ins``: channels and sides of the two
    previous cells' outputs ``(c_pp, side_pp, c_p, side_p)``; the cell's nodes have side
    ``side_p``, halved (rounded up) in a reduction cell."""
    c_pp, side_pp, c_p, side = ins
    pre0 = (_factorized_reduce(c_pp, c, side_pp) if reduction_prev
            else Cost(c_pp * c + 2 * c, c_pp * c * side * side, side))
    params = pre0.params + c_p * c + 2 * c
    macs = pre0.macs + c_p * c * side * side
    inner = (side - 1) // 2 + 1 if reduction else side
    base = span.nodes.start
    for u, v, name in graph.edges(data="op"):
        if not base + 2 <= v < span.output:
            continue
        op = family.op(name)
        from_input = u - base < 2
        strided = reduction and from_input and op.kind.name != "factorized_reduce"
        source_side = pre0.side if from_input and u == base else side if from_input else inner
        cost = op_cost(op.kind.name, op.kernel, c, source_side, 2 if strided else 1)
        params, macs = params + cost.params, macs + cost.macs
    return Cost(params, macs, inner)


def darts_cost(graph: nx.DiGraph, family: CellFamily, num_classes: int, *, width: int, cells: int,
               in_shape: tuple[int, int, int], stem_multiplier: int = 3) -> dict[str, Any]:
    """:func:`~nasrescale.models.cost.model_cost`'s figures for a DARTS network, from shapes.

    Raises:
        ConfigError: ``cells`` below 3 (no normal cell), an op kind without a shape rule
            (:data:`KNOWN_KINDS`), or a non-square input.
    """
    require_normal_cell(cells)
    channels, height, side = in_shape
    if height != side:
        raise ConfigError(f"in_shape {in_shape}: shape counting needs square images")
    stem = stem_multiplier * width
    params, macs = 9 * channels * stem + 2 * stem, 9 * channels * stem * side * side
    spans = {span.type: span for span in cell_spans(graph)}
    ins = (stem, side, stem, side)  # (c_pp, side_pp, c_p, side_p)
    c, reduction_prev = width, False
    for i in range(cells):
        reduction = i in (cells // 3, 2 * cells // 3)
        c *= 2 if reduction else 1
        span = spans["reduce" if reduction else "normal"]
        cost = _cell_cost(graph, family, span, ins, c, reduction, reduction_prev)
        params, macs = params + cost.params, macs + cost.macs
        concat = sum(1 for _ in graph.predecessors(span.output))
        ins, reduction_prev = (ins[2], ins[3], concat * c, cost.side), reduction
    c_p = ins[2]
    params += c_p * num_classes + num_classes
    macs += c_p * num_classes + num_classes
    return {"params": params, "params_effective": params, "flops_m": macs / 1e6, "flops_m_effective": macs / 1e6}
