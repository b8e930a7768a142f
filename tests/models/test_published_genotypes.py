"""Published DARTS-style genotypes by name (DARTS-V1/V2, PC-DARTS, P-DARTS, GDAS, DrNAS; SETN with
conv_3x1_1x3; ENAS, NASNet, AmoebaNet, PNASNet of 5 steps, which read one input twice in some
nodes): parsed, analysed and built, each built network's parameter count against the by-hand rule
of docs/design.md §6, worked out from the genotype's op list alone."""

from __future__ import annotations

import networkx as nx
import pytest

from nasrescale.errors import ArchError
from nasrescale.models import build_model, count_params
from nasrescale.space.encodings import format_arch, parse_arch
from nasrescale.space.genotypes import GENOTYPES, genotype_steps
from nasrescale.space.family_loader import get_family
from nasrescale.space.topology import effective_in_degrees, path_depths, sum_depth_cubed

from pipeline_helpers import cli  # noqa: F401  (used by name)

FAMILY = {"DARTS_V1": "darts", "DARTS_V2": "darts", "PC_DARTS": "darts", "PC_DARTS_image": "darts", "PDARTS": "darts",
          "GDAS_V1": "darts", "DrNAS_cifar10": "darts", "DrNAS_imagenet": "darts", "SETN": "darts_large",
          "ENAS": "darts5", "NASNet": "darts5", "AmoebaNet": "darts5", "PNASNet": "darts5"}
SKIPS = ", ".join(f"('skip_connect', {j})" for _ in range(4) for j in (0, 1))


def op_params(op: str, w: int, from_input_of_reduction: bool) -> int:
    """docs/design.md §6's per-op counts at ``w`` channels (no conv bias, 2 BN parameters per channel)."""
    if op.startswith("sep_conv_"):
        k = int(op[-1])
        return 2 * (k * k * w + w * w) + 4 * w
    if op.startswith("dil_conv_"):
        k = int(op[-1])
        return k * k * w + w * w + 2 * w
    if op in ("conv_7x1_1x7", "conv_3x1_1x3"):  # ReLU, conv 1xk, conv kx1, BN
        k = int(op[5])
        return 2 * k * w * w + 2 * w
    if op == "skip_connect" and from_input_of_reduction:
        return w * w + 2 * w  # a factorized reduce: two 1x1 convs to w/2
    return 0  # skip at stride 1, pools


def params_by_hand(name: str, c: int = 36, layers: int = 20, stem_multiplier: int = 3, classes: int = 10) -> int:
    """The network's count from the genotype's op list alone, cell by cell (docs/design.md §6)."""
    import ast
    fields = dict(part.split("=", 1) for part in
                  GENOTYPES[name][len("Genotype("):-1].replace("], ", "]|").split("|"))
    cells = {k: ast.literal_eval(v) for k, v in fields.items()}
    total = 27 * stem_multiplier * c + 2 * stem_multiplier * c
    c_pp = c_p = stem_multiplier * c
    width = c
    for i in range(layers):
        reduction = i in (layers // 3, 2 * layers // 3)
        width *= 2 if reduction else 1
        kind = "reduce" if reduction else "normal"
        total += c_pp * width + 2 * width + c_p * width + 2 * width  # two preprocessings
        total += sum(op_params(op, width, reduction and src < 2) for op, src in cells[kind])
        c_pp, c_p = c_p, len(cells[f"{kind}_concat"]) * width
    return total + c_p * classes + classes


@pytest.mark.parametrize("name", sorted(GENOTYPES))
def test_published_genotypes_build_with_the_count_worked_out_by_hand(name):
    family = get_family(FAMILY[name])
    assert genotype_steps(name) == family.structure_settings["steps"]
    assert count_params(build_model(name, family)) == params_by_hand(name)


def test_the_counts_are_the_ones_docs_design_lists():
    counts = {name: params_by_hand(name) for name in GENOTYPES}
    assert counts == {"DARTS_V1": 3_169_414, "DARTS_V2": 3_349_342, "PC_DARTS": 3_634_678,
                      "ENAS": 4_020_166, "NASNet": 3_830_950, "AmoebaNet": 3_145_078,
                      "PDARTS": 3_433_798, "PC_DARTS_image": 3_721_510, "DrNAS_cifar10": 4_099_294,
                      "DrNAS_imagenet": 4_048_750, "GDAS_V1": 3_368_782, "SETN": 4_619_206, "PNASNet": 4_481_110}


@pytest.mark.parametrize("name,published", [("PDARTS", 3.4), ("GDAS_V1", 3.4), ("DrNAS_cifar10", 4.0),
                                            ("SETN", 4.6), ("PC_DARTS", 3.6), ("DARTS_V2", 3.3)])
def test_the_counts_round_to_the_papers_cifar10_figures(name, published):
    # the papers' CIFAR-10 tables (millions, one decimal); DrNAS's paper gives 4.0 M, 4.10 M here
    assert abs(params_by_hand(name) / 1e6 - published) <= 0.1


def test_a_node_reading_one_input_twice_keeps_both_ops():
    darts5 = get_family("darts5")
    graph = parse_arch("ENAS", darts5)
    assert isinstance(graph, nx.MultiDiGraph)
    assert sorted(op for _, _, op in graph.in_edges(2, data="op")) == ["sep_conv_3x3", "skip_connect"]
    assert effective_in_degrees(graph, darts5)[2] == 2
    edges = sorted(graph.edges(data="op"))
    assert sorted(parse_arch(format_arch(graph, darts5), darts5).edges(data="op")) == edges
    assert sorted(parse_arch(GENOTYPES["ENAS"], darts5).edges(data="op")) == edges


def test_sum_of_cubes_counts_a_repeated_input_as_two_paths():
    # the base (8 normal paths of depth 1, 8 reduction paths of depth 2: 72) with normal node 2
    # reading input 1 twice, through a sep_conv (depth 1 + 2) and a skip (depth 1)
    darts = get_family("darts")
    text = (f"Genotype(normal=[('sep_conv_3x3', 1), ('skip_connect', 1), {SKIPS.split(', ', 4)[-1]}], "
            f"normal_concat=[2, 3, 4, 5], reduce=[{SKIPS}], reduce_concat=[2, 3, 4, 5])")
    graph = parse_arch(text, darts)
    assert path_depths(graph, darts) == [1] * 7 + [2] * 8 + [3]
    assert sum_depth_cubed(graph, darts) == 7 + 8 * 8 + 27


def test_a_five_step_genotype_in_the_four_step_family_points_at_darts5():
    with pytest.raises(ArchError, match="use --family darts5"):
        parse_arch("ENAS", get_family("darts"))


def test_analyze_shows_both_ops_of_a_repeated_input(capsys):
    code, out, _ = cli(capsys, "analyze", "--family", "darts5", "--paths", "ENAS")
    assert code == 0
    assert "    1 -sep_conv_3x3-> 2 -concat-> 7" in out
    assert "    1 -skip_connect-> 2 -concat-> 7" in out


@pytest.mark.parametrize("name,size", [("DARTS_V2", dict(width=36, cells=20, in_shape=(3, 32, 32)))]
                         + [(n, dict(width=8, cells=5, in_shape=(3, 16, 16))) for n in sorted(GENOTYPES)]
                         + [("AmoebaNet", dict(width=6, cells=3, in_shape=(3, 8, 8)))])
def test_counting_from_shapes_matches_the_built_network(name, size):
    from nasrescale.models.cost import count_flops
    from nasrescale.models.darts_cost import darts_cost

    family = get_family(FAMILY[name])
    net = build_model(name, family, 10, **size)
    shaped = darts_cost(parse_arch(name, family), family, 10, **size)
    assert shaped["params"] == shaped["params_effective"] == count_params(net)
    assert round(shaped["flops_m"] * 1e6) == round(shaped["flops_m_effective"] * 1e6) == count_flops(net, size["in_shape"])


def test_summary_of_a_darts_network_builds_nothing(monkeypatch):
    from nasrescale.models import cost

    def refuse(*_args, **_kwargs):
        raise AssertionError("built a network")

    monkeypatch.setattr(cost, "build_model", refuse)
    figures = cost.model_cost("DARTS_V2", get_family("darts"))
    assert figures["params"] == 3_349_342 and round(figures["flops_m"], 2) == 528.36
