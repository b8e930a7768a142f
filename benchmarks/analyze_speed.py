"""Benchmark of the topology analyzer (not a test: prints measured figures).

1. ``nasrescale analyze --all --family nb201`` (all 15,625 cells, written to a CSV), against
   a reference analysis that enumerates every path (networkx ``all_simple_paths``) over the
   same cells, side by side.
2. The ``sum L^3`` dynamic program on a random 60-node DAG with >= 10^12 paths (enumeration
   is out of the question there), and DP vs enumeration on a DAG small enough for both.

Usage: python benchmarks/analyze_speed.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import networkx as nx

from nasrescale.space.analysis import enumerate_space
from nasrescale.cli.main import main as cli_main
from nasrescale.space.encodings import format_arch, make_graph, parse_arch
from nasrescale.space.family_file import parse_family
from nasrescale.space.family_loader import get_family
from nasrescale.space.topology import effective_graph, path_moments

DAG_FAMILY = parse_family(
    '[family]\nname = "bench"\ndepth_offset = 3\nbase = \'[[0, 1, "skip"]]\'\n'
    '[[ops]]\nname = "zero"\nkind = "zero"\n[[ops]]\nname = "skip"\nkind = "identity"\n'
    '[[ops]]\nname = "linear"\nkind = "linear_relu"\n'
)


def best_of(repeat: int, fn) -> float:  # noqa: ANN001
    """Smallest wall time of ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def reference_analysis(family) -> list[tuple]:  # noqa: ANN001
    """The same fields as ``analyze`` (canonical string, path depths, sum L^3, LR scale,
    in-degrees), computed by enumerating every path with networkx, cell by cell."""
    base = sum(d**3 for d in _enumerated_depths(parse_arch(family.base, family), family))
    rows = []
    for g in enumerate_space(family):
        depths = _enumerated_depths(g, family)
        cubed = sum(d**3 for d in depths)
        eff = effective_graph(g, family)
        rows.append((format_arch(g, family), sorted(depths), cubed, (base / cubed) ** 0.5 if cubed else None,
                     dict(eff.in_degree())))
    return rows


def _enumerated_depths(g: nx.DiGraph, family) -> list[int]:  # noqa: ANN001
    eff = effective_graph(g, family)
    n = eff.number_of_nodes()
    return [
        family.depth_offset + sum(family.op(eff.edges[u, v]["op"]).relu_depth for u, v in zip(p, p[1:]))
        for p in nx.all_simple_paths(eff, 0, n - 1)
    ]


def random_dag(n: int, p: float, seed: int) -> nx.DiGraph:
    """Random DAG on ``n`` nodes: each pair u<v gets skip/linear with probability ``p``,
    plus a linear chain so every node lies on a path."""
    rng = random.Random(seed)
    edges = {(u, v): rng.choice(["skip", "linear"]) for v in range(1, n) for u in range(v) if rng.random() < p}
    edges.update({(v - 1, v): "linear" for v in range(1, n)})
    return make_graph([(u, v, op) for (u, v), op in edges.items()], DAG_FAMILY, n)


def enumerate_cubes(g: nx.DiGraph) -> int:
    return sum(d**3 for d in _enumerated_depths(g, DAG_FAMILY))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    nb201 = get_family("nb201")

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "nb201.csv"
        t_ours = best_of(args.repeat, lambda: cli_main(["analyze", "--all", "--family", "nb201", "--out", str(out)]))
    t_ref = best_of(1, lambda: reference_analysis(nb201))
    print(f"analyze --all nb201 (15,625 cells, CSV written): {t_ours:.2f} s; "
          f"enumeration reference (same fields, no CSV): {t_ref:.2f} s; ratio={t_ref / t_ours:.2f}")

    big = random_dag(60, 0.5, seed=0)
    count, _, _, cubed = path_moments(big, DAG_FAMILY)
    t_dp = best_of(args.repeat * 10, lambda: path_moments(big, DAG_FAMILY))
    nonzero = sum(1 for *_, d in big.edges(data=True) if d["op"] != "zero")
    print(f"DP on a 60-node DAG, {nonzero} non-zero edges, {count:.3e} paths: {t_dp * 1e3:.2f} ms "
          f"(sum L^3 = {cubed:.4e}); enumeration infeasible")

    small = random_dag(22, 0.4, seed=1)
    count_small = path_moments(small, DAG_FAMILY)[0]
    assert enumerate_cubes(small) == path_moments(small, DAG_FAMILY)[3]
    t_dp_small = best_of(args.repeat * 10, lambda: path_moments(small, DAG_FAMILY))
    t_enum_small = best_of(1, lambda: enumerate_cubes(small))
    print(f"22-node DAG, {count_small:,} paths: DP {t_dp_small * 1e3:.2f} ms, enumeration {t_enum_small * 1e3:.0f} ms; "
          f"ratio={t_enum_small / t_dp_small:.0f}")


if __name__ == "__main__":
    main()
