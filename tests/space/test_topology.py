"""Topology analysis: hand-worked cells, benchmark-wide counts, and DP vs enumeration."""

from __future__ import annotations

import math
import random
from collections import Counter

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nasrescale.space.analysis import analyze, analyze_graph, enumerate_space
from nasrescale.space.encodings import make_graph, parse_arch
from nasrescale.errors import ArchError
from nasrescale.space.edge_factors import edge_kernel_factors, init_divisors, kernel_factor, network_kernel
from nasrescale.space.topology import (
    depth_histogram,
    effective_graph,
    effective_in_degrees,
    enumerate_paths,
    is_degenerate,
    lr_scale,
    path_depths,
    path_moments,
    sum_depth_cubed,
)

ALL_3X3 = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|"
# node 1 gets a conv from the input but feeds nothing: a dead end
DEAD_END = "|nor_conv_3x3~0|+|skip_connect~0|none~1|+|skip_connect~0|none~1|skip_connect~2|"
# node 1 is unreachable from the input; 1->2->3 is not on any input->output path
UNREACHABLE = "|none~0|+|none~0|nor_conv_3x3~1|+|skip_connect~0|none~1|nor_conv_3x3~2|"


def test_all_3x3_cell_by_hand(nb201):
    g = parse_arch(ALL_3X3, nb201)
    assert enumerate_paths(g, nb201) == [[0, 1, 2, 3], [0, 1, 3], [0, 2, 3], [0, 3]]
    assert path_depths(g, nb201) == [2, 3, 3, 4]
    assert sum_depth_cubed(g, nb201) == 2**3 + 3**3 + 3**3 + 4**3 == 126
    assert lr_scale(g, nb201) == pytest.approx(126**-0.5 / 1**-0.5)
    assert round(lr_scale(g, nb201), 4) == 0.0891
    assert effective_in_degrees(g, nb201) == {0: 0, 1: 1, 2: 2, 3: 3}


def test_base_has_scale_one(nb201, mlp_dag):
    for family in (nb201, mlp_dag):
        g = parse_arch(family.base, family)
        assert lr_scale(g, family) == 1.0
    assert path_depths(parse_arch(nb201.base, nb201), nb201) == [1]
    assert path_depths(parse_arch(mlp_dag.base, mlp_dag), mlp_dag) == [3]


def test_mlp_linear_chain_by_hand(mlp_dag):
    # linear chain 0->1->2->3->4: one path with 4 linear layers, depth 3 + 4 = 7
    g = parse_arch("2_02_002_0002", mlp_dag)
    assert path_depths(g, mlp_dag) == [7]
    assert lr_scale(g, mlp_dag) == pytest.approx(math.sqrt(27 / 343))


def test_degenerate_cells(nb201):
    for arch in (
        "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|",
        # convs exist but none reaches the output
        "|nor_conv_3x3~0|+|none~0|nor_conv_3x3~1|+|none~0|none~1|none~2|",
    ):
        g = parse_arch(arch, nb201)
        assert is_degenerate(g, nb201)
        assert enumerate_paths(g, nb201) == []
        assert path_depths(g, nb201) == []
        assert path_moments(g, nb201) == (0, 0, 0, 0)
        assert lr_scale(g, nb201) is None
        assert effective_graph(g, nb201).number_of_edges() == 0
        rec = analyze(arch, nb201)
        assert rec.degenerate
        assert rec.lr_scale is None
        assert rec.num_paths == 0


def test_dead_end_node_is_dropped(nb201):
    g = parse_arch(DEAD_END, nb201)
    assert sorted(effective_graph(g, nb201).edges) == [(0, 2), (0, 3), (2, 3)]
    assert effective_in_degrees(g, nb201) == {0: 0, 1: 0, 2: 1, 3: 2}
    assert path_depths(g, nb201) == [1, 1]  # the conv is on no path: depth stays 1
    assert lr_scale(g, nb201) == pytest.approx(math.sqrt(1 / 2))


def test_input_unreachable_node_is_dropped(nb201):
    g = parse_arch(UNREACHABLE, nb201)
    assert sorted(effective_graph(g, nb201).edges) == [(0, 3)]
    assert path_depths(g, nb201) == [1]
    assert lr_scale(g, nb201) == 1.0


def test_nb201_space_counts(nb201):
    """docs/design.md §2: 341 degenerate cells, 922 with LR scale exactly 1, 15,625 in all."""
    records = [analyze_graph(g, nb201) for g in enumerate_space(nb201)]
    assert len(records) == 5**6 == len({r.arch for r in records})
    assert sum(r.degenerate for r in records) == 341
    assert sum(r.lr_scale == 1.0 for r in records) == 922


def test_init_divisors_by_hand(nb201):
    g = parse_arch(ALL_3X3, nb201)
    assert init_divisors(g, nb201, "target") == {(0, 1): 1, (0, 2): 2, (1, 2): 2, (0, 3): 3, (1, 3): 3, (2, 3): 3}
    # released code: in-degree of the source counting non-zero raw edges, node 0 counted as 1
    assert init_divisors(g, nb201, "source") == {(0, 1): 1, (0, 2): 1, (1, 2): 1, (0, 3): 1, (1, 3): 1, (2, 3): 2}
    dead = parse_arch(DEAD_END, nb201)
    assert init_divisors(dead, nb201, "target") == {(0, 1): 1}  # in-degree 0 clamps to 1
    with pytest.raises(ArchError, match="allowed: target, source"):
        init_divisors(g, nb201, "sideways")


def test_source_rule_counts_non_parametric_edges(nb201):
    g = parse_arch("|avg_pool_3x3~0|+|skip_connect~0|nor_conv_1x1~1|+|none~0|nor_conv_3x3~1|nor_conv_3x3~2|", nb201)
    assert init_divisors(g, nb201, "source") == {(1, 2): 1, (1, 3): 1, (2, 3): 2}
    assert init_divisors(g, nb201, "target") == {(1, 2): 2, (1, 3): 2, (2, 3): 2}


def test_kernel_rules(anydag):
    g = make_graph([(0, 1, "conv1"), (1, 2, "conv5"), (0, 2, "skip"), (0, 3, "conv3"), (2, 3, "skip")], anydag)
    assert network_kernel(g, anydag) == 5
    assert kernel_factor(g, anydag, "none") == 1.0
    assert kernel_factor(g, anydag, "network") == pytest.approx(3 / 5)
    assert kernel_factor(g, anydag, "per_layer") == 1.0
    assert edge_kernel_factors(g, anydag, "per_layer") == pytest.approx({(0, 1): 3.0, (1, 2): 0.6, (0, 3): 1.0})
    assert edge_kernel_factors(g, anydag, "network") == pytest.approx({(0, 1): 0.6, (1, 2): 0.6, (0, 3): 0.6})
    assert edge_kernel_factors(g, anydag, "none") == {(0, 1): 1.0, (1, 2): 1.0, (0, 3): 1.0}
    with pytest.raises(ArchError, match="kernel rule"):
        kernel_factor(g, anydag, "cubic")


def test_nb201_kernel_rule_default_is_none(nb201):
    g = parse_arch("|nor_conv_1x1~0|+|none~0|nor_conv_1x1~1|+|none~0|none~1|nor_conv_1x1~2|", nb201)
    assert nb201.kernel_rule == "none"
    assert kernel_factor(g, nb201) == 1.0
    assert kernel_factor(g, nb201, "network") == 3.0


@st.composite
def random_dags(draw, max_nodes: int = 8):
    n = draw(st.integers(2, max_nodes))
    ops = ["zero", "skip", "conv1", "conv3", "conv5"]
    edges = [(u, v, draw(st.sampled_from(ops))) for v in range(1, n) for u in range(v) if draw(st.booleans())]
    return n, edges


def _enumerated_depths(g, family) -> list[int]:
    """Independent enumeration over *all* raw simple paths, skipping those with a zero op."""
    n = g.number_of_nodes()
    depths = []
    for path in nx.all_simple_paths(g, 0, n - 1):
        ops = [family.op(g.edges[u, v]["op"]) for u, v in zip(path, path[1:])]
        if not any(op.zero for op in ops):
            depths.append(family.depth_offset + sum(op.relu_depth for op in ops))
    return sorted(depths)


@settings(max_examples=300, deadline=None)
@given(random_dags())
def test_dp_equals_enumeration(anydag, dag):
    n, edges = dag
    g = make_graph(edges, anydag, n)
    depths = _enumerated_depths(g, anydag)
    assert path_moments(g, anydag) == (len(depths), sum(depths), sum(d**2 for d in depths), sum(d**3 for d in depths))
    assert depth_histogram(g, anydag) == dict(sorted(Counter(depths).items()))
    assert path_depths(g, anydag) == depths
    assert is_degenerate(g, anydag) == (not depths)
    # effective edges are exactly those on some enumerated non-zero path
    on_paths = {
        (u, v)
        for p in nx.all_simple_paths(g, 0, n - 1)
        if not any(anydag.op(g.edges[a, b]["op"]).zero for a, b in zip(p, p[1:]))
        for u, v in zip(p, p[1:])
    }
    assert set(effective_graph(g, anydag).edges) == on_paths
    assert effective_in_degrees(g, anydag) == {v: sum(1 for _, t in on_paths if t == v) for v in range(n)}


def _count_paths_recursive(g: nx.DiGraph, family) -> int:
    """Path count by memoized recursion from the output (independent of the library's DP)."""
    memo = {0: 1}

    def count(v: int) -> int:
        if v not in memo:
            memo[v] = sum(count(u) for u in g.predecessors(v) if not family.op(g.edges[u, v]["op"]).zero)
        return memo[v]

    return count(g.number_of_nodes() - 1)


def test_dp_on_a_60_node_dag_with_over_1e12_paths(anydag):
    rng = random.Random(0)
    n = 60
    edges = [(u, v, rng.choice(["skip", "conv3"])) for v in range(1, n) for u in range(v) if rng.random() < 0.5]
    edges += [(v - 1, v, "conv3") for v in range(1, n) if not any(e[:2] == (v - 1, v) for e in edges)]
    g = make_graph(edges, anydag, n)
    count, s1, s2, s3 = path_moments(g, anydag)
    assert count == _count_paths_recursive(g, anydag) >= 10**12
    hist = depth_histogram(g, anydag)
    assert sum(hist.values()) == count
    assert sum(d**3 * c for d, c in hist.items()) == s3
    assert sum(d * c for d, c in hist.items()) == s1
    assert analyze(g, anydag).path_depths is None  # too many paths to list; counts stay exact
