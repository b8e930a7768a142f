"""The fused engine: K runs of one architecture trained as one network, each as if alone.

:func:`train_fused` takes K :class:`FusedMember` s -- each an initialized network with its own
protocol (init rule, LR), param groups and seed, all of one architecture and one *fusion
key* (:func:`fusion_key`: epochs, batch size, momentum, Nesterov, weight decay, schedule,
warmup, label smoothing, augmentation; everything but name, LR and init) -- packs them into a
:class:`~nasrescale.models.fused.FusedNetwork` and trains them together:

* every member draws its own batches, crops and flips from its own seed exactly as
  :func:`~nasrescale.train.train` does (:class:`~nasrescale.train.setup.EpochDraw`), and its
  batch goes to its own input channels;
* the loss is the sum of the members' mean losses, so each member's gradient is its own;
* :class:`~nasrescale.train.fused_sgd.FusedSGD` steps every member at its own LR under the
  shared cosine schedule;
* a member whose epoch loss is NaN/inf is reported diverged at that epoch, as a single run
  would be, then frozen (LR 0, excluded from the loss, its slice zeroed) -- the others go on;
* the checkpoint (atomic, :mod:`~nasrescale.train.checkpoint`) stores every member's identity
  and per-member history; resuming equals an uninterrupted run.

In fp32 each member's losses, weights and test accuracy equal its independent run up to float
reordering (``tests/test_fused.py``). At the end every member's trained weights are unpacked
into its own ``model`` (in place, as ``train`` leaves them); a diverged member's are zeros.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from ..data.types import ImageData
from ..errors import ConfigError
from ..models.fused import FusedNetwork
from ..protocol import cosine_factor
from .augment import crop_flip, normalize
from .checkpoint import check_resumable, load_checkpoint, save_checkpoint
from .engine import _check_args
from .metrics import class_counts, released_class_mean
from .setup import GLOBAL_RNG_OFFSET, EpochDraw, RunSetup, epoch_seed, loss_input, model_dtype, tail_start
from .fused_members import FusedMember, check_identities, check_members, fusion_key, group_fingerprint, lr_rows
from .fused_sgd import FusedSGD
from .result import TrainResult

__all__ = ["FusedMember", "fusion_key", "train_fused"]


class _Batches:
    """Every member's batch at once: the members' draws (:class:`EpochDraw`, each from its own
    seed) stacked, so one gather, one crop+flip and one normalization serve all K members (the
    same per-sample arithmetic as ``EpochDraw.batch``, in K times fewer kernel launches)."""

    def __init__(self, draws: Sequence[EpochDraw], images: torch.Tensor, labels: torch.Tensor, setup: RunSetup) -> None:
        self.perm = torch.stack([d.perm for d in draws])  # (K, n)
        augs = [d.aug for d in draws]
        self.aug = None if augs[0] is None else tuple(torch.stack(t) for t in zip(*augs))  # type: ignore[arg-type]
        self.images, self.labels, self.setup, self.k = images, labels, setup, len(draws)

    def at(self, s: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Inputs ``(B, K * C, H, W)`` (member k in channels ``kC..kC+C-1``) and labels ``(B, K)``."""
        setup, bs = self.setup, self.setup.batch_size
        idx = self.perm[:, s:s + bs]  # (K, B)
        x = self.images[idx.reshape(-1)]  # (K * B, C, H, W), member-major
        if self.aug is not None:
            dy, dx, flip = (t[:, s:s + bs].reshape(-1) for t in self.aug)
            x = crop_flip(x, setup.padding, dy, dx, flip)
        x = normalize(x, setup.mean, setup.std)
        k, b = idx.shape
        x = x.view(k, b, *x.shape[1:]).transpose(0, 1).reshape(b, -1, *x.shape[2:])
        return x.contiguous(memory_format=setup.memory_format), self.labels[idx].t()


def _fused_epoch(fused: FusedNetwork, net: nn.Module, opt: FusedSGD, images: torch.Tensor, labels: torch.Tensor,
                 draws: Sequence[EpochDraw], active: torch.Tensor, smoothing: float, setup: RunSetup
                 ) -> tuple[list[float], list[float], int, list[float]]:
    """One pass of every member over the training set: (mean losses, accuracies %, images per
    member, mean losses of the epoch's tail steps)."""
    k, dev = fused.k, setup.device
    loss_sum = torch.zeros(k, dtype=torch.float64, device=dev)
    tail_sum = torch.zeros(k, dtype=torch.float64, device=dev)
    correct = torch.zeros(k, dtype=torch.float64, device=dev)
    seen = tail_seen = 0
    tail_from = tail_start(len(draws[0].starts))
    fused.train()
    batches = _Batches(draws, images, labels, setup)
    for step, s in enumerate(draws[0].starts):  # same n and batch size: the same batch boundaries
        x, y = batches.at(s)
        with setup.autocast():
            out = net(x)  # (B, K, classes)
            per_sample = F.cross_entropy(loss_input(out.flatten(0, 1)), y.flatten(), reduction="none",
                                         label_smoothing=smoothing)
            losses = per_sample.view(y.shape).mean(0)  # (K,): each member's mean loss
            loss = torch.where(active, losses, torch.zeros_like(losses)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        count = y.shape[0]
        loss_sum += losses.detach() * count
        correct += (out.detach().argmax(2) == y).sum(0)
        seen += count
        if step >= tail_from:
            tail_sum += losses.detach() * count
            tail_seen += count
    totals = torch.stack([loss_sum, correct, tail_sum]).tolist()  # the epoch's one host sync
    return ([t / seen for t in totals[0]], [100.0 * c / seen for c in totals[1]], seen,
            [t / tail_seen for t in totals[2]])


def _evaluate(fused: FusedNetwork, net: nn.Module, images: torch.Tensor, labels: torch.Tensor, batch_size: int,
              setup: RunSetup, num_classes: int) -> tuple[list[float], list[float], list[float]] | None:
    """Per-member test accuracy (%), mean cross-entropy and released-code class-mean accuracy
    (:mod:`~nasrescale.train.metrics`); ``None`` if the test set is empty."""
    m, k = images.shape[0], fused.k
    if m == 0:
        return None
    fused.eval()
    with torch.inference_mode():
        loss_sum = torch.zeros(k, dtype=torch.float64, device=setup.device)
        correct = torch.zeros(k, dtype=torch.float64, device=setup.device)
        hits = torch.zeros(k, num_classes, dtype=torch.float64, device=setup.device)
        counts = torch.zeros(k, num_classes, dtype=torch.float64, device=setup.device)
        for s in range(0, m, batch_size):
            x = normalize(images[s:s + batch_size], setup.mean, setup.std).repeat(1, k, 1, 1)  # every member sees all
            x = x.contiguous(memory_format=setup.memory_format)
            y = labels[s:s + batch_size]
            with setup.autocast():
                out = net(x)
            yk = y[:, None].expand(-1, k)
            loss_sum += F.cross_entropy(loss_input(out).flatten(0, 1), yk.flatten(), reduction="none").view(-1, k).sum(0)
            correct += (out.argmax(2) == yk).sum(0)
            for j in range(k):
                h, c = class_counts(out[:, j].argmax(1), y, num_classes)
                hits[j] += h
                counts[j] += c
        totals = torch.stack([loss_sum, correct]).tolist()
        per_class = torch.stack([hits, counts]).tolist()  # (2, K, classes): one more read at the end
    released = [released_class_mean(per_class[0][j], per_class[1][j]) for j in range(k)]
    return [100.0 * c / m for c in totals[1]], [t / m for t in totals[0]], released


def _member_result(k: int, history: list[dict], diverged: int | None, test: tuple | None, lrs: list[float],
                   wall: float, ips: float | None, resumed_from: int | None, finished: bool,
                   data: ImageData) -> TrainResult:
    own = [e["members"][k] for e in history if e["members"][k] is not None]
    finite = [h["train_loss"] for h in own if math.isfinite(h["train_loss"])]
    acc, loss, released = (test[0][k], test[1][k], test[2][k]) if test is not None and diverged is None \
        else (None, None, None)
    return TrainResult(
        test_accuracy=acc, test_loss=loss, train_loss_last=own[-1]["train_loss"],
        train_loss_best=min(finite) if finite else math.nan, train_accuracy_last=own[-1]["train_acc"],
        epochs_run=len(own), diverged=diverged is not None, diverged_epoch=diverged, wall_time_s=wall,
        images_per_s=ips, lrs=lrs, history=own, resumed_from=resumed_from, finished=finished or diverged is not None,
        test_split=data.test_split, test_images=int(data.test_images.shape[0]),  # as train() reports them
        test_accuracy_released10=released)


def train_fused(members: Sequence[FusedMember], data: ImageData, *, device: str | torch.device = "cpu",
                checkpoint: str | Path | None = None, checkpoint_every: int = 1, compile: bool = False,
                progress: bool = True, eval_batch_size: int = 1024, stop_after: int | None = None,
                keep_checkpoint: bool = True, on_epoch: Callable[[int, dict[str, Any]], None] | None = None
                ) -> list[TrainResult]:
    """Train K runs of one architecture as one fused network; return each member's result.

    Arguments are those of :func:`~nasrescale.train.train`, with the per-run ones (model,
    protocol, param groups, seed, identity) in ``members``. ``images_per_s`` of each result
    counts one member's images (the group processes K times as many). ``on_epoch(k, entry)``
    is called after each epoch with member ``k``'s history entry (members still training).

    Returns:
        One :class:`TrainResult` per member, in order, as its independent run would report.

    Raises:
        ConfigError: members that cannot fuse (different architecture, size or fusion key,
            a degenerate cell), bad arguments, or a checkpoint of other members.
        DataError: fewer than 2 training images, or an unreadable checkpoint.
    """
    wall_start = time.perf_counter()
    identities, groups = check_members(members, data)
    _check_args([{"params": [], "lr": 0.0}], data, checkpoint_every, eval_batch_size, stop_after)
    protocol, k = members[0].protocol, len(members)
    dev = torch.device(device)
    setup = RunSetup(dev, data, protocol, model_dtype(members[0].model))
    fused = FusedNetwork([m.model for m in members]).to(dev, memory_format=setup.memory_format)
    params, base_lrs, wds = lr_rows(members, groups, fused)
    opt = FusedSGD(params, base_lrs, wds, members=k, momentum=protocol.momentum, nesterov=protocol.nesterov)
    fingerprint = group_fingerprint(identities)
    run = f"fused group of {k}: " + "; ".join(f"seed {m.seed} {m.protocol.name}" for m in members)
    history: list[dict[str, Any]] = []
    diverged: list[int | None] = [None] * k
    resumed_from = None
    state = load_checkpoint(checkpoint) if checkpoint is not None else None
    if state is not None:
        check_identities(state, identities, checkpoint)
        check_resumable(state, fingerprint, run, checkpoint, protocol.epochs)
        try:
            fused.net.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
        except (RuntimeError, ValueError, KeyError) as err:
            raise ConfigError(f"checkpoint {str(checkpoint)!r} does not fit this fused group "
                              f"({str(err).splitlines()[0]}); delete it or pass another checkpoint path") from None
        history, resumed_from, diverged = list(state["history"]), state["epochs_done"], list(state["diverged"])

    def save(done: int) -> None:
        save_checkpoint(checkpoint, {
            "fingerprint": fingerprint, "run": run, "seed": members[0].seed, "epochs_done": done,
            "model": fused.net.state_dict(), "optimizer": opt.state_dict(), "scheduler": {"epochs_done": done},
            "history": history, "members": identities, "diverged": diverged})

    train_x, train_y = data.train_images.to(dev), data.train_labels.to(dev)
    net = torch.compile(fused) if compile else fused
    stop = stop_after if stop_after is not None and stop_after < protocol.epochs else None
    start = resumed_from or 0
    end = protocol.epochs if stop is None else max(start, stop)
    train_time, images = 0.0, 0
    with tqdm(total=protocol.epochs, initial=start, disable=not progress, unit="epoch",
              desc=f"train {data.name} x{k}") as bar, torch.random.fork_rng(devices=setup.fork_devices()), \
            setup.precision_scope():
        for epoch in range(start, end):
            if all(d is not None for d in diverged):
                break
            t0 = time.perf_counter()
            factor = cosine_factor(epoch, protocol)
            opt.set_factor(factor)
            setup.seed_global(epoch_seed(members[0].seed, epoch) + GLOBAL_RNG_OFFSET)  # dropout: none in NB201
            draws = [EpochDraw(train_x.shape[0], setup.generator(epoch_seed(m.seed, epoch)), setup) for m in members]
            active = torch.tensor([d is None for d in diverged], device=dev)
            losses, accs, seen, tails = _fused_epoch(fused, net, opt, train_x, train_y, draws, active,
                                              protocol.label_smoothing, setup)
            train_time += time.perf_counter() - t0
            images += seen
            entry: list[dict[str, Any] | None] = []
            for i, m in enumerate(members):
                if diverged[i] is not None:
                    entry.append(None)
                    continue
                entry.append({"epoch": epoch + 1, "train_loss": losses[i], "train_acc": accs[i],
                              "lr": float(groups[i][0]["lr"]) * factor,  # as LambdaLR: base x factor
                              "train_loss_tail": tails[i]})
                if on_epoch is not None:
                    on_epoch(i, entry[-1])
                if not math.isfinite(losses[i]):  # diverged: frozen from now on, the others go on
                    diverged[i] = epoch + 1
                    opt.freeze(i)
                    fused.silence_member(i)
            history.append({"epoch": epoch + 1, "members": entry})
            bar.update(1)
            done, final = epoch + 1, epoch + 1 == protocol.epochs
            if checkpoint is not None and (done == stop or (final and keep_checkpoint)
                                           or (not final and done % checkpoint_every == 0)):
                save(done)

    finished = stop is None or start >= protocol.epochs or all(d is not None for d in diverged)
    test = None
    if finished and any(d is None for d in diverged):
        with setup.precision_scope():
            test = _evaluate(fused, net, data.test_images.to(dev), data.test_labels.to(dev), eval_batch_size, setup,
                             data.num_classes)
    if finished and not keep_checkpoint and checkpoint is not None:
        Path(checkpoint).unlink(missing_ok=True)
    for i, m in enumerate(members):  # each member's weights back into its own model, as train() leaves them
        m.model.to(dev, memory_format=setup.memory_format).load_state_dict(fused.member_state_dict(i))
    wall = time.perf_counter() - wall_start
    ips = images / train_time if images else None
    return [_member_result(i, history, diverged[i], test, [float(g["lr"]) for g in groups[i]], wall, ips,
                           resumed_from, finished, data) for i in range(k)]
