"""Parsing and formatting: round-trips (hypothesis) and rejections with useful messages."""

from __future__ import annotations

import json

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nasrescale.space.encodings import as_graph, detect_encoding, format_arch, make_graph, parse_arch
from nasrescale.errors import ArchError, FamilyError
from nasrescale.space.family_file import parse_family
from nasrescale.space.family_loader import get_family

NB201_OPS = ["none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3"]


def _edges(g: nx.DiGraph) -> list[tuple[int, int, str]]:
    return sorted((u, v, d["op"]) for u, v, d in g.edges(data=True))


@st.composite
def nb201_cells(draw):
    return [(u, v, draw(st.sampled_from(NB201_OPS))) for v in range(1, 4) for u in range(v)]


@settings(max_examples=200, deadline=None)
@given(nb201_cells(), st.sampled_from(["nb201", "digits", "edges"]))
def test_round_trip_every_encoding(nb201, edges, encoding):
    g = make_graph(edges, nb201)
    text = format_arch(g, nb201, encoding)
    back = parse_arch(text, nb201)
    assert _edges(back) == _edges(g)
    assert format_arch(back, nb201, encoding) == text  # canonical strings are fixed points


@settings(max_examples=200, deadline=None)
@given(nb201_cells())
def test_encodings_agree(nb201, edges):
    g = make_graph(edges, nb201)
    forms = {enc: parse_arch(format_arch(g, nb201, enc), nb201) for enc in ("nb201", "digits", "edges")}
    assert len({tuple(_edges(f)) for f in forms.values()}) == 1


def test_paper_digit_code_matches_nb201_string(nb201):
    # the released code's own example: 3_34_131 is this NB201 string
    s = "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|"
    assert format_arch(parse_arch("3_34_131", nb201), nb201) == s
    assert format_arch(parse_arch(s, nb201), nb201, "digits") == "3_34_131"


def test_edge_list_forms(nb201, anydag):
    g = parse_arch('[[0, 3, "skip_connect"], [0, 1, "nor_conv_3x3"]]', nb201)
    assert g.edges[0, 3]["op"] == "skip_connect"
    assert g.edges[1, 2]["op"] == "none"  # absent = zero op
    assert json.loads(format_arch(g, nb201, "edges")) == {
        "nodes": 4, "edges": [[0, 1, "nor_conv_3x3"], [0, 3, "skip_connect"]]}
    big = parse_arch('{"nodes": 7, "edges": [[0, 6, "conv3"]]}', anydag)  # any node count
    assert big.number_of_nodes() == 7
    assert big.number_of_edges() == 21


def test_detect_encoding():
    assert detect_encoding(" |skip_connect~0|") == "nb201"
    assert detect_encoding("3_34_131") == "digits"
    assert detect_encoding('{"edges": []}') == "edges"
    with pytest.raises(ArchError, match="cannot tell the encoding"):
        detect_encoding("conv")


BAD = [
    # (text, fragments that the message must contain)
    ("", ["empty architecture", "|skip_connect~0|"]),
    ("   ", ["empty architecture"]),
    ("|nor_conv_3x3~0|+|bogus~0|none~1|+|none~0|none~1|none~2|",
     ["'bogus~0'", "unknown op 'bogus'", "none, skip_connect, nor_conv_1x1, nor_conv_3x3, avg_pool_3x3"]),
    ("|nor_conv_3x3~0|+|none~0|none~1|+|none~0|none~7|none~2|", ["'none~7'", "not smaller than its target node 3"]),
    ("|nor_conv_3x3~1|+|none~0|none~1|+|none~0|none~1|none~2|", ["'nor_conv_3x3~1'", "not smaller"]),
    ("|nor_conv_3x3~0|+|none~0|none~1|", ["4 nodes", "got 3"]),
    ("|nor_conv_3x3~0|+|none~0|none~0|+|none~0|none~1|none~2|", ["duplicate edge 0->2"]),
    ("|nor_conv_3x3~0|+|none~0|none~1|+|none~0|none~1|none~2|junk", ["'|none~0|none~1|none~2|junk'", "node 3"]),
    ("|nor_conv_3x3~0|+|none~0|none~1|+|none~0|none~1|none~2|+", ["empty group", "node 4"]),
    ("|nor_conv_3x3-0|+|none~0|none~1|+|none~0|none~1|none~2|", ["'nor_conv_3x3-0'", "op~source"]),
    ("|nor_conv_3x3~x|+|none~0|none~1|+|none~0|none~1|none~2|", ["'nor_conv_3x3~x'"]),
    ("3_34_131x", ["character 'x'"]),
    ("3_34_13", ["group '13'", "needs 3"]),
    ("3_39_131", ["digit '9'", "0=none", "4=avg_pool_3x3"]),
    ("3__131", ["empty group"]),
    ("3_34_131_0000", ["4 nodes", "got 5"]),
    ('[[0, 1, "skip_connect"], [0, 1, "nor_conv_3x3"]]', ["duplicate edge 0->1"]),
    ('[[0, 1, "skip_connect"], [1, 2, "skip_connect"], [2, 1, "skip_connect"]]', ["cycle", "1->2->1"]),
    ('[[0, 3, "skip_connect"], [3, 2, "skip_connect"]]', ["edge 3->2", "source must be smaller"]),
    ('[[0, 9, "skip_connect"]]', ["out of range 0..3"]),
    ('[[0, -1, "skip_connect"]]', ["-1", "non-negative"]),
    ('[[0, 1, "conv"]]', ["unknown op 'conv'", "allowed ops"]),
    ('[[0, 1]]', ["[source, target, \"op\"]"]),
    ('[[0, 1, "skip_connect"]] trailing', ["not valid JSON"]),
    ('{"nodes": 4, "edges": [], "extra": 1}', ["unknown key 'extra'"]),
]


@pytest.mark.parametrize(("text", "fragments"), BAD)
def test_rejections_name_the_problem(nb201, text, fragments):
    with pytest.raises(ArchError) as info:
        parse_arch(text, nb201)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_graph_input_is_checked(nb201):
    g = nx.DiGraph()
    g.add_edge(0, 1, op="skip_connect")
    g.add_edge(1, 0, op="skip_connect")
    g.add_nodes_from(range(4))
    with pytest.raises(ArchError, match="cycle"):
        as_graph(g, nb201)
    h = nx.DiGraph()
    h.add_nodes_from(range(4))
    h.add_edge(0, 3)
    with pytest.raises(ArchError, match="no 'op' attribute"):
        as_graph(h, nb201)


def test_digits_need_few_ops_and_a_zero_op():
    ops = "".join(f'[[ops]]\nname = "s{i}"\nkind = "identity"\n' for i in range(11))
    many = parse_family(f'[family]\nname = "many"\ndepth_offset = 1\nbase = \'[[0, 1, "s0"]]\'\n{ops}')
    with pytest.raises(ArchError, match="at most 10"):
        format_arch(parse_arch(many.base, many), many, "digits")
    nozero = parse_family('[family]\nname = "nz"\ndepth_offset = 1\nbase = \'[[0, 2, "s"], [1, 2, "s"]]\'\n'
                          '[[ops]]\nname = "s"\nkind = "identity"\n')
    g = parse_arch(nozero.base, nozero)
    assert g.number_of_edges() == 2  # no zero op: absent edges stay absent
    assert format_arch(g, nozero, "nb201") == "||+|s~0|s~1|"
    with pytest.raises(ArchError, match="no zero op"):
        format_arch(g, nozero, "digits")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="|~+_0123456789nonekipcvr[]{},\"x ", max_size=60))
def test_garbage_is_a_clean_arch_error_or_a_valid_cell(nb201, text):
    """Fuzz: any string either parses into a valid 4-node cell or raises ArchError."""
    try:
        g = parse_arch(text, nb201)
    except ArchError:
        return
    assert sorted(g.nodes) == [0, 1, 2, 3]
    assert g.number_of_edges() == 6
    assert all(u < v for u, v in g.edges)


def test_a_family_name_stands_for_the_family(nb201):
    from nasrescale.space.analysis import analyze

    assert _edges(parse_arch("3_34_131", "nb201")) == _edges(parse_arch("3_34_131", nb201))
    assert analyze("3_34_131", "nb201") == analyze("3_34_131", nb201)
    with pytest.raises(FamilyError, match="cell family: expected one of .*'nb201'.*got 'nb2'"):
        parse_arch("3_34_131", "nb2")
    with pytest.raises(FamilyError, match="a cell family or a family name"):
        parse_arch("3_34_131", None)


NO_ZERO = ('[family]\nname = "nz"\ndepth_offset = 1\nbase = \'[[0, 1, "s"]]\'\n'
           '[[ops]]\nname = "s"\nkind = "identity"\n[[ops]]\nname = "c"\nkind = "relu_conv_bn"\nkernel = 3\n')


@pytest.mark.parametrize(("text", "apart"), [('[[0, 1, "s"], [2, 3, "c"]]', "nodes 2, 3 "),
                                             ('{"nodes": 3, "edges": [[0, 2, "c"]]}', "node 1 "),
                                             ('|s~0|+||', "node 2 ")])
def test_a_disconnected_cell_is_an_error_naming_its_loose_nodes(text, apart):
    nozero = parse_family(NO_ZERO)
    with pytest.raises(ArchError, match=f"disconnected cell: no edge joins {apart}to the input node 0.*no zero op"):
        parse_arch(text, nozero)


def test_a_disconnected_graph_is_an_error_and_a_joined_one_is_not():
    nozero = parse_family(NO_ZERO)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(3))
    graph.add_edge(0, 1, op="s")
    with pytest.raises(ArchError, match="disconnected cell: no edge joins node 2 "):
        as_graph(graph, nozero)
    # joined, though node 1 has no in-edge and node 2 reaches no output: not disconnected
    assert parse_arch('[[0, 3, "s"], [1, 3, "c"], [0, 2, "c"], [1, 2, "s"]]', nozero).number_of_edges() == 4


def test_with_a_zero_op_a_cell_without_a_path_is_degenerate_not_disconnected(nb201):
    from nasrescale.space.analysis import analyze

    assert analyze('{"nodes": 4, "edges": [[0, 1, "nor_conv_3x3"]]}', nb201).degenerate


@pytest.mark.parametrize("text", ["\uff13_\uff13\uff13_\uff13\uff13\uff13", "\u0663_\u0663\u0663_\u0663\u0663\u0663",
                                  "|nor_conv_3x3~\u0660|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|"
                                  "nor_conv_3x3~1|nor_conv_3x3~2|"])
def test_architectures_take_ascii_digits_only(text):
    with pytest.raises(ArchError, match="non-ASCII digit; write architectures with the ASCII digits 0-9"):
        parse_arch(text, get_family("nb201"))


def test_a_genotype_with_a_non_ascii_input_number_is_refused():
    genotype = parse_arch("DARTS_V2", get_family("darts"))
    text = format_arch(genotype, get_family("darts")).replace("', 0)", "', \u0660)", 1)
    with pytest.raises(ArchError, match="non-ASCII digit"):
        parse_arch(text, get_family("darts"))
