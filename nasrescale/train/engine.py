"""The training engine: one architecture, one protocol, one seed -> :class:`TrainResult`.

:func:`train` runs a :class:`SingleCore` in the epoch loop of :mod:`~nasrescale.train.loop`
(shared with the fused engine, which owns resume, checkpoints, stop, history and evaluation).

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
  convolutions and cuDNN's tensor-core kernels are both faster in it).
  ``protocol.precision = "bf16"`` enables bf16 autocast on CUDA;
  ``"fp32"`` trains in fp32 with TF32 disabled (restored afterwards), as the benchmark did.
  The CPU always trains in fp32.
* **A checkpoint knows its run**: ``identity`` (arch, family digest, size, protocol,
  precision, test split, seed, ...) is stored in the checkpoint and compared on resume.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..data.types import ImageData
from ..errors import ConfigError
from ..protocol import Protocol, cosine_factor
from .augment import normalize
from .metrics import class_counts, released_class_mean
from .checkpoint import check_resumable, describe_run, resolve_identity
from .loop import Evaluation, LoopSettings, check_loop_args, check_param_groups, run_epochs
from .result import TrainResult
from .setup import GLOBAL_RNG_OFFSET, EpochDraw, RunSetup, epoch_seed, loss_input, model_dtype, tail_start

__all__ = ["train", "SingleCore", "epoch_seed", "EpochDraw"]

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


class SingleCore:
    """One run as a :class:`~nasrescale.train.loop.TrainCore`: the model, its optimizer (SGD or
    the caller's factory) under a per-epoch LambdaLR of the cosine schedule, and the run's
    identity in its checkpoint."""

    members = 1

    def __init__(self, model: nn.Module, data: ImageData, protocol: Protocol, param_groups: list[dict], *,
                 device: torch.device, seed: int, compile: bool, fingerprint: str | None,
                 identity: Mapping[str, Any] | None, optimizer: Callable[..., torch.optim.Optimizer] | None) -> None:
        lrs = [float(g["lr"]) for g in param_groups]
        self.setup = setup = RunSetup(device, data, protocol, model_dtype(model))
        model.to(device, memory_format=setup.memory_format)
        self.optimizer = (optimizer or torch.optim.SGD)(param_groups, lr=lrs[0], momentum=protocol.momentum,
                                                        nesterov=protocol.nesterov, weight_decay=protocol.weight_decay)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda e: cosine_factor(e, protocol))
        self.criterion = nn.CrossEntropyLoss(label_smoothing=protocol.label_smoothing)
        self.ident, self.fingerprint = resolve_identity(identity, fingerprint, protocol, seed, param_groups, data)
        self.run = describe_run(protocol, seed, lrs, data)
        self.model, self.data, self.seed, self.epochs, self.base_lrs = model, data, seed, protocol.epochs, [lrs]
        self.desc = f"train {data.name}"
        self.train_x, self.train_y = data.train_images.to(device), data.train_labels.to(device)
        self.net = torch.compile(model) if compile else model

    def resume(self, state: dict[str, Any], path: str | Path) -> tuple[list[list[dict]], list[int | None]]:
        check_resumable(state, self.fingerprint, self.run, path, self.epochs, self.ident)
        try:
            self.model.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
            self.scheduler.load_state_dict(state["scheduler"])
        except (RuntimeError, ValueError, KeyError) as err:
            raise ConfigError(f"checkpoint {str(path)!r} does not fit this model/optimizer "
                              f"({str(err).splitlines()[0]}); delete it or pass another checkpoint path") from None
        return [list(state["history"])], [None]  # a single run stops at divergence, unsaved

    def checkpoint_state(self, done: int, histories: list[list[dict]], diverged: list[int | None]) -> dict[str, Any]:
        return {"fingerprint": self.fingerprint, "run": self.run, "seed": self.seed, "epochs_done": done,
                "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict(), "history": histories[0],
                **({} if self.ident is None else {"identity": self.ident})}

    def train_epoch(self, epoch: int, active: list[bool]) -> tuple[list[dict[str, Any] | None], int]:
        self.setup.seed_global(epoch_seed(self.seed, epoch) + GLOBAL_RNG_OFFSET)
        gen = self.setup.generator(epoch_seed(self.seed, epoch))
        loss, acc, seen, tail = _train_epoch(self.net, self.optimizer, self.criterion, self.train_x, self.train_y,
                                             gen, self.setup)
        return [{"epoch": epoch + 1, "train_loss": loss, "train_acc": acc,
                 "lr": float(self.optimizer.param_groups[0]["lr"]), "train_loss_tail": tail}], seen

    def freeze(self, member: int) -> None:
        """Nothing to freeze: the loop ends at a single run's divergence."""

    def end_epoch(self, epoch: int) -> None:
        self.scheduler.step()

    def evaluate(self, batch_size: int) -> list[Evaluation] | None:
        data, dev = self.data, self.setup.device
        test = _evaluate(self.net, data.test_images.to(dev), data.test_labels.to(dev), batch_size, self.setup,
                         data.num_classes)
        return None if test[0] is None else [test]

    def finish(self) -> None:
        """The weights are trained in place in the caller's model."""


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
    settings = LoopSettings(checkpoint, checkpoint_every, eval_batch_size, stop_after, keep_checkpoint, progress,
                            None if on_epoch is None else lambda _, entry: on_epoch(dict(entry)))
    param_groups = check_param_groups(param_groups)
    check_loop_args(data, settings)
    core = SingleCore(model, data, protocol, param_groups, device=torch.device(device), seed=seed, compile=compile,
                      fingerprint=fingerprint, identity=identity, optimizer=optimizer)
    return run_epochs(core, data, settings)[0]
