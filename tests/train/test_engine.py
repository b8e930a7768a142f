"""Training engine: augmentation, determinism, resume, checkpoints, divergence, schedule, sync count."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from nasrescale.data.types import ImageData
from nasrescale.errors import ConfigError, DataError
from nasrescale.protocol import Protocol, cosine_factor, load_protocol
from nasrescale.train import RunOptions, TrainResult, crop_flip, draw_augmentation, epoch_seed, normalize, train
from nasrescale.train import run_setup
from nasrescale.train.run_setup import RunSetup
from nasrescale.train.augment import stats_tensor

MEAN, STD = (0.49, 0.48, 0.45), (0.25, 0.24, 0.26)


def make_data(n_train: int = 96, n_test: int = 48, size: int = 8, padding: int = 2, seed: int = 0) -> ImageData:
    """Random images whose label (0..2) is the channel made brightest: learnable by conv + pooling."""
    g = torch.Generator().manual_seed(seed)

    def split(n: int) -> tuple[torch.Tensor, torch.Tensor]:
        images = torch.randint(0, 140, (n, 3, size, size), generator=g, dtype=torch.uint8)
        labels = torch.randint(0, 3, (n,), generator=g)
        images[torch.arange(n), labels] += 100
        return images, labels

    (xtr, ytr), (xte, yte) = split(n_train), split(n_test)
    return ImageData("toy", xtr, ytr, xte, yte, 3, MEAN, STD, crop_padding=padding)


class TinyNet(nn.Module):
    def __init__(self, dropout: float = 0.0) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.drop = nn.Dropout(dropout)
        self.fc = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.bn(self.conv(x))).mean(dim=(2, 3))
        return self.fc(self.drop(h))


def make_model(dropout: float = 0.0, init_seed: int = 123) -> TinyNet:
    torch.manual_seed(init_seed)  # the caller seeds the init
    return TinyNet(dropout)


def groups(model: nn.Module, lr: float = 0.05) -> list[dict]:
    return [{"params": list(model.parameters()), "lr": lr}]


def proto(**kw) -> Protocol:
    kw = {"epochs": 4, "batch_size": 16, "lr": 0.05, **kw}
    return Protocol("test", **kw)


def run(model: nn.Module | None = None, data: ImageData | None = None, protocol: Protocol | None = None, **kw) -> TrainResult:
    """Train with ``kw`` split into the run's own arguments (seed, identity, ...) and RunOptions."""
    model = model if model is not None else make_model()
    own = {name: kw.pop(name) for name in ("seed", "fingerprint", "identity", "optimizer") if name in kw}
    return train(model, data or make_data(), protocol or proto(), kw.pop("param_groups", None) or groups(model),
                 RunOptions(**kw), **own)


# --- augmentation ---------------------------------------------------------------------------

def test_crop_flip_matches_per_sample_reference():
    g = torch.Generator().manual_seed(1)
    images = torch.randint(0, 256, (40, 3, 7, 10), generator=g, dtype=torch.uint8)  # H != W on purpose
    p = 3
    dy, dx, flip = draw_augmentation(40, p, g)
    out = crop_flip(images, p, dy, dx, flip)
    for n in range(40):
        ref = F.pad(images[n], (p, p, p, p))[:, dy[n]:dy[n] + 7, dx[n]:dx[n] + 10]
        if flip[n]:
            ref = ref.flip(-1)
        assert torch.equal(out[n], ref), n
    assert out.dtype == torch.uint8


def test_draw_augmentation_covers_offsets_and_flips_half():
    dy, dx, flip = draw_augmentation(4000, 4, torch.Generator().manual_seed(0))
    assert set(dy.tolist()) == set(range(9))
    assert set(dx.tolist()) == set(range(9))
    assert 0.46 < flip.float().mean().item() < 0.54
    again = draw_augmentation(4000, 4, torch.Generator().manual_seed(0))
    for name, a, b in zip(("dy", "dx", "flip"), (dy, dx, flip), again, strict=True):
        assert torch.equal(a, b), f"{name} differs between two draws from one seed"


def test_normalize_and_black_padding():
    mean, std = stats_tensor(MEAN, "cpu"), stats_tensor(STD, "cpu")
    x = torch.randint(0, 256, (5, 3, 4, 4), dtype=torch.uint8)
    expect = torch.stack([(x[:, c].float() / 255 - MEAN[c]) / STD[c] for c in range(3)], dim=1)
    assert torch.allclose(normalize(x, mean, std), expect, atol=1e-6)
    white = torch.full((1, 3, 4, 4), 255, dtype=torch.uint8)
    zero = torch.zeros(1, dtype=torch.long)
    out = normalize(crop_flip(white, 2, zero, zero, torch.tensor([False])), mean, std)
    # the top-left 2x2 window is padding: black before normalization -> -mean/std after
    assert torch.allclose(out[0, :, :2, :2], (-mean / std)[0].expand(3, 2, 2))
    assert torch.allclose(out[0, :, 2:, 2:], ((1 - mean) / std)[0].expand(3, 2, 2))


class Recorder(TinyNet):
    """Records the inputs it sees, separately in training and eval mode."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[bool, list[torch.Tensor]] = {True: [], False: []}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.seen[self.training].append(x.detach().clone())
        return super().forward(x)


@pytest.mark.parametrize("augment", [False, True])
def test_model_inputs_train_batches_and_normalized_test_images(augment):
    data = make_data(n_train=40, n_test=20)
    torch.manual_seed(0)
    model = Recorder()
    run(model, data, proto(epochs=1, augment=augment), seed=5, eval_batch_size=8)
    mean, std = stats_tensor(MEAN, "cpu"), stats_tensor(STD, "cpu")
    # test images: only normalized, in order, in batches of eval_batch_size
    assert [len(b) for b in model.seen[False]] == [8, 8, 4]
    assert torch.equal(torch.cat(model.seen[False]), normalize(data.test_images, mean, std))
    # training: batches of 16, 16, 8 in the order of the epoch's seeded permutation
    assert [len(b) for b in model.seen[True]] == [16, 16, 8]
    perm = torch.randperm(40, generator=torch.Generator().manual_seed(epoch_seed(5, 0)))
    plain = normalize(data.train_images[perm], mean, std)
    assert torch.equal(torch.cat(model.seen[True]), plain) is (not augment)


def test_final_batch_of_one_sample_is_dropped():
    model = make_model()
    calls = []
    model.register_forward_hook(lambda m, i, o: calls.append(len(i[0])) if m.training else None)
    result = run(model, make_data(n_train=33), proto(epochs=1))  # batches 16, 16, (1: dropped)
    assert calls == [16, 16]
    assert result.epochs_run == 1


# --- determinism and resume -----------------------------------------------------------------

def assert_same_run(a: TrainResult, b: TrainResult, ma: nn.Module, mb: nn.Module) -> None:
    sa, sb = ma.state_dict(), mb.state_dict()
    assert sa.keys() == sb.keys()
    for k in sa:
        assert torch.equal(sa[k], sb[k]), f"weights {k} differ"
    assert a.history == b.history
    assert (a.test_accuracy, a.test_loss) == (b.test_accuracy, b.test_loss)


def test_same_seed_gives_identical_runs_and_other_seed_differs():
    data = make_data()
    ma, mb, mc = make_model(0.2), make_model(0.2), make_model(0.2)
    a, b = run(ma, data, seed=3), run(mb, data, seed=3)
    assert_same_run(a, b, ma, mb)
    c = run(mc, data, seed=4)
    assert c.history != a.history


def test_stop_and_resume_equals_uninterrupted_run(tmp_path):
    data = make_data(n_train=90)  # 5 full batches and a partial one of 10
    ckpt = tmp_path / "sub" / "run.pt"
    m_full = make_model(0.2)  # dropout: the global RNG must be reseeded per epoch too
    full = run(m_full, data, seed=7)
    m_part = make_model(0.2)
    part = run(m_part, data, seed=7, checkpoint=ckpt, stop_after=2)
    assert (part.finished, part.epochs_run, part.test_accuracy, part.resumed_from) == (False, 2, None, None)
    assert part.history == full.history[:2]
    m_resumed = make_model(0.2)  # a fresh process would rebuild the model from the same init
    resumed = run(m_resumed, data, seed=7, checkpoint=ckpt)
    assert (resumed.resumed_from, resumed.epochs_run, resumed.finished) == (2, 4, True)
    assert_same_run(full, resumed, m_full, m_resumed)


def test_checkpoint_loads_weights_only_and_finished_run_only_reevaluates(tmp_path):
    ckpt = tmp_path / "run.pt"
    data = make_data()
    first = run(make_model(), data, checkpoint=ckpt, checkpoint_every=3)
    state = torch.load(ckpt, weights_only=True)
    assert state["epochs_done"] == 4
    assert len(state["history"]) == 4
    assert state["seed"] == 0
    assert {"model", "optimizer", "scheduler", "fingerprint", "run"} <= set(state)
    assert [p.name for p in tmp_path.iterdir()] == ["run.pt"]  # no temp files left behind
    again = run(make_model(init_seed=999), data, checkpoint=ckpt)  # weights come from the file
    assert (again.resumed_from, again.images_per_s) == (4, None)
    assert (again.test_accuracy, again.test_loss, again.history) == (first.test_accuracy, first.test_loss, first.history)


def test_keep_checkpoint_false_deletes_it_when_finished(tmp_path):
    ckpt = tmp_path / "run.pt"
    run(make_model(), checkpoint=ckpt, keep_checkpoint=False, stop_after=1)
    assert ckpt.exists()  # stopped early: kept for resuming
    result = run(make_model(), checkpoint=ckpt, keep_checkpoint=False)
    assert result.finished
    assert result.resumed_from == 1
    assert not ckpt.exists()


def test_fingerprint_mismatch_raises_config_error(tmp_path):
    ckpt = tmp_path / "run.pt"
    run(make_model(), checkpoint=ckpt, stop_after=1, seed=0)
    with pytest.raises(ConfigError, match=r"belongs to another run.*seed 0.*delete"):
        run(make_model(), checkpoint=ckpt, seed=1)
    with pytest.raises(ConfigError, match="belongs to another run"):
        run(make_model(), checkpoint=ckpt, fingerprint="arch-A/seed-0")
    run(make_model(), checkpoint=tmp_path / "b.pt", stop_after=1, fingerprint="arch-B")
    assert run(make_model(), checkpoint=tmp_path / "b.pt", fingerprint="arch-B").resumed_from == 1


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_corrupt_checkpoint_gives_clear_error(tmp_path, damage):
    ckpt = tmp_path / "run.pt"
    run(make_model(), checkpoint=ckpt, stop_after=1)
    raw = ckpt.read_bytes()
    ckpt.write_bytes({"truncate": raw[: len(raw) // 2], "garbage": b"not a checkpoint" * 10, "empty": b""}[damage])
    with pytest.raises(DataError, match="unreadable.*delete it"):
        run(make_model(), checkpoint=ckpt)


def test_foreign_torch_file_is_not_a_checkpoint(tmp_path):
    ckpt = tmp_path / "weights.pt"
    torch.save({"model": make_model().state_dict()}, ckpt)
    with pytest.raises(DataError, match="not a nasrescale training checkpoint"):
        run(make_model(), checkpoint=ckpt)


# --- run identity in the checkpoint; precision -------------------------------------------

IDENTITY = {"arch": "3_11_111", "family": "0123456789abcdef", "width": 16, "cells": 5}


def test_identity_is_stored_with_engine_facts(tmp_path):
    ckpt = tmp_path / "run.pt"
    run(make_model(), checkpoint=ckpt, stop_after=1, identity=IDENTITY, seed=2)
    stored = json.loads(torch.load(ckpt, weights_only=True)["identity"])
    assert stored == {**IDENTITY, "precision": "bf16", "test_split": "full", "test_images": 48, "seed": 2}
    halves = run(make_model(), data=dataclasses.replace(make_data(), test_split="x-valid"))
    assert (halves.test_split, halves.test_images) == ("x-valid", 48)
    assert run(make_model(), checkpoint=ckpt, identity=dict(IDENTITY), seed=2).resumed_from == 1


@pytest.mark.parametrize("change, key", [
    ({"identity": {**IDENTITY, "arch": "3_44_444"}}, "arch"),  # equal shapes, another cell
    ({"identity": {**IDENTITY, "family": "fedcba9876543210"}}, "family"),  # e.g. another kernel_rule
    ({"protocol": proto(precision="fp32")}, "precision"),
    ({"data": dataclasses.replace(make_data(), test_split="x-valid")}, "test_split"),
])
def test_resume_refuses_another_run_naming_the_keys(tmp_path, change, key):
    ckpt = tmp_path / "run.pt"
    run(make_model(), checkpoint=ckpt, stop_after=1, identity=IDENTITY, fingerprint="same")
    kw = {"identity": IDENTITY, "fingerprint": "same", **change}  # same fingerprint: only the identity tells
    with pytest.raises(ConfigError, match=rf"belongs to another run.*differs in: {key} \(.* in the checkpoint, .* now\)"):
        run(make_model(), checkpoint=ckpt, **kw)


def test_checkpoint_without_identity_is_not_resumed_by_a_run_with_one(tmp_path):
    ckpt = tmp_path / "run.pt"
    run(make_model(), checkpoint=ckpt, stop_after=1, fingerprint="f")
    with pytest.raises(ConfigError, match="written without a run identity"):
        run(make_model(), checkpoint=ckpt, fingerprint="f", identity=IDENTITY)


def test_default_fingerprint_covers_identity(tmp_path):
    """Without a fingerprint, two identities give two fingerprints (so a mismatch is caught even
    by a caller that compares fingerprints only)."""
    ckpt = tmp_path / "run.pt"
    run(make_model(), checkpoint=ckpt, stop_after=1, identity=IDENTITY)
    fp1 = torch.load(ckpt, weights_only=True)["fingerprint"]
    run(make_model(), checkpoint=tmp_path / "b.pt", stop_after=1, identity={**IDENTITY, "arch": "3_44_444"})
    assert torch.load(tmp_path / "b.pt", weights_only=True)["fingerprint"] != fp1


def test_derived_fingerprint_covers_precision_and_test_split():
    from nasrescale.train import derive_fingerprint

    model, data = make_model(), make_data()
    base = derive_fingerprint(proto(), 0, groups(model), data)
    assert derive_fingerprint(proto(precision="fp32"), 0, groups(model), data) != base
    assert derive_fingerprint(proto(), 0, groups(model), dataclasses.replace(data, test_split="x-valid")) != base
    assert derive_fingerprint(proto(), 0, groups(model), data) == base


def test_identity_must_be_json(tmp_path):
    with pytest.raises(ConfigError, match="identity must be a JSON-able dict"):
        run(make_model(), identity={"arch": object()})


def test_precision_is_a_protocol_setting():
    assert load_protocol("nb201").precision == "bf16"
    assert load_protocol("rescaled").precision == "bf16"
    assert load_protocol("nb201", ["precision=fp32"]).precision == "fp32"
    with pytest.raises(ConfigError, match="protocol.precision"):
        load_protocol("nb201", ["precision=fp16"])


@pytest.mark.parametrize("precision", ["bf16", "fp32"])
def test_setup_honours_precision(monkeypatch, precision):
    """CPU: fp32 whatever the setting. CUDA (constructed without a GPU: only the flags are read):
    bf16 -> autocast; fp32 -> no autocast and TF32 off inside the run, restored after."""
    data, p = make_data(), proto(precision=precision)
    cpu = RunSetup(torch.device("cpu"), data, p)
    assert not cpu.amp
    assert not cpu.exact_fp32
    monkeypatch.setattr(run_setup, "stats_tensor", lambda values, device, dtype=torch.float32: torch.tensor(values, dtype=dtype))
    cuda = RunSetup(torch.device("cuda"), data, p)
    assert cuda.amp == (precision == "bf16")
    assert cuda.exact_fp32 == (precision == "fp32")
    saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = True
        with cuda.precision_scope():
            inside = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
        after = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved
    assert inside == ((True, True) if precision == "bf16" else (False, False))
    assert after == (True, True)


def test_cpu_fp32_and_bf16_protocols_train_identically():
    """On the CPU the precision setting changes nothing (fp32 both): equal results bit for bit."""
    a = run(make_model(), protocol=proto(precision="bf16"))
    b = run(make_model(), protocol=proto(precision="fp32"))
    assert a.history == b.history
    assert a.test_accuracy == b.test_accuracy


# --- divergence, schedule, learning ---------------------------------------------------------

class NaNAfter(TinyNet):
    """Emits NaN from its ``start``-th training forward pass on."""

    def __init__(self, start: int) -> None:
        super().__init__()
        self.start, self.calls = start, 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = super().forward(x)
        if self.training:
            self.calls += 1
            if self.calls > self.start:
                out = out * math.nan
        return out


def test_nan_model_diverges_at_the_right_epoch_without_raising(tmp_path):
    torch.manual_seed(0)
    model = NaNAfter(start=6 + 3)  # 96 images / 16 = 6 steps per epoch: NaN in epoch 2
    result = run(model, checkpoint=tmp_path / "run.pt")
    assert (result.diverged, result.diverged_epoch, result.epochs_run) == (True, 2, 2)
    assert result.test_accuracy is None
    assert result.test_loss is None
    assert result.finished
    assert math.isnan(result.train_loss_last)
    assert result.train_loss_best == result.history[0]["train_loss"]
    doc = json.loads(json.dumps(result.to_json(), allow_nan=False))  # strict JSON: NaN -> null
    assert doc["train_loss_last"] is None
    assert doc["diverged_epoch"] == 2
    assert torch.load(tmp_path / "run.pt", weights_only=True)["epochs_done"] == 1  # last good epoch


def test_huge_lr_diverges_in_first_epoch():
    model = make_model()
    result = run(model, param_groups=groups(model, lr=1e30))
    assert result.diverged
    assert result.diverged_epoch == 1
    assert result.test_accuracy is None


@pytest.mark.parametrize("warmup", [0, 1])
def test_schedule_scales_each_group_by_cosine_factor(monkeypatch, warmup):
    seen: list[list[float]] = []
    step = torch.optim.SGD.step

    def recording_step(self, *args, **kw):
        seen.append([g["lr"] for g in self.param_groups])
        return step(self, *args, **kw)

    monkeypatch.setattr(torch.optim.SGD, "step", recording_step)
    model = make_model()
    lrs = [0.1, 0.03]
    pg = [{"params": [model.conv.weight, model.bn.weight, model.bn.bias], "lr": lrs[0]},
          {"params": list(model.fc.parameters()), "lr": lrs[1], "weight_decay": 0.0}]
    protocol = proto(epochs=5, warmup_epochs=warmup)
    result = run(model, protocol=protocol, param_groups=pg)
    assert len(seen) == 5 * 6
    assert result.lrs == lrs
    for epoch in range(5):
        want = [lr * cosine_factor(epoch, protocol) for lr in lrs]
        for got in seen[epoch * 6:(epoch + 1) * 6]:
            assert got == pytest.approx(want, rel=1e-12, abs=1e-15)
        assert result.history[epoch]["lr"] == pytest.approx(want[0])
    assert pg[0].keys() == {"params", "lr"}  # the caller's groups are not modified


def test_loss_falls_on_learnable_data():
    result = run(make_model(), make_data(n_train=192, n_test=96), proto(epochs=8, lr=0.1))
    losses = [h["train_loss"] for h in result.history]
    assert losses[-1] < 0.6 * losses[0]
    assert result.train_loss_best == min(losses)
    assert result.test_accuracy > 70
    assert result.images_per_s > 0
    assert 0 < result.train_accuracy_last <= 100
    assert json.dumps(result.to_json(), allow_nan=False)


# --- host syncs, compile, arguments ---------------------------------------------------------

def test_no_per_step_host_sync(monkeypatch):
    counts = {"n": 0}
    for name in ("item", "tolist", "cpu", "numpy", "__bool__", "__float__", "__int__"):
        original = getattr(torch.Tensor, name)

        def counting(self, *args, _original=original, **kw):
            counts["n"] += 1
            return _original(self, *args, **kw)

        monkeypatch.setattr(torch.Tensor, name, counting)
    data = make_data(n_train=160)  # 10 steps per epoch
    run(make_model(), data, proto(epochs=2))
    # one read per epoch plus one for the evaluation; far fewer than the 20 steps
    assert counts["n"] <= 2 * 1 + 1


def test_compile_path_runs_training_and_evaluation_through_the_compiled_module(monkeypatch, tmp_path):
    """torch.compile is stubbed by a wrapper that counts its calls (a real compile needs a C++
    toolchain and minutes on CPU): every training step and test batch must go through it,
    the checkpoint must hold the *original* module's state (no ``_orig_mod.`` prefixes), and
    the figures must equal an uncompiled run's."""
    calls = {"train": 0, "eval": 0}

    class Compiled(nn.Module):
        def __init__(self, inner: nn.Module) -> None:
            super().__init__()
            self._orig_mod = inner

        def forward(self, x):
            calls["train" if self._orig_mod.training else "eval"] += 1
            return self._orig_mod(x)

    monkeypatch.setattr(torch, "compile", lambda model, *a, **k: Compiled(model))
    m1, m2 = make_model(), make_model()
    a = run(m1, compile=True, checkpoint=tmp_path / "c.pt", eval_batch_size=16)
    b = run(m2, eval_batch_size=16)
    assert calls == {"train": 4 * (96 // 16), "eval": 48 // 16}  # 4 epochs x 6 steps; 3 test batches
    assert set(torch.load(tmp_path / "c.pt", weights_only=True)["model"]) == set(m1.state_dict())
    assert_same_run(a, b, m1, m2)


def test_bad_arguments_raise_clear_errors():
    model = make_model()
    with pytest.raises(ConfigError, match="param_groups is empty"):
        train(model, make_data(), proto(), [])
    with pytest.raises(ConfigError, match="needs both 'params' and 'lr'"):
        train(model, make_data(), proto(), [{"params": list(model.parameters())}])
    with pytest.raises(ConfigError, match="stop_after must be >= 1"):
        run(model, stop_after=0)
    with pytest.raises(DataError, match="at least 2"):
        run(model, make_data(n_train=1))


def test_params_given_as_generator_and_progress_bar(capsys):
    model = make_model()
    pg = [{"params": model.parameters(), "lr": 0.05}]  # a generator, as users often write
    result = train(model, make_data(), proto(), pg, RunOptions(progress=True))
    assert result.epochs_run == 4
    assert result.history[-1]["train_loss"] < result.history[0]["train_loss"]
    err = capsys.readouterr().err  # tqdm writes to stderr
    assert "4/4" in err
    assert "loss=" in err
    assert "acc=" in err


def test_cpu_run_uses_channels_last_in_fp32():
    """channels_last is a layout chosen on every device (faster oneDNN convs); the CPU stays fp32."""
    model = make_model()
    result = run(model)
    assert model.conv.weight.is_contiguous(memory_format=torch.channels_last)
    assert model.conv.weight.dtype == torch.float32
    assert result.test_accuracy is not None


# --- CUDA (bf16 autocast, channels_last, device generators) ---------------------------------

@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_run_and_gather():
    g = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (64, 3, 8, 8), generator=g, dtype=torch.uint8)
    dy, dx, flip = draw_augmentation(64, 2, g)
    on_gpu = crop_flip(images.cuda(), 2, dy.cuda(), dx.cuda(), flip.cuda())
    assert torch.equal(on_gpu.cpu(), crop_flip(images, 2, dy, dx, flip))
    model = make_model()
    result = run(model, make_data(n_train=192), proto(epochs=6, lr=0.1), device="cuda")
    assert not result.diverged
    assert result.test_accuracy is not None
    assert result.history[-1]["train_loss"] < result.history[0]["train_loss"]
    assert model.conv.weight.is_contiguous(memory_format=torch.channels_last)
