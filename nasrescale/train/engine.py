"""The training engine: one architecture, one protocol, one seed -> :class:`TrainResult`.

:func:`train` runs NAS-Bench-201's recipe (docs/design.md §3) on a dataset held on the training
device: SGD with the caller's param groups (each with its own, already scaled LR), a
LambdaLR of :func:`~nasrescale.protocol.cosine_factor` stepped once per epoch, cross-entropy,
on-device crop+flip augmentation (:mod:`nasrescale.train.augment`), then a test evaluation.

Design points:

* **Reproducible from the seed alone.** Epoch ``e`` (0-based) draws its permutation, crop
  offsets and flips from a fresh generator seeded ``seed * 100003 + e`` (on the training
  device), and reseeds the global RNG (dropout, if a model has any) from the same pair, so a
  run resumed from a checkpoint draws exactly the batches of an uninterrupted one without
  any RNG state being saved. The caller seeds the model's initial weights.
* **No per-step host sync.** Loss and correct counts accumulate in device tensors and are
  read once per epoch (one transfer), which also feeds the progress bar and the divergence
  check; evaluation likewise reads its totals once.
* **Batches as NB201's loader** (``drop_last=False``): the last partial batch is kept, except
  that a final batch of exactly 1 sample is dropped, because BatchNorm cannot normalize a
  single sample in training mode (it raises).
* **channels_last everywhere; precision from the protocol**: the model and its inputs use
  the channels_last memory format on every device (a layout, not a precision: oneDNN's CPU
  convolutions and cuDNN's tensor-core kernels are both faster in it, 1.45x for NB201 on
  this project's 2-core CPU). ``protocol.precision = "bf16"`` enables bf16 autocast on CUDA;
  ``"fp32"`` trains in fp32 with TF32 disabled (restored afterwards), as the benchmark did.
  The CPU always trains in fp32.
* **A checkpoint knows its run**: ``identity`` (arch, family digest, size, protocol,
  precision, test split, seed, ...) is stored in the checkpoint and compared on resume.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm.auto import tqdm

from ..data.types import ImageData
from ..errors import ConfigError, DataError
from ..protocol import Protocol, cosine_factor
from .augment import normalize
from .metrics import class_counts, released_class_mean
from .checkpoint import check_resumable, describe_run, load_checkpoint, resolve_identity, save_checkpoint
from .result import TrainResult
from .setup import GLOBAL_RNG_OFFSET, EpochDraw, RunSetup, epoch_seed, loss_input, model_dtype, tail_start

__all__ = ["train", "epoch_seed", "EpochDraw"]

def _train_epoch(net: nn.Module, optimizer: torch.optim.Optimizer, criterion: nn.Module, images: torch.Tensor,
                 labels: torch.Tensor, gen: torch.Generator, setup: RunSetup) -> tuple[float, float, int, float]:
    """One pass over the training set. Returns (mean loss, accuracy %, images processed, mean
    loss of the epoch's tail steps, :func:`~nasrescale.train.setup.tail_start`)."""
    dev = setup.device
    draw = EpochDraw(images.shape[0], gen, setup)
    loss_sum = torch.zeros((), dtype=torch.float64, device=dev)
    tail_sum = torch.zeros((), dtype=torch.float64, device=dev)
    correct = torch.zeros((), dtype=torch.float64, device=dev)
    seen = tail_seen = 0
    tail_from = tail_start(len(draw.starts))
    net.train()
    for step, s in enumerate(draw.starts):
        x, y = draw.batch(images, labels, s)
        with setup.autocast():
            out = net(x)
            loss = criterion(out, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        count = y.shape[0]  # a host int: no sync
        loss_sum += loss.detach() * count
        correct += (out.detach().argmax(1) == y).sum()
        seen += count
        if step >= tail_from:
            tail_sum += loss.detach() * count
            tail_seen += count
    total_loss, total_correct, total_tail = torch.stack([loss_sum, correct, tail_sum]).tolist()  # one host sync
    return total_loss / seen, 100.0 * total_correct / seen, seen, total_tail / tail_seen


def _evaluate(net: nn.Module, images: torch.Tensor, labels: torch.Tensor, batch_size: int, setup: RunSetup,
              num_classes: int) -> tuple[float | None, float | None, float | None]:
    """Test accuracy (%), mean plain cross-entropy and the released code's class-mean accuracy
    (:mod:`~nasrescale.train.metrics`) over the test set; ``None`` if it is empty."""
    m = images.shape[0]
    if m == 0:
        return None, None, None
    net.eval()
    with torch.inference_mode():
        loss_sum = torch.zeros((), dtype=torch.float64, device=setup.device)
        correct = torch.zeros((), dtype=torch.float64, device=setup.device)
        hits = torch.zeros(num_classes, dtype=torch.float64, device=setup.device)
        counts = torch.zeros(num_classes, dtype=torch.float64, device=setup.device)
        for s in range(0, m, batch_size):
            x = normalize(images[s:s + batch_size], setup.mean, setup.std).contiguous(memory_format=setup.memory_format)
            y = labels[s:s + batch_size]
            with setup.autocast():
                out = net(x)
            loss_sum += F.cross_entropy(loss_input(out), y, reduction="sum")
            correct += (out.argmax(1) == y).sum()
            h, c = class_counts(out.argmax(1), y, num_classes)
            hits, counts = hits + h, counts + c
        values = torch.cat([torch.stack([loss_sum, correct]), hits, counts]).tolist()  # the one host sync
    total_loss, total_correct, k = values[0], values[1], num_classes
    return 100.0 * total_correct / m, total_loss / m, released_class_mean(values[2:2 + k], values[2 + k:])


def _check_args(param_groups: Sequence[dict], data: ImageData, checkpoint_every: int, eval_batch_size: int,
                stop_after: int | None) -> list[dict]:
    """Validate the arguments of :func:`train`; return copies of the groups with ``params`` as lists
    (a generator such as ``model.parameters()`` is read once, here)."""
    if not param_groups:
        raise ConfigError("train: param_groups is empty; pass at least one {'params': ..., 'lr': ...} group")
    for i, group in enumerate(param_groups):
        if "params" not in group or "lr" not in group:
            raise ConfigError(f"train: param group {i} needs both 'params' and 'lr' (has {sorted(group)})")
    for name, value in (("checkpoint_every", checkpoint_every), ("eval_batch_size", eval_batch_size),
                        ("stop_after", 1 if stop_after is None else stop_after)):
        if value < 1:
            raise ConfigError(f"train: {name} must be >= 1, got {value}")
    if data.train_images.shape[0] < 2:
        raise DataError(f"dataset {data.name!r} has {data.train_images.shape[0]} training images; training needs at least 2")
    return [{**g, "params": [g["params"]] if isinstance(g["params"], torch.Tensor) else list(g["params"])}
            for g in param_groups]


def train(model: nn.Module, data: ImageData, protocol: Protocol, param_groups: list[dict], *,
          device: str | torch.device = "cpu", seed: int = 0, checkpoint: str | Path | None = None,
          checkpoint_every: int = 1, compile: bool = False, progress: bool = True, eval_batch_size: int = 2048,
          stop_after: int | None = None, fingerprint: str | None = None, keep_checkpoint: bool = True,
          identity: Mapping[str, Any] | None = None,
          on_epoch: Callable[[dict[str, Any]], None] | None = None,
          optimizer: Callable[..., torch.optim.Optimizer] | None = None) -> TrainResult:
    """Train ``model`` on ``data`` with ``protocol``, then evaluate it on the test set.

    Args:
        model: the network, initialized by the caller (seeded); moved to ``device`` in place.
        data: the dataset (uint8 images, moved to ``device`` once).
        protocol: the recipe (epochs, batch size, momentum, Nesterov, weight decay, schedule,
            warmup, label smoothing, augmentation).
        param_groups: ``torch.optim.SGD`` groups of ``model``'s parameters, each with its
            own already-scaled ``"lr"`` (and optionally ``"weight_decay"``); not modified.
        device: training device; on ``cuda`` ``protocol.precision`` picks bf16 autocast or
            exact fp32 (the CPU is always fp32; every device uses channels_last).
        seed: seeds every draw the engine makes (batches, crops, flips, dropout).
        checkpoint: checkpoint file; resumed from if it exists and matches this run.
        checkpoint_every: write the checkpoint every this many epochs.
        compile: run the model through ``torch.compile`` (CUDA runs; slow to start on CPU).
        progress: show a tqdm bar over epochs.
        eval_batch_size: test batch size (images).
        stop_after: end the run after this many epochs in total, as if killed, leaving the
            checkpoint to resume from (the result has ``finished=False`` and no test metrics).
        fingerprint: identifies the run in its checkpoint; default: derived from the protocol,
            seed, param groups and data (:func:`~nasrescale.train.checkpoint.derive_fingerprint`).
        keep_checkpoint: keep the checkpoint once the run is finished (it then holds the final
            weights, and rerunning only re-evaluates); ``False`` deletes it. A checkpoint is
            always left when ``stop_after`` ends the run.
        identity: JSON-able dict identifying the run (canonical arch, family digest, model
            size, protocol table, test split, seed, ...); the engine adds ``precision``,
            ``test_split``, ``test_images`` and ``seed`` where the dict lacks them. Stored in the
            checkpoint and compared on resume; also folded into the default fingerprint.
        on_epoch: called after every trained epoch with that epoch's history entry
            (``epoch``, ``train_loss``, ``train_acc``, ``lr``), e.g. to stream curves.
        optimizer: ``factory(param_groups, lr=, momentum=, nesterov=, weight_decay=)`` building
            the optimizer; ``None``: ``torch.optim.SGD`` (the μP protocol passes ``mup.MuSGD``).

    Returns:
        The :class:`TrainResult`. A diverged run (NaN/inf epoch loss) stops at that epoch and
        reports ``diverged=True`` and no test metrics, without raising.

    Raises:
        ConfigError: bad arguments, or ``checkpoint`` belongs to a different run (for a
            differing ``identity`` the message names the keys that differ).
        DataError: fewer than 2 training images, or an unreadable checkpoint file.
    """
    wall_start = time.perf_counter()
    param_groups = _check_args(param_groups, data, checkpoint_every, eval_batch_size, stop_after)
    lrs = [float(g["lr"]) for g in param_groups]
    dev = torch.device(device)
    setup = RunSetup(dev, data, protocol, model_dtype(model))
    model.to(dev, memory_format=setup.memory_format)
    optimizer = (optimizer or torch.optim.SGD)(param_groups, lr=lrs[0], momentum=protocol.momentum,
                                               nesterov=protocol.nesterov, weight_decay=protocol.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: cosine_factor(epoch, protocol))
    criterion = nn.CrossEntropyLoss(label_smoothing=protocol.label_smoothing)

    ident, fingerprint = resolve_identity(identity, fingerprint, protocol, seed, param_groups, data)
    run = describe_run(protocol, seed, lrs, data)
    history: list[dict[str, Any]] = []
    resumed_from = None
    state = load_checkpoint(checkpoint) if checkpoint is not None else None
    if state is not None:
        check_resumable(state, fingerprint, run, checkpoint, protocol.epochs, ident)
        try:
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            scheduler.load_state_dict(state["scheduler"])
        except (RuntimeError, ValueError, KeyError) as err:
            raise ConfigError(f"checkpoint {str(checkpoint)!r} does not fit this model/optimizer "
                              f"({str(err).splitlines()[0]}); delete it or pass another checkpoint path") from None
        history, resumed_from = list(state["history"]), state["epochs_done"]

    def save(done: int) -> None:
        save_checkpoint(checkpoint, {
            "fingerprint": fingerprint, "run": run, "seed": seed, "epochs_done": done,
            "model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(), "history": history,
            **({} if ident is None else {"identity": ident})})

    train_x, train_y = data.train_images.to(dev), data.train_labels.to(dev)
    net = torch.compile(model) if compile else model
    stop = stop_after if stop_after is not None and stop_after < protocol.epochs else None
    start = resumed_from or 0
    end = protocol.epochs if stop is None else max(start, stop)
    diverged_epoch, train_time, images = None, 0.0, 0
    with tqdm(total=protocol.epochs, initial=start, disable=not progress, unit="epoch",
              desc=f"train {data.name}") as bar, torch.random.fork_rng(devices=setup.fork_devices()), \
            setup.precision_scope():
        for epoch in range(start, end):
            t0 = time.perf_counter()
            setup.seed_global(epoch_seed(seed, epoch) + GLOBAL_RNG_OFFSET)
            gen = setup.generator(epoch_seed(seed, epoch))
            loss, acc, seen, tail = _train_epoch(net, optimizer, criterion, train_x, train_y, gen, setup)
            train_time += time.perf_counter() - t0
            images += seen
            history.append({"epoch": epoch + 1, "train_loss": loss, "train_acc": acc,
                            "lr": float(optimizer.param_groups[0]["lr"]), "train_loss_tail": tail})
            if on_epoch is not None:
                on_epoch(dict(history[-1]))
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.4f}", acc=f"{acc:.2f}")
            if not math.isfinite(loss):
                diverged_epoch = epoch + 1
                break
            scheduler.step()
            done, final = epoch + 1, epoch + 1 == protocol.epochs
            if checkpoint is not None and (done == stop or (final and keep_checkpoint)
                                           or (not final and done % checkpoint_every == 0)):
                save(done)

    finished = diverged_epoch is not None or stop is None or start >= protocol.epochs
    test_acc = test_loss = released = None
    if finished and diverged_epoch is None:
        with setup.precision_scope():
            test_acc, test_loss, released = _evaluate(net, data.test_images.to(dev), data.test_labels.to(dev),
                                                      eval_batch_size, setup, data.num_classes)
    if finished and not keep_checkpoint and checkpoint is not None:
        Path(checkpoint).unlink(missing_ok=True)
    finite = [h["train_loss"] for h in history if math.isfinite(h["train_loss"])]
    return TrainResult(
        test_accuracy=test_acc, test_loss=test_loss,
        train_loss_last=history[-1]["train_loss"], train_loss_best=min(finite) if finite else math.nan,
        train_accuracy_last=history[-1]["train_acc"], epochs_run=len(history),
        diverged=diverged_epoch is not None, diverged_epoch=diverged_epoch,
        wall_time_s=time.perf_counter() - wall_start, images_per_s=images / train_time if images else None,
        lrs=lrs, history=history, resumed_from=resumed_from, finished=finished,
        test_split=data.test_split, test_images=int(data.test_images.shape[0]), test_accuracy_released10=released)
