"""Tests of nasrescale.models: edge builders, cells (pruned == full definition), the NB201 and
DAG networks (parameter/FLOP counts against hand formulas and NB201's published figures),
build_model's checks, and a registry-driven build/forward/backward over every family."""

from __future__ import annotations

import copy
import pickle
import random
from pathlib import Path

import networkx as nx
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

from nasrescale.space.analysis import analyze
from nasrescale.space.encodings import format_arch, make_graph, parse_arch
from nasrescale.errors import ArchError, ConfigError, FamilyError
from nasrescale.space.family_file import parse_family
from nasrescale.models import (
    Cell,
    CellNetwork,
    CNNNetwork,
    MLPNetwork,
    NB201Network,
    build_model,
    build_op,
    builders,
    count_flops,
    count_params,
    macro_kinds,
    model_cost,
)
from nasrescale.space.ops import CellOp, OpKind, op_kinds
from nasrescale.space.edge_factors import KERNEL_RULES
from nasrescale.protocol import load_protocol
from nasrescale.space.family_loader import get_family, load_families
from nasrescale.scaling import weight_rules, apply_init, lr_plan, param_groups
from nasrescale.space.topology import effective_graph, is_degenerate

from cellspace_helpers import arch_ops, random_arch, uniform_arch

NB201 = get_family("nb201")
NB201_OPS = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")
CONV_KERNEL = {"nor_conv_1x1": 1, "nor_conv_3x3": 3}  # written by hand, not read from the family
PAIRS = [(u, v) for v in range(1, 4) for u in range(v)]  # NB201 edge order of digit strings
SMALL = dict(width=4, cells=1, in_shape=(3, 8, 8))


def nb201_arch(ops: list[str]) -> str:
    """NB201 string of the cell with ``ops`` on PAIRS (0-1, 0-2, 1-2, 0-3, 1-3, 2-3)."""
    by_edge = dict(zip(PAIRS, ops))
    return "+".join("|" + "|".join(f"{by_edge[u, v]}~{u}" for u in range(v)) + "|" for v in range(1, 4))


def conv_kernels(arch: str) -> list[int]:
    """Kernels of the conv edges of an NB201 string, by reading the string."""
    tokens = [t.split("~")[0] for t in arch.replace("+", "").split("|") if t]
    return [CONV_KERNEL[t] for t in tokens if t in CONV_KERNEL]


def nb201_params_formula(arch: str, C: int, N: int, classes: int) -> int:
    """NB201 parameter count by hand: per k x k conv edge at width c, c*c*k*k weights plus a
    BN's 2c; stem Conv3x3(3->C)+BN; reduction c->2c = conv_a 3x3 + BN, conv_b 3x3 + BN,
    shortcut 1x1; head BN(4C) + Linear(4C, classes) with bias."""
    stem = 3 * C * 9 + 2 * C
    cells = sum(N * sum(c * c * k * k + 2 * c for k in conv_kernels(arch)) for c in (C, 2 * C, 4 * C))
    def reduction(ci: int, co: int) -> int:
        return (9 * ci * co + 2 * co) + (9 * co * co + 2 * co) + ci * co
    head = 2 * 4 * C + 4 * C * classes + classes
    return stem + cells + reduction(C, 2 * C) + reduction(2 * C, 4 * C) + head


def nb201_flops_formula(arch: str, C: int, N: int, classes: int, hw: int = 32) -> int:
    """NB201 multiply-accumulates per image by hand (convs and the linear layer only)."""
    stem = 9 * 3 * C * hw * hw
    cells = sum(N * sum(c * c * k * k * (hw >> s) ** 2 for k in conv_kernels(arch))
                for s, c in enumerate((C, 2 * C, 4 * C)))
    def reduction(ci: int, co: int, out_hw: int) -> int:
        return (9 * ci * co + 9 * co * co + ci * co) * out_hw * out_hw
    head = 4 * C * classes + classes
    return stem + cells + reduction(C, 2 * C, hw // 2) + reduction(2 * C, 4 * C, hw // 4) + head


def randomize_(model: nn.Module, seed: int) -> None:
    """Random nonzero BN affine parameters, running statistics and biases, so that a parametric
    op on an all-zero input yields a nonzero constant, in train and eval mode."""
    gen = torch.Generator().manual_seed(seed)
    def nonzero(t: torch.Tensor) -> torch.Tensor:
        sign = torch.randint(0, 2, t.shape, generator=gen).float() * 2 - 1
        return sign * (0.5 + torch.rand(t.shape, generator=gen))
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.copy_(nonzero(m.weight))
                m.bias.copy_(nonzero(m.bias))
                m.running_mean.copy_(nonzero(m.running_mean))
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape, generator=gen))
            elif isinstance(m, (nn.Conv2d, nn.Linear)) and m.bias is not None:
                m.bias.copy_(nonzero(m.bias))


def twin_models(arch: str, family=NB201, seed: int = 0, **kwargs) -> tuple[nn.Module, nn.Module]:
    """(full, pruned) networks of ``arch`` sharing one randomized state."""
    torch.manual_seed(seed)
    full = build_model(arch, family, prune=False, **kwargs)
    randomize_(full, seed)
    pruned = build_model(arch, family, prune=True, **kwargs)
    pruned.load_state_dict(full.state_dict())
    return full, pruned


def reference_cell(cell: Cell, x: torch.Tensor) -> torch.Tensor:
    """The definition, written independently: node v = sum over u < v of op_uv(node u),
    a zero op (or an absent edge) contributing 0 * node u."""
    family, graph = cell.family, cell.graph
    nodes = [x]
    for v in range(1, graph.number_of_nodes()):
        total = torch.zeros_like(x)
        for u in range(v):
            if graph.has_edge(u, v) and not family.op(graph.edges[u, v]["op"]).zero:
                total = total + cell.edges[f"{u}_{v}"](nodes[u])
        nodes.append(total)
    return nodes[-1]


# --------------------------------------------------------------------------- builders

def test_every_nonzero_op_kind_has_a_builder():
    missing = [name for name, kind in op_kinds().items() if not kind.zero and name not in builders()]
    assert not missing, f"op kinds without a model builder: {missing}"


@pytest.mark.parametrize("family_name", sorted(load_families()))
def test_builders_keep_shape_and_are_not_inplace(family_name):
    family = get_family(family_name)
    x = torch.randn(2, 4) if family.macro.get("kind") == "mlp" else torch.randn(2, 4, 5, 5)
    for op in family.ops:
        if op.zero:
            with pytest.raises(ArchError, match="zero op"):
                build_op(op, 4)
            continue
        module = build_op(op, 4)
        if op.kind.name == "factorized_reduce":  # DARTS's identity at stride 2 halves the resolution
            assert module(torch.randn(2, 4, 6, 6)).shape == (2, 4, 3, 3)
        else:
            assert module(x).shape == x.shape
        assert all(not getattr(m, "inplace", False) for m in module.modules())
        assert (count_params(module) > 0) == op.parametric


def test_nb201_op_modules_match_the_benchmark():
    conv = build_op(NB201.op("nor_conv_3x3"), 8)
    assert [type(m) for m in conv] == [nn.ReLU, nn.Conv2d, nn.BatchNorm2d]
    assert conv[1].bias is None
    assert conv[1].padding == (1, 1)
    assert conv[1].stride == (1, 1)
    assert conv[2].affine
    assert conv[2].track_running_stats
    assert conv[2].eps == 1e-5
    assert conv[2].momentum == 0.1
    pool = build_op(NB201.op("avg_pool_3x3"), 8)
    assert isinstance(pool, nn.AvgPool2d)
    assert pool.count_include_pad is False
    assert pool.padding == 1
    assert isinstance(build_op(NB201.op("skip_connect"), 8), nn.Identity)


def test_build_op_without_builder_names_the_fix():
    orphan = CellOp("mystery", OpKind("not_a_registered_kind", parametric=True))
    with pytest.raises(FamilyError, match="op 'mystery': kind: expected one of .*op kinds with a model builder.*register_builder"):
        build_op(orphan, 4)


# --------------------------------------------------------------------------- cells

DEAD_CELLS = [
    "0_03_101",    # node 1 is zero; conv 1->2 maps it to BN's shift, which reaches the output
    "0_03_001",    # same, but no input->output path: degenerate, output is a constant
    "0_04_101",    # pool out of the zero node: skipped
    "|nor_conv_3x3~0|+|none~0|none~1|+|skip_connect~0|none~1|none~2|",  # 0->1 cannot reach the output
    "0_00_000",    # all zero
    "3_30_000",    # convs into a dead end: degenerate, output exactly zero
    "0_33_333",    # conv chain out of the zero node 1 next to live paths
    "2_00_300",    # conv 0->1 into a dead end; the output is the conv 0->3 alone
]


def sample_cells(count: int, seed: int = 2024) -> list[str]:
    rng = random.Random(seed)
    return [nb201_arch([rng.choice(NB201_OPS) for _ in PAIRS]) for _ in range(count)]


@pytest.mark.parametrize("arch", DEAD_CELLS + sample_cells(24))
def test_pruned_network_equals_full_definition(arch):
    full, pruned = twin_models(arch, **SMALL)
    x = torch.randn(4, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    for mode in ("eval", "train"):
        getattr(full, mode)(), getattr(pruned, mode)()
        with torch.no_grad():
            assert torch.equal(pruned(x), full(x)), mode
    # the full cells compute the definition as written independently
    full.eval()
    with torch.no_grad():
        h = torch.randn(2, 4, 8, 8)
        cell = full.cells()[0]
        assert torch.equal(cell(h), reference_cell(cell, h))


def test_parametric_edge_out_of_zero_node_is_computed_on_zeros():
    graph = parse_arch("0_03_101", NB201)
    assert (1, 2) not in effective_graph(graph, NB201).edges  # off the effective graph ...
    cell = Cell(graph, NB201, 4)
    assert (1, 2) in cell.computed_edges  # ... but its BN shift reaches the output
    randomize_(cell, 3)
    cell.eval()
    x = torch.randn(2, 4, 6, 6)
    const = cell.edges["1_2"](torch.zeros_like(x))
    assert const.abs().min() > 0
    assert torch.equal(cell(x), x + const)  # node 3 = skip(0) + skip(node 2)


def test_pruned_cell_runs_fewer_modules_but_builds_all():
    arch = "|nor_conv_3x3~0|+|none~0|avg_pool_3x3~1|+|skip_connect~0|none~1|none~2|"
    full, pruned = twin_models(arch, **SMALL)
    assert count_params(full) == count_params(pruned)
    for cell in pruned.cells():
        assert {e for e, _ in cell.edge_items()} == {(0, 1), (1, 2), (0, 3)}  # every non-zero edge built
        assert cell.computed_edges == [(0, 3)]

    def calls(model: nn.Module) -> int:
        count = 0
        def hook(*_):
            nonlocal count
            count += 1
        handles = [m.register_forward_hook(hook) for c in model.cells() for m in c.modules()]
        model(torch.randn(2, 3, 8, 8))
        for h in handles:
            h.remove()
        return count

    assert calls(pruned) < calls(full)


CUSTOM = {
    "with_zero": 'ops = [{name="z", kind="zero"}, {name="s", kind="identity"}, '
                 '{name="c", kind="relu_conv_bn", kernel=1}, {name="p", kind="avg_pool", kernel=3}]',
    "no_zero": 'ops = [{name="s", kind="identity"}, {name="c", kind="relu_conv_bn", kernel=3}]',
}


def custom_family(key: str):
    text = (f'{CUSTOM[key]}\n[family]\nname = "{key}"\ndepth_offset = 1\n'
            f'base = \'[[0, 1, "s"]]\'\n[macro]\nkind = "cnn"\nwidth = 2\n')
    return parse_family(text, source=f"<{key}>")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_cells_of_any_dag_match_the_definition(data):
    family = custom_family(data.draw(st.sampled_from(sorted(CUSTOM))))
    n = data.draw(st.integers(2, 6))
    choices = [None] + list(family.op_names)
    edges = [(u, v, op) for v in range(1, n) for u in range(v)
             if (op := data.draw(st.sampled_from(choices))) is not None]
    graph = make_graph(edges, family, n)
    torch.manual_seed(0)
    full = Cell(graph, family, 2, prune=False)
    randomize_(full, 5)
    pruned = Cell(graph, family, 2)
    pruned.load_state_dict(full.state_dict())
    x = torch.randn(3, 2, 4, 4)
    for mode in ("eval", "train"):
        full.train(mode == "train"), pruned.train(mode == "train")
        with torch.no_grad():
            ref = reference_cell(full, x)
            assert torch.equal(pruned(x), full(x))
            assert torch.equal(full(x), ref)
    live = set(effective_graph(graph, family).edges)
    assert live <= set(pruned.computed_edges)
    if is_degenerate(graph, family) and not any(family.op(graph.edges[e]["op"]).parametric for e in graph.edges):
        assert torch.equal(pruned(x), torch.zeros_like(x))


# --------------------------------------------------------------------------- NB201 network

def test_nb201_published_parameter_counts():
    assert count_params(build_model("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+"
                                    "|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|", NB201)) == 1_531_546
    assert count_params(build_model("0_00_000", NB201)) == 73_306
    assert count_params(build_model("1_11_111", NB201)) == 73_306


@pytest.mark.parametrize("arch,C,N,classes", [
    ("3_33_333", 16, 5, 10),
    ("2_41_032", 16, 5, 100),
    ("4_44_444", 16, 5, 120),
    ("3_03_201", 8, 2, 10),
    ("2_22_222", 6, 3, 7),
    ("0_03_001", 4, 1, 10),
])
def test_nb201_parameters_match_hand_formula(arch, C, N, classes):
    arch = format_arch(parse_arch(arch, NB201), NB201)
    model = build_model(arch, NB201, classes, width=C, cells=N)
    assert count_params(model) == nb201_params_formula(arch, C, N, classes)


def test_nb201_skeleton_layout():
    model = build_model("3_33_333", NB201, width=4, cells=2)
    assert isinstance(model, NB201Network)
    assert isinstance(model, CellNetwork)
    assert len(model.cells()) == 6
    assert all(c.graph is model.graph for c in model.cells())
    assert [c.width for c in model.cells()] == [4, 4, 8, 8, 16, 16]
    assert isinstance(model.readout, nn.Linear)
    assert model.readout.in_features == 16
    assert model(torch.randn(2, 3, 8, 8)).shape == (2, 10)
    default = build_model("3_33_333", NB201)
    assert default.width == 16
    assert default.num_cells == 5  # from cells/nb201.toml [macro]


def test_deepcopy_shares_the_family_and_copies_the_weights():
    model = build_model("0_03_101", NB201, **SMALL)
    twin = copy.deepcopy(model)
    assert twin.family is model.family
    assert all(c.family is NB201 for c in twin.cells())
    assert twin.stem[0].weight is not model.stem[0].weight
    assert torch.equal(twin.stem[0].weight, model.stem[0].weight)


def test_pickled_model_computes_the_same():
    """Models travel by pickle (torch.save of a whole model, Ray workers): the family must too."""
    model = build_model("3_34_131", NB201, **SMALL).eval()
    clone = pickle.loads(pickle.dumps(model)).eval()
    x = torch.randn(2, 3, 8, 8)
    assert torch.equal(model(x), clone(x))
    assert clone.family.name == "nb201"
    assert dict(clone.family.macro) == dict(NB201.macro)
    assert clone.family.op("nor_conv_3x3").kernel == 3


@pytest.mark.parametrize("arch", ["0_00_000", "0_03_001", "3_30_000", "|nor_conv_3x3~0|+|none~0|skip_connect~1|+|none~0|none~1|none~2|"])
def test_degenerate_cell_network_output_is_constant(arch):
    assert analyze(arch, NB201).degenerate
    _, model = twin_models(arch, **SMALL)
    model.eval()
    with torch.no_grad():
        a = model(torch.randn(4, 3, 8, 8))
        b = model(torch.randn(4, 3, 8, 8) * 3 + 1)
    assert torch.isfinite(a).all()
    assert torch.equal(a, b)


def test_channels_last_autocast_and_compile():
    arch = "|nor_conv_3x3~0|+|none~0|nor_conv_1x1~1|+|skip_connect~0|avg_pool_3x3~1|skip_connect~2|"
    _, model = twin_models(arch, **SMALL)
    model.eval()
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        ref = model(x)
        cl = model.to(memory_format=torch.channels_last)(x.to(memory_format=torch.channels_last))
        assert torch.allclose(cl, ref, atol=1e-5)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            low = model(x)
        assert torch.isfinite(low).all()
        assert torch.allclose(low.float(), ref, atol=0.2, rtol=0.1)
        compiled = torch.compile(model.to(memory_format=torch.contiguous_format), backend="eager", fullgraph=True)
        assert torch.allclose(compiled(x), ref, atol=1e-6)


# --------------------------------------------------------------------------- DAG networks

def test_mlp_and_cnn_layouts():
    mlp = build_model("2_22_222_2222", get_family("mlp_dag"), 7, width=8, in_shape=(3, 4, 4))
    assert isinstance(mlp, MLPNetwork)
    assert mlp.released_fan_mode == "fan_out"
    assert mlp.stem[0].in_features == 48
    assert mlp.stem[0].out_features == 8
    # stem 48*8+8, ten Linear(8, 8) edges with bias, readout 8*7+7
    assert count_params(mlp) == 48 * 8 + 8 + 10 * (64 + 8) + 8 * 7 + 7
    assert count_flops(mlp, (3, 4, 4)) == count_params(mlp)  # a Linear's MACs equal its parameters
    cnn = build_model("2_02_002_0002", get_family("cnn_dag"), width=4, in_shape=(3, 6, 6))
    assert isinstance(cnn, CNNNetwork)
    assert cnn.released_fan_mode == "fan_out"
    assert cnn.stem[0].kernel_size == (3, 3)
    assert cnn.stem[0].bias is not None
    # stem conv 3x3 (3->4) + bias, four 3x3 (4->4) convs + bias, per output pixel; readout 4*10+10
    assert count_flops(cnn, (3, 6, 6)) == (27 * 4 + 4) * 36 + 4 * (36 * 4 + 4) * 36 + 4 * 10 + 10
    assert cnn(torch.randn(2, 3, 6, 6)).shape == (2, 10)
    assert NB201Network.released_fan_mode == "fan_in"


# --------------------------------------------------------------------------- cost

def test_nb201_flops_match_closed_form():
    arch = "3_33_333"
    cost = model_cost(arch, NB201)
    expected = nb201_flops_formula(nb201_arch(["nor_conv_3x3"] * 6), 16, 5, 10)
    assert cost["flops_m"] == pytest.approx(expected / 1e6, abs=1e-9)
    assert cost["flops_m"] == pytest.approx(220.12, abs=0.01)
    assert cost["params"] == cost["params_effective"] == nb201_params_formula(nb201_arch(["nor_conv_3x3"] * 6), 16, 5, 10)


def test_dead_edges_cost_only_in_the_benchmark_figures():
    arch = "|nor_conv_3x3~0|+|none~0|nor_conv_1x1~1|+|skip_connect~0|none~1|none~2|"
    state = torch.random.get_rng_state()
    cost = model_cost(arch, NB201, width=8, cells=2, in_shape=(3, 16, 16))
    assert torch.equal(state, torch.random.get_rng_state())  # the caller's RNG is untouched
    assert cost["flops_m"] * 1e6 == nb201_flops_formula(arch, 8, 2, 10, hw=16)
    assert cost["flops_m_effective"] * 1e6 == nb201_flops_formula("|skip_connect~0|", 8, 2, 10, hw=16)
    assert cost["params_effective"] == nb201_params_formula("|skip_connect~0|", 8, 2, 10) < cost["params"]


# --------------------------------------------------------------------------- build_model checks

def family_with_macro(macro: str):
    text = get_family("nb201").source.read_text().split("[macro]")[0] + "[macro]\n" + macro
    return parse_family(text, source="test.toml", path=Path("test.toml"))


def test_macro_table_is_checked():
    with pytest.raises(ConfigError, match=r"test.toml: macro.depth: unknown key; allowed: kind, norm, width, cells"):
        build_model("3_33_333", family_with_macro('kind = "nb201"\nwidth = 4\ncells = 1\ndepth = 3\n'))
    with pytest.raises(ConfigError, match=r"macro.kind: expected one of 'nb201', 'mlp', 'cnn', 'darts', 'nb101' .*got 'resnet'"):
        build_model("3_33_333", family_with_macro('kind = "resnet"\nwidth = 4\n'))
    with pytest.raises(ConfigError, match=r"macro.cells: missing"):
        build_model("3_33_333", family_with_macro('kind = "nb201"\nwidth = 4\n'))
    with pytest.raises(ConfigError, match=r"macro.width: expected a positive integer"):
        build_model("3_33_333", family_with_macro('kind = "nb201"\nwidth = 0\ncells = 1\n'))
    # a missing key may be given by the caller
    assert len(build_model("3_33_333", family_with_macro('kind = "nb201"\nwidth = 4\n'), cells=1).cells()) == 3


def test_build_model_arguments_are_checked():
    with pytest.raises(ConfigError, match="has no 'cells' setting"):
        build_model("1_01_001_0001", get_family("mlp_dag"), cells=2)
    with pytest.raises(ConfigError, match="width="):
        build_model("3_33_333", NB201, width=-1)
    with pytest.raises(ConfigError, match="in_shape"):
        build_model("3_33_333", NB201, in_shape=(3, 32))
    with pytest.raises(ArchError):
        build_model("9_99_999", NB201)
    graph = parse_arch("3_33_333", NB201)
    arch = nb201_arch(["nor_conv_3x3"] * 6)
    assert count_params(build_model(graph, NB201, width=4, cells=1)) == nb201_params_formula(arch, 4, 1, 10)


# --------------------------------------------------------------------------- every family

def family_cases():
    """Cases from the registries: every loaded family; per family its base, one cell with op o
    everywhere for each of its ops o (so every op kind it uses is built), a random cell and, for
    an edge DAG, the cells with a structural or zero op on every edge (degenerate for a zero op)."""
    for name, family in sorted(load_families().items()):
        rng = random.Random(f"models-{name}")
        archs = {"base": family.base}
        ops = arch_ops(family) if family.structure.name != "edge_dag" else family.op_names
        for op in ops:
            archs[f"all-{op}"] = uniform_arch(family, op)
        archs["random"] = random_arch(family, rng)
        for label, arch in archs.items():
            yield pytest.param(family, arch, id=f"{name}-{label}")


def test_registry_cases_cover_every_op_kind_with_a_builder():
    """A new op kind (with a builder) must appear in some family, or the test below never builds it."""
    used = {op.kind.name for family in load_families().values() for op in family.ops}
    kinds = {name for name, kind in op_kinds().items() if kind.zero or name in builders()}
    assert kinds <= used, f"op kinds no family uses (add one to cells/ or examples): {sorted(kinds - used)}"


def _settings(family) -> dict:
    cells = 3 if family.macro.get("kind") == "darts" else 1  # a DARTS network needs 3 cells for a normal one
    return {"width": 8} | ({"cells": cells} if "cells" in macro_kinds().get(family.macro.get("kind"), ()) else {})


@pytest.mark.parametrize("family,arch", list(family_cases()))
def test_every_family_builds_trains_and_backprops(family, arch):
    """parse -> analyze -> build -> every init rule -> param_groups under every kernel rule ->
    one SGD step: the scaling map covers every parameter, each group's LR is the plan's, and
    the step moves exactly the parameters that have a gradient."""
    graph = parse_arch(format_arch(arch, family) if isinstance(arch, nx.DiGraph) else arch, family)
    record = analyze(graph, family)
    assert record.degenerate == is_degenerate(graph, family)
    x, y = torch.randn(4, 3, 8, 8), torch.tensor([0, 1, 2, 3])
    for i, rule in enumerate(weight_rules()):
        torch.manual_seed(0)
        model = apply_init(build_model(graph, family, 5, in_shape=(3, 8, 8), **_settings(family)), rule)
        names = dict(model.named_parameters())
        assert set(model.scaling_map()) == set(names)
        for kernel_rule in KERNEL_RULES:
            protocol = load_protocol("rescaled", ["lr=0.4", f"kernel_rule={kernel_rule}", f"init={rule}"])
            groups = param_groups(model, protocol)
            grouped = [id(p) for g in groups for p in g["params"]]
            assert sorted(grouped) == sorted(id(p) for p in names.values())  # each parameter once
            plan = lr_plan(model, protocol)
            for g in groups:
                assert g["lr"] == pytest.approx(plan.lr / plan.kernel_factor * g["kernel_factor"] * g["rule_factor"])
        protocol = load_protocol("rescaled", ["lr=0.4", f"kernel_rule={KERNEL_RULES.names()[i % len(KERNEL_RULES)]}"])
        optimizer = torch.optim.SGD(param_groups(model, protocol), lr=0.4)
        loss = F.cross_entropy(model(x), y)
        assert torch.isfinite(loss)
        loss.backward()
        before = {n: p.detach().clone() for n, p in names.items()}
        optimizer.step()
        for n, p in names.items():
            moved = not torch.equal(before[n], p.detach())
            assert moved == bool(p.grad is not None and p.grad.abs().sum() > 0), n
        for cell in model.cells() if family.structure.name == "edge_dag" else ():  # the edge-DAG cell's plan
            assert set(effective_graph(cell.graph, family).edges) <= set(cell.computed_edges)
            for u, v in cell.computed_edges:
                for p in cell.edges[f"{u}_{v}"].parameters():
                    assert p.grad is not None, (u, v)
        assert model.readout.weight.grad is not None
        if not record.degenerate:
            assert all(p.grad is not None for p in model.stem.parameters())
