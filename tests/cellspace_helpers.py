"""Architectures of every cell structure for the tests that walk every family: each op
everywhere it can be, and a random cell (DARTS genotypes, NAS-Bench-101 JSON, edge DAGs)."""

from __future__ import annotations

import json
import random

from nasrescale.space.encodings import format_arch, make_graph, parse_arch
from nasrescale.space.families import CellFamily


def arch_ops(family: CellFamily) -> list[str]:
    """The ops an architecture string may name (not the zero op, not the structure's own)."""
    return [op.name for op in family.ops if not op.zero and op.name not in family.structure.reserved_ops]


def _genotype(cell_ops: list[tuple[str, int]], steps: int) -> str:
    concat = list(range(2, steps + 2))
    return f"Genotype(normal={cell_ops}, normal_concat={concat}, reduce={cell_ops}, reduce_concat={concat})"


def _nb101(ops: list[str]) -> str:
    n = len(ops) + 2
    matrix = [[int(v == u + 1 or (u == 0 and v == n - 1)) for v in range(n)] for u in range(n)]
    return json.dumps({"matrix": matrix, "ops": ["input", *ops, "output"]})


def uniform_arch(family: CellFamily, op: str) -> str:
    """The architecture with ``op`` on every edge (edge DAGs), every genotype entry (DARTS) or
    every vertex of a two-vertex chain that the input also skips (NAS-Bench-101)."""
    kind = family.structure.name
    if kind == "darts":
        steps = family.structure_settings["steps"]
        return _genotype([(op, j) for k in range(steps) for j in (k, k + 1)], steps)
    if kind == "nb101":
        return _nb101([op, op])
    n = family.nodes or 4
    return format_arch(make_graph([(u, v, op) for v in range(1, n) for u in range(v)], family, n), family)


def random_arch(family: CellFamily, rng: random.Random) -> str:
    """A random valid architecture of ``family``."""
    kind = family.structure.name
    ops = arch_ops(family)
    if kind == "darts":
        steps = family.structure_settings["steps"]
        entries = [(rng.choice(ops), j) for k in range(steps) for j in rng.sample(range(k + 2), 2)]
        return _genotype(entries, steps)
    if kind == "nb101":
        return _nb101([rng.choice(ops) for _ in range(3)])
    n = family.nodes or 4
    graph = make_graph([(u, v, rng.choice(family.op_names)) for v in range(1, n) for u in range(v)], family, n)
    return format_arch(parse_arch(format_arch(graph, family), family), family)
