"""DARTS genotypes (Liu et al., ICLR 2019) to and from the canonical graph: encoding ``darts``.

A genotype names, for each of the ``steps`` intermediate nodes of the normal and of the
reduction cell, two ops and the earlier node each reads (0 and 1: the cell's two inputs, the
outputs of the two previous cells; ``k + 2``: intermediate node ``k``), and which intermediate
nodes the output concatenates. A node may read one earlier node twice with two ops (ENAS's and
NASNet's cells do; DARTS's evaluation network sums both): the graph is then a
``networkx.MultiDiGraph`` with two parallel edges, a ``DiGraph`` otherwise. A published genotype
may be given by name (:mod:`nasrescale.space.genotypes`). Two written forms are read, both as data:

* the published string, ``Genotype(normal=[('sep_conv_3x3', 0), ...], normal_concat=[2, 3, 4, 5],
  reduce=[...], reduce_concat=[...])``, by a small tokenizer and a recursive-descent parser
  (names, quoted strings, integers, ``( ) [ ] , =``; ``range(a, b)`` for a concat list, as
  DARTS's search logs print it). Nothing is evaluated;
* JSON, ``{"normal": [["sep_conv_3x3", 0], ...], "normal_concat": [2, 3, 4, 5], "reduce": ...,
  "reduce_concat": ...}``.

The canonical graph holds both cells (:mod:`nasrescale.space.structure`): nodes ``0..steps+2``
the normal cell (0, 1 inputs; ``steps + 2`` the output), the next ``steps + 3`` the reduction
cell. Each genotype entry is an edge ``source -> node``; each concatenated node has an edge of
the reserved op ``concat`` into the output. In the reduction cell an identity op (``skip_connect``)
on an edge out of an input has stride 2 and is DARTS's factorized reduce: the graph says so
with the reserved op ``factorized_reduce``. Written out, each node's two ops are in source
order, two ops on one source by name (the sum does not depend on it), so one network has one
canonical string.

>>> from nasrescale.space.family_loader import get_family
>>> darts = get_family("darts")
>>> g = parse_arch(DARTS_V2, darts)
>>> g.number_of_nodes(), sorted(g.in_edges(2, data="op"))
(14, [(0, 2, 'sep_conv_3x3'), (1, 2, 'sep_conv_3x3')])
>>> g.edges[7, 9]["op"]  # reduce cell's node 2 reads ('max_pool_3x3', 0)
'max_pool_3x3'
>>> parse_arch(format_arch(g, darts), darts).edges == g.edges
True
"""

from __future__ import annotations

import json
import re
from typing import Any

import networkx as nx

from ..errors import ArchError
from .codecs import Encoding, register_encoding
from .encodings import format_arch, parse_arch
from .families import CellFamily
from .genotypes import GENOTYPES, closest_genotype, find_genotype, genotype_family, op_family

__all__ = ["DARTS_V2", "parse_genotype", "format_genotype", "tokenize"]

#: the genotype DARTS (second order) found on CIFAR-10, as published (Liu et al., 2019)
DARTS_V2 = GENOTYPES["DARTS_V2"]

_FIELDS = ("normal", "normal_concat", "reduce", "reduce_concat")
_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<int>-?[0-9]+)|'(?P<sq>[^'\\]*)'|\"(?P<dq>[^\"\\]*)\""
                    r"|(?P<punct>[()\[\],=]))")

Token = tuple[str, Any, int]  # (kind, value, position)


def tokenize(text: str) -> list[Token]:
    """The tokens of a genotype string: ``name``, ``int``, ``str`` and punctuation.

    >>> [t[:2] for t in tokenize("Genotype(normal=[('skip_connect', 0)])")][:5]
    [('name', 'Genotype'), ('(', '('), ('name', 'normal'), ('=', '='), ('[', '[')]

    Raises:
        ArchError: at the first character no token starts with.
    """
    tokens: list[Token] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ArchError(f"genotype: unexpected character {text[pos:].lstrip()[:1]!r} at position "
                            f"{pos + len(text[pos:]) - len(text[pos:].lstrip())}; expected "
                            "Genotype(normal=[('op', input), ...], normal_concat=[...], reduce=[...], reduce_concat=[...])")
        kind = m.lastgroup or ""
        value: Any = m.group(kind)
        if kind == "int":
            value = int(value)
        elif kind in ("sq", "dq"):
            kind = "str"
        elif kind == "punct":
            kind = value
        tokens.append((kind, value, m.start(kind if kind in ("name", "int") else 0)))
        pos = m.end()
    return tokens


class _Parser:
    """Recursive descent over :func:`tokenize`'s tokens: ``Genotype(field=value, ...)``."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens, self.i = tokens, 0

    def _peek(self) -> str:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else "end"

    def _take(self, kind: str) -> Any:
        if self._peek() != kind:
            got = "the end of the string" if self._peek() == "end" else repr(self.tokens[self.i][1])
            raise ArchError(f"genotype: expected {kind!r}, got {got} (token {self.i + 1})")
        self.i += 1
        return self.tokens[self.i - 1][1]

    def genotype(self) -> dict[str, Any]:
        if self._take("name") != "Genotype":
            raise ArchError("genotype: the string must start with 'Genotype('")
        self._take("(")
        fields: dict[str, Any] = {}
        while self._peek() != ")":
            name = self._take("name")
            self._take("=")
            if name in fields:
                raise ArchError(f"genotype: field {name!r} given twice")
            fields[name] = self.value()
            if self._peek() != ")":
                self._take(",")
        self._take(")")
        if self._peek() != "end":
            raise ArchError(f"genotype: unexpected {self.tokens[self.i][1]!r} after the closing parenthesis")
        return fields

    def value(self) -> Any:
        kind = self._peek()
        if kind == "int":
            return self._take("int")
        if kind == "str":
            return self._take("str")
        if kind == "name" and self.tokens[self.i][1] == "range":
            self._take("name")
            self._take("(")
            start = self._take("int")
            self._take(",")
            stop = self._take("int")
            self._take(")")
            return list(range(start, stop))
        if kind in ("[", "("):
            close = "]" if kind == "[" else ")"
            self._take(kind)
            items = []
            while self._peek() != close:
                items.append(self.value())
                if self._peek() != close:
                    self._take(",")
            self._take(close)
            return items
        raise ArchError(f"genotype: unexpected {self.tokens[self.i][1] if kind != 'end' else 'end of string'!r}")


def _read(text: str) -> dict[str, Any]:
    name = find_genotype(text)
    text = GENOTYPES[name] if name else text
    if text.startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as err:
            raise ArchError(f"genotype JSON is not valid ({err.msg} at character {err.pos})") from None
        if not isinstance(doc, dict):
            raise ArchError("genotype JSON must be an object with keys normal, normal_concat, reduce, reduce_concat")
        return doc
    if not text.startswith("Genotype"):
        raise ArchError(_not_a_genotype(text))
    return _Parser(tokenize(text)).genotype()


def _not_a_genotype(text: str) -> str:
    """The refusal of a text that is neither a genotype nor a published name: the closest name, if any."""
    shown = text if len(text) <= 40 else text[:39] + "…"
    closest = closest_genotype(text) if re.fullmatch(r"[\w.-]{1,40}", text.strip()) else None
    if closest:
        return (f"genotype: {shown!r} is not a published genotype's name; did you mean {closest}? "
                f"(names, any case: {', '.join(GENOTYPES)})")
    return (f"genotype: {shown!r} is not a DARTS genotype; write Genotype(normal=[('op', input), ...], "
            "normal_concat=[...], reduce=[...], reduce_concat=[...]), the same fields as a JSON object, "
            f"or a published one by name, any case ({', '.join(GENOTYPES)})")


def _ops_of(cell: str, entries: Any, family: CellFamily, steps: int) -> list[tuple[int, int, str]]:
    """``(source, node, op)`` of one cell's entries, checked (nodes numbered within the cell)."""
    if not isinstance(entries, list) or len(entries) != 2 * steps:
        got = len(entries) if isinstance(entries, list) else type(entries).__name__
        hint = ""
        if isinstance(entries, list) and len(entries) % 2 == 0 and len(entries) >= 2:
            hint = (f"; {len(entries)} pairs make a {len(entries) // 2}-step genotype: use --family "
                    f"{genotype_family(len(entries) // 2)} (shipped: darts and darts_large 4 steps, darts5 5 "
                    "steps; ENAS, NASNet, AmoebaNet, PNASNet have 5)")
        raise ArchError(f"genotype {cell}: expected a list of {2 * steps} (op, input) pairs, two per intermediate "
                        f"node of family {family.name}'s {steps} steps, got {got}{hint}")
    reserved = family.structure.reserved_ops
    edges: list[tuple[int, int, str]] = []
    for i, entry in enumerate(entries):
        node = 2 + i // 2
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and isinstance(entry[1], int) and not isinstance(entry[1], bool)):
            raise ArchError(f"genotype {cell}[{i}]: {entry!r} is not an ('op', input) pair")
        op, source = entry
        if op in reserved or op not in family.op_names:
            allowed = ", ".join(n for n in family.op_names if n not in reserved)
            elsewhere = op_family(op) if isinstance(op, str) else None
            hint = f"; {op} is an op of family {elsewhere}: use --family {elsewhere}" if elsewhere else ""
            raise ArchError(f"genotype {cell}[{i}]: unknown op {op!r} in family {family.name} (allowed: {allowed}){hint}")
        if not 0 <= source < node:
            raise ArchError(f"genotype {cell}[{i}]: input {source} of node {node} must be in 0..{node - 1} "
                            "(0, 1: the cell's inputs; k: intermediate node k)")
        edges.append((source, node, op))
    return edges


def _concat_of(cell: str, value: Any, steps: int) -> list[int]:
    if not (isinstance(value, list) and value and all(isinstance(c, int) and not isinstance(c, bool) for c in value)):
        raise ArchError(f"genotype {cell}_concat: expected a non-empty list of node numbers, got {value!r}")
    bad = [c for c in value if not 2 <= c <= steps + 1]
    if bad or len(set(value)) != len(value):
        raise ArchError(f"genotype {cell}_concat: {value!r} must list distinct intermediate nodes in 2..{steps + 1}")
    return sorted(value)


def parse_genotype(text: str, family: CellFamily) -> nx.DiGraph:
    """The canonical graph of a genotype (see the module docstring).

    Raises:
        ArchError: one line naming the malformed part.
    """
    steps = family.structure_settings["steps"]
    doc = _read(text)
    unknown = sorted(set(doc) - set(_FIELDS))
    missing = [f for f in _FIELDS if f not in doc]
    if unknown or missing:
        raise ArchError(f"genotype: {'unknown field ' + repr(unknown[0]) if unknown else 'missing field ' + repr(missing[0])}; "
                        f"a genotype has exactly {', '.join(_FIELDS)}")
    size = steps + 3
    identity = _identity_op(family)
    edges: list[tuple[int, int, str]] = []
    for index, cell in enumerate(("normal", "reduce")):
        base = index * size
        for source, node, op in _ops_of(cell, doc[cell], family, steps):
            if cell == "reduce" and source < 2 and op == identity:
                op = "factorized_reduce"  # DARTS's identity at stride 2
            edges.append((base + source, base + node, op))
    repeated = len({(u, v) for u, v, _ in edges}) < len(edges)
    kind = nx.MultiDiGraph if repeated else nx.DiGraph  # a node reading one input twice: two parallel edges
    graph = kind(family=family.name, cells=(("normal", 0, size, 2), ("reduce", size, size, 2)))
    graph.add_nodes_from(range(2 * size))
    for u, v, op in sorted(edges):
        graph.add_edge(u, v, op=op)
    for index, cell in enumerate(("normal", "reduce")):
        base = index * size
        for node in _concat_of(cell, doc[f"{cell}_concat"], steps):
            graph.add_edge(base + node, base + size - 1, op="concat")
    return graph


def _identity_op(family: CellFamily) -> str | None:
    reserved = family.structure.reserved_ops
    return next((op.name for op in family.ops if op.kind.name == "identity" and op.name not in reserved), None)


def format_genotype(graph: nx.DiGraph, family: CellFamily) -> str:
    """The published string form of a canonical DARTS graph (each node's ops in source order)."""
    size = family.structure_settings["steps"] + 3
    if graph.number_of_nodes() != 2 * size:
        raise ArchError(f"a {family.name} graph has {2 * size} nodes (two cells of {size}), got {graph.number_of_nodes()}")
    identity = _identity_op(family)
    parts = []
    for index, cell in enumerate(("normal", "reduce")):
        base = index * size
        ops = []
        for node in range(2, size - 1):
            for u, _, op in sorted(graph.in_edges(base + node, data="op")):
                ops.append(f"('{identity if op == 'factorized_reduce' else op}', {u - base})")
        concat = sorted(u - base for u in graph.predecessors(base + size - 1))
        parts.append(f"{cell}=[{', '.join(ops)}], {cell}_concat={concat}")
    return f"Genotype({', '.join(parts)})"


register_encoding(Encoding("darts", parse_genotype, format_genotype,
                           "DARTS genotype: Genotype(normal=[('op', input), ...], normal_concat=[...], reduce=..., "
                           "reduce_concat=...) or the same as JSON"))
