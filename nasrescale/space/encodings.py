"""Architecture encodings to and from the one canonical form.

The canonical form of a cell is a :class:`networkx.DiGraph` on nodes ``0..n-1`` (node 0 the
cell input, ``n-1`` its output) whose edges ``u -> v`` (``u < v``) carry the op name in the
edge attribute ``op``. In a family with a zero op every pair ``u < v`` has an edge (absent
edges are the zero op), so all three encodings describe the same graphs:

* ``nb201``: ``|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|...|`` -- one ``|``-delimited
  group per target node 1..n-1, listing ``op~source``;
* ``digits``: ``3_34_131`` -- the paper code's form: one group per target node with one digit
  per source node ``0..v-1``, the digit being the op's index in the family's op order;
* ``edges``: JSON, ``{"nodes": 4, "edges": [[0, 1, "nor_conv_3x3"], ...]}`` or a bare edge list;
  the form for families of any node count. Output lists only non-zero edges.

>>> from nasrescale.space.family_loader import get_family
>>> nb201 = get_family("nb201")
>>> g = parse_arch("3_34_131", nb201)
>>> format_arch(g, nb201)
'|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|'
>>> format_arch(g, nb201, "digits")
'3_34_131'
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

import networkx as nx

from ..errors import ArchError, FamilyError
from .codecs import ENCODERS, Encoding, register_encoding
from .families import ENCODINGS, CellFamily
from .structure import DEFAULT_STRUCTURE
from .text_forms import _parse_digits, _parse_edges, _parse_nb201, _short

__all__ = ["parse_arch", "format_arch", "make_graph", "as_graph", "detect_encoding", "Encoding", "ENCODERS",
           "register_encoding"]


def detect_encoding(text: str) -> str:
    """Guess the encoding of an architecture string from its first character.

    >>> detect_encoding("|skip_connect~0|+|none~0|none~1|")
    'nb201'
    >>> detect_encoding("2_02_002")
    'digits'
    """
    head = text.lstrip()[:1]
    if head == "|":
        return "nb201"
    if head in "[{" and head:
        return "edges"
    if head.isdigit():
        return "digits"
    raise ArchError(
        f"cannot tell the encoding of {_short(text)!r}: expected an NB201 string "
        "('|op~0|+|op~0|op~1|'), a digit string ('3_34_131') or a JSON edge list "
        "('[[0, 1, \"op\"], ...]')"
    )


#: turns a family name into its :class:`CellFamily`; set by :mod:`nasrescale.space.family_loader` when
#: it loads (the registry imports this module, so this module cannot import it)
FAMILY_RESOLVER: list[Callable[[Any], CellFamily]] = []


def _family_by_name(family: Any) -> CellFamily:
    if not FAMILY_RESOLVER:  # only this module was imported, not the package's registry
        raise FamilyError(f"family {family!r}: pass a CellFamily (nasrescale.space.family_loader.get_family({family!r}))")
    return FAMILY_RESOLVER[0](family)


def _refuse_non_ascii_digits(text: str) -> None:
    """Architecture strings take ASCII digits only: ``int()`` would read ``３`` or ``٣`` as 3.

    >>> _refuse_non_ascii_digits("3_33_333")
    >>> _refuse_non_ascii_digits("\uff13_33_333")
    Traceback (most recent call last):
    nasrescale.errors.ArchError: character '３' (U+FF13) at position 0 is a non-ASCII digit; write architectures with the ASCII digits 0-9
    """
    bad = next(((i, c) for i, c in enumerate(text) if not c.isascii() and (c.isdigit() or c.isnumeric())), None)
    if bad is not None:
        i, c = bad
        raise ArchError(f"character {c!r} (U+{ord(c):04X}) at position {i} is a non-ASCII digit; "
                        "write architectures with the ASCII digits 0-9")


def parse_arch(text: str, family: CellFamily | str, encoding: str | None = None, *,
               complete: bool = False) -> nx.DiGraph:
    """Parse an architecture string of ``family`` into the canonical graph.

    Args:
        text: the string (surrounding whitespace is ignored).
        family: the cell family it belongs to, or its name (``"nb201"``).
        encoding: ``nb201``, ``digits`` or ``edges``; detected from the text when ``None``.
        complete: NB201 strings only: accept a node group that omits sources and give them the
            family's zero op. Off by default: a short group is an error, so a typo cannot
            change the architecture (every node's group must list ``op~0 .. op~(v-1)``).

    Raises:
        ArchError: naming the offending token and the family's allowed values.
        FamilyError: ``family`` is the name of no family on the search path.
    """
    if not isinstance(family, CellFamily):
        family = _family_by_name(family)
    if not isinstance(text, str):
        raise ArchError(f"architecture must be a string, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise ArchError(f"empty architecture string; a {family.name} example: {family.base}")
    _refuse_non_ascii_digits(stripped)
    if family.structure.name != DEFAULT_STRUCTURE:
        return _structured(family, encoding).parse(stripped, family)
    encoding = encoding or detect_encoding(stripped)
    if encoding == "nb201":
        n, edges = _parse_nb201(stripped, family, complete)
    elif encoding == "digits":
        n, edges = _parse_digits(stripped, family)
    elif encoding == "edges":
        n, edges = _parse_edges(stripped, family)
    else:
        raise ArchError(f"unknown encoding {encoding!r}; allowed: {', '.join(ENCODINGS)}")
    return _connected(make_graph(edges, family, n), family)


def format_arch(graph: nx.DiGraph, family: CellFamily, encoding: str | None = None) -> str:
    """Write a canonical graph in ``encoding`` (default: the family's)."""
    if family.structure.name != DEFAULT_STRUCTURE:
        return _structured(family, encoding).format(graph, family)
    encoding = encoding or family.encoding
    n = graph.number_of_nodes()
    if encoding == "nb201":
        groups = (
            "|" + "|".join(f"{graph.edges[u, v]['op']}~{u}" for u in sorted(graph.predecessors(v))) + "|"
            for v in range(1, n)
        )
        return "+".join(groups)
    if encoding == "digits":
        if len(family.ops) > 10:
            raise ArchError(f"family {family.name!r} has {len(family.ops)} ops; digit strings allow at most 10")
        groups = []
        for v in range(1, n):
            digits = []
            for u in range(v):
                if not graph.has_edge(u, v):
                    raise ArchError(
                        f"edge {u}->{v} is absent and family {family.name!r} has no zero op; "
                        "write this cell as an edge list"
                    )
                digits.append(str(family.op_index(graph.edges[u, v]["op"])))
            groups.append("".join(digits))
        return "_".join(groups)
    if encoding == "edges":
        edges = [[u, v, d["op"]] for u, v, d in sorted(graph.edges(data=True)) if not family.op(d["op"]).zero]
        return json.dumps({"nodes": n, "edges": edges}, separators=(",", ":"))
    raise ArchError(f"unknown encoding {encoding!r}; allowed: {', '.join(ENCODINGS)}")


def _structured(family: CellFamily, encoding: str | None) -> Encoding:
    """The registered encoding of a family whose structure is not ``edge_dag``."""
    encoding = encoding or family.encoding
    if encoding not in family.structure.encodings:
        raise ArchError(f"encoding {encoding!r} does not write {family.structure.name} cells (family {family.name!r}); "
                        f"allowed: {', '.join(family.structure.encodings)}")
    return ENCODERS.get(encoding, f"family {family.name!r}: encoding")


def make_graph(edges: Iterable[tuple[int, int, str]], family: CellFamily, nodes: int | None = None) -> nx.DiGraph:
    """Build and check the canonical graph from ``(source, target, op)`` triples.

    Absent pairs are filled with the family's zero op, if it has one.

    Raises:
        ArchError: for an unknown op, an out-of-range or non-increasing edge, a cycle,
            a duplicate edge or a node count the family does not allow.
    """
    edges = list(edges)
    for u, v, _ in edges:
        for idx in (u, v):
            if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
                raise ArchError(f"node index {idx!r} in edge {u!r}->{v!r} is not a non-negative integer")
    n = nodes if nodes is not None else (family.nodes or 1 + max((max(u, v) for u, v, _ in edges), default=0))
    if family.nodes is not None and n != family.nodes:
        raise ArchError(f"family {family.name!r} cells have {family.nodes} nodes, got {n}")
    if n < 2:
        raise ArchError(f"a cell needs at least 2 nodes (input and output), got {n}")
    seen: set[tuple[int, int]] = set()
    for u, v, op in edges:
        for idx in (u, v):
            if idx >= n:
                raise ArchError(f"node index {idx!r} in edge {u}->{v} is out of range 0..{n - 1}")
        family.op(op)  # raises with the allowed ops
        if (u, v) in seen:
            raise ArchError(f"duplicate edge {u}->{v}: each pair of nodes has at most one op")
        seen.add((u, v))
    backwards = [(u, v) for u, v, _ in edges if u >= v]
    if backwards:
        probe = nx.DiGraph((u, v) for u, v, _ in edges)
        try:
            cycle = nx.find_cycle(probe)
        except nx.NetworkXNoCycle:
            cycle = None
        if cycle:
            path = "->".join(str(e[0]) for e in cycle) + f"->{cycle[0][0]}"
            raise ArchError(f"cell has a cycle {path}; a cell must be a DAG with edges from lower to higher node ids")
        u, v = backwards[0]
        raise ArchError(f"edge {u}->{v}: the source must be smaller than the target (nodes are numbered in topological order)")
    graph = nx.DiGraph(family=family.name)
    graph.add_nodes_from(range(n))
    graph.add_edges_from((u, v, {"op": op}) for u, v, op in edges)
    zero = family.zero_op
    if zero is not None:
        graph.add_edges_from((u, v, {"op": zero}) for v in range(n) for u in range(v) if not graph.has_edge(u, v))
    return graph


def as_graph(arch: str | nx.DiGraph, family: CellFamily) -> nx.DiGraph:
    """Accept an architecture string or a graph and return the checked canonical graph (a graph
    of a structured family is checked by writing it out and parsing it back)."""
    if isinstance(arch, nx.DiGraph) and family.structure.name != DEFAULT_STRUCTURE:
        return parse_arch(format_arch(arch, family), family)
    if isinstance(arch, nx.DiGraph):
        if set(arch.nodes) != set(range(arch.number_of_nodes())):
            raise ArchError(f"graph nodes must be 0..n-1, got {sorted(arch.nodes)}")
        missing = [(u, v) for u, v, d in arch.edges(data=True) if "op" not in d]
        if missing:
            raise ArchError(f"edge {missing[0][0]}->{missing[0][1]} has no 'op' attribute")
        graph = make_graph(((u, v, d["op"]) for u, v, d in arch.edges(data=True)), family, arch.number_of_nodes())
        return _connected(graph, family)
    return parse_arch(arch, family)


def _connected(graph: nx.DiGraph, family: CellFamily) -> nx.DiGraph:
    """``graph`` if its edges join every node to the input; a family with a zero op always
    does (absent pairs are zero edges), and its cells without a path are degenerate, not
    disconnected.

    Raises:
        ArchError: naming the nodes no edge joins to the input node 0.
    """
    apart = sorted(set(graph) - nx.node_connected_component(graph.to_undirected(as_view=True), 0))
    if apart:
        nodes = ", ".join(map(str, apart))
        raise ArchError(
            f"disconnected cell: no edge joins node{'s' if len(apart) > 1 else ''} {nodes} to the input node 0 "
            f"(family {family.name!r} has no zero op, so a cell has only the edges listed); "
            "add edges to connect every node, or give fewer nodes"
        )
    return graph
