"""The three text forms of an ``edge_dag`` cell (``nb201``, ``digits``, ``edges``) read into
``(node count, [(source, target, op), ...])``, each token checked against the family and every
error naming the offending token; :func:`nasrescale.space.encodings.parse_arch` builds the graph.

>>> from nasrescale.space.family_loader import get_family
>>> _parse_digits("3_34_131", get_family("nb201"))[1][:2]
[(0, 1, 'nor_conv_3x3'), (0, 2, 'nor_conv_3x3')]
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import ArchError
from .families import CellFamily

__all__: list[str] = []  # private to nasrescale.space.encodings

_DIGITS = re.compile(r"[0-9]+(_[0-9]+)*")


def _short(text: str, limit: int = 60) -> str:
    """``text`` as an error message echoes it: cut to ``limit`` characters with "…" where longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _parse_nb201(text: str, family: CellFamily, complete: bool = False) -> tuple[int, list[tuple[int, int, str]]]:
    edges: list[tuple[int, int, str]] = []
    groups = text.split("+")
    for gi, group in enumerate(groups):
        target = gi + 1
        start = len(edges)
        if len(group) < 2 or group[0] != "|" or group[-1] != "|":
            what = "empty group" if not group else f"group {_short(group)!r}"
            raise ArchError(
                f"{what} (node {target}) in {_short(text)!r}: each node's group must look like "
                f"'|op~source|op~source|' and groups are joined by '+'"
            )
        inner = group[1:-1]
        for token in inner.split("|") if inner else []:
            op, sep, src = token.partition("~")
            if not sep or not src.isdigit() or "~" in src:
                raise ArchError(f"token {_short(token)!r} (node {target}) is not 'op~source', e.g. 'nor_conv_3x3~0'")
            source = int(src)
            if op not in family.op_names:
                raise ArchError(f"token {_short(token)!r} (node {target}): unknown op {_short(op, 40)!r} for family "
                                f"{family.name!r}; allowed ops: {', '.join(family.op_names)}")
            if source >= target:
                raise ArchError(
                    f"token {_short(token)!r}: source {source} is not smaller than its target node {target}"
                )
            edges.append((source, target, op))
        if not complete and family.zero_op is not None:
            _require_full_group(group, target, [u for u, _, _ in edges[start:]], family)
    return len(groups) + 1, edges


def _require_full_group(group: str, target: int, sources: list[int], family: CellFamily) -> None:
    """An NB201 group must name every source ``0..target-1`` (absent edges as the zero op);
    a repeated source is left to :func:`~nasrescale.space.encodings.make_graph`, which names the duplicate edge."""
    if len(set(sources)) != len(sources):
        return
    missing = [u for u in range(target) if u not in sources]
    if missing:
        fill = "|".join(f"{family.zero_op}~{u}" for u in missing)
        raise ArchError(
            f"group {_short(group)!r} (node {target}) lacks source(s) {', '.join(map(str, missing))}: every node's "
            f"group must list one op per source node 0..{target - 1}; write an absent edge as "
            f"{family.zero_op}~SOURCE (here add {fill})"
        )


def _parse_digits(text: str, family: CellFamily) -> tuple[int, list[tuple[int, int, str]]]:
    if not _DIGITS.fullmatch(text):
        bad = next((c for c in text if not (c.isdigit() or c == "_")), None)
        detail = f"character {bad!r}" if bad else "empty group"
        raise ArchError(f"digit string {_short(text)!r} has a {detail}; expected groups of digits joined by '_', e.g. '3_34_131'")
    names = family.op_names
    edges: list[tuple[int, int, str]] = []
    for gi, group in enumerate(text.split("_")):
        target = gi + 1
        if len(group) != target:
            raise ArchError(
                f"group {_short(group)!r} (node {target}) has {len(group)} digits; it needs {target}, "
                f"one per source node 0..{target - 1}"
            )
        for source, digit in enumerate(group):
            code = int(digit)
            if code >= len(names):
                allowed = ", ".join(f"{i}={name}" for i, name in enumerate(names))
                raise ArchError(f"digit {digit!r} in group {_short(group)!r} is not an op of family {family.name!r}; allowed: {allowed}")
            edges.append((source, target, names[code]))
    return len(text.split("_")) + 1, edges


def _parse_edges(text: str, family: CellFamily) -> tuple[int | None, list[tuple[int, int, str]]]:
    try:
        doc: Any = json.loads(text)
    except json.JSONDecodeError as err:
        raise ArchError(f"edge list is not valid JSON ({err.msg} at character {err.pos}): {_short(text)!r}") from None
    nodes = None
    if isinstance(doc, dict):
        unknown = sorted(set(doc) - {"nodes", "edges"})
        if unknown:
            raise ArchError(f"unknown key {_short(unknown[0])!r} in edge-list object; allowed keys: nodes, edges")
        nodes = doc.get("nodes")
        if nodes is not None and (isinstance(nodes, bool) or not isinstance(nodes, int)):
            raise ArchError(f"'nodes' must be an integer, got {_short(repr(nodes))}")
        doc = doc.get("edges", [])
    if not isinstance(doc, list):
        raise ArchError("edge list must be a JSON list of [source, target, op] triples")
    edges = []
    for item in doc:
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[2], str)):
            raise ArchError(f"edge {_short(json.dumps(item))} is not a [source, target, \"op\"] triple")
        edges.append((item[0], item[1], item[2]))
    return nodes, edges
