"""budget.norm / [macro] norm: a network without BatchNorm, keyed apart from the one with it."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from nasrescale.errors import ConfigError
from nasrescale.models import build_model
from nasrescale.models.norms import with_norm
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.space.family_loader import get_family


@pytest.mark.parametrize("family_name, arch", [("nb201", "3_33_333"), ("nb101", None), ("darts", None)])
def test_norm_none_removes_every_batchnorm_and_trains(family_name: str, arch: str | None) -> None:
    family = get_family(family_name)
    arch = arch or family.base
    with_bn = build_model(arch, family, width=8, cells=1 if family_name == "nb201" else None)
    plain = build_model(arch, with_norm(family, "none"), width=8, cells=1 if family_name == "nb201" else None)
    assert any(isinstance(m, nn.BatchNorm2d) for m in with_bn.modules())
    assert not any(isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)) for m in plain.modules())
    # the same convs and readout remain; only the BatchNorms' parameters are gone
    bn_params = sum(p.numel() for m in with_bn.modules() if isinstance(m, nn.BatchNorm2d) for p in m.parameters())
    assert sum(p.numel() for p in plain.parameters()) == sum(p.numel() for p in with_bn.parameters()) - bn_params
    out = plain(torch.randn(2, 3, 32, 32))
    out.sum().backward()
    assert out.shape == (2, 10) and all(p.grad is not None for p in plain.parameters() if p.requires_grad)


def test_norm_changes_the_run_keys_only_when_asked() -> None:
    base = load_pipeline("lr_validation_nb201_cpu")
    batch = load_pipeline("lr_validation_nb201_cpu", {"budget.norm": "batch"})
    plain = load_pipeline("lr_validation_nb201_cpu", {"budget.norm": "none"})
    archs = base.arch_list()[:2]
    keys = [{j.key() for j in p.jobs(archs)} for p in (base, batch, plain)]
    assert keys[0] == keys[1] and not keys[0] & keys[2]
    assert plain.family().macro["norm"] == "none" and "norm" not in base.family().macro


def test_unknown_norm_is_an_error_naming_the_key() -> None:
    with pytest.raises(ConfigError, match=r"budget\.norm: expected one of 'batch', 'none'"):
        load_pipeline("lr_validation_nb201_cpu", {"budget.norm": "layer"})
