"""The training engine: K runs of one architecture -> K :class:`TrainResult` s; one run is K = 1.

:func:`train` (one run) and :func:`train_fused` (K runs as one network) are thin wrappers of
:func:`run_group`, the one epoch loop: resume from a checkpoint, progress bar, each member's
history and divergence (a member whose epoch loss is NaN/inf is reported diverged at that
epoch and frozen; the loop ends once every member has), ``stop_after``, the checkpoint cadence,
the final evaluation, one result per member. The step is :mod:`~nasrescale.train.step`; what
holds the weights, :mod:`~nasrescale.train.weights`. The recipe is NAS-Bench-201's
(docs/design.md §3, docs/training.md).

* **Reproducible from the seed alone.** Epoch ``e`` (0-based) of a member seeded ``s`` draws
  its permutation, crop offsets and flips from a generator seeded ``s * 100003 + e`` on the
  device, and the global RNG (dropout) is reseeded from the first member's pair, so a resumed
  run equals an uninterrupted one with no RNG state saved, and a fused member draws its
  independent run's batches. The caller seeds the initial weights.
* **No per-step host sync**: sums are read once per epoch, the evaluation's once at its end.
* **Effective learning rates** (:mod:`~nasrescale.train.elr_control`): each epoch's entry holds
  the ELR of every scale-invariant layer at its last step and their relative spread (the layers
  are the result's ``elr_layers``); ``warmup_rule = "elr_subcritical"`` warms them up first.
* **Precision** (:func:`~nasrescale.train.precision.trained_precision`): on CUDA bf16 autocast
  or fp32 with TF32 off, as the protocol says; the CPU trains in fp32.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch
from torch import nn
from tqdm.auto import tqdm

from ..data.types import ImageData
from ..errors import DataError
from ..protocol import Protocol
from .checkpoint import load_checkpoint, save_checkpoint
from .elr_control import ElrControl
from .members import FusedMember, check_trainable
from .metrics import released_class_mean
from .options import RunOptions
from .result import TrainResult
from .run_setup import GLOBAL_RNG_OFFSET, EpochDraw, RunSetup, epoch_seed, model_dtype
from .step import Batches, DeviceImages, evaluate, train_epoch
from .weights import FusedWeights, PlainWeights

__all__ = ["train", "train_fused", "run_group"]

#: a member's evaluation: test accuracy %, mean test loss, released-code class-mean accuracy
Evaluation = tuple[float, float, float]


class _Group:
    """A group's device state for :func:`run_group`: weights, network, data, settings."""

    def __init__(self, members: Sequence[FusedMember], data: ImageData, options: RunOptions) -> None:
        if data.train_images.shape[0] < 2:
            raise DataError(f"dataset {data.name!r} has {data.train_images.shape[0]} training images; "
                            "training needs at least 2")
        device = torch.device(options.device)
        self.setup = setup = RunSetup(device, data, members[0].protocol, model_dtype(members[0].model), options)
        self.weights = PlainWeights(members[0], data, setup) if len(members) == 1 else FusedWeights(members, data, setup)
        self.net = torch.compile(self.weights.module, mode=options.compile_mode) if options.compile \
            else self.weights.module
        self.train_images = DeviceImages(data.train_images, data.train_labels, setup.padding if setup.augment else 0,
                                         device)
        self.members, self.data, self.options, self.k = members, data, options, len(members)
        self.elr = ElrControl(self.weights.structure, self.k, members[0].protocol, device)

    def train_epoch(self, epoch: int, active: list[bool]) -> tuple[list[dict[str, Any] | None], int]:
        """Train ``epoch``: each active member's history entry and the images one member saw."""
        setup, weights = self.setup, self.weights
        setup.seed_global(epoch_seed(self.members[0].seed, epoch) + GLOBAL_RNG_OFFSET)
        draws = [EpochDraw(len(self.train_images), setup.generator(epoch_seed(m.seed, epoch)), setup)
                 for m in self.members]
        weights.start_epoch(epoch)
        self.elr.start_epoch(weights.param_lrs(self.elr.weights))
        self.net.train()
        sums, seen, tail_seen = train_epoch(self.net, weights.opt, Batches(draws, self.train_images, setup),
                                            torch.tensor(active, device=setup.device),
                                            self.members[0].protocol.label_smoothing, self.elr)
        loss, correct, tail = sums.tolist()  # the epoch's one host read (and the ELRs' below)
        elr = self.elr.end_epoch()
        return [{"epoch": epoch + 1, "train_loss": loss[i] / seen, "train_acc": 100.0 * correct[i] / seen,
                 "lr": weights.lr(i), "train_loss_tail": tail[i] / tail_seen, **elr[i]} if active[i] else None
                for i in range(self.k)], seen

    def evaluate(self) -> list[Evaluation] | None:
        """Each member's test metrics; ``None`` if the test set is empty."""
        data, m = self.data, self.data.test_images.shape[0]
        if m == 0:
            return None
        batch = self.options.eval_batch_size or (2048 if self.k == 1 else 1024)
        test = DeviceImages(data.test_images, data.test_labels, 0, self.setup.device)
        *totals, last = evaluate(self.net, self.k, test, batch, self.setup, data.num_classes).tolist()  # one read
        return [(100.0 * t[1] / m, t[0] / m, released_class_mean(t[2:], last[2:])) for t in totals]

    def report(self, entries: Sequence[dict[str, Any] | None], histories: list[list[dict]],
               diverged: list[int | None], epoch: int) -> None:
        """Record each active member's entry, pass it on, freeze the members it shows diverged."""
        on_epoch = self.options.on_epoch
        for i, entry in enumerate(entries):
            if entry is None:
                continue
            histories[i].append(entry)
            if on_epoch is not None:
                on_epoch(dict(entry) if self.k == 1 else {**entry, "member": i})
            if not math.isfinite(entry["train_loss"]):  # diverged: frozen from now on, the others go on
                diverged[i] = epoch + 1
                self.weights.freeze(i)
                self.elr.freeze(i)


def _member_result(history: list[dict], diverged: int | None, test: Evaluation | None, lrs: list[float],
                   wall: float, ips: float | None, resumed_from: int | None, finished: bool,
                   data: ImageData, elr_layers: list[str]) -> TrainResult:
    finite = [h["train_loss"] for h in history if math.isfinite(h["train_loss"])]
    acc, loss, released = test if test is not None and diverged is None else (None, None, None)
    return TrainResult(
        test_accuracy=acc, test_loss=loss, train_loss_last=history[-1]["train_loss"],
        train_loss_best=min(finite) if finite else math.nan, train_accuracy_last=history[-1]["train_acc"],
        epochs_run=len(history), diverged=diverged is not None, diverged_epoch=diverged, wall_time_s=wall,
        images_per_s=ips, lrs=lrs, history=history, resumed_from=resumed_from,
        finished=finished or diverged is not None,  # a diverged member is done even if the group was stopped
        test_split=data.test_split, test_images=int(data.test_images.shape[0]), test_accuracy_released10=released,
        elr_layers=elr_layers or None)


def run_group(members: Sequence[FusedMember], data: ImageData, options: RunOptions | None = None
              ) -> list[TrainResult]:
    """Train ``members`` (one run, or K fused) through their epochs, resuming from
    ``options.checkpoint`` where it holds this group, evaluate them and return one
    :class:`TrainResult` per member (see :func:`train`, :func:`train_fused`)."""
    options, wall_start = options or RunOptions(), time.perf_counter()
    group = _Group(members, data, options)
    k, epochs, path, weights = group.k, group.weights.epochs, options.checkpoint, group.weights
    histories: list[list[dict]] = [[] for _ in range(k)]
    diverged: list[int | None] = [None] * k
    state = load_checkpoint(path) if path is not None else None
    if state is not None:
        histories, diverged = weights.resume(state, path)  # type: ignore[arg-type]
        group.elr.load(state.get("elr"))
    resumed_from = None if state is None else state["epochs_done"]
    stop = options.stop_after if options.stop_after is not None and options.stop_after < epochs else None
    start = resumed_from or 0
    train_time, images = 0.0, 0
    with tqdm(total=epochs, initial=start, disable=not options.progress, unit="epoch",
              desc=f"train {data.name}" + (f" x{k}" if k > 1 else "")) as bar, \
            torch.random.fork_rng(devices=group.setup.fork_devices()), group.setup.precision_scope():
        for epoch in range(start, epochs if stop is None else max(start, stop)):
            if all(d is not None for d in diverged):
                break
            t0 = time.perf_counter()
            entries, seen = group.train_epoch(epoch, [d is None for d in diverged])
            train_time, images = train_time + time.perf_counter() - t0, images + seen
            group.report(entries, histories, diverged, epoch)
            bar.update(1)
            shown = next((e for e in entries if e is not None), None)
            if shown is not None:
                bar.set_postfix(loss=f"{shown['train_loss']:.4f}", acc=f"{shown['train_acc']:.2f}")
            if all(d is not None for d in diverged):
                break
            weights.end_epoch()
            done, final = epoch + 1, epoch + 1 == epochs
            if path is not None and (done == stop or (final and options.keep_checkpoint)
                                     or (not final and done % options.checkpoint_every == 0)):
                save_checkpoint(path, {**weights.state(done, histories, diverged), "elr": group.elr.state(),
                                       "threads": torch.get_num_threads()})
        finished = stop is None or start >= epochs or all(d is not None for d in diverged)
        test = group.evaluate() if finished and any(d is None for d in diverged) else None
    if finished and not options.keep_checkpoint and path is not None:
        Path(path).unlink(missing_ok=True)
    weights.finish()
    wall, ips = time.perf_counter() - wall_start, images / train_time if images else None
    return [_member_result(histories[i], diverged[i], None if test is None else test[i], weights.base_lrs[i], wall,
                           ips, resumed_from, finished, data, group.elr.names) for i in range(k)]


def train(model: nn.Module, data: ImageData, protocol: Protocol, param_groups: list[dict],
          options: RunOptions | None = None, *, seed: int = 0, fingerprint: str | None = None,
          identity: Mapping[str, Any] | None = None,
          optimizer: Callable[..., torch.optim.Optimizer] | None = None) -> TrainResult:
    """Train ``model`` on ``data`` with ``protocol``, then evaluate it on the test set.

    Args:
        model: the network, initialized by the caller (seeded); moved to the device in place.
        data: the dataset (uint8 images, moved to the device once).
        protocol: the recipe (epochs, batch size, SGD settings, schedule, augmentation, precision).
        param_groups: ``torch.optim.SGD`` groups of ``model``'s parameters, each with its own
            already-scaled ``"lr"`` (and optionally ``"weight_decay"``); not modified.
        options: how to run it (:class:`~nasrescale.train.options.RunOptions`); default: CPU.
        seed, fingerprint, identity, optimizer: the run's, as :class:`FusedMember` describes
            them (``identity`` is stored in the checkpoint and compared on resume).

    Returns:
        The :class:`TrainResult`. A diverged run (NaN/inf epoch loss) stops at that epoch and
        reports ``diverged=True`` and no test metrics, without raising.

    Raises:
        ConfigError: bad arguments, or the checkpoint belongs to another run (the message
            names the identity keys that differ).
        DataError: fewer than 2 training images, or an unreadable checkpoint file.
    """
    member = FusedMember(model, protocol, param_groups, seed, identity, fingerprint, optimizer)
    return run_group([member], data, options)[0]


def train_fused(members: Sequence[FusedMember], data: ImageData, options: RunOptions | None = None
                ) -> list[TrainResult]:
    """Train K runs of one architecture as one fused network; one :class:`TrainResult` per
    member, in order, as its independent run would report it.

    Members must share the architecture, size and :func:`~nasrescale.train.members.fusion_key`
    (ConfigError otherwise, or for a degenerate cell); ``options`` as for :func:`train`.
    ``images_per_s`` counts one member's images; ``on_epoch`` entries carry ``member``, the
    member's index. A group of one trains as a single run (and checkpoints as one).
    """
    check_trainable(members)
    options = options or RunOptions()
    on_epoch = options.on_epoch
    if len(members) == 1 and on_epoch is not None:  # a single run's entries: tag them here
        options = options.replace(on_epoch=lambda entry: on_epoch({**entry, "member": 0}))
    return run_group(members, data, options)
