"""DARTS genotypes and NAS-Bench-101 cells: parsing as data, refusing malformed input, pruning,
and the analyzer on small cells worked out by hand (docs/design.md §6)."""

from __future__ import annotations

import json
import math

import pytest

from nasrescale.errors import ArchError
from nasrescale.space.analysis import analyze
from nasrescale.space.darts_codec import DARTS_V2, tokenize
from nasrescale.space.encodings import format_arch, parse_arch
from nasrescale.space.family_loader import get_family
from nasrescale.space.edge_factors import init_divisors
from nasrescale.space.topology import effective_in_degrees, path_depths

DARTS = get_family("darts")
NB101 = get_family("nb101")


def genotype(normal: list, reduce: list, normal_concat=(2, 3, 4, 5), reduce_concat=(2, 3, 4, 5)) -> str:
    return (f"Genotype(normal={normal}, normal_concat={list(normal_concat)}, reduce={reduce}, "
            f"reduce_concat={list(reduce_concat)})")


SKIPS = [("skip_connect", j) for _ in range(4) for j in (0, 1)]
POOLS = [("max_pool_3x3", j) for _ in range(4) for j in (0, 1)]


def nb101(matrix: list[list[int]], ops: list[str]) -> str:
    return json.dumps({"matrix": matrix, "ops": ["input", *ops, "output"]})


# ----------------------------------------------------------------------------- DARTS parsing

def test_darts_v2_string_and_json_give_one_graph():
    from_string = parse_arch(DARTS_V2, DARTS)
    doc = {"normal": [["sep_conv_3x3", 0], ["sep_conv_3x3", 1], ["sep_conv_3x3", 0], ["sep_conv_3x3", 1],
                      ["sep_conv_3x3", 1], ["skip_connect", 0], ["skip_connect", 0], ["dil_conv_3x3", 2]],
           "normal_concat": [2, 3, 4, 5],
           "reduce": [["max_pool_3x3", 0], ["max_pool_3x3", 1], ["skip_connect", 2], ["max_pool_3x3", 1],
                      ["max_pool_3x3", 0], ["skip_connect", 2], ["skip_connect", 2], ["max_pool_3x3", 1]],
           "reduce_concat": [2, 3, 4, 5]}
    from_json = parse_arch(json.dumps(doc), DARTS)
    assert sorted(from_string.edges(data="op")) == sorted(from_json.edges(data="op"))
    assert from_string.graph["cells"] == (("normal", 0, 7, 2), ("reduce", 7, 7, 2))
    assert sorted(from_string.in_edges(5, data="op")) == [(0, 5, "skip_connect"), (2, 5, "dil_conv_3x3")]
    assert sorted(from_string.in_edges(6, data="op")) == [(k, 6, "concat") for k in (2, 3, 4, 5)]


def test_darts_canonical_string_round_trips_and_orders_each_node_by_source():
    text = format_arch(parse_arch(DARTS_V2, DARTS), DARTS)
    assert "('skip_connect', 0), ('sep_conv_3x3', 1)" in text  # node 4 written in source order
    assert format_arch(parse_arch(text, DARTS), DARTS) == text


def test_reduction_skip_on_an_input_is_a_factorized_reduce_and_writes_back_as_skip():
    g = parse_arch(genotype(SKIPS, SKIPS), DARTS)
    assert g.edges[0, 2]["op"] == "skip_connect"  # normal cell: identity
    assert g.edges[7, 9]["op"] == "factorized_reduce"  # reduction cell, from an input: stride 2
    assert "factorized_reduce" not in format_arch(g, DARTS)


def test_range_concat_as_search_logs_print_it():
    text = genotype(SKIPS, POOLS).replace("normal_concat=[2, 3, 4, 5]", "normal_concat=range(2, 6)")
    assert format_arch(parse_arch(text, DARTS), DARTS) == format_arch(parse_arch(genotype(SKIPS, POOLS), DARTS), DARTS)


def test_the_tokenizer_reads_data_only():
    assert [t[0] for t in tokenize("f('a', 1)")] == ["name", "(", "str", ",", "int", ")"]
    with pytest.raises(ArchError, match="unexpected character '.'"):
        tokenize("Genotype(normal=os.system)")


@pytest.mark.parametrize("text,message", [
    ("__import__('os')", "is not a DARTS genotype"),
    ("Genotypes(normal=[])", "must start with 'Genotype\\('"),
    ("3_33_333", "is not a DARTS genotype"),
    ("Genotype(normal=[('sep_conv_3x3', 0)", "expected ','"),
    (genotype(SKIPS[:6], SKIPS), "expected a list of 8 \\(op, input\\) pairs"),
    (genotype([("conv_7x7", 0)] + SKIPS[1:], SKIPS), "unknown op 'conv_7x7'"),
    (genotype([("concat", 0)] + SKIPS[1:], SKIPS), "unknown op 'concat'"),
    (genotype([("skip_connect", 2)] + SKIPS[1:], SKIPS), "input 2 of node 2 must be in 0..1"),
    (genotype(SKIPS, SKIPS, normal_concat=(2, 6)), "distinct intermediate nodes in 2..5"),
    (genotype(SKIPS, SKIPS).replace("reduce_concat", "reduction_concat"), "unknown field 'reduction_concat'"),
    ('{"normal": []}', "missing field 'normal_concat'"),
    ("{not json", "genotype JSON is not valid"),
])
def test_malformed_genotypes_are_refused_in_one_line(text, message):
    with pytest.raises(ArchError, match=message) as info:
        parse_arch(text, DARTS)
    assert "\n" not in str(info.value)


# ----------------------------------------------------------------------------- NB101 parsing

def test_nb101_prunes_vertices_off_every_path():
    # vertex 2 feeds nothing, vertex 3 is fed by nothing: both go, as the benchmark prunes
    text = nb101([[0, 1, 1, 0, 0], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]],
                 ["conv3x3-bn-relu", "maxpool3x3", "conv1x1-bn-relu"])
    g = parse_arch(text, NB101)
    assert g.number_of_nodes() == 3
    assert format_arch(g, NB101) == '{"matrix":[[0,1,0],[0,0,1],[0,0,0]],"ops":["input","conv3x3-bn-relu","output"]}'


@pytest.mark.parametrize("text,message", [
    ("[[0, 1], [0, 0]]", 'exactly the keys "matrix" and "ops"'),
    ('{"matrix": [[0, 1]], "ops": ["input"]}', "square"),
    ('{"matrix": [[0, 2], [0, 0]], "ops": ["input", "output"]}', "0 or 1"),
    ('{"matrix": [[0, 1], [1, 0]], "ops": ["input", "output"]}', "strictly upper triangular"),
    ('{"matrix": [[0, 1], [0, 0]], "ops": ["output", "input"]}', 'start with "input"'),
    (nb101([[0, 1, 0], [0, 0, 1], [0, 0, 0]], ["conv5x5-bn-relu"]), "unknown op 'conv5x5-bn-relu'"),
    (nb101([[0, 1, 0], [0, 0, 1], [0, 0, 0]], ["projection"]), "unknown op 'projection'"),
    (nb101([[0, 1, 0], [0, 0, 0], [0, 0, 0]], ["maxpool3x3"]), "no path leads from the input to the output"),
    (nb101([[0] * i + [1] * (8 - i) for i in range(1, 8)] + [[0] * 8], ["maxpool3x3"] * 6),
     "the space allows at most 7 vertices and 9 edges"),
    ("{bad", "not valid JSON"),
])
def test_malformed_nb101_cells_are_refused_in_one_line(text, message):
    with pytest.raises(ArchError, match=message) as info:
        parse_arch(text, NB101)
    assert "\n" not in str(info.value)


# ----------------------------------------------------------------------------- analysis by hand

def test_darts_v2_paths_by_hand():
    # normal: node 2 = sep(0) + sep(1): depths 3, 3; node 3 likewise; node 4 = skip(0) + sep(1): 1, 3;
    # node 5 = skip(0) + dil(node 2): 1, 4, 4. Reduction: pools and skips only, 2 + 3 + 3 + 3 paths of depth 1.
    rec = analyze(DARTS_V2, DARTS)
    assert rec.path_depths == [1] * 13 + [3] * 5 + [4] * 2
    assert rec.sum_depth_cubed == 13 + 5 * 27 + 2 * 64 == 276
    assert rec.lr_scale == pytest.approx(math.sqrt(72 / 276), rel=1e-12)
    assert analyze(DARTS.base, DARTS).sum_depth_cubed == 8 * 1 + 8 * 8  # base: 72
    assert rec.in_degree[2] == 2 and rec.in_degree[6] == 1  # a sum of two; a concatenation counts once


def test_a_concatenation_passes_on_the_union_of_its_inputs_paths():
    # normal: nodes 2..5 each sum two skips of the inputs, only node 5 concatenated; node 5 = sep(0) + skip(node 4),
    # node 4 = skip(0) + skip(1): paths into node 5 are 0-5 (sep: 1 + 2 = 3), 0-4-5, 1-4-5 (depth 1).
    normal = SKIPS[:6] + [("sep_conv_3x3", 0), ("skip_connect", 4)]
    one = analyze(genotype(normal, POOLS, normal_concat=(5,)), DARTS)
    both = analyze(genotype(normal, POOLS, normal_concat=(4, 5)), DARTS)
    reduction = [1] * 8  # pools on the inputs, all four nodes concatenated
    assert sorted(one.path_depths) == sorted([3, 1, 1] + reduction)
    assert sorted(both.path_depths) == sorted([3, 1, 1, 1, 1] + reduction)  # node 4's two paths added
    assert both.sum_depth_cubed - one.sum_depth_cubed == 2
    # nodes 2 and 3 feed nothing that is concatenated: off the effective graph
    assert one.in_degree[2] == 0 and one.in_degree[4] == 2


def test_nb101_inception_cell_by_hand():
    # 0-1 (1x1) -out, 0-2 (3x3) -out, 0-3 (3x3) -4 (3x3) -out, 0-5 (pool) -out; projections add 1, offset 1
    text = nb101([[0, 1, 1, 1, 0, 1, 0], [0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 1, 0, 0],
                  [0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 1], [0] * 7],
                 ["conv1x1-bn-relu", "conv3x3-bn-relu", "conv3x3-bn-relu", "conv3x3-bn-relu", "maxpool3x3"])
    rec = analyze(text, NB101)
    assert rec.path_depths == [2, 3, 3, 4]
    assert rec.sum_depth_cubed == 126
    assert rec.lr_scale == pytest.approx(math.sqrt(8 / 126), rel=1e-12)


def test_nb101_in_degrees_count_a_concatenation_once():
    # 0 -> 1 -> 2 -> out, 0 -> 2, 1 -> out, 0 -> out: vertex 2 sums link(1) + projection = 2; the output
    # adds the projected input to the concatenation of vertices 1 and 2: two summands
    text = nb101([[0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]], ["conv3x3-bn-relu", "maxpool3x3"])
    g = parse_arch(text, NB101)
    assert effective_in_degrees(g, NB101) == {0: 0, 1: 1, 2: 2, 3: 2}
    assert init_divisors(g, NB101)[(0, 3)] == 2  # the output's projection writes into a sum of two
    # paths: 0-out (projection: 1) 2; 0-1-out 1+1 -> 3; 0-1-2-out 1+1+0 -> 3; 0-2-out 1+0 -> 2
    assert path_depths(g, NB101) == [2, 2, 3, 3]


def test_edge_dag_families_keep_their_analysis():
    nb201 = get_family("nb201")
    rec = analyze("3_33_333", nb201)
    assert (rec.path_depths, rec.sum_depth_cubed, rec.in_degree) == ([2, 3, 3, 4], 126, {1: 1, 2: 2, 3: 3})


def test_pruning_an_nb101_cell_is_announced_once(capsys, monkeypatch):
    from nasrescale.space import nb101_codec as nb101_module

    monkeypatch.setattr(nb101_module, "_ANNOUNCED", set())
    cell = nb101([[0, 1, 1], [0, 0, 0], [0, 0, 0]], ["maxpool3x3"])  # vertex 1 reaches no output
    parse_arch(cell, NB101)
    parse_arch(cell, NB101)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["nasrescale: note: NB101 cell: 1 vertex on no input->output path pruned, as the benchmark does "
                   "(3 -> 2 vertices, 2 -> 1 edges); the cell is the pruned one"]
    parse_arch(nb101([[0, 1], [0, 0]], []), NB101)
    assert capsys.readouterr().err == ""
