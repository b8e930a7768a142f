"""The one step for K members: its batches, the branches a GPU run takes (bf16 autocast, memory
formats, split convolutions) at tiny size on the CPU, and a CUDA epoch without host syncs."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from nasrescale.data.types import ImageData
from nasrescale.models import build_model
from nasrescale.protocol import load_protocol
from nasrescale.scaling import apply_init, param_groups
from nasrescale.space.family_loader import get_family
from nasrescale.train import FusedMember, RunOptions, train, train_fused
from nasrescale.train.augment import crop_flip, normalize, stats_tensor
from nasrescale.train.elr_control import ElrControl
from nasrescale.train.fused_sgd import FusedSGD
from nasrescale.train.run_setup import EpochDraw, RunSetup, epoch_seed
from nasrescale.train.step import Batches, DeviceImages, evaluate, train_epoch
from nasrescale.train.weights import FusedWeights, PlainWeights

ARCH = "|nor_conv_3x3~0|+|nor_conv_1x1~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|none~2|"
SIZE = 8


def toy_data(n_train: int = 40, n_test: int = 24) -> ImageData:
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 256, (n_train + n_test, 3, SIZE, SIZE), generator=g, dtype=torch.uint8)
    y = torch.randint(0, 3, (n_train + n_test,), generator=g)
    return ImageData("toy", x[:n_train], y[:n_train], x[n_train:], y[n_train:], 3, (0.5, 0.4, 0.3),
                     (0.25, 0.2, 0.3), crop_padding=2)


def member(seed: int, overrides: list[str] = ()) -> FusedMember:  # type: ignore[assignment]
    protocol = load_protocol("nb201", ["epochs=2", "batch_size=16", *overrides])
    torch.manual_seed(seed)
    model = apply_init(build_model(ARCH, get_family("nb201"), 3, in_shape=(3, SIZE, SIZE), width=4, cells=1),
                       protocol.init)
    return FusedMember(model, protocol, param_groups(model, protocol), seed)


# --- the batch builder --------------------------------------------------------------------------

@pytest.mark.parametrize("augment", [True, False])
def test_batches_are_each_members_own_crop_flip_and_normalize(augment: bool):
    """Member k's channels of a fused batch are exactly its own run's batch, built by the
    reference definition (index, crop_flip on NCHW, normalize), and the input is channels last."""
    data, protocol = toy_data(), load_protocol("nb201", ["batch_size=16", f"augment={str(augment).lower()}"])
    setup = RunSetup(torch.device("cpu"), data, protocol)
    draws = [EpochDraw(40, setup.generator(epoch_seed(s, 0)), setup) for s in (3, 5)]
    images = DeviceImages(data.train_images, data.train_labels, 2 if augment else 0, setup.device)
    batches = Batches(draws, images, setup)
    mean, std = stats_tensor(data.mean, "cpu"), stats_tensor(data.std, "cpu")
    for s in draws[0].starts:
        x, y = batches.at(s)
        assert x.shape == (len(y), 6, SIZE, SIZE)
        assert x.is_contiguous(memory_format=torch.channels_last)
        for k, draw in enumerate(draws):
            idx = draw.perm[s:s + 16]
            raw = data.train_images[idx]
            if augment:
                dy, dx, flip = (t[s:s + 16] for t in draw.aug)
                raw = crop_flip(raw, 2, dy, dx, flip)
            assert torch.equal(x[:, 3 * k:3 * k + 3], normalize(raw, mean, std)), (s, k)
            assert torch.equal(y[:, k], data.train_labels[idx])


def test_contiguous_memory_format_gives_nchw_inputs_and_the_same_run(float64: float):
    """The NCHW option feeds contiguous inputs and weights and trains the same run (float64)."""
    seen = []
    a, b = member(1), member(1)
    b.model.register_forward_pre_hook(lambda m, args: seen.append(args[0].is_contiguous()))
    ref = train(a.model, toy_data(), a.protocol, a.param_groups, seed=1)
    res = train(b.model, toy_data(), b.protocol, b.param_groups, RunOptions(memory_format="contiguous"), seed=1)
    assert seen and all(seen)
    assert all(p.is_contiguous() for p in b.model.parameters())
    for h_ref, h in zip(ref.history, res.history, strict=True):
        assert h["train_loss"] == pytest.approx(h_ref["train_loss"], rel=float64)
    assert res.test_loss == pytest.approx(ref.test_loss, rel=float64)


# --- bf16 autocast, as on CUDA ---------------------------------------------------------------------

def conv_output_dtypes(run) -> dict[bool, set[torch.dtype]]:  # noqa: ANN001
    """The dtypes every Conv2d produces while ``run()`` trains (key True) and evaluates (False)."""
    seen: dict[bool, set[torch.dtype]] = {True: set(), False: set()}

    def hook(module: nn.Module, inputs: object, out: torch.Tensor) -> None:
        if isinstance(module, nn.Conv2d):
            seen[module.training].add(out.dtype)

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    try:
        run()
    finally:
        handle.remove()
    return seen


@pytest.mark.parametrize("k", [1, 2])
def test_bf16_autocast_runs_on_the_cpu_when_asked(k: int):
    """``cpu_autocast``: a bf16 protocol's convolutions run in bf16 in training and evaluation
    (the branch a CUDA run takes), for one run and a fused group."""
    members = [member(s, ["precision=bf16"]) for s in range(k)]
    results: list = []
    dtypes = conv_output_dtypes(lambda: results.extend(train_fused(members, toy_data(), RunOptions(cpu_autocast=True))))
    assert dtypes == {True: {torch.bfloat16}, False: {torch.bfloat16}}
    for r in results:
        assert r.test_accuracy is not None
        assert not r.diverged


def test_the_cpu_trains_fp32_by_default_whatever_the_protocol():
    m = member(0, ["precision=bf16"])
    dtypes = conv_output_dtypes(lambda: train(m.model, toy_data(), m.protocol, m.param_groups))
    assert dtypes == {True: {torch.float32}, False: {torch.float32}}


# --- fused groups: split convolutions, a group of one, the optimizer -----------------------------

def test_split_convolutions_train_the_same_group(float64: float):
    group = [member(s, ["lr=0.1"] if s else []) for s in range(2)]
    ref = train_fused(group, toy_data())
    split = [member(s, ["lr=0.1"] if s else []) for s in range(2)]
    res = train_fused(split, toy_data(), RunOptions(split_convs=True))
    for a, b, ma, mb in zip(ref, res, group, split):
        assert [h["train_loss"] for h in b.history] == pytest.approx([h["train_loss"] for h in a.history], rel=float64)
        assert b.test_loss == pytest.approx(a.test_loss, rel=float64)
        for name, t in ma.model.state_dict().items():
            torch.testing.assert_close(mb.model.state_dict()[name], t, rtol=float64, atol=float64, msg=name)


def test_a_group_of_one_is_its_single_run_bit_for_bit():
    seen = []
    alone, grouped = member(4), member(4)
    ref = train(alone.model, toy_data(), alone.protocol, alone.param_groups, seed=4)
    res = train_fused([grouped], toy_data(), RunOptions(on_epoch=seen.append))[0]
    assert res.history == ref.history
    assert (res.test_accuracy, res.test_loss) == (ref.test_accuracy, ref.test_loss)
    assert [e["member"] for e in seen] == [0, 0]
    for name, t in alone.model.state_dict().items():
        assert torch.equal(grouped.model.state_dict()[name], t), name


def test_fused_sgd_skips_parameters_without_a_gradient():
    a, b = nn.Parameter(torch.ones(4)), nn.Parameter(torch.ones(2))
    opt = FusedSGD([a, b], [[0.1, 0.2], [0.1, 0.2]], [[0.0, 0.0], [0.0, 0.0]], members=2, momentum=0.9,
                   nesterov=False)
    for _ in range(2):
        a.grad = torch.ones(4)
        opt.step()
    assert b.tolist() == [1.0, 1.0]  # untouched, as torch.optim.SGD leaves it
    assert a.tolist() == pytest.approx([1 - 0.1 * 2.9] * 2 + [1 - 0.2 * 2.9] * 2)  # steps of 1 and 1.9


# --- the evaluation's sums ------------------------------------------------------------------------

class Fixed(nn.Module):
    """Logits that predict class ``(label + shift) % 3`` for member ``shift``: member 0 is always
    right, member 1 never."""

    def __init__(self, labels: torch.Tensor) -> None:
        super().__init__()
        self.labels, self.pos = labels, 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.labels[self.pos:self.pos + x.shape[0]]
        self.pos += x.shape[0]
        return torch.cat([nn.functional.one_hot((y + s) % 3, 3).double() * 5 for s in (0, 1)], 1)


def test_evaluation_sums_every_member_and_class_on_the_device():
    data = toy_data()
    setup = RunSetup(torch.device("cpu"), data, load_protocol("nb201"), torch.float64)
    test = DeviceImages(data.test_images, data.test_labels, 0, setup.device)
    totals = evaluate(Fixed(data.test_labels), 2, test, 10, setup, 3)
    counts = torch.bincount(data.test_labels, minlength=3).double()
    assert totals[0, 1] == 24  # member 0: every image right
    assert totals[1, 1] == 0
    assert torch.equal(totals[0, 2:], counts)
    assert torch.equal(totals[1, 2:], torch.zeros(3, dtype=torch.float64))
    assert torch.equal(totals[2, 2:], counts)  # the last row: images per class
    assert totals[1, 0] > totals[0, 0] > 0  # the wrong member's loss is the larger


# --- CUDA: an epoch and an evaluation that never wait for the device ----------------------------

@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("warmup", [False, True])
def test_a_cuda_epoch_and_evaluation_never_sync_the_host(k: int, warmup: bool):
    """With the ELR work too: the last step's ELRs, and the warm-up's every step (lr 4: it acts)."""
    data, device = toy_data(), torch.device("cuda")
    members = [member(s, ["warmup_rule=elr_subcritical", "lr=4.0"] if warmup else []) for s in range(k)]
    setup = RunSetup(device, data, members[0].protocol, options=RunOptions(device="cuda"))
    weights = PlainWeights(members[0], data, setup) if k == 1 else FusedWeights(members, data, setup)
    images = DeviceImages(data.train_images, data.train_labels, 2, device)
    test = DeviceImages(data.test_images, data.test_labels, 0, device)
    draws = [EpochDraw(len(images), setup.generator(epoch_seed(m.seed, 0)), setup) for m in members]
    active = torch.ones(k, dtype=torch.bool, device=device)
    weights.start_epoch(0)
    weights.module.train()
    elr = ElrControl(weights.structure, k, members[0].protocol, device)
    elr.start_epoch(weights.param_lrs(elr.weights))
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        sums, seen, _ = train_epoch(weights.module, weights.opt, Batches(draws, images, setup), active, 0.0, elr)
        totals = evaluate(weights.module, k, test, 16, setup, data.num_classes)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert seen == 40
    assert torch.isfinite(sums).all().item()
    assert len(elr.end_epoch()[0]["elr"]) == len(elr.weights) > 0
    assert elr.warming == warmup or bool(elr.done.all())
    assert totals[:k, 1].sum().item() <= 24 * k


@pytest.mark.parametrize("k", [1, 2])
def test_an_epoch_reads_nothing_back_to_the_host_per_step(k: int, monkeypatch: pytest.MonkeyPatch):
    """The CPU stand-in for the CUDA check above: during an epoch of 3 steps (the ELR warm-up's
    per-step work included) no tensor is read into Python (``item``, ``tolist``, ``float``, ``int``,
    ``bool``, ``numpy``); the sums are read once, after it."""
    data, device = toy_data(), torch.device("cpu")
    members = [member(s, ["warmup_rule=elr_subcritical", "lr=4.0"]) for s in range(k)]
    setup = RunSetup(device, data, members[0].protocol, options=RunOptions())
    weights = PlainWeights(members[0], data, setup) if k == 1 else FusedWeights(members, data, setup)
    images = DeviceImages(data.train_images, data.train_labels, 2, device)
    draws = [EpochDraw(len(images), setup.generator(epoch_seed(m.seed, 0)), setup) for m in members]
    weights.start_epoch(0)
    weights.module.train()
    elr = ElrControl(weights.structure, k, members[0].protocol, device)
    elr.start_epoch(weights.param_lrs(elr.weights))
    batches, active = Batches(draws, images, setup), torch.ones(k, dtype=torch.bool)
    reads: list[str] = []
    for name in ("item", "tolist", "__float__", "__int__", "__bool__", "numpy"):
        real = getattr(torch.Tensor, name)

        def counted(self, *args, _name=name, _real=real):  # noqa: ANN001, ANN002, ANN202
            reads.append(_name)
            return _real(self, *args)

        monkeypatch.setattr(torch.Tensor, name, counted)
    sums, seen, _ = train_epoch(weights.module, weights.opt, batches, active, 0.0, elr)
    monkeypatch.undo()
    assert reads == []
    assert seen == 40 and sums.shape == (3, k) and torch.isfinite(sums).all()
