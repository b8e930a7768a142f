"""The paper's LR-rule validation (Chen et al., ICLR 2024, §4): the argmin rule per seed, the
tail loss it reads, the grid extension, the shipped protocol/pipelines and a tiny end-to-end run."""

from __future__ import annotations

import json
import math

import pytest
import torch
from torch import nn

from nasrescale.cli.main import main
from nasrescale.data.types import ImageData
from nasrescale.space.encodings import parse_arch
from nasrescale.errors import ConfigError, DataError
from nasrescale.lrsearch.search import LrSearchSettings, losses_from_rows
from nasrescale.lrsearch.select import select_lr
from nasrescale.kinds.lr_validation.grid import EXTEND_STEPS
from nasrescale.lrsearch.validation import analyze
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.protocol import Protocol, load_protocol
from nasrescale.space.family_loader import get_family
from nasrescale.pipeline.runner import run_pipeline
from nasrescale.store.sqlite_store import Store
from nasrescale.space.topology import path_depths, lr_scale
from nasrescale.train import train
from nasrescale.train.run_setup import EpochDraw, RunSetup, epoch_seed, tail_start
from nasrescale.train.step import Batches, DeviceImages

from pipeline_helpers import one_thread  # noqa: F401  (fixtures, used by name)

NAN = float("nan")


def test_argmin_is_picked_per_seed_then_averaged_in_log_lr():
    # seed 0 is best at 0.1, seed 1 at 0.4; the mean loss alone would pick 0.2
    sel = select_lr({0.05: [1.9, 2.5], 0.1: [1.0, 2.0], 0.2: [1.2, 1.2], 0.4: [2.0, 1.1], 0.8: [3.0, 3.0]})
    assert sel.per_seed == (0.1, 0.4)
    assert sel.chosen_lr == pytest.approx(0.2, rel=1e-6)  # geometric mean of 0.1 and 0.4
    assert sel.best_lr == 0.2
    assert sel.edge is None


def test_argmin_exact_tie_takes_the_larger_lr():
    sel = select_lr({0.1: [1.5], 0.2: [1.0], 0.4: [1.0], 0.8: [2.0]})
    assert sel.per_seed == (0.4,)


def test_argmin_ignores_a_diverged_run_and_drops_a_seed_that_always_diverged():
    losses = {0.1: [1.5, 1.4, None], 0.2: [NAN, 1.3, None], 0.4: [1.2, float("inf"), None], 0.8: [1.3, 2.0, None]}
    sel = select_lr(losses)
    assert sel.per_seed == (0.4, 0.2, None)
    assert sel.chosen_lr == pytest.approx(math.sqrt(0.4 * 0.2), rel=1e-5)  # 6 significant digits
    assert sel.diverged == [0.1, 0.2, 0.4, 0.8]  # every LR has a diverged seed: the mean rule has nothing
    with pytest.raises(DataError, match="every LR of the grid diverged"):
        select_lr(losses, rule="within_tol")


def test_argmin_with_every_run_diverged_is_an_error():
    with pytest.raises(DataError, match="search lower learning rates"):
        select_lr({0.1: [None], 0.2: [NAN]})


@pytest.mark.parametrize("losses, edge", [({0.1: [1.0, 2.0], 0.2: [1.5, 1.0], 0.4: [1.8, 1.9]}, "low"),
                                          ({0.1: [2.0, 2.0], 0.2: [1.5, 1.0], 0.4: [1.0, 1.9]}, "high")])
def test_an_argmin_at_the_grid_edge_is_flagged(losses, edge):
    sel = select_lr(losses)
    assert sel.edge == edge
    assert "extend the grid" in sel.edge_message()


def test_previous_rule_stays_selectable_under_its_name():
    losses = {0.1: [1.5], 0.2: [1.0], 0.4: [1.005], 0.8: [2.0]}
    assert select_lr(losses, rule="within_tol").chosen_lr == 0.4  # within 1% of the best: the larger
    assert select_lr(losses, rule="argmin").chosen_lr == 0.2
    with pytest.raises(ConfigError, match="lr_search.rule"):
        select_lr(losses, rule="largest")
    with pytest.raises(ConfigError, match="lr_search.rule"):
        LrSearchSettings(rule="largest")


def test_tail_loss_read_from_rows_and_missing_tail_is_an_error():
    rows = [{"key": "a", "status": "done", "train_loss_last": 2.0, "train_loss_tail": 1.5},
            {"key": "b", "status": "diverged", "train_loss_last": None}]
    assert losses_from_rows([(0.1, "a"), (0.2, "b")], rows, "tail") == {0.1: [1.5], 0.2: [None]}
    assert losses_from_rows([(0.1, "a")], rows, "epoch") == {0.1: [2.0]}
    with pytest.raises(DataError, match="no train_loss_tail"):
        losses_from_rows([(0.1, "a")], [{"key": "a", "status": "done", "train_loss_last": 2.0}], "tail")


def _toy_data(n: int = 50) -> ImageData:
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 256, (n, 3, 8, 8), dtype=torch.uint8, generator=g)
    y = torch.randint(0, 3, (n,), generator=g)
    return ImageData("toy", x, y, x[:6], y[:6], 3, (0.5, 0.5, 0.5), (0.25, 0.25, 0.25), crop_padding=2)


def test_tail_loss_is_the_mean_over_the_last_tenth_of_the_steps():
    data = _toy_data()
    protocol = Protocol("t", epochs=1, batch_size=4, momentum=0.0, nesterov=False, weight_decay=0.0,
                        schedule="constant", augment=False)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 3))
    reference = [p.detach().clone() for p in model.parameters()]
    # lr 0: the weights never move, so each step's loss can be recomputed from the same batches
    res = train(model, data, protocol, [{"params": model.parameters(), "lr": 0.0}], seed=3)
    setup = RunSetup(torch.device("cpu"), data, protocol)
    draw = EpochDraw(data.train_images.shape[0], setup.generator(epoch_seed(3, 0)), setup)
    batches = Batches([draw], DeviceImages(data.train_images, data.train_labels, 0, setup.device), setup)
    assert len(draw.starts) == 13
    assert tail_start(13) == 11  # ceil(1.3) = 2 tail steps
    sums = counts = 0.0
    with torch.no_grad():
        for s in draw.starts[tail_start(len(draw.starts)):]:
            x, y = batches.at(s)
            y = y[:, 0]  # the one member's labels
            sums += float(nn.functional.cross_entropy(model(x), y)) * y.shape[0]
            counts += y.shape[0]
    assert all(torch.equal(a, b) for a, b in zip(reference, model.parameters()))
    # float32 losses of the same batches and weights: at most a few ulps (1e-7) apart, whatever
    # order the two forwards sum in; a wrong step range or weighting is off by far more
    assert res.history[-1]["train_loss_tail"] == pytest.approx(sums / counts, rel=1e-6)
    assert res.history[-1]["train_loss_tail"] != pytest.approx(res.train_loss_last, rel=1e-6)


def test_paper_validation_protocol():
    p = load_protocol("lr_validation")
    assert (p.momentum, p.nesterov, p.weight_decay, p.batch_size, p.epochs) == (0.0, False, 0.0, 128, 1)
    assert (p.schedule, p.augment, p.init, p.lr_rule, p.precision) == ("constant", False, "in_degree_source",
                                                                       "fixed", "fp32")


def test_depth_pipeline_covers_depths_3_to_10():
    p = load_pipeline("lr_validation_mlp_depth")
    fam = get_family("mlp_chain")
    archs = [fam.base] + p.arch_list()
    depths = [path_depths(parse_arch(a, fam), fam) for a in archs]
    assert depths == [[L] for L in range(3, 11)]
    for a, (L,) in zip(archs, depths):
        assert lr_scale(parse_arch(a, fam), fam) == pytest.approx((3 / L) ** 1.5, rel=1e-12)
    assert (p.lr_search.rule, p.lr_search.loss, p.lr_search.seeds) == ("argmin", "epoch", (0, 1, 2))
    grid = p.lr_search.grid()
    assert grid[1] / grid[0] == pytest.approx(2 ** 0.25, rel=1e-5)
    assert p.data.name == "cifar10"
    assert p.budget.batch_size is None
    assert p.protocols[0].protocol.batch_size == 128


TINY = """
[pipeline]
name = "tiny-paper-val"
kind = "lr_validation"
family = "mlp_dag"

[data]
name = "cifar10-subset"

[archs]
select = "list"
names = ["2_22_222_2222"]

[protocols.source]
protocol = "lr_validation"

[lr_search]
lr_min = 0.0005
lr_max = 0.001
points = 2
seeds = [0]
extend = 1

[budget]
batch_size = 50
width = 8
train_subset = 500
test_subset = 20

[executor]
device = "cpu"
"""


def test_tiny_validation_extends_the_grid_and_reports_the_papers_statistics(tmp_path):
    path = tmp_path / "v.toml"
    path.write_text(TINY)
    summary = run_pipeline(load_pipeline(path), tmp_path / "r", progress=False)
    store = Store(summary.run_dir / "store.sqlite", readonly=True)
    try:
        plan, rows = json.loads(store.get_meta("validation_plan")), store.rows_with_tail()
    finally:
        store.close()
    # 2 archs x 2 LRs; both argmins sit at the top of a tiny grid: 4 more LRs each, once
    assert summary.total == 2 * (2 + EXTEND_STEPS)
    assert summary.counts["failed"] == 0
    for m in plan["groups"]["source"]["archs"]:
        lrs = sorted({lr for lr, _ in m["runs"]})
        assert lrs[:2] == [0.0005, 0.001]
        assert len(lrs) == 2 + EXTEND_STEPS
        assert lrs[-1] == pytest.approx(0.016)
    res = analyze(plan, rows)
    assert len(res["points"]) == 2
    assert res["rule"] == "argmin"
    assert run_pipeline(load_pipeline(path), tmp_path / "r", progress=False).ran == 0  # resumed: nothing new
    assert main(["report", str(path), "--results", str(tmp_path / "r")]) == 0
    md = (summary.run_dir / "report.md").read_text()
    assert "| paper's r |" in md
    assert "0.838" in md
    assert "rule `argmin` on the `epoch` loss" in md
