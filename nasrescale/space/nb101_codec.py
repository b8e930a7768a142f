"""NAS-Bench-101 cells (Ying et al., ICML 2019) to and from the canonical graph: encoding ``nb101``.

A cell is ``{"matrix": [[...]], "ops": [...]}``: an upper-triangular 0/1 adjacency matrix over
``n`` vertices and one op per vertex, ``"input"`` first, ``"output"`` last, the family's node
ops between. As the benchmark does, vertices on no input->output path are pruned first (with
their rows, columns and ops); a cell whose input does not reach its output is refused. The
benchmark's limits apply after pruning (``[structure] max_nodes = 7``, ``max_edges = 9``).

The canonical graph has the pruned vertices as nodes ``0..m-1`` with each interior vertex's
op in the node attribute ``op``; each edge carries the reserved op of its role: ``projection``
out of the input (the benchmark's 1x1 conv-BN-ReLU to the target's width), ``link`` between
interior vertices (a sum input, truncated to the target's width) and ``concat`` from an
interior vertex into the output (concatenated). Written out, the JSON is the pruned cell.

>>> from nasrescale.space.family_loader import get_family
>>> nb101 = get_family("nb101")
>>> g = parse_arch('{"matrix": [[0, 1, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0]], '
...                '"ops": ["input", "conv3x3-bn-relu", "maxpool3x3", "output"]}', nb101)
>>> sorted(g.edges(data="op")), g.nodes[1]["op"]   # vertex 2 reaches no output: pruned
([(0, 1, 'projection'), (1, 2, 'concat')], 'conv3x3-bn-relu')
>>> format_arch(g, nb101)
'{"matrix":[[0,1,0],[0,0,1],[0,0,0]],"ops":["input","conv3x3-bn-relu","output"]}'
"""

from __future__ import annotations

import json
from typing import Any

import networkx as nx

from ..errors import ArchError, notice
from .codecs import Encoding, register_encoding
from .encodings import format_arch, parse_arch
from .families import CellFamily

__all__ = ["parse_cell", "format_cell", "prune", "INPUT", "OUTPUT"]

INPUT, OUTPUT = "input", "output"


def _read(text: str) -> tuple[list[list[int]], list[str]]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise ArchError(f"NB101 cell is not valid JSON ({err.msg} at character {err.pos}); expected "
                        '{"matrix": [[0, 1], [0, 0]], "ops": ["input", "output"]}') from None
    if not isinstance(doc, dict) or set(doc) != {"matrix", "ops"}:
        raise ArchError('NB101 cell: expected a JSON object with exactly the keys "matrix" and "ops"')
    matrix, ops = doc["matrix"], doc["ops"]
    if not (isinstance(matrix, list) and matrix and all(isinstance(r, list) and len(r) == len(matrix) for r in matrix)):
        raise ArchError("NB101 cell: matrix must be a square list of rows")
    if any(v not in (0, 1) or isinstance(v, float) for r in matrix for v in r):
        raise ArchError("NB101 cell: matrix entries must be 0 or 1")
    if not (isinstance(ops, list) and len(ops) == len(matrix) and all(isinstance(o, str) for o in ops)):
        raise ArchError(f"NB101 cell: ops must list one op name per vertex ({len(matrix)})")
    return [[int(v) for v in r] for r in matrix], ops


def _check(matrix: list[list[int]], ops: list[str], family: CellFamily) -> None:
    n = len(matrix)
    below = [(u, v) for u in range(n) for v in range(u + 1) if matrix[u][v]]
    if below:
        u, v = below[0]
        raise ArchError(f"NB101 cell: matrix[{u}][{v}] = 1, but the matrix must be strictly upper triangular "
                        "(an edge goes from a lower to a higher vertex)")
    if n < 2 or ops[0] != INPUT or ops[-1] != OUTPUT:
        raise ArchError(f'NB101 cell: ops must start with "{INPUT}" and end with "{OUTPUT}"')
    allowed = [op for op in family.op_names if op not in family.structure.reserved_ops]
    for i, op in enumerate(ops[1:-1], 1):
        if op not in allowed:
            raise ArchError(f"NB101 cell: vertex {i} has unknown op {op!r}; allowed: {', '.join(allowed)}")


def prune(matrix: list[list[int]], ops: list[str]) -> tuple[list[list[int]], list[str]]:
    """The benchmark's pruning: drop every vertex on no input->output path.

    >>> prune([[0, 1, 0], [0, 0, 0], [0, 0, 0]], ["input", "maxpool3x3", "output"])
    Traceback (most recent call last):
    ...
    nasrescale.errors.ArchError: NB101 cell: no path leads from the input to the output; a cell needs one

    Raises:
        ArchError: the input does not reach the output.
    """
    n = len(matrix)
    forward, backward = {0}, {n - 1}
    for v in range(1, n):
        if any(matrix[u][v] for u in forward):
            forward.add(v)
    for u in range(n - 2, -1, -1):
        if any(matrix[u][v] for v in backward):
            backward.add(u)
    if n - 1 not in forward:
        raise ArchError("NB101 cell: no path leads from the input to the output; a cell needs one")
    keep = sorted(forward & backward)
    return [[matrix[u][v] for v in keep] for u in keep], [ops[v] for v in keep]


_ANNOUNCED: set[str] = set()


def _announce_pruning(text: str, before: list[list[int]], after: list[list[int]], removed: int) -> None:
    """One notice per cell and process: the benchmark's pruning removed vertices."""
    if text not in _ANNOUNCED:
        _ANNOUNCED.add(text)
        notice(f"NB101 cell: {removed} vertex{'es' if removed > 1 else ''} on no input->output path pruned, as the "
               f"benchmark does ({len(before)} -> {len(after)} vertices, {sum(map(sum, before))} -> "
               f"{sum(map(sum, after))} edges); the cell is the pruned one")


def parse_cell(text: str, family: CellFamily) -> nx.DiGraph:
    """The canonical graph of an NB101 cell (see the module docstring).

    Raises:
        ArchError: one line naming the malformed part or the broken limit.
    """
    matrix, ops = _read(text)
    _check(matrix, ops, family)
    pruned_matrix, pruned_ops = prune(matrix, ops)
    if len(pruned_ops) < len(ops):
        _announce_pruning(text, matrix, pruned_matrix, len(ops) - len(pruned_ops))
    matrix, ops = pruned_matrix, pruned_ops
    limits = family.structure_settings
    edges = sum(map(sum, matrix))
    if len(ops) > limits["max_nodes"] or edges > limits["max_edges"]:
        raise ArchError(f"NB101 cell: {len(ops)} vertices and {edges} edges after pruning; the space allows at most "
                        f"{limits['max_nodes']} vertices and {limits['max_edges']} edges")
    n = len(ops)
    graph = nx.DiGraph(family=family.name)
    graph.add_nodes_from(range(n))
    for v in range(1, n - 1):
        graph.nodes[v]["op"] = ops[v]
    for u in range(n):
        for v in range(u + 1, n):
            if matrix[u][v]:
                role = "projection" if u == 0 else "concat" if v == n - 1 else "link"
                graph.add_edge(u, v, op=role)
    return graph


def format_cell(graph: nx.DiGraph, family: CellFamily) -> str:
    """The JSON of a canonical NB101 graph (compact, keys ``matrix`` then ``ops``)."""
    n = graph.number_of_nodes()
    matrix = [[int(graph.has_edge(u, v)) for v in range(n)] for u in range(n)]
    ops: list[Any] = [INPUT] + [graph.nodes[v].get("op") for v in range(1, n - 1)] + [OUTPUT]
    return json.dumps({"matrix": matrix, "ops": ops}, separators=(",", ":"))


register_encoding(Encoding("nb101", parse_cell, format_cell,
                           'NAS-Bench-101 JSON: {"matrix": [[0, 1], [0, 0]], "ops": ["input", "output"]}, pruned'))
