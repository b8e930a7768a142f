"""The μP baseline protocol (mup extra): parametrization, MuSGD groups, and the missing-extra error."""

from __future__ import annotations

import sys

import pytest
import torch

from nasrescale.errors import ConfigError
from nasrescale.jobs.job import DataSpec, TrainJob
from nasrescale.models import build_model
from nasrescale.protocol import load_protocol
from nasrescale.scaling import param_groups

from pipeline_helpers import one_thread  # noqa: F401  (fixtures, used by name)


ARCH = "3_13_113"  # NB201: convs, skips and a pool


def test_without_the_extra_selecting_mup_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "mup", None)  # `import mup` now raises ImportError
    with pytest.raises(ConfigError, match=r"pip install 'nasrescale\[mup\]'"):
        load_protocol("mup")
    assert load_protocol("nb201").init == "default"  # other protocols are unaffected


def test_shipped_protocol_is_the_nb201_recipe_with_mup():
    pytest.importorskip("mup")
    p, nb = load_protocol("mup"), load_protocol("nb201")
    assert (p.init, p.lr, p.lr_rule, p.mup_base_width) == ("mup", 0.1, "fixed", 8)
    same = ("epochs", "batch_size", "momentum", "nesterov", "weight_decay", "schedule", "augment")
    for k in same:
        assert getattr(p, k) == getattr(nb, k), k
    with pytest.raises(ConfigError, match="mup_base_width"):
        load_protocol("nb201", ["mup_base_width=8"])


def test_parametrization_and_musgd_groups(nb201):
    mup = pytest.importorskip("mup")
    from nasrescale.scaling.mup_param import mup_parametrize, musgd

    def build(width):
        return build_model(ARCH, nb201, 10, width=width, cells=1)

    torch.manual_seed(0)
    net = mup_parametrize(build(8), build, base_width=4)
    assert isinstance(net.readout, mup.MuReadout)
    assert net.readout.width_mult() == 2.0
    groups = param_groups(net, load_protocol("mup", ["mup_base_width=4"]))
    opt = musgd(groups, lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
    lr_of = {id(p): g["lr"] for g in opt.param_groups for p in g["params"]}
    names = dict(net.named_parameters())
    conv, bn, stem = "body.0.edges.0_1.1.weight", "body.0.edges.0_1.2.weight", "stem.0.weight"
    assert names[conv].shape == (8, 8, 3, 3)
    assert names[bn].shape == (8,)
    # hidden conv (8 -> 8, both dims scale with width): lr unchanged; vector-like (stem conv from
    # 3 fixed channels, BN, readout): x width_mult
    assert lr_of[id(names[conv])] == pytest.approx(0.1)
    assert lr_of[id(names[stem])] == pytest.approx(0.2)
    assert lr_of[id(names[bn])] == pytest.approx(0.2)
    assert lr_of[id(names["readout.weight"])] == pytest.approx(0.2)


def test_at_the_base_width_mup_trains_like_the_default_parametrization(nb201, float64):
    pytest.importorskip("mup")
    data = DataSpec("cifar10-subset", train_subset=60, test_subset=20)
    common = ["epochs=1", "batch_size=30", "lr=0.1"]
    default = TrainJob.from_arch(ARCH, nb201, data, load_protocol("nb201", common), seed=3, width=4, cells=1).run()
    mu = TrainJob.from_arch(ARCH, nb201, data, load_protocol("mup", [*common, "mup_base_width=4"]), seed=3, width=4,
                  cells=1).run()
    assert mu["init"] == "mup"
    assert mu["train_loss_last"] == pytest.approx(default["train_loss_last"], rel=float64)
    wider = TrainJob.from_arch(ARCH, nb201, data, load_protocol("mup", [*common, "mup_base_width=2"]), seed=3, width=4,
                     cells=1).run()
    assert wider["train_loss_last"] != pytest.approx(default["train_loss_last"], rel=1e-3)
