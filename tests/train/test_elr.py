"""Effective learning rates and the subcritical warm-up (Mehmeti-Göpel & Wand): the layers found
from the structure, the warm-up's LR on hand-made norms, its no-flip guarantee in the paper's
discrete model, and tiny end-to-end trainings (float64 where runs are compared)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from nasrescale.errors import ConfigError
from nasrescale.jobs.job import DataSpec, TrainJob
from nasrescale.models import build_model
from nasrescale.models.fused import FusedNetwork
from nasrescale.protocol import load_protocol
from nasrescale.space.family_loader import get_family
from nasrescale.models.elr import layer_elrs, relative_spread, scale_invariant_convs, subcritical_factor
from nasrescale.train.elr_control import ElrControl

ARCH = "|nor_conv_3x3~0|+|nor_conv_1x1~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|none~2|"
WARM = ["warmup_rule=elr_subcritical"]
TINY = DataSpec("cifar10-subset", train_subset=60, test_subset=20, resolution=8)


# --- which layers are scale-invariant -------------------------------------------------------------

def test_scale_invariant_layers_are_read_from_the_structure():
    net = build_model(ARCH, get_family("nb201"), width=4, cells=1)
    found = dict(scale_invariant_convs(net))
    convs = {name: m for name, m in net.named_modules() if isinstance(m, nn.Conv2d)}
    assert net.stem[0] in found.values()
    for block in (net.body[1], net.body[3]):  # reduction blocks: both convs, not the unnormalized shortcut
        assert block.conv_a[1] in found.values() and block.conv_b[1] in found.values()
        assert block.shortcut[1] not in found.values()
    cell_convs = {n for n in convs if ".edges." in n}
    assert cell_convs and cell_convs <= set(found)  # every cell conv is ReLU -> conv -> BatchNorm
    assert set(found) == set(convs) - {"body.1.shortcut.1", "body.3.shortcut.1"}
    fused = FusedNetwork([net, build_model(ARCH, get_family("nb201"), width=4, cells=1)])
    assert [n for n, _ in scale_invariant_convs(fused.net)] == [n for n, _ in scale_invariant_convs(net)]
    for family, arch in (("mlp_dag", "2_02_002_0002"), ("cnn_dag", "2_02_002_0002")):
        assert scale_invariant_convs(build_model(arch, get_family(family), width=4)) == []
    other = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(8))  # normalizes other channels
    assert scale_invariant_convs(other) == []


# --- the warm-up's LR on hand-made norms -----------------------------------------------------------

def hand_made(weight_norms: list[list[float]], grad_norms: list[list[float]]) -> nn.Module:
    """Conv+BatchNorm layers whose channel ``c`` of layer ``j`` has weight norm
    ``weight_norms[j][c]`` and gradient norm ``grad_norms[j][c]`` (random directions)."""
    g = torch.Generator().manual_seed(0)
    layers = []
    for ws, gs in zip(weight_norms, grad_norms):
        conv = nn.Conv2d(2, len(ws), 3, bias=False)
        with torch.no_grad():
            w = torch.randn(conv.weight.shape, generator=g)
            d = torch.randn(conv.weight.shape, generator=g)
            conv.weight.copy_(w / w.flatten(1).norm(dim=1).view(-1, 1, 1, 1) * torch.tensor(ws).view(-1, 1, 1, 1))
            conv.weight.grad = d / d.flatten(1).norm(dim=1).view(-1, 1, 1, 1) * torch.tensor(gs).view(-1, 1, 1, 1)
        layers.append(nn.Sequential(conv, nn.BatchNorm2d(len(ws))))
    return nn.Sequential(*layers)


# layer ELRs (the largest channel's): 2/1 = 2, 9/3 = 3, 1/4, 8/2 = 4 -> the two highest: 4 and 3
WEIGHTS = [[1.0, 2.0], [3.0, 1.0], [4.0, 4.0], [2.0, 5.0]]
GRADS = [[2.0, 1.0], [9.0, 0.5], [1.0, 0.2], [8.0, 5.0]]
KAPPA = 1 / math.sqrt(4 * 3)  # the flipping ratio of the two highest-ELR layers (eq. 24)


@pytest.mark.parametrize("lr, momentum, chosen", [
    (1.0, 0.0, KAPPA),          # the schedule is above kappa: the step is taken at kappa
    (0.1, 0.0, 0.1),            # below: the schedule's own LR, and the warm-up is over
    (1.0, 0.9, KAPPA * 0.1),    # momentum 0.9: a step is 1 / (1 - 0.9) gradients long
])
def test_warmup_lr_is_kappa_of_the_two_highest_elr_layers(float64, lr: float, momentum: float, chosen: float):
    net = hand_made(WEIGHTS, GRADS)
    protocol = load_protocol("nb201", WARM + [f"momentum={momentum}", "nesterov=false"])
    control = ElrControl(net, 1, protocol, torch.device("cpu"))
    assert layer_elrs(control.weights, 1)[:, 0].tolist() == pytest.approx([2, 3, 0.25, 4], rel=1e-12)
    control.start_epoch([[lr]] * 4)
    control.before_update(last=False)
    assert float(control.factor[0]) * lr == pytest.approx(chosen, rel=1e-12)
    assert bool(control.done[0]) == (chosen == lr)


def test_warmup_scales_the_update_and_counts_per_layer_lrs(float64):
    net = hand_made(WEIGHTS, GRADS)
    lrs = [1.0, 2.0, 1.0, 0.5]  # per-layer LRs: the ELRs per unit of each layer's own LR count
    control = ElrControl(net, 1, load_protocol("nb201", WARM + ["momentum=0", "nesterov=false"]), torch.device("cpu"))
    control.start_epoch([[lr] for lr in lrs])
    control.before_update(last=True)
    top = sorted((e * lr for e, lr in zip([2, 3, 0.25, 4], lrs)), reverse=True)[:2]  # 6 and 2
    w = float(control.factor[0])
    assert w == pytest.approx(1 / math.sqrt(top[0] * top[1]), rel=1e-12)
    before = [p.detach().clone() for p in control.weights]
    opt = torch.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(control.weights, lrs)], lr=1.0)
    opt.step()
    control.after_update()
    for p, old, lr in zip(control.weights, before, lrs):
        torch.testing.assert_close(p.detach(), old - w * lr * p.grad, rtol=1e-12, atol=1e-14)
    entry = control.end_epoch()[0]
    assert entry["elr"] == pytest.approx([2, 3, 0.25, 4], rel=1e-12)
    assert entry["elr_spread"] == pytest.approx(float(torch.tensor([2, 3, 0.25, 4.0]).log().std(correction=0)))
    assert entry["warmup_factor"] == pytest.approx(w)


# --- the no-flip guarantee, in the paper's discrete model (eqs. 4-6) ---------------------------------

def simulate(choose_lr, layers: int = 8, steps: int = 12) -> list[torch.Tensor]:
    """ELRs over time of ``layers`` scale-invariant layers with constant base gradients that grow
    with depth as at initialization (eq. 6, alpha = sqrt(pi / (pi - 1))) and unit initial weight
    norms, each step's LR ``choose_lr(E)``, weight norms growing as eq. 5."""
    alpha = math.sqrt(math.pi / (math.pi - 1))
    c = torch.tensor([alpha ** (layers - i) for i in range(1, layers + 1)], dtype=torch.float64)
    sigma2 = torch.ones(layers, dtype=torch.float64)
    history = []
    for _ in range(steps):
        elr = c / sigma2  # eq. 10
        history.append(elr)
        lr = choose_lr(elr[:, None])
        sigma2 = sigma2 + lr ** 2 * c ** 2 / sigma2  # eq. 5
    return history


def flips(history: list[torch.Tensor], rel: float = 1e-9) -> int:
    """Pairs whose ELR ratio crosses 1 from one step to the next (within ``rel`` of 1 is a tie:
    float64 rounding of converged ELRs)."""
    def order(e: torch.Tensor) -> torch.Tensor:
        ratio = e[:, None] / e[None, :]
        return (ratio > 1 + rel).long() - (ratio < 1 - rel).long()

    return sum(int(((order(a) * order(b)) < 0).sum()) // 2 for a, b in zip(history, history[1:]))


def test_subcritical_warmup_never_flips_elr_ratios_and_shrinks_the_spread():
    history = simulate(lambda elr: float(subcritical_factor(elr)[0]), layers=8)
    assert flips(history) == 0
    spreads = [float(relative_spread(e[:, None])[0]) for e in history]
    assert all(b <= a + 1e-12 for a, b in zip(spreads, spreads[1:]))
    assert float(history[8].max() / history[8].min()) - 1 < 1e-9  # every ratio 1 within L = 8 steps
    critical = simulate(lambda elr: 1 / math.sqrt(float(elr.max() * elr.min())))  # kappa of highest and lowest
    assert flips(critical) > 0  # the control: a larger LR does flip ratios (Prop. 3.9)


# --- end to end ---------------------------------------------------------------------------------------

def test_every_run_records_its_elrs():
    short = ["epochs=2", "batch_size=20"]
    record = TrainJob.from_arch(ARCH, get_family("nb201"), TINY, load_protocol("nb201", short), width=4, cells=1).run()
    names = [n for n, _ in scale_invariant_convs(build_model(ARCH, get_family("nb201"), width=4, cells=1))]
    assert record["elr_layers"] == names
    for entry in record["history"]:
        assert len(entry["elr"]) == len(names)
        assert "warmup_factor" not in entry
        elr = torch.tensor(entry["elr"], dtype=torch.float64)[:, None]
        assert entry["elr_spread"] == pytest.approx(float(relative_spread(elr)[0]), abs=1e-3)  # elr: 4 digits
    record = TrainJob.from_arch("2_02_002_0002", get_family("mlp_dag"), TINY, load_protocol("nb201", short), width=4).run()
    assert record["elr_layers"] is None and "elr" not in record["history"][0]


def test_warmup_is_refused_where_nothing_is_scale_invariant():
    protocol = load_protocol("elr_warmup")
    with pytest.raises(ConfigError, match=r"^protocol\.warmup_rule: 'elr_subcritical' .* family 'mlp_dag' have none"):
        TrainJob.from_arch("2_02_002_0002", get_family("mlp_dag"), DataSpec("cifar10-subset"), protocol)
    TrainJob.from_arch("3_33_333", get_family("nb201"), DataSpec("cifar10-subset"), protocol)  # NB201 has them
    with pytest.raises(ConfigError, match=r"^protocol\.warmup_epochs: 2 with warmup_rule"):
        load_protocol("elr_warmup", ["warmup_epochs=2"])
    unknown = load_protocol("nb201", ["warmup_rule=linear_ramp"])  # the registry, above the protocol, checks it
    with pytest.raises(ConfigError, match=r"^protocol\.warmup_rule: expected one of 'elr_subcritical' \(the registered "
                                          r"warm-up rules\), got 'linear_ramp'; or leave warmup_rule out"):
        TrainJob.from_arch("3_33_333", get_family("nb201"), DataSpec("cifar10-subset"), unknown)
