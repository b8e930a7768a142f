"""The one epoch loop that a single run and a fused group of runs share.

:func:`run_epochs` drives a :class:`TrainCore` -- the model, optimizer and per-member
bookkeeping of one run (:mod:`~nasrescale.train.engine`) or of K runs fused into one network
(:mod:`~nasrescale.train.fused`) -- through the protocol's epochs and owns everything the two
have in common: resuming from a checkpoint, the progress bar, each member's history and
divergence (a member whose epoch loss is NaN/inf is reported diverged at that epoch and frozen;
the loop ends once every member has diverged), ``stop_after``, the checkpoint cadence,
``keep_checkpoint``, the final evaluation and one :class:`TrainResult` per member.

The loop draws no random numbers itself: each core seeds its epoch from the run's seed
(:func:`~nasrescale.train.setup.epoch_seed`), so a resumed run equals an uninterrupted one.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol as TypingProtocol, Sequence

import torch
from tqdm.auto import tqdm

from ..data.types import ImageData
from ..errors import ConfigError, DataError
from .checkpoint import load_checkpoint, save_checkpoint
from .result import TrainResult
from .setup import RunSetup

__all__ = ["TrainCore", "LoopSettings", "run_epochs", "check_param_groups", "check_loop_args"]

#: a member's evaluation: test accuracy %, mean test loss, released-code class-mean accuracy
Evaluation = tuple[float | None, float | None, float | None]


class TrainCore(TypingProtocol):
    """What :func:`run_epochs` trains: one run (``members == 1``) or a fused group.

    Attributes:
        members: how many runs the core trains (each gets its own history and result).
        epochs: the protocol's epochs.
        setup: the device settings (precision scope, RNG devices).
        desc: the progress bar's label.
        base_lrs: each member's param-group LRs, as its result reports them.
    """

    members: int
    epochs: int
    setup: RunSetup
    desc: str
    base_lrs: list[list[float]]

    def resume(self, state: dict[str, Any], path: str | Path) -> tuple[list[list[dict]], list[int | None]]:
        """Check that ``state`` (a loaded checkpoint) is this run's and load it; return each
        member's history and diverged epoch (ConfigError, naming the fix, where it does not fit)."""

    def checkpoint_state(self, done: int, histories: list[list[dict]], diverged: list[int | None]) -> dict[str, Any]:
        """The checkpoint after ``done`` epochs."""

    def train_epoch(self, epoch: int, active: list[bool]) -> tuple[list[dict[str, Any] | None], int]:
        """Train ``epoch`` (0-based): each active member's history entry (``None`` for a frozen
        one) and the images one member processed."""

    def freeze(self, member: int) -> None:
        """Stop training a diverged ``member`` (the others go on)."""

    def end_epoch(self, epoch: int) -> None:
        """After an epoch in which some member is still training (e.g. step the LR schedule)."""

    def evaluate(self, batch_size: int) -> list[Evaluation] | None:
        """Each member's test metrics; ``None`` if the test set is empty."""

    def finish(self) -> None:
        """Leave the trained weights where the caller expects them."""


@dataclass
class LoopSettings:
    """The loop arguments of :func:`~nasrescale.train.train` (see there)."""

    checkpoint: str | Path | None = None
    checkpoint_every: int = 1
    eval_batch_size: int = 2048
    stop_after: int | None = None
    keep_checkpoint: bool = True
    progress: bool = True
    on_epoch: Callable[[int, dict[str, Any]], None] | None = None
    wall_start: float = field(default_factory=time.perf_counter)


def check_param_groups(param_groups: Sequence[dict]) -> list[dict]:
    """Copies of ``param_groups`` with ``params`` as lists (a generator such as
    ``model.parameters()`` is read once, here).

    >>> import torch
    >>> [len(g["params"]) for g in check_param_groups([{"params": iter([torch.zeros(1)] * 2), "lr": 0.1}])]
    [2]
    """
    if not param_groups:
        raise ConfigError("train: param_groups is empty; pass at least one {'params': ..., 'lr': ...} group")
    for i, group in enumerate(param_groups):
        if "params" not in group or "lr" not in group:
            raise ConfigError(f"train: param group {i} needs both 'params' and 'lr' (has {sorted(group)})")
    return [{**g, "params": [g["params"]] if isinstance(g["params"], torch.Tensor) else list(g["params"])}
            for g in param_groups]


def check_loop_args(data: ImageData, settings: LoopSettings) -> None:
    """ConfigError for a loop setting below 1; DataError for fewer than 2 training images."""
    for name, value in (("checkpoint_every", settings.checkpoint_every),
                        ("eval_batch_size", settings.eval_batch_size),
                        ("stop_after", 1 if settings.stop_after is None else settings.stop_after)):
        if value < 1:
            raise ConfigError(f"train: {name} must be >= 1, got {value}")
    if data.train_images.shape[0] < 2:
        raise DataError(f"dataset {data.name!r} has {data.train_images.shape[0]} training images; training needs at least 2")


def _record_epoch(core: TrainCore, entries: Sequence[dict[str, Any] | None], histories: list[list[dict]],
                  diverged: list[int | None], epoch: int, settings: LoopSettings) -> None:
    """Append each active member's entry, report it, and freeze the members it shows diverged."""
    for i, entry in enumerate(entries):
        if entry is None:
            continue
        histories[i].append(entry)
        if settings.on_epoch is not None:
            settings.on_epoch(i, entry)
        if not math.isfinite(entry["train_loss"]):  # diverged: frozen from now on, the others go on
            diverged[i] = epoch + 1
            core.freeze(i)


def _member_result(history: list[dict], diverged: int | None, test: Evaluation | None, lrs: list[float],
                   wall: float, ips: float | None, resumed_from: int | None, finished: bool,
                   data: ImageData) -> TrainResult:
    finite = [h["train_loss"] for h in history if math.isfinite(h["train_loss"])]
    acc, loss, released = test if test is not None and diverged is None else (None, None, None)
    return TrainResult(
        test_accuracy=acc, test_loss=loss, train_loss_last=history[-1]["train_loss"],
        train_loss_best=min(finite) if finite else math.nan, train_accuracy_last=history[-1]["train_acc"],
        epochs_run=len(history), diverged=diverged is not None, diverged_epoch=diverged, wall_time_s=wall,
        images_per_s=ips, lrs=lrs, history=history, resumed_from=resumed_from,
        finished=finished or diverged is not None,  # a diverged member is done even if the group was stopped
        test_split=data.test_split, test_images=int(data.test_images.shape[0]), test_accuracy_released10=released)


def run_epochs(core: TrainCore, data: ImageData, settings: LoopSettings) -> list[TrainResult]:
    """Train ``core`` through its epochs (resuming from ``settings.checkpoint`` where it holds
    this run), evaluate it and return one :class:`TrainResult` per member."""
    k, epochs, path = core.members, core.epochs, settings.checkpoint
    histories: list[list[dict]] = [[] for _ in range(k)]
    diverged: list[int | None] = [None] * k
    resumed_from = None
    state = load_checkpoint(path) if path is not None else None
    if state is not None:
        histories, diverged = core.resume(state, path)  # type: ignore[arg-type]
        resumed_from = state["epochs_done"]
    stop = settings.stop_after if settings.stop_after is not None and settings.stop_after < epochs else None
    start = resumed_from or 0
    end = epochs if stop is None else max(start, stop)
    train_time, images = 0.0, 0
    with tqdm(total=epochs, initial=start, disable=not settings.progress, unit="epoch", desc=core.desc) as bar, \
            torch.random.fork_rng(devices=core.setup.fork_devices()), core.setup.precision_scope():
        for epoch in range(start, end):
            if all(d is not None for d in diverged):
                break
            t0 = time.perf_counter()
            entries, seen = core.train_epoch(epoch, [d is None for d in diverged])
            train_time += time.perf_counter() - t0
            images += seen
            _record_epoch(core, entries, histories, diverged, epoch, settings)
            bar.update(1)
            shown = next((e for e in entries if e is not None), None)
            if shown is not None:
                bar.set_postfix(loss=f"{shown['train_loss']:.4f}", acc=f"{shown['train_acc']:.2f}")
            if all(d is not None for d in diverged):
                break
            core.end_epoch(epoch)
            done, final = epoch + 1, epoch + 1 == epochs
            if path is not None and (done == stop or (final and settings.keep_checkpoint)
                                     or (not final and done % settings.checkpoint_every == 0)):
                save_checkpoint(path, core.checkpoint_state(done, histories, diverged))
    finished = stop is None or start >= epochs or all(d is not None for d in diverged)
    test = None
    if finished and any(d is None for d in diverged):
        with core.setup.precision_scope():
            test = core.evaluate(settings.eval_batch_size)
    if finished and not settings.keep_checkpoint and path is not None:
        Path(path).unlink(missing_ok=True)
    core.finish()
    wall = time.perf_counter() - settings.wall_start
    ips = images / train_time if images else None
    return [_member_result(histories[i], diverged[i], None if test is None else test[i], core.base_lrs[i], wall, ips,
                           resumed_from, finished, data) for i in range(k)]
