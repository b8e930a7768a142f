"""The DARTS and NAS-Bench-101 networks: parameter counts against the hand derivation of
docs/design.md §6, the skeletons' shapes, the init divisors of their layers, and fusion's refusal."""

from __future__ import annotations

import json

import pytest
import torch

from nasrescale.errors import ConfigError
from nasrescale.jobs.fusion import fusable_key
from nasrescale.jobs.job import DataSpec, TrainJob
from nasrescale.models import build_model, count_params
from nasrescale.models.cellspace_ops import SepConv
from nasrescale.models.darts import DartsNetwork
from nasrescale.models.fused import FusedNetwork
from nasrescale.models.nb101 import vertex_channels
from nasrescale.protocol import load_protocol
from nasrescale.space.darts_codec import DARTS_V2
from nasrescale.space.encodings import parse_arch
from nasrescale.space.family_loader import get_family

DARTS = get_family("darts")
NB101 = get_family("nb101")
INCEPTION = json.dumps({"matrix": [[0, 1, 1, 1, 0, 1, 0], [0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 1],
                                   [0, 0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 1], [0] * 7],
                        "ops": ["input", "conv1x1-bn-relu", "conv3x3-bn-relu", "conv3x3-bn-relu", "conv3x3-bn-relu",
                                "maxpool3x3", "output"]})


def darts_v2_params_by_hand(c: int = 36, layers: int = 20, stem_multiplier: int = 3, classes: int = 10) -> int:
    """docs/design.md §6's table as formulas: ReLU-conv-BN preprocessing (or a factorized reduce,
    the same count), 5 sep_conv_3x3 + 1 dil_conv_3x3 per normal cell, nothing in DARTS-V2's
    reduction cell's ops (pools; skips from node 2 at stride 1), a linear classifier."""
    def pre(c_in: int, c_out: int) -> int:
        return c_in * c_out + 2 * c_out

    def normal_ops(w: int) -> int:
        return 5 * (2 * (9 * w + w * w) + 4 * w) + (9 * w + w * w + 2 * w)

    total = 27 * stem_multiplier * c + 2 * stem_multiplier * c
    c_pp = c_p = stem_multiplier * c
    width = c
    for i in range(layers):
        reduction = i in (layers // 3, 2 * layers // 3)
        width *= 2 if reduction else 1
        total += pre(c_pp, width) + pre(c_p, width) + (0 if reduction else normal_ops(width))
        c_pp, c_p = c_p, 4 * width
    return total + c_p * classes + classes


def nb101_inception_params_by_hand(stem: int = 128, stacks: int = 3, cells: int = 3, classes: int = 10) -> int:
    """docs/design.md §6: ``4 c_in w + 28 w^2 + 16 w`` per Inception-like cell, ``w = c_out / 4``."""
    total = 27 * stem + 2 * stem
    c_in = c_out = stem
    for s in range(stacks):
        c_out *= 2 if s else 1
        for _ in range(cells):
            w = c_out // 4
            total += 4 * c_in * w + 28 * w * w + 16 * w
            c_in = c_out
    return total + c_out * classes + classes


def test_darts_v2_has_the_published_parameter_count_to_the_parameter():
    assert darts_v2_params_by_hand() == 3_349_342  # the published "3.3 M", worked out in docs/design.md §6
    assert count_params(build_model(DARTS_V2, DARTS)) == 3_349_342
    with_head = DartsNetwork(parse_arch(DARTS_V2, DARTS), DARTS, auxiliary=True)
    head = sum(p.numel() for n, p in with_head.named_parameters() if ".aux." in n)
    assert head == 576 * 128 + 2 * 128 + 128 * 768 * 4 + 2 * 768 + 768 * 10 + 10
    assert count_params(with_head) == 3_349_342 + head


def test_darts_formula_follows_the_network_at_other_sizes():
    assert count_params(build_model(DARTS_V2, DARTS, width=16, cells=8)) == darts_v2_params_by_hand(16, 8)


def test_nb101_inception_cell_count_by_hand():
    assert count_params(build_model(INCEPTION, NB101)) == nb101_inception_params_by_hand() == 2_694_282
    assert count_params(build_model(INCEPTION, NB101, width=16, cells=1)) == nb101_inception_params_by_hand(16, 3, 1)


def test_nb101_vertex_widths_split_the_output():
    g = parse_arch(json.dumps({"matrix": [[0, 1, 1, 1, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1], [0, 0, 0, 0, 1],
                                          [0] * 5],
                               "ops": ["input", "conv3x3-bn-relu", "conv1x1-bn-relu", "maxpool3x3", "output"]}), NB101)
    # vertices 2 and 3 feed the output: 7 // 2 = 3 each, the first one more; vertex 1 takes its successor 3's
    assert vertex_channels(g, 5, 7) == [5, 3, 4, 3, 7]


@pytest.mark.parametrize("family,arch", [(DARTS, DARTS_V2), (NB101, INCEPTION)])
def test_small_networks_run_forward_and_backward(family, arch):
    torch.manual_seed(0)
    net = build_model(arch, family, 10, in_shape=(3, 16, 16), width=4 if family is NB101 else 8, cells=3)
    out = net(torch.randn(2, 3, 16, 16))
    assert out.shape == (2, 10)
    out.sum().backward()
    assert all(p.grad is not None for p in net.parameters())


def test_darts_cell_channels_and_reductions():
    net = build_model(DARTS_V2, DARTS, width=8, cells=6, in_shape=(3, 16, 16))
    cells = net.cells()
    assert [c.reduction for c in cells] == [False, False, True, False, True, False]
    assert [c.width for c in cells] == [8, 8, 16, 16, 32, 32]
    assert net.readout.in_features == 4 * 32


def test_darts_init_divisors_reach_only_the_layer_that_writes_into_the_sum():
    net = build_model(DARTS_V2, DARTS, width=8, cells=3, in_shape=(3, 16, 16))
    cell = net.cells()[0]
    sep = cell.edges["0_2"]
    assert isinstance(sep, SepConv)
    smap = net.scaling_map()
    by_module = {entry.module: entry for name, entry in smap.items() if name.endswith("weight")}
    prefix = "body.cells.0.edges.0_2"
    divisors = [by_module[f"{prefix}.{i}"].init["in_degree"].divisor for i in (1, 2, 5, 6)]
    assert divisors == [1.0, 1.0, 1.0, 2.0]  # only the last pointwise conv writes into node 2 (a sum of two)
    assert by_module["body.cells.0.preprocess1.1"].init["in_degree"].divisor == 1.0


def test_nb101_vertex_convs_divide_by_the_vertex_in_degree():
    text = json.dumps({"matrix": [[0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]],
                       "ops": ["input", "conv3x3-bn-relu", "conv1x1-bn-relu", "output"]})
    net = build_model(text, NB101, width=8, cells=2)
    smap = net.scaling_map()
    div = {name.rsplit(".", 1)[0]: e.init["in_degree"].divisor for name, e in smap.items() if name.endswith("0.weight")}
    assert div["body.0.vertex_ops.2.0"] == 2.0  # link from vertex 1 + projection
    assert div["body.0.vertex_ops.1.0"] == 1.0
    assert div["body.0.projections.1.0"] == 1.0  # the first cell reads the stem
    assert div["body.1.projections.1.0"] == 2.0  # the next reads an output of two summands


@pytest.mark.parametrize("family,arch", [(DARTS, DARTS_V2), (NB101, INCEPTION)])
def test_concatenating_families_never_fuse(family, arch):
    cells = 3 if family is DARTS else 1  # a DARTS network needs 3 cells to hold a normal one
    job = TrainJob.from_arch(arch, family, DataSpec("cifar10-subset"), load_protocol("nb201", {"epochs": 1}), 0, width=4,
                   cells=cells)
    assert fusable_key(job) is None  # the pipeline trains it alone
    nets = [build_model(arch, family, width=4, cells=cells, in_shape=(3, 8, 8)) for _ in range(2)]
    with pytest.raises(ConfigError, match="concatenate nodes along channels"):
        FusedNetwork(nets)


def test_edge_dag_jobs_still_fuse():
    job = TrainJob.from_arch("3_33_333", get_family("nb201"), DataSpec("cifar10-subset"), load_protocol("nb201", {"epochs": 1}),
                   0, width=4, cells=1)
    assert fusable_key(job) is not None
