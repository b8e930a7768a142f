"""The fused module: K networks of one cell packed as one, for every built-in family (the
training side is in ``tests/train/test_fused.py``)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from nasrescale.errors import ConfigError
from nasrescale.models import build_model, macro_kinds
from nasrescale.models.fused import FusedNetwork
from nasrescale.space.family_loader import get_family, load_families

# every NB201 op kind: 3x3 and 1x1 convs, pooling, skip and a zero edge
ARCH = "|nor_conv_3x3~0|+|nor_conv_1x1~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|none~2|"
SIZE = 8


@pytest.mark.parametrize("family", sorted(load_families()))
def test_fused_forward_equals_members(family: str, float64: float):
    """In float64 (the fused convs are grouped: another summation order), so that the outputs
    agree to ``float64`` on any CPU."""
    fam = get_family(family)
    arch = ARCH if family == "nb201" else fam.base
    shape = (3, SIZE, SIZE)
    cells = 3 if fam.macro.get("kind") == "darts" else 1  # a DARTS network needs 3 cells for a normal one
    kw = {"width": 4, "cells": cells} if "cells" in macro_kinds().get(fam.macro.get("kind"), ()) else {"width": 5}
    nets = []
    for seed in range(3):
        torch.manual_seed(seed)
        nets.append(build_model(arch, fam, 3, in_shape=shape, **kw))
    if fam.structure.concatenates:  # DARTS, NB101: members' channels would interleave
        with pytest.raises(ConfigError, match="concatenate nodes along channels"):
            FusedNetwork(nets)
        return
    fused = FusedNetwork(nets)
    for k, net in enumerate(nets):  # packing then unpacking gives each member's tensors back
        for name, t in net.state_dict().items():
            assert torch.equal(fused.member_state_dict(k)[name], t), name
    xs = [torch.randn(5, *shape) for _ in nets]
    for mode in ("train", "eval"):  # batch statistics, then running statistics (updated once above)
        fused.train(mode == "train")
        out = fused(torch.cat(xs, 1))
        assert out.dtype == torch.float64
        for k, (net, x) in enumerate(zip(nets, xs)):
            torch.testing.assert_close(out[:, k], net.train(mode == "train")(x), rtol=float64, atol=float64)


def test_fused_network_rejects_mismatched_and_unknown_members():
    fam = get_family("nb201")
    a = build_model(ARCH, fam, 3, width=4, cells=1)
    with pytest.raises(ConfigError, match="structure"):
        FusedNetwork([a, build_model(ARCH, fam, 3, width=8, cells=1)])
    with pytest.raises(ConfigError, match="another cell"):
        FusedNetwork([a, build_model(ARCH.replace("avg_pool_3x3", "skip_connect"), fam, 3, width=4, cells=1)])
    with pytest.raises(ConfigError, match="cannot fuse module 1 of type LayerNorm"):
        FusedNetwork([nn.Sequential(nn.Linear(2, 2), nn.LayerNorm(2))] * 2)
