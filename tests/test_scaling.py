"""Init rules (measured statistics) and LR rules (param groups for a stock SGD)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from nasrescale.encodings import parse_arch
from nasrescale.errors import ConfigError
from nasrescale.families import read_family_file
from nasrescale.models import build_model
from nasrescale.protocol import load_protocol
from nasrescale.registry import get_family
from nasrescale.scaling import apply_init, lr_plan, param_groups
from nasrescale.scaling.diagnose import diagnose_rule
from nasrescale.topology import init_divisors, lr_scale

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NB201 = get_family("nb201")
ALL_3X3 = "3_33_333"


def seeded(arch, family=NB201, seed=0, **kw):
    torch.manual_seed(seed)
    return build_model(arch, family, **kw)


def conv_of(op_module: nn.Module) -> nn.Module:
    return next(m for m in op_module.modules() if isinstance(m, (nn.Conv2d, nn.Linear)))


def rel_var_error(weight: torch.Tensor, expected_var: float) -> float:
    return abs(weight.detach().double().var().item() / expected_var - 1)


@pytest.mark.parametrize("rule, divisor_rule", [("in_degree", "target"), ("in_degree_source", "source")])
def test_in_degree_rules_draw_the_stated_variances(rule, divisor_rule):
    arch = "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|nor_conv_1x1~0|nor_conv_3x3~1|nor_conv_3x3~2|"
    model = apply_init(seeded(arch, width=64, cells=1), rule)
    divisors = init_divisors(parse_arch(arch, NB201), NB201, divisor_rule)
    checked = 0
    for cell in model.cells():
        for edge, op in cell.edge_items():
            if edge not in divisors:
                continue
            conv = conv_of(op)
            fan_in = conv.weight[0].numel()
            # >= 4096 weights: the sample variance is within a few percent of the target
            assert rel_var_error(conv.weight, 2 / (fan_in * divisors[edge])) < 0.1, (cell.width, edge)
            bn = op[-1]
            assert torch.all(bn.weight == 1) and torch.all(bn.bias == 0)
            checked += 1
    assert checked == 3 * len(divisors)
    stem = model.stem[0]
    assert rel_var_error(stem.weight, 2 / stem.weight[0].numel()) < 0.1
    readout = model.readout  # mean-field: std = 2 / fan_in, variance 4 / n^2
    assert rel_var_error(readout.weight, (2 / readout.in_features) ** 2) < 0.15
    assert torch.all(readout.bias == 0)


def test_target_and_source_rules_differ_where_the_divisors_do():
    a = apply_init(seeded(ALL_3X3, width=32, cells=1), "in_degree")
    b = apply_init(seeded(ALL_3X3, width=32, cells=1), "in_degree_source")
    cell_a, cell_b = a.cells()[0], b.cells()[0]
    # edge 1->3: target in-degree 3, source (node 1) raw in-degree 1 -> variance ratio 1/3
    var_a = conv_of(cell_a.edges["1_3"]).weight.var().item()
    var_b = conv_of(cell_b.edges["1_3"]).weight.var().item()
    assert var_a / var_b == pytest.approx(1 / 3, rel=0.1)


def test_default_rule_is_pytorch_default_and_reductions_stay_default():
    fresh, default = seeded(ALL_3X3, width=8, cells=1), apply_init(seeded(ALL_3X3, width=8, cells=1), "default")
    assert all(torch.equal(p, q) for p, q in zip(fresh.state_dict().values(), default.state_dict().values()))
    scaled = apply_init(seeded(ALL_3X3, width=8, cells=1), "in_degree")
    fresh_sd, scaled_sd = fresh.state_dict(), scaled.state_dict()
    reduction_keys = [k for k in fresh_sd if k.startswith("body.") and ".edges." not in k]
    assert reduction_keys and all(torch.equal(fresh_sd[k], scaled_sd[k]) for k in reduction_keys)
    assert not torch.equal(fresh_sd["readout.weight"], scaled_sd["readout.weight"])


def test_released_rule_uses_fan_out_for_dag_nets():
    mlp = get_family("mlp_dag")
    model = apply_init(seeded("2_02_002_0002", mlp, width=512), "in_degree_source")
    stem = model.stem[0] if isinstance(model.stem, nn.Sequential) else model.stem
    assert rel_var_error(stem.weight, 2 / 512) < 0.05  # fan_out = width, as the released code
    ours = apply_init(seeded("2_02_002_0002", mlp, width=512), "in_degree")
    stem = ours.stem[0] if isinstance(ours.stem, nn.Sequential) else ours.stem
    assert rel_var_error(stem.weight, 2 / 3072) < 0.05  # fan_in = 3 * 32 * 32


def test_unknown_init_rule():
    with pytest.raises(ConfigError, match="known rules: default, in_degree, in_degree_source"):
        apply_init(seeded(ALL_3X3, width=4, cells=1), "xavier")


def test_nb201_protocol_lr_is_fixed():
    model = seeded(ALL_3X3, width=4, cells=1)
    groups = param_groups(model, load_protocol("nb201"))
    assert [g["lr"] for g in groups] == [0.1]
    assert len(groups[0]["params"]) == len(list(model.parameters()))


@pytest.mark.parametrize("arch", [ALL_3X3, NB201.base, "3_34_131", "0_11_101"])
def test_rescaled_protocol_lr_is_base_times_scale(arch):
    model = seeded(arch, width=4, cells=1)
    protocol = load_protocol("rescaled", ["lr=0.5"])
    expected = 0.5 * lr_scale(parse_arch(arch, NB201), NB201)
    assert [g["lr"] for g in param_groups(model, protocol)] == pytest.approx([expected])
    assert lr_plan(model, protocol).lr == pytest.approx(expected)
    if arch == ALL_3X3:
        assert expected == pytest.approx(0.5 * 0.0890871, rel=1e-6)


def test_degenerate_cell_trains_at_base_lr():
    plan = lr_plan(seeded("0_00_000", width=4, cells=1), load_protocol("rescaled", ["lr=0.3"]))
    assert plan.lr_scale is None and plan.lr == 0.3


def test_rescaled_needs_a_base_lr():
    with pytest.raises(ConfigError, match="--base-lr"):
        param_groups(seeded(ALL_3X3, width=4, cells=1), load_protocol("rescaled"))


def test_per_layer_kernel_groups():
    family = read_family_file(ROOT / "examples" / "cells" / "nb201_conv5.toml")
    arch = "|nor_conv_5x5~0|+|nor_conv_1x1~0|nor_conv_3x3~1|+|skip_connect~0|none~1|nor_conv_5x5~2|"
    model = seeded(arch, family, width=4, cells=1)
    protocol = load_protocol("rescaled", ["lr=1.0"])
    scale = lr_scale(parse_arch(arch, family), family)
    groups = param_groups(model, protocol)
    assert sorted(g["kernel_factor"] for g in groups) == pytest.approx([0.6, 1.0, 3.0])
    lr_of = {id(p): g["lr"] for g in groups for p in g["params"]}
    assert len(lr_of) == len(list(model.parameters()))  # every parameter exactly once
    for m in model.modules():
        for p in m.parameters(recurse=False):
            factor = 3 / m.kernel_size[0] if isinstance(m, nn.Conv2d) else 1.0
            assert lr_of[id(p)] == pytest.approx(scale * factor)


def test_network_kernel_rule(tmp_path):
    text = (ROOT / "cells" / "cnn_dag.toml").read_text().replace('name = "cnn_dag"', 'name = "cnn5"')
    (tmp_path / "cnn5.toml").write_text(text.replace("kernel = 3", "kernel = 5"))
    family = read_family_file(tmp_path / "cnn5.toml")
    model = seeded("2_02_002_0002", family, width=4)
    plan = lr_plan(model, load_protocol("rescaled", ["lr=1.0"]))
    assert plan.kernel_rule == "network" and plan.kernel_factor == pytest.approx(3 / 5)
    assert plan.lr == pytest.approx(math.sqrt(27 / 7**3) * 0.6)
    override = lr_plan(model, load_protocol("rescaled", ["lr=1.0", "kernel_rule=none"]))
    assert override.kernel_factor == 1.0


def _batch(n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 3, 32, 32, generator=g), torch.randint(0, 10, (n,), generator=g)


def test_diagnose_shows_bn_absorbs_init_but_not_the_update():
    """NB201: BatchNorm after each conv makes node 1's moment 1 under any init, while the
    larger He-scale weights of the in-degree rule shrink the one-step pre-activation change."""
    x, y = _batch()
    results = {rule: diagnose_rule(lambda: seeded(ALL_3X3, width=16, cells=1), rule, x, y, lr=0.1)
               for rule in ("default", "in_degree")}
    for r in results.values():
        assert r.node_moments[0][1] == pytest.approx(1.0, abs=1e-3)
    layer = "stage1.edge0->1"
    assert results["default"].layer_change[layer] > 3 * results["in_degree"].layer_change[layer]


def test_diagnose_shows_in_degree_init_tames_a_bn_free_dag():
    """MLP-DAG (no BatchNorm): under the in-degree rule every node's second moment stays
    within a small factor of the input node's; PyTorch's default lets them collapse."""
    mlp = get_family("mlp_dag")
    x, y = _batch()
    spread = {}
    for rule in ("default", "in_degree"):
        r = diagnose_rule(lambda: seeded("2_22_222_2222", mlp, width=256), rule, x, y, lr=0.01)
        moments = list(r.node_moments[0].values())
        spread[rule] = max(moments) / min(moments)
    assert spread["in_degree"] < 3 < spread["default"]
