"""The spectral rule (Yang, Simon & Bernstein, §4 Parametrization 1), tested the paper's way.

The rule sets every conv/linear weight's init scale and SGD LR so that, across widths, the
spectral norms of the weight and of its update scale as ``sqrt(fan_out / fan_in)`` (Condition 1).
Here the widths are C = 8..64 (NB201) and 32..256 (MLP), the networks tiny and in float64: for
each layer the log-log slope of the measured ``|W|_*`` at init and ``|dW|_*`` after one plain SGD
step against the width is compared with the slope of ``sqrt(fan_out / fan_in)`` read off the
same layer's shapes (input layers +1/2, hidden 0, readout -1/2). A conv's norms are those of its
``C_out x (C_in k^2)`` matrix. Breaking the rule (no ``min`` cap in the init, no LR factor, the
factor inverted) moves at least one slope by more than the tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from nasrescale.models import build_model
from nasrescale.protocol import load_protocol
from nasrescale.scaling import apply_init, param_groups
from nasrescale.space.family_loader import get_family

NB201_ARCH = "|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|none~0|avg_pool_3x3~1|nor_conv_3x3~2|"
#: how far a measured log-log slope may sit from its prediction: the finite widths' own offset
#: (e.g. a random matrix's norm sigma (sqrt(m) + sqrt(n)) at m ~ n) stays below 0.25 here, and
#: every break of the rule tried moves some slope by more than 0.35
SLOPE_TOLERANCE = 0.3

pytestmark = pytest.mark.usefixtures("float64")  # networks built and trained in float64 (tests/conftest.py)


def spectral_norm(w: torch.Tensor) -> float:
    """Largest singular value of a weight as a ``fan_out x fan_in`` matrix (a conv's kernel
    offsets join its input channels)."""
    return float(torch.linalg.matrix_norm(w.reshape(w.shape[0], -1), ord=2))


def norms_after_one_step(family: str, arch: str, width: int, seed: int, in_shape: tuple[int, int, int],
                         batch: int) -> dict[str, tuple[float, float, float]]:
    """``{weight: (|W|_*, |dW|_*, fan_out / fan_in)}`` of a spectral network after one plain SGD step
    (its own param groups: base LR x the rule's factors) on a random batch."""
    fam = get_family(family)
    torch.manual_seed(seed)
    size = {"width": width, **({"cells": 1} if family == "nb201" else {})}
    net = apply_init(build_model(arch, fam, 10, in_shape=in_shape, **size), "spectral")
    protocol = load_protocol("nb201", {"init": "spectral", "lr": 0.05, "momentum": 0.0, "nesterov": False,
                                       "weight_decay": 0.0})
    opt = torch.optim.SGD(param_groups(net, protocol), lr=0.05)
    gen = torch.Generator().manual_seed(1000 + seed)
    x, y = torch.randn(batch, *in_shape, generator=gen), torch.randint(0, 10, (batch,), generator=gen)
    before = {n: p.detach().clone() for n, p in net.named_parameters() if p.dim() >= 2}
    F.cross_entropy(net(x), y).backward()
    opt.step()
    params = dict(net.named_parameters())
    return {n: (spectral_norm(w), spectral_norm(params[n].detach() - w), w.shape[0] / w[0].numel() * w[0, 0].numel())
            for n, w in before.items()}


def slopes(family: str, arch: str, widths: list[int], in_shape: tuple[int, int, int], batch: int,
           seeds: int = 2) -> dict[str, dict[str, float]]:
    """Per weight: the measured slopes of ``log |W|_*`` and ``log |dW|_*`` against ``log width``
    (norms averaged over seeds) and the predicted one, that of ``log sqrt(fan_out / fan_in)``."""
    runs = {w: [norms_after_one_step(family, arch, w, s, in_shape, batch) for s in range(seeds)] for w in widths}
    logw = np.log(widths)
    out = {}
    for name in runs[widths[0]][0]:
        cols = np.array([[np.mean([r[name][i] for r in runs[w]]) for i in range(3)] for w in widths])
        fit = [float(np.polyfit(logw, np.log(cols[:, i]), 1)[0]) for i in range(3)]
        out[name] = {"W": fit[0], "dW": fit[1], "predicted": fit[2] / 2}
    return out


def check_slopes(measured: dict[str, dict[str, float]]) -> None:
    off = {f"{name} {what}: {m[what]:+.2f} (predicted {m['predicted']:+.2f})"
           for name, m in measured.items() for what in ("W", "dW")
           if abs(m[what] - m["predicted"]) > SLOPE_TOLERANCE}
    assert not off, sorted(off)


def test_mlp_norms_scale_as_the_spectral_condition():
    measured = slopes("mlp_dag", "2_02_002_0002", [32, 64, 128, 256], (1, 4, 4), batch=4)
    predicted = sorted({round(m["predicted"], 6) for m in measured.values()})
    assert predicted == [-0.5, 0.0, 0.5]  # readout, hidden, input layer: every case is measured
    check_slopes(measured)


def test_nb201_cell_norms_scale_as_the_spectral_condition():
    measured = slopes("nb201", NB201_ARCH, [8, 16, 32, 64], (1, 8, 8), batch=8)
    convs = [n for n in measured if ".edges." in n]
    assert len(convs) == 9 and {"readout.weight", "stem.0.weight"} <= set(measured)  # 3 cells x 3 convs
    check_slopes(measured)


def test_spectral_network_draws_and_groups_every_weight():
    torch.manual_seed(0)
    net = apply_init(build_model("3_33_333", get_family("nb201"), width=32, cells=1), "spectral")
    groups = param_groups(net, load_protocol("spectral"))
    lr_of = {id(p): g["lr"] for g in groups for p in g["params"]}
    for name, p in net.named_parameters():
        if p.dim() < 2:
            assert lr_of[id(p)] == 0.1, name  # biases and BatchNorm: the base LR
            continue
        fan_in = p[0].numel()
        fan_out = p.shape[0] * p[0, 0].numel()
        std = math.sqrt(2 / fan_in) * min(1, math.sqrt(fan_out / fan_in))
        assert float(p.detach().std()) == pytest.approx(std, rel=0.25), name  # >= 640 draws each
        assert lr_of[id(p)] == pytest.approx(0.1 * fan_out / fan_in), name
