"""Isomorphism classes of cells: one canonical form per function a cell computes.

Different strings can describe the same network. In NB201 ``|none~0|+|skip_connect~0|none~1|+``
``|nor_conv_1x1~0|skip_connect~1|skip_connect~2|`` and ``|skip_connect~0|+|skip_connect~0|none~1|+``
``|none~0|nor_conv_1x1~1|skip_connect~2|`` both compute ``nor_conv_1x1(x) + x``; trained alike,
they give the same accuracies, and a statistic that counts both counts one cell twice.

The canonical form of a cell is the expression its output node computes, built node by node
in topological order by these rules (the function the network of
:mod:`nasrescale.models.cell` computes):

* node 0 is ``x``; every other node is the sum of its in-edges' terms, a multiset: the order
  and the grouping of the terms do not matter, their multiplicity does (``x+x`` is not ``x``);
* a zero edge adds nothing;
* an identity edge adds its source's terms one by one (a sum passed on is the same sum);
* any other edge adds one term ``op(s)``, ``s`` its source's canonical sum; out of a node that
  is identically zero (no terms, written ``0``) a non-parametric op adds nothing (pooling maps
  0 to 0), a parametric one adds ``op(0)`` (a learned constant: BatchNorm's shift).

The form is the output's terms, sorted, joined by ``+``; ``0`` for a cell whose output is
identically zero. Every occurrence of ``x`` is one input-output path of the effective graph
(docs/design.md §2), wrapped once per ReLU op on it, so cells of one class have the same path
depths and LR scale. Their in-degree init divisors may still differ (the divisor is a
property of a node, not of the sum it carries): under the released code's ``source`` rule the
15,625 NB201 cells make 5,665 (form, divisors) pairs against 5,545 forms.

NB201 (``tests/space/test_isomorphism.py``): 15,625 strings, 5,545 canonical forms. The
benchmark's own count, 6,466 (NAS-Bench-201 §2.1; its ``to_unique_str`` with zeros
considered), comes from a string rule that keeps one ``#`` term per zero input (so ``x`` and
``x + 0`` differ), and treats an op on node 1 as zero when node 1 is, but not an op on a
later node whose inputs are all zero; the test recomputes both counts.

>>> from nasrescale.space.family_loader import get_family
>>> nb201 = get_family("nb201")
>>> canonical_form("|none~0|+|skip_connect~0|none~1|+|nor_conv_1x1~0|skip_connect~1|skip_connect~2|", nb201)
'nor_conv_1x1(x)+x'
>>> canonical_form("1_10_021", nb201) == canonical_form("0_10_211", nb201)
True
>>> canonical_form("1_11_111", nb201), canonical_form("0_00_000", nb201)
('x+x+x+x', '0')
>>> keep, dropped = first_of_each_class(["1_10_021", "0_10_211", "3_33_333"], nb201)
>>> keep, dropped
(['1_10_021', '3_33_333'], {'0_10_211': '1_10_021'})
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

import networkx as nx

from ..errors import ArchError
from .analysis import enumerate_space
from .encodings import as_graph, format_arch
from .families import CellFamily

__all__ = ["IDENTITY_KIND", "ZERO_FORM", "canonical_form", "form_of_graph", "isomorphism_classes",
           "class_representatives", "first_of_each_class"]

#: the op kind whose edges pass their source's sum on unchanged
IDENTITY_KIND = "identity"
#: the canonical form of a cell whose output is identically zero
ZERO_FORM = "0"


def _join(terms: list[str]) -> str:
    return "+".join(sorted(terms)) or ZERO_FORM


def form_of_graph(graph: nx.DiGraph, family: CellFamily) -> str:
    """The canonical form of a canonical graph (see the module docstring), not re-checked."""
    n = graph.number_of_nodes()
    terms: dict[int, list[str]] = {0: ["x"]}
    for v in range(1, n):
        node: list[str] = []
        for u, _, name in sorted(graph.in_edges(v, data="op")):
            op = family.op(name)
            if op.zero:
                continue
            if op.kind.name == IDENTITY_KIND:
                node.extend(terms[u])
            elif terms[u] or op.parametric:
                node.append(f"{op.name}({_join(terms[u])})")
        terms[v] = node
    return _join(terms[n - 1])


def canonical_form(arch: str | nx.DiGraph, family: CellFamily) -> str:
    """The canonical form of one architecture (a string in any encoding, or a graph).

    Raises:
        ArchError: the architecture is not one of ``family``'s.
    """
    return form_of_graph(as_graph(arch, family), family)


@lru_cache(maxsize=8)
def isomorphism_classes(family: CellFamily) -> dict[str, tuple[str, ...]]:
    """Every class of an enumerable family: canonical form -> its cells (canonical strings),
    both in digit-string order (NB201: 5,545 classes, about a second, computed once).

    Raises:
        ArchError: the family is not enumerable.
    """
    classes: dict[str, list[str]] = {}
    for graph in enumerate_space(family):
        classes.setdefault(form_of_graph(graph, family), []).append(format_arch(graph, family))
    return {form: tuple(cells) for form, cells in classes.items()}


def class_representatives(family: CellFamily) -> dict[str, str]:
    """Each cell of an enumerable family -> its class's first cell in digit-string order."""
    return {cell: cells[0] for cells in isomorphism_classes(family).values() for cell in cells}


def first_of_each_class(archs: Iterable[str], family: CellFamily) -> tuple[list[str], dict[str, str]]:
    """``archs`` with every cell after the first of its class left out, in the given order.

    Returns:
        The cells kept, and ``{cell left out: the kept cell of its class}``.

    Raises:
        ArchError: a cell is not one of ``family``'s.
    """
    first: dict[str, str] = {}
    keep: list[str] = []
    dropped: dict[str, str] = {}
    for arch in archs:
        try:
            form = canonical_form(arch, family)
        except ArchError as err:
            raise ArchError(f"{arch!r}: {err}") from None
        if form in first:
            dropped[arch] = first[form]
        else:
            first[form] = arch
            keep.append(arch)
    return keep, dropped
