"""Fused training: K runs as one network must equal K independent runs (CPU, small sizes; the
training comparisons in float64, so that a tight tolerance holds on any CPU)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from nasrescale.data.types import ImageData
from nasrescale.errors import ConfigError
from nasrescale.models import build_model
from nasrescale.protocol import Protocol, load_protocol
from nasrescale.space.family_loader import get_family
from nasrescale.scaling import apply_init, param_groups
from nasrescale.train import RunOptions, train, train_fused
from nasrescale.train.members import FusedMember, fusion_key
from nasrescale.train.fused_sgd import FusedSGD

# every NB201 op kind: 3x3 and 1x1 convs, pooling, skip and a zero edge
ARCH = "|nor_conv_3x3~0|+|nor_conv_1x1~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|none~2|"
DEGENERATE = "|nor_conv_3x3~0|+|none~0|skip_connect~1|+|none~0|none~1|none~2|"  # no path to the output
SIZE = 8
COMMON = ["epochs=3", "batch_size=16"]


def toy_data(n_train: int = 66, n_test: int = 40, seed: int = 0) -> ImageData:
    """Labels 0..2 = the image quadrant (of three) made brighter: learnable by convs + pooling.
    66 training images at batch 16 end in a batch of 2 (kept) -- the partial-batch path."""
    g = torch.Generator().manual_seed(seed)

    def split(n: int) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.randint(0, 150, (n, 3, SIZE, SIZE), generator=g, dtype=torch.uint8)
        y = torch.randint(0, 3, (n,), generator=g)
        h = SIZE // 2
        for i in range(n):
            r, c = divmod(int(y[i]), 2)
            x[i, :, r * h:(r + 1) * h, c * h:(c + 1) * h] += 100
        return x, y

    (xtr, ytr), (xte, yte) = split(n_train), split(n_test)
    return ImageData("toy", xtr, ytr, xte, yte, 3, (0.5, 0.5, 0.5), (0.25, 0.25, 0.25), crop_padding=2)


@pytest.fixture(scope="module")
def data() -> ImageData:
    return toy_data()


def make_run(name: str, overrides: list[str], seed: int, arch: str = ARCH) -> tuple[nn.Module, Protocol, list[dict]]:
    """Build and initialize one run exactly as the CLI does (seed, build, init rule, groups)."""
    protocol = load_protocol(name, COMMON + overrides)
    torch.manual_seed(seed)
    model = build_model(arch, get_family("nb201"), 3, in_shape=(3, SIZE, SIZE), width=4, cells=1)
    apply_init(model, protocol.init)
    return model, protocol, param_groups(model, protocol)


def independent(specs, data):  # noqa: ANN001
    out = []
    for name, overrides, seed in specs:
        model, protocol, groups = make_run(name, overrides, seed)
        out.append((model, train(model, data, protocol, groups, seed=seed)))
    return out


def members(specs) -> list[FusedMember]:  # noqa: ANN001
    runs = [make_run(name, overrides, seed) for name, overrides, seed in specs]
    return [FusedMember(m, p, g, seed) for (m, p, g), (_, _, seed) in zip(runs, specs)]


def assert_close_rel(a: float, b: float, rel: float) -> None:
    assert math.isclose(a, b, rel_tol=rel, abs_tol=rel * 1e-3), (a, b)


def assert_same_run(ref_model: nn.Module, ref, model: nn.Module, res, rel: float) -> None:  # noqa: ANN001
    """Equal up to float64 rounding: losses and weights to ``rel``, the same test predictions."""
    assert res.epochs_run == ref.epochs_run
    assert res.diverged == ref.diverged
    assert res.lrs == ref.lrs
    assert (res.test_split, res.test_images) == (ref.test_split, ref.test_images)
    for h_ref, h in zip(ref.history, res.history, strict=True):
        assert h["epoch"] == h_ref["epoch"]
        assert h["lr"] == h_ref["lr"]
        assert_close_rel(h["train_loss"], h_ref["train_loss"], rel)
    assert_close_rel(res.test_loss, ref.test_loss, rel)
    assert res.test_accuracy == ref.test_accuracy
    ref_state, state = ref_model.state_dict(), model.state_dict()
    for name, t in ref_state.items():
        if t.is_floating_point():
            assert t.dtype == torch.float64, name  # the comparison means something only in float64
            torch.testing.assert_close(state[name], t, rtol=rel, atol=rel * 1e-3, msg=name)


# --- the optimizer ------------------------------------------------------------------------------

@pytest.mark.parametrize("nesterov, wds", [(True, (5e-4, 5e-4, 5e-4)), (False, (0.0, 1e-3, 5e-4))])
def test_fused_sgd_equals_independent_torch_sgd(nesterov: bool, wds: tuple[float, ...]):
    # float64: the two may round an update differently (a fused multiply-add or not, lr * d
    # first or not), a few ulps of values below ~10, which 1e-12 covers with room on any CPU
    g = torch.Generator().manual_seed(0)
    shapes, lrs, k = [(4, 3, 3, 3), (4,), (2, 5)], (0.1, 0.03, 0.5), 3
    singles = [[torch.randn(s, generator=g, dtype=torch.float64, requires_grad=True) for s in shapes]
               for _ in range(k)]
    ref = [torch.optim.SGD(ps, lr=lr, momentum=0.9, nesterov=nesterov, weight_decay=wd)
           for ps, lr, wd in zip(singles, lrs, wds)]
    fused = [nn.Parameter(torch.cat([singles[i][j].detach() for i in range(k)])) for j in range(len(shapes))]
    opt = FusedSGD(fused, [lrs] * len(shapes), [wds] * len(shapes), members=k, momentum=0.9, nesterov=nesterov)
    for step in range(4):
        factor = 0.5 ** step  # a schedule: every member's LR times the same factor
        opt.set_factor(factor)
        grads = [[torch.randn(s, generator=g, dtype=torch.float64) for s in shapes] for _ in range(k)]
        for i in range(k):
            for group in ref[i].param_groups:
                group["lr"] = lrs[i] * factor
            for p, gr in zip(singles[i], grads[i]):
                p.grad = gr.clone()
            ref[i].step()
        for j, p in enumerate(fused):
            p.grad = torch.cat([grads[i][j] for i in range(k)])
        opt.step()
    for j, p in enumerate(fused):
        torch.testing.assert_close(p.detach(), torch.cat([singles[i][j].detach() for i in range(k)]),
                                   rtol=1e-12, atol=1e-12)


# --- training ------------------------------------------------------------------------------------

def test_fused_training_equals_independent_runs(data: ImageData, float64: float):
    """Mixed init rules, LR rules, LRs, seeds and a per-layer kernel rule (several param groups)."""
    specs = [
        ("nb201", [], 0),
        ("rescaled", ["lr=0.3"], 1),                                   # in-degree init, path-depth LR
        ("rescaled", ["lr=0.5", "init=in_degree_source", "kernel_rule=per_layer"], 2),
        ("nb201", ["lr=0.05"], 0),                                     # same seed, other LR
    ]
    refs = independent(specs, data)
    group = members(specs)
    results = train_fused(group, data)
    assert len(results) == len(specs)
    assert len(results[2].lrs) == 2  # the per-layer rule gave that member two LR groups
    for (ref_model, ref), member, res in zip(refs, group, results):
        assert_same_run(ref_model, ref, member.model, res, float64)


def test_diverging_member_is_frozen_and_others_unaffected(data: ImageData, float64: float):
    specs = [("nb201", [], 0), ("nb201", ["lr=1e300"], 1), ("rescaled", ["lr=0.3"], 2)]  # overflows float64 too
    refs = independent(specs, data)
    assert refs[1][1].diverged  # the huge LR really diverges alone
    group = members(specs)
    results = train_fused(group, data)
    bad, ref_bad = results[1], refs[1][1]
    assert bad.diverged
    assert bad.diverged_epoch == ref_bad.diverged_epoch
    assert bad.test_accuracy is None
    assert [h["epoch"] for h in bad.history] == [h["epoch"] for h in ref_bad.history]
    for i in (0, 2):
        assert_same_run(refs[i][0], refs[i][1], group[i].model, results[i], float64)


def test_resume_from_fused_checkpoint_equals_uninterrupted(data: ImageData, tmp_path):
    specs = [("nb201", [], 0), ("rescaled", ["lr=0.3"], 1)]
    whole_group = members(specs)
    whole = train_fused(whole_group, data)
    ckpt = tmp_path / "fused.pt"
    first = train_fused(members(specs), data, RunOptions(checkpoint=ckpt, stop_after=2))
    assert not first[0].finished
    assert first[0].test_accuracy is None
    assert ckpt.exists()
    group = members(specs)
    resumed = train_fused(group, data, RunOptions(checkpoint=ckpt))
    for a, b, ma, mb in zip(whole, resumed, whole_group, group):
        assert b.resumed_from == 2
        assert b.finished
        assert [h["train_loss"] for h in a.history] == [h["train_loss"] for h in b.history]
        assert a.test_accuracy == b.test_accuracy
        assert a.test_loss == b.test_loss
        for name, t in ma.model.state_dict().items():
            assert torch.equal(mb.model.state_dict()[name], t), name
    other = members([("nb201", [], 0), ("rescaled", ["lr=0.3"], 5)])  # another seed for member 1
    differs = r"member 1 differs in fingerprint \(.*\); seed \(1 in the checkpoint, 5 now\)"
    with pytest.raises(ConfigError, match=differs):
        train_fused(other, data, RunOptions(checkpoint=ckpt))


def test_resume_after_a_member_diverged(data: ImageData, tmp_path):
    specs = [("nb201", ["lr=1e6"], 0), ("nb201", [], 1)]
    whole = train_fused(members(specs), data)
    ckpt = tmp_path / "fused.pt"
    train_fused(members(specs), data, RunOptions(checkpoint=ckpt, stop_after=2))
    resumed = train_fused(members(specs), data, RunOptions(checkpoint=ckpt))
    assert resumed[0].diverged
    assert resumed[0].diverged_epoch == whole[0].diverged_epoch
    assert [h["train_loss"] for h in resumed[1].history] == [h["train_loss"] for h in whole[1].history]
    assert resumed[1].test_accuracy == whole[1].test_accuracy


WARM = ["warmup_rule=elr_subcritical"]
HOT = WARM + ["lr=4.0"]  # above the toy network's critical LR at init: the warm-up acts


def test_warmup_trains_fused_like_independent_runs_and_resumes(data: ImageData, float64: float, tmp_path):
    specs = [("nb201", HOT, 0), ("rescaled", HOT + ["init=in_degree"], 1), ("nb201", WARM, 2),
             ("spectral", WARM, 3)]  # per-layer LRs (the spectral rule's) in the warm-up too
    refs = independent(specs, data)
    first = [h["warmup_factor"] for h in refs[0][1].history]
    assert first[0] < 1 and first[-1] == 1.0  # it acted, then ended
    assert refs[1][1].history[0]["warmup_factor"] < 1  # the other init too (members end at different steps)
    group = members(specs)
    for (ref_model, ref), member, res in zip(refs, group, train_fused(group, data)):
        assert_same_run(ref_model, ref, member.model, res, float64)
        assert [h["warmup_factor"] for h in res.history] == pytest.approx([h["warmup_factor"] for h in ref.history],
                                                                          rel=float64)
    ckpt = tmp_path / "warm.pt"
    stopped = train_fused(members(specs[:2]), data, RunOptions(checkpoint=ckpt, stop_after=1))
    assert not stopped[0].finished
    resumed = train_fused(members(specs[:2]), data, RunOptions(checkpoint=ckpt))
    whole = train_fused(members(specs[:2]), data)
    for a, b in zip(whole, resumed):
        assert [h["train_loss"] for h in a.history] == [h["train_loss"] for h in b.history]
        assert [h["warmup_factor"] for h in a.history] == [h["warmup_factor"] for h in b.history]


def test_unfusable_groups_are_rejected(data: ImageData):
    with pytest.raises(ConfigError, match="degenerate"):
        train_fused([FusedMember(*make_run("nb201", [], 0, DEGENERATE)[:3], seed=0)], data)
    a, b = members([("nb201", [], 0), ("nb201", ["batch_size=8"], 1)])
    with pytest.raises(ConfigError, match="member 1 .* differs from member 0"):
        train_fused([a, b], data)
    with pytest.raises(ConfigError, match="no members"):
        train_fused([], data)


def test_fusion_key_ignores_only_name_lr_weight_decay_and_init_rules():
    base = load_protocol("nb201")
    assert fusion_key(base) == fusion_key(load_protocol("rescaled", ["lr=0.7", "kernel_rule=per_layer"]))
    assert fusion_key(base) == fusion_key(load_protocol("nb201", ["lr=0.4", "weight_decay=1e-4"]))
    for override in ("momentum=0.8", "augment=false", "label_smoothing=0.1", "nesterov=false", "epochs=4"):
        assert fusion_key(base) != fusion_key(load_protocol("nb201", [override])), override


def test_members_at_their_own_lr_and_weight_decay_equal_independent_runs(data: ImageData, float64: float):
    """An LR x weight-decay grid of one cell (a protocol that scales its decay with the LR), two seeds."""
    specs = [("nb201", ["lr=0.05", "weight_decay=5e-4"], 0), ("nb201", ["lr=0.2", "weight_decay=1.25e-4"], 0),
             ("nb201", ["lr=0.05", "weight_decay=5e-4"], 1), ("nb201", ["lr=0.2", "weight_decay=0"], 1)]
    refs = independent(specs, data)
    group = members(specs)
    results = train_fused(group, data)
    for (ref_model, ref), member, res in zip(refs, group, results):
        assert_same_run(ref_model, ref, member.model, res, float64)


# --- CUDA ------------------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_fused_on_cuda_tracks_independent_runs(data: ImageData, precision: str):
    """fp32 (TF32 off): equal to independent CUDA runs up to reordering; bf16: close (rounding differs)."""
    specs = [("nb201", [f"precision={precision}"], 0), ("rescaled", ["lr=0.3", f"precision={precision}"], 1)]
    refs = []
    for name, overrides, seed in specs:
        model, protocol, groups = make_run(name, overrides, seed)
        refs.append(train(model, data, protocol, groups, RunOptions(device="cuda"), seed=seed))
    results = train_fused(members(specs), data, RunOptions(device="cuda"))
    rel = 1e-3 if precision == "fp32" else 5e-2
    for ref, res in zip(refs, results):
        assert not res.diverged
        assert res.test_accuracy is not None
        for a, b in zip(ref.history, res.history, strict=True):
            assert math.isclose(a["train_loss"], b["train_loss"], rel_tol=rel), (precision, a, b)
