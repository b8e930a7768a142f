"""Init rules (measured statistics) and LR rules (param groups for a stock SGD)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import pytest
import torch
from torch import nn

from nasrescale.space.encodings import parse_arch
from nasrescale.errors import ConfigError
from nasrescale.space.family_file import read_family_file
from nasrescale.models import build_model
from nasrescale.protocol import load_protocol
from nasrescale.space.family_loader import get_family
from nasrescale.scaling import weight_rules, apply_init, lr_plan, param_groups
from nasrescale.scaling.diagnose import diagnose_rule
from nasrescale.space.edge_factors import init_divisors
from nasrescale.space.topology import lr_scale

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NB201 = get_family("nb201")
ALL_3X3 = "3_33_333"


def seeded(arch, family=NB201, seed=0, **kw):
    torch.manual_seed(seed)
    return build_model(arch, family, **kw)


def conv_of(op_module: nn.Module) -> nn.Module:
    return next(m for m in op_module.modules() if isinstance(m, (nn.Conv2d, nn.Linear)))


def rel_var_error(weight: torch.Tensor, expected_var: float) -> float:
    return abs(weight.detach().double().var().item() / expected_var - 1)


def raw_source_in_degree(arch: str, u: int) -> int:
    """The released code's divisor of an edge out of node ``u``, computed from the NB201
    string directly: node 0 counts 1, node u > 0 counts its non-``none`` inputs."""
    if u == 0:
        return 1
    node = arch.strip("|").split("|+|")[u - 1]
    return sum(not tok.startswith("none~") for tok in node.split("|"))


@dataclass(frozen=True)
class InitRuleDivisors:
    """What an init rule divides He's 2/fan_in by, layer by layer, in an NB201 network: a cell
    edge u->v, the reduction block's convs, and the classifier's variance (not a divisor)."""

    edge: Callable[[str, int, int], int]  #: (arch, u, v) -> divisor of the conv on edge u->v
    block: dict[str, int]  #: reduction block conv -> divisor
    readout: Callable[[int], float]  #: fan_in -> classifier weight variance


#: every init rule but ``default`` (PyTorch's own draw, checked bit for bit below). The released
#: code's rule (issue 6 item 2): cell edge the raw in-degree of its source node, reduction block
#: conv_a 2, conv_b 1, 1x1 shortcut 2, classifier std 2/fan_in. The target rule (paper eq. 2): cell
#: edge u->v v's effective in-degree, the reduction block the in-degree of the node each conv
#: writes into (conv_a 1, conv_b 2, shortcut 2), classifier variance 2/n^2. Stem: 1 for both.
INIT_RULE_DIVISORS = {
    "in_degree_source": InitRuleDivisors(lambda arch, u, v: raw_source_in_degree(arch, u),
                                         {"conv_a": 2, "conv_b": 1, "shortcut": 2}, lambda n: (2 / n) ** 2),
    "in_degree": InitRuleDivisors(lambda arch, u, v: init_divisors(parse_arch(arch, NB201), NB201, "target")[(u, v)],
                                  {"conv_a": 1, "conv_b": 2, "shortcut": 2}, lambda n: 2 / n**2),
}


def expected_variances(model, arch: str, rule: InitRuleDivisors) -> dict[str, float]:
    """Weight variance ``rule`` draws for every conv/linear of an NB201 network."""
    expected = {}
    for name, m in model.named_modules():
        if not isinstance(m, (nn.Conv2d, nn.Linear)):
            continue
        fan_in = m.weight[0].numel()
        if name == "readout":
            expected[name] = rule.readout(fan_in)
            continue
        if name.startswith("stem."):
            divisor = 1
        elif ".edges." in name:
            u, v = map(int, name.split(".edges.")[1].split(".")[0].split("_"))
            divisor = rule.edge(arch, u, v)
        else:
            divisor = rule.block[name.split(".")[2]]
        expected[name] = 2 / (fan_in * divisor)
    return expected


def test_every_init_rule_is_checked():
    # default: below, bit for bit; spectral: tests/scaling/test_spectral.py (its variances, and its
    # spectral norms across widths)
    assert set(weight_rules()) == {"default", "spectral", *INIT_RULE_DIVISORS}


@pytest.mark.parametrize("rule", list(INIT_RULE_DIVISORS))
@pytest.mark.parametrize("arch", [
    "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|nor_conv_1x1~0|nor_conv_3x3~1|nor_conv_3x3~2|",
    "|nor_conv_1x1~0|+|none~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_1x1~2|",
    "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|",
])
def test_init_rule_draws_its_variances_for_every_conv(arch, rule):
    model = apply_init(seeded(arch, width=32, cells=1), rule)
    expected = expected_variances(model, arch, INIT_RULE_DIVISORS[rule])
    kinds = {name.split(".")[2] if name.startswith("body.") and ".edges." not in name else name.split(".")[0]
             for name in expected}
    assert kinds == {"stem", "body", "conv_a", "conv_b", "shortcut", "readout"}  # every kind of layer checked
    for name, var in expected.items():
        m = model.get_submodule(name)
        # >= 1024 weights per layer: sample variance within ~5% (1 sigma); the divisors differ by 2x
        assert rel_var_error(m.weight, var) < 0.2, name
        if m.bias is not None:
            assert torch.all(m.bias == 0), name
    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm2d):
            assert torch.all(m.weight == 1), name
            assert torch.all(m.bias == 0), name


def test_target_divisors_are_the_effective_in_degrees():
    target = init_divisors(parse_arch(ALL_3X3, NB201), NB201, "target")
    assert target == {(0, 1): 1, (0, 2): 2, (1, 2): 2, (0, 3): 3, (1, 3): 3, (2, 3): 3}


def test_target_and_source_rules_differ_where_the_divisors_do():
    a = apply_init(seeded(ALL_3X3, width=32, cells=1), "in_degree")
    b = apply_init(seeded(ALL_3X3, width=32, cells=1), "in_degree_source")
    cell_a, cell_b = a.cells()[0], b.cells()[0]
    # edge 1->3: target in-degree 3, source (node 1) raw in-degree 1 -> variance ratio 1/3
    var_a = conv_of(cell_a.edges["1_3"]).weight.var().item()
    var_b = conv_of(cell_b.edges["1_3"]).weight.var().item()
    assert var_a / var_b == pytest.approx(1 / 3, rel=0.1)


def test_default_rule_is_pytorch_default():
    fresh, default = seeded(ALL_3X3, width=8, cells=1), apply_init(seeded(ALL_3X3, width=8, cells=1), "default")
    assert fresh.state_dict().keys() == default.state_dict().keys()
    for k, p in fresh.state_dict().items():
        assert torch.equal(p, default.state_dict()[k]), f"the default rule changed {k}"
    scaled = apply_init(seeded(ALL_3X3, width=8, cells=1), "in_degree")
    fresh_sd, scaled_sd = fresh.state_dict(), scaled.state_dict()
    changed = {k for k in fresh_sd if k.endswith("weight") and not torch.equal(fresh_sd[k], scaled_sd[k])}
    convs = {f"{n}.weight" for n, m in fresh.named_modules() if isinstance(m, (nn.Conv2d, nn.Linear))}
    assert convs <= changed  # every conv/linear redrawn, reduction blocks included


def test_scaling_functions_refuse_other_modules():
    for call in (lambda: apply_init(nn.Linear(2, 2), "in_degree"),
                 lambda: param_groups(nn.Linear(2, 2), load_protocol("nb201")),
                 lambda: lr_plan(nn.Linear(2, 2), load_protocol("nb201"))):
        with pytest.raises(ConfigError, match="expected a CellNetwork.*got Linear"):
            call()


def test_released_rule_uses_fan_out_for_dag_nets():
    mlp = get_family("mlp_dag")
    model = apply_init(seeded("2_02_002_0002", mlp, width=512), "in_degree_source")
    stem = model.stem[0] if isinstance(model.stem, nn.Sequential) else model.stem
    assert rel_var_error(stem.weight, 2 / 512) < 0.05  # fan_out = width, as the released code
    ours = apply_init(seeded("2_02_002_0002", mlp, width=512), "in_degree")
    stem = ours.stem[0] if isinstance(ours.stem, nn.Sequential) else ours.stem
    assert rel_var_error(stem.weight, 2 / 3072) < 0.05  # fan_in = 3 * 32 * 32


def test_unknown_init_rule():
    with pytest.raises(ConfigError, match="known rules: " + ", ".join(weight_rules())):
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
    """No path: no scale (``None``, not 1.0), and the optimizer's groups get the base LR."""
    model = seeded("0_00_000", width=4, cells=1)
    protocol = load_protocol("rescaled", ["lr=0.3"])
    plan = lr_plan(model, protocol)
    assert plan.lr_scale is None
    assert plan.lr == 0.3
    groups = param_groups(model, protocol)
    assert [g["lr"] for g in groups] == [0.3]
    assert sum(len(g["params"]) for g in groups) == len(list(model.parameters()))


def test_rescaled_needs_a_base_lr():
    with pytest.raises(ConfigError, match="--base-lr"):
        param_groups(seeded(ALL_3X3, width=4, cells=1), load_protocol("rescaled"))


def test_per_layer_kernel_groups():
    """per_layer: each cell-edge conv gets q_base / q of its own kernel; skeleton convs (stem,
    reduction blocks, 1x1 shortcut), BatchNorm and readout keep factor 1."""
    family = read_family_file(ROOT / "examples" / "cells" / "nb201_conv5.toml")
    arch = "|nor_conv_5x5~0|+|nor_conv_1x1~0|nor_conv_3x3~1|+|skip_connect~0|none~1|nor_conv_5x5~2|"
    model = seeded(arch, family, width=4, cells=1)
    protocol = load_protocol("rescaled", ["lr=1.0", "kernel_rule=per_layer"])
    scale = lr_scale(parse_arch(arch, family), family)
    groups = param_groups(model, protocol)
    assert sorted(g["kernel_factor"] for g in groups) == pytest.approx([0.6, 1.0, 3.0])
    lr_of = {id(p): g["lr"] for g in groups for p in g["params"]}
    assert len(lr_of) == len(list(model.parameters()))  # every parameter exactly once
    edge_convs = {m for cell in model.cells() for _, op in cell.edge_items() for m in op.modules()
                  if isinstance(m, nn.Conv2d)}
    shortcut = model.body[1].shortcut[1]
    assert shortcut.kernel_size == (1, 1)
    assert lr_of[id(shortcut.weight)] == pytest.approx(scale)
    assert lr_of[id(model.stem[0].weight)] == pytest.approx(scale)
    for m in model.modules():
        for p in m.parameters(recurse=False):
            factor = 3 / m.kernel_size[0] if m in edge_convs else 1.0
            assert lr_of[id(p)] == pytest.approx(scale * factor)


def test_network_rule_is_one_group_over_every_parameter():
    family = read_family_file(ROOT / "examples" / "cells" / "nb201_conv5.toml")
    arch = "|nor_conv_5x5~0|+|nor_conv_1x1~0|nor_conv_3x3~1|+|skip_connect~0|none~1|nor_conv_5x5~2|"
    model = seeded(arch, family, width=4, cells=1)
    groups = param_groups(model, load_protocol("rescaled", ["lr=1.0", "kernel_rule=network"]))
    scale = lr_scale(parse_arch(arch, family), family)
    assert len(groups) == 1
    assert len(groups[0]["params"]) == len(list(model.parameters()))
    assert groups[0]["lr"] == pytest.approx(scale * 3 / 5)


def test_network_kernel_rule(tmp_path):
    text = (ROOT / "cells" / "cnn_dag.toml").read_text().replace('name = "cnn_dag"', 'name = "cnn5"')
    (tmp_path / "cnn5.toml").write_text(text.replace("kernel = 3", "kernel = 5"))
    family = read_family_file(tmp_path / "cnn5.toml")
    model = seeded("2_02_002_0002", family, width=4)
    plan = lr_plan(model, load_protocol("rescaled", ["lr=1.0"]))
    assert plan.kernel_rule == "network"
    assert plan.kernel_factor == pytest.approx(3 / 5)
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


def test_scaling_map_refuses_an_undeclared_layer():
    """A skeleton with a conv/linear outside stem, cells and readout must declare its divisors."""
    from nasrescale.models import MLPNetwork

    class Extra(MLPNetwork):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.side = nn.Linear(4, 4)

    mlp = get_family("mlp_dag")
    net = Extra(parse_arch("2_02_002_0002", mlp), mlp, width=4, in_features=12)
    with pytest.raises(ConfigError, match=r"module 'side' \(Linear\) are not in the scaling map.*skeleton_init_divisors"):
        apply_init(net, "in_degree")
    assert apply_init(net, "default") is net  # PyTorch's init needs no map


def test_scaling_map_is_built_once_and_covers_every_parameter():
    model = seeded(ALL_3X3, width=4, cells=2)
    scales = model.scaling_map()
    assert model.scaling_map() is scales
    assert set(scales) == {n for n, _ in model.named_parameters()}
    roles = {s.role for s in scales.values()}
    assert roles == {"stem", "edge", "skeleton", "readout", "norm"}
