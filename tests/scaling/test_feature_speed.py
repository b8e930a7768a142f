"""The feature speed formula (Chizat & Netrapalli, Thm. 2.1) as ``nasrescale diagnose`` measures it,
and diagnose's protocols (per-parameter LRs, the ELR warm-up's step)."""

from __future__ import annotations

import math

import pytest
import torch

from nasrescale.errors import ConfigError
from nasrescale.models import build_model
from nasrescale.models.elr import layer_elrs, scale_invariant_convs, subcritical_factor
from nasrescale.models.nb201 import NB201Network
from nasrescale.protocol import load_protocol
from nasrescale.scaling import apply_init
from nasrescale.scaling.diagnose import diagnose_rule, step_lrs
from nasrescale.scaling.feature_speed import feature_speed
from nasrescale.space.family_loader import get_family

NB201_ARCH = "|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|none~0|avg_pool_3x3~1|nor_conv_3x3~2|"
CASES = [("nb201", NB201_ARCH, {"width": 4, "cells": 1}), ("mlp_dag", "2_02_002_0002", {"width": 16}),
         ("cnn_dag", "2_12_002_0012", {"width": 4})]


def batch(n: int = 12) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    return torch.randn(n, 3, 8, 8, generator=g), torch.randint(0, 10, (n,), generator=g)


def network(family: str, arch: str, size: dict, init: str = "default") -> torch.nn.Module:
    torch.manual_seed(0)
    return apply_init(build_model(arch, get_family(family), 10, in_shape=(3, 8, 8), **size), init)


@pytest.mark.parametrize("family, arch, size", CASES)
def test_formula_predicts_a_small_step_for_every_block(family: str, arch: str, size: dict):
    """At a small LR one step is first order: the formula's update (built from the loss decrease
    of the blocks up to v, the angle and |b_v|) equals the measured one; the angle is in [0, 90)."""
    net, (x, y) = network(family, arch, size), batch()
    speeds = feature_speed(net, x, y, {name: 1e-5 for name, _ in net.named_parameters()})
    assert [s.block for s in speeds] == [name for name, _ in net.trunk()]
    for s in speeds:
        assert 0 <= s.angle_deg < 90, s
        assert s.measured_rms == pytest.approx(s.predicted_rms, rel=1e-3), s
    decreases = [s.loss_decrease for s in speeds]
    assert decreases == sorted(decreases) and decreases[0] > 0  # Ldot_v accumulates along the chain


def test_per_parameter_lrs_and_a_large_step():
    net, (x, y) = network("nb201", NB201_ARCH, {"width": 4, "cells": 1}, "spectral"), batch()
    lrs = step_lrs(net, load_protocol("spectral", ["lr=1e-5"]), 0.1)
    assert len(set(lrs.values())) > 2  # the spectral rule's factors
    for s in feature_speed(net, x, y, lrs):
        assert s.measured_rms == pytest.approx(s.predicted_rms, rel=1e-3), s
    big = feature_speed(net, x, y, {name: 10 * lr for name, lr in step_lrs(net, load_protocol("spectral"), 0.1).items()})
    assert any(abs(s.measured_rms / s.predicted_rms - 1) > 0.05 for s in big)  # a real step is not first order


def test_a_trunk_that_is_no_chain_is_refused(monkeypatch):
    net, (x, y) = network("nb201", NB201_ARCH, {"width": 4, "cells": 1}), batch()
    monkeypatch.setattr(NB201Network, "trunk", lambda self: [("stem", self.stem), ("readout", self.readout)])
    with pytest.raises(ConfigError, match=r"trunk\(\): parameter 'body\.0\..*' is in no block"):
        feature_speed(net, x, y, {name: 0.1 for name, _ in net.named_parameters()})


def test_diagnosing_a_warmup_protocol_takes_its_first_step():
    x, y = batch()

    def build() -> torch.nn.Module:
        return network("nb201", NB201_ARCH, {"width": 4, "cells": 1})

    hot = load_protocol("elr_warmup", ["lr=50"])  # far above the critical LR: the warm-up acts
    result = diagnose_rule(build, "elr_warmup", x, y, 0.1, hot)
    net = build()
    torch.nn.functional.cross_entropy(net(x), y).backward()
    weights = [conv.weight for _, conv in scale_invariant_convs(net)]
    kappa = float(subcritical_factor(layer_elrs(weights, 1) * 50.0)[0])
    assert kappa < 1
    assert result.warmup_factor == pytest.approx(kappa, rel=1e-5)
    plain = diagnose_rule(build, "nb201", x, y, 0.1, load_protocol("nb201", ["lr=50"]))
    assert plain.warmup_factor is None
    conv, norm = net.stem[0], net.stem[1]  # the stem: a scale-invariant conv at 50 kappa, its BatchNorm at 50
    expected = 50 * (kappa * float(conv.weight.grad.pow(2).sum())
                     + sum(float(p.grad.pow(2).sum()) for p in norm.parameters()))
    assert result.feature_speed[0].loss_decrease == pytest.approx(expected, rel=1e-4)
    assert plain.feature_speed[0].loss_decrease > result.feature_speed[0].loss_decrease
    assert not math.isnan(result.feature_speed[-1].angle_deg)
