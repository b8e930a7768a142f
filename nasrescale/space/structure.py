"""Cell structures: what kind of DAG a family's cells are, as registry entries.

A *cell structure* says, once for every family that uses it, how a cell is wired:

* how many **input nodes** a cell has (NB201: 1, the previous cell's output; DARTS: 2, the
  outputs of the two previous cells);
* how the **output** node combines its in-edges: ``sum`` (NB201, the MLP/CNN DAGs) or
  ``concat`` (DARTS: the intermediate nodes concatenated along channels; NAS-Bench-101: the
  vertices that feed the output concatenated, plus the projected input if it feeds the output);
  intermediate nodes always sum;
* whether the ops sit on **edges** or on **nodes** (NAS-Bench-101: node ``v`` sums its inputs,
  then applies its op);
* which **cell types** an architecture holds (DARTS: a normal and a reduction cell);
* the **ops the structure itself places** (``reserved_ops``: name -> op kind): edges an
  architecture string never names but the canonical graph carries, e.g. DARTS's concatenation
  edges into the output. A family file of the structure must define them with these kinds;
* which **encodings** (:mod:`nasrescale.space.encodings`) write its cells.

The canonical graph (docs/design.md §2) keeps one convention for all of them: nodes
``0..n-1`` in topological order, each edge ``u -> v`` with ``u < v`` carrying an ``op``. A
graph that holds several cells (DARTS's normal and reduction cell) lists them in the graph
attribute ``cells``: ``(type, first node, node count, input count)`` per cell, the cells'
nodes consecutive; each cell's first nodes are its inputs and its last node its output.
Without the attribute the graph is one cell with input 0 and output ``n-1``. Ops on nodes are
in the node attribute ``op``. :func:`cell_spans` reads this back.

>>> STRUCTURES.get("darts").inputs, STRUCTURES.get("darts").output
(2, 'concat')
>>> [s.name for s in STRUCTURES.values()]
['edge_dag', 'darts', 'nb101']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping, NamedTuple

import networkx as nx

from ..registry import Registry
from ..errors import FamilyError

__all__ = ["CellStructure", "CellSpan", "STRUCTURES", "DEFAULT_STRUCTURE", "cell_spans", "input_nodes",
           "output_nodes", "node_ops"]

DEFAULT_STRUCTURE = "edge_dag"


@dataclass(frozen=True)
class CellStructure:
    """How the cells of a family are wired (see the module docstring).

    Attributes:
        name: registry key (``[structure] kind`` of a family file).
        inputs: input nodes per cell.
        output: ``sum`` or ``concat``: how the output node combines its in-edges.
        ops_on: ``edges`` or ``nodes``.
        cell_types: the cells one architecture holds, in graph order.
        encodings: the encodings that write such cells; the first is the family default.
        reserved_ops: op name -> op kind the structure places itself (the family must define them).
        settings: the ``[structure]`` keys besides ``kind`` -> (meaning, default).
        description: one line for ``nasrescale cells``.
    """

    name: str
    inputs: int = 1
    output: str = "sum"
    ops_on: str = "edges"
    cell_types: tuple[str, ...] = ("cell",)
    encodings: tuple[str, ...] = ("edges", "nb201", "digits")
    reserved_ops: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    settings: Mapping[str, tuple[str, int]] = field(default_factory=lambda: MappingProxyType({}))
    description: str = ""

    @property
    def concatenates(self) -> bool:
        """Whether the output concatenates (channels of different nodes sit side by side)."""
        return self.output == "concat"


#: the registered cell structures, by ``[structure] kind``
STRUCTURES: Registry[CellStructure] = Registry(
    "structure.kind", "cell structures", error=FamilyError, unique=True,
    hint="a new structure registers a nasrescale.space.structure.CellStructure and an encoding for it")

for _structure in (
    CellStructure(DEFAULT_STRUCTURE, description="one input, ops on edges, every node sums (NB201, MLP/CNN DAGs)"),
    CellStructure("darts", inputs=2, output="concat", cell_types=("normal", "reduce"), encodings=("darts",),
                  reserved_ops=MappingProxyType({"concat": "identity", "factorized_reduce": "factorized_reduce"}),
                  settings=MappingProxyType({"steps": ("intermediate nodes per cell, each summing two ops", 4)}),
                  description="DARTS: two inputs, intermediate nodes sum two ops, output concatenates; "
                              "a normal and a reduction cell"),
    CellStructure("nb101", output="concat", ops_on="nodes", encodings=("nb101",),
                  reserved_ops=MappingProxyType({"projection": "conv_bn_relu", "link": "identity",
                                                 "concat": "identity"}),
                  settings=MappingProxyType({"max_nodes": ("vertices a cell may have, input and output included", 7),
                                             "max_edges": ("edges a cell may have", 9)}),
                  description="NAS-Bench-101: ops on nodes, inputs summed, output concatenates"),
):
    STRUCTURES.add(_structure.name, _structure)


class CellSpan(NamedTuple):
    """One cell of a canonical graph: its type, input nodes, output node and all its nodes."""

    type: str
    inputs: tuple[int, ...]
    output: int
    nodes: range


def cell_spans(graph: nx.DiGraph) -> list[CellSpan]:
    """The cells of a canonical graph (one, input 0 and output ``n-1``, without a ``cells`` attribute).

    >>> g = nx.DiGraph(cells=(("normal", 0, 4, 2), ("reduce", 4, 4, 2)))
    >>> g.add_nodes_from(range(8))
    >>> [(s.type, s.inputs, s.output) for s in cell_spans(g)]
    [('normal', (0, 1), 3), ('reduce', (4, 5), 7)]
    """
    cells = graph.graph.get("cells")
    if not cells:
        n = graph.number_of_nodes()
        return [CellSpan("cell", (0,), n - 1, range(n))]
    return [CellSpan(kind, tuple(range(first, first + k)), first + count - 1, range(first, first + count))
            for kind, first, count, k in cells]


def input_nodes(graph: nx.DiGraph) -> tuple[int, ...]:
    """Every cell's input nodes."""
    return tuple(u for span in cell_spans(graph) for u in span.inputs)


def output_nodes(graph: nx.DiGraph) -> tuple[int, ...]:
    """Every cell's output node."""
    return tuple(span.output for span in cell_spans(graph))


def node_ops(graph: nx.DiGraph) -> dict[int, str]:
    """Node -> op name, for cells with ops on nodes (empty for ops on edges)."""
    return {v: op for v, op in graph.nodes(data="op") if op is not None}
