"""Per-edge factors the init and LR rules read off a cell: the kernel factor ``q_base / q``
(paper eq. 9) under each kernel rule, and the in-degree divisor ``d`` of the He init (paper
Appendix A eq. 17, or the released code's source-node variant). Pure functions on the canonical
graph, like :mod:`nasrescale.space.topology`, which they build on.

>>> from nasrescale.space.family_loader import get_family
>>> from nasrescale.space.encodings import parse_arch
>>> nb201 = get_family("nb201")
>>> g = parse_arch("3_33_333", nb201)
>>> kernel_factor(g, nb201, "network"), init_divisors(g, nb201)[(2, 3)]
(1.0, 3)
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from ..errors import ArchError
from ..registry import Registry
from .families import CellFamily
from .structure import input_nodes, node_ops
from .topology import Edge, effective_edges, effective_in_degrees, in_degrees_from_edges

__all__ = ["KernelRule", "KERNEL_RULES", "DEFAULT_STEM_KERNEL", "INIT_DIVISOR_RULES", "stem_kernel", "network_kernel",
           "kernel_factor",
           "edge_kernel_factors", "init_divisors"]

INIT_DIVISOR_RULES = ("target", "source")


@dataclass(frozen=True)
class KernelRule:
    """One kernel-factor rule (paper eq. 9), the value of ``family.kernel_rule`` and ``protocol.kernel_rule``.

    Attributes:
        name: the value.
        network_wide: every parameter gets the network's one factor ``q_base / q`` (q: the
            largest conv kernel, :func:`network_kernel`).
        per_edge: each cell-edge conv gets its own ``q_base / q_e`` (1 elsewhere).

    Neither: no kernel factor (1 everywhere).
    """

    name: str
    network_wide: bool = False
    per_edge: bool = False

    @property
    def scales(self) -> bool:
        """Whether the rule gives any parameter a kernel factor other than 1."""
        return self.network_wide or self.per_edge


#: the kernel rules, by name: ``none``, ``network`` (the paper's eq. 9), ``per_layer`` (this project's extension)
KERNEL_RULES: Registry[KernelRule] = Registry("kernel_rule", "kernel rules", error=ArchError, unique=True)
for _rule in (KernelRule("none"), KernelRule("network", network_wide=True), KernelRule("per_layer", per_edge=True)):
    KERNEL_RULES.add(_rule.name, _rule)

#: CNN stem kernel when the family has no conv op (an all-skip/zero space)
DEFAULT_STEM_KERNEL = 3


def stem_kernel(family: CellFamily) -> int:
    """The kernel of the conv stem a CNN macro (``[macro] kind = "cnn"``) puts before the cell:
    the largest conv kernel among the family's ops (default 3), so the stem matches the cell."""
    return max((k for op in family.ops if (k := op.conv_kernel) is not None), default=DEFAULT_STEM_KERNEL)


def network_kernel(graph: nx.DiGraph, family: CellFamily) -> int | None:
    """The one kernel size ``q`` of the ``network`` rule: the largest conv kernel in the network
    (the paper's CNNs use one size throughout, eq. 9): the convs on effective edges and, for a
    CNN macro, the conv stem (:func:`stem_kernel`), so a cell with no conv edge still has its
    stem's ``q``. ``None`` if the network has no conv.

    >>> import dataclasses
    >>> from nasrescale.space.family_loader import get_family
    >>> from nasrescale.space.encodings import parse_arch
    >>> cnn = get_family("cnn_dag")
    >>> cnn7 = dataclasses.replace(cnn, ops=tuple(dataclasses.replace(op, kernel=7) if op.kernel else op for op in cnn.ops))
    >>> network_kernel(parse_arch("1_01_001_0001", cnn7), cnn7), network_kernel(parse_arch("1_01_001_0001", cnn), cnn)
    (7, 3)
    """
    live = effective_edges(graph, family)
    nodes = node_ops(graph)
    ops = [op for _, _, op in live] + [nodes[v] for v in {v for _, v, _ in live} if v in nodes]
    kernels = [k for op in ops if (k := family.op(op).conv_kernel) is not None]
    if family.macro.get("kind") == "cnn":
        kernels.append(stem_kernel(family))
    return max(kernels, default=None)


def _rule(rule: str | None, family: CellFamily) -> KernelRule:
    return KERNEL_RULES.get(rule or family.kernel_rule)


def kernel_factor(graph: nx.DiGraph, family: CellFamily, rule: str | None = None) -> float:
    """Network-wide kernel factor ``q_base / q`` (paper eq. 9): under rule ``network`` the
    :func:`network_kernel`'s factor; 1 under ``none`` and ``per_layer`` (whose factors are
    per edge, :func:`edge_kernel_factors`). ``rule`` defaults to the family's."""
    q = network_kernel(graph, family)
    return family.kernel_base / q if _rule(rule, family).network_wide and q else 1.0


def edge_kernel_factors(graph: nx.DiGraph, family: CellFamily, rule: str | None = None) -> dict[Edge, float]:
    """Kernel factor (paper eq. 9) of the convs on each parametric edge of the cell.

    ``none``: 1; ``network``: :func:`kernel_factor`; ``per_layer``: ``q_base / q_e`` from the
    edge's own kernel (1 for kernel-less ops such as linear layers). Every parametric edge of
    the raw cell gets one, on a path or not (an edge off every path is built and trained
    too). The per-parameter scaling map of a network
    (:mod:`nasrescale.models.scaling_map`) reads these for its cell-edge convs.

    >>> from nasrescale.space.family_loader import get_family
    >>> from nasrescale.space.encodings import parse_arch
    >>> nb201 = get_family("nb201")
    >>> edge_kernel_factors(parse_arch("2_03_000", nb201), nb201, "per_layer")
    {(0, 1): 3.0, (1, 2): 1.0}
    """
    entry = _rule(rule, family)
    shared = kernel_factor(graph, family, entry.name)
    factors: dict[Edge, float] = {}
    for u, v, d in sorted(graph.edges(data=True), key=lambda e: e[:2]):
        cell_op = family.op(d["op"])
        if not cell_op.parametric:
            continue
        factor = family.kernel_base / cell_op.conv_kernel if entry.per_edge and cell_op.conv_kernel else shared
        if factors.setdefault((u, v), factor) != factor:
            raise ArchError(f"kernel rule {entry.name}: edge {u}->{v} carries two ops of different kernels, which "
                            "one per-edge factor cannot tell apart; use kernel rule none or network")
    return factors


def init_divisors(graph: nx.DiGraph, family: CellFamily, rule: str = "target") -> dict[Edge, int]:
    """Divisor ``d`` of the He fan-in variance ``2 / (fan_in * d)`` for each parametric edge.

    ``target`` (docs/design.md §2, paper Appendix A eq. 17): the effective in-degree of the edge's
    target node. ``source``: what the paper's released code does -- the in-degree of the edge's
    *source* node counting every non-zero edge of the raw cell (node 0 counts as 1). Both are
    at least 1, so edges that are not on any path (built but never run) get a finite scale.

    >>> from nasrescale.space.family_loader import get_family
    >>> from nasrescale.space.encodings import parse_arch
    >>> nb201 = get_family("nb201")
    >>> init_divisors(parse_arch("3_33_333", nb201), nb201)[(1, 3)]
    3
    >>> init_divisors(parse_arch("3_33_333", nb201), nb201, "source")[(1, 3)]
    1
    """
    if rule not in INIT_DIVISOR_RULES:
        raise ArchError(f"unknown init divisor rule {rule!r}; allowed: {', '.join(INIT_DIVISOR_RULES)}")
    parametric = [(u, v) for u, v, d in graph.edges(data=True) if family.op(d["op"]).parametric]
    if rule == "target":
        degree = effective_in_degrees(graph, family)
        return {(u, v): max(1, degree[v]) for u, v in parametric}
    nonzero = [(u, v, d["op"]) for u, v, d in graph.edges(data=True) if not family.op(d["op"]).zero]
    raw = in_degrees_from_edges(nonzero, graph.number_of_nodes())
    for u in input_nodes(graph):
        raw[u] = 1
    return {(u, v): max(1, raw[u]) for u, v in parametric}
