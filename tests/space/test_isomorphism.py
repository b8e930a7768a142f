"""Isomorphism classes: the issue's pairs share a form, NB201's counts, forms agree with the analyzer."""

from __future__ import annotations

from collections import defaultdict

import pytest

from nasrescale.space.analysis import analyze_graph, enumerate_space
from nasrescale.space.encodings import parse_arch
from nasrescale.space.isomorphism import canonical_form, class_representatives, first_of_each_class, isomorphism_classes
from nasrescale.space.family_loader import get_family

NB201 = get_family("nb201")

#: two pairs of strings found in results/nb201_cifar10_cpu with identical accuracies in all four runs
PAIRS = [
    ("|none~0|+|skip_connect~0|none~1|+|nor_conv_1x1~0|skip_connect~1|skip_connect~2|",
     "|skip_connect~0|+|skip_connect~0|none~1|+|none~0|nor_conv_1x1~1|skip_connect~2|"),
    ("|nor_conv_3x3~0|+|avg_pool_3x3~0|none~1|+|avg_pool_3x3~0|skip_connect~1|none~2|",
     "|skip_connect~0|+|none~0|skip_connect~1|+|avg_pool_3x3~0|nor_conv_3x3~1|none~2|"),
]


@pytest.mark.parametrize("a, b", PAIRS)
def test_the_pairs_of_the_study_are_one_class(a, b):
    assert canonical_form(a, NB201) == canonical_form(b, NB201)


def test_cells_that_differ_are_told_apart():
    assert canonical_form("1_11_111", NB201) != canonical_form("0_00_001", NB201)  # x+x+x+x is not x
    assert canonical_form("0_00_300", NB201) != canonical_form("0_00_200", NB201)  # the kernel matters
    # a conv out of a zero node is BatchNorm's learned shift; a pool out of one is zero
    assert canonical_form("0_03_101", NB201) == "nor_conv_3x3(0)+x"
    assert canonical_form("0_04_101", NB201) == "x"


def _benchmark_string(graph) -> str:
    """NAS-Bench-201's own uniqueness string (its to_unique_str with zeros considered), restated."""
    nodes = {0: "0"}
    for v in range(1, graph.number_of_nodes()):
        terms = []
        for u in range(v):
            op = graph.edges[u, v]["op"]
            if op == "none" or nodes[u] == "#":
                terms.append("#")
            elif op == "skip_connect":
                terms.append(nodes[u])
            else:
                terms.append(f"({nodes[u]})@{op}")
        nodes[v] = "+".join(sorted(terms))
    return nodes[graph.number_of_nodes() - 1]


def test_nb201_counts_6466_by_its_rule_and_5545_functions_by_ours():
    graphs = list(enumerate_space(NB201))
    assert len(graphs) == 15_625
    assert len({_benchmark_string(g) for g in graphs}) == 6_466  # the benchmark's published count
    classes = isomorphism_classes(NB201)
    assert len(classes) == 5_545
    assert sum(len(cells) for cells in classes.values()) == 15_625


def test_one_class_has_one_lr_scale_and_one_degeneracy():
    scales = defaultdict(set)
    for form, cells in isomorphism_classes(NB201).items():
        for cell in cells:
            rec = analyze_graph(parse_arch(cell, NB201), NB201)
            scales[form].add((rec.degenerate, None if rec.lr_scale is None else round(rec.lr_scale, 12)))
    assert all(len(s) == 1 for s in scales.values())


def test_first_of_each_class_keeps_order_and_names_what_it_dropped():
    a, b = PAIRS[0]
    keep, dropped = first_of_each_class([b, "3_33_333", a], NB201)
    assert keep == [b, "3_33_333"]
    assert dropped == {a: b}
    reps = class_representatives(NB201)
    assert reps[a] == reps[b] and reps[reps[a]] == reps[a]
