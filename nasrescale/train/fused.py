"""The fused engine: K runs of one architecture trained as one network, each as if alone.

:func:`train_fused` takes K :class:`FusedMember` s -- each an initialized network with its own
protocol (init rule, LR), param groups and seed, all of one architecture and one *fusion
key* (:func:`fusion_key`: epochs, batch size, momentum, Nesterov, weight decay, schedule,
warmup, label smoothing, augmentation; everything but name, LR and init) -- packs them into a
:class:`~nasrescale.models.fused.FusedNetwork` and trains them together, as a
:class:`FusedCore` in the epoch loop that single runs use too (:mod:`~nasrescale.train.loop`):

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
reordering (``tests/train/test_fused.py``). At the end every member's trained weights are unpacked
into its own ``model`` (in place, as ``train`` leaves them); a diverged member's are zeros.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..data.types import ImageData
from ..errors import ConfigError
from ..models.fused import FusedNetwork
from ..protocol import cosine_factor
from .augment import crop_flip, normalize
from .checkpoint import check_resumable
from .loop import Evaluation, LoopSettings, check_loop_args, run_epochs
from .metrics import class_counts, released_class_mean
from .setup import GLOBAL_RNG_OFFSET, EpochDraw, RunSetup, epoch_seed, loss_input, model_dtype, tail_start
from .fused_members import FusedMember, check_identities, check_members, fusion_key, group_fingerprint, lr_rows
from .fused_sgd import FusedSGD
from .result import TrainResult

__all__ = ["FusedMember", "FusedCore", "fusion_key", "train_fused"]


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


class FusedCore:
    """K runs of one architecture as a :class:`~nasrescale.train.loop.TrainCore`: the fused
    network, :class:`FusedSGD` at every member's own LR under the shared cosine factor, and the
    members' identities in the checkpoint."""

    def __init__(self, members: Sequence[FusedMember], data: ImageData, *, device: torch.device,
                 compile: bool) -> None:
        identities, groups = check_members(members, data)
        protocol, k = members[0].protocol, len(members)
        self.setup = setup = RunSetup(device, data, protocol, model_dtype(members[0].model))
        self.fused = FusedNetwork([m.model for m in members]).to(device, memory_format=setup.memory_format)
        params, base_lrs, wds = lr_rows(members, groups, self.fused)
        self.opt = FusedSGD(params, base_lrs, wds, members=k, momentum=protocol.momentum, nesterov=protocol.nesterov)
        self.identities, self.fingerprint = identities, group_fingerprint(identities)
        self.run = f"fused group of {k}: " + "; ".join(f"seed {m.seed} {m.protocol.name}" for m in members)
        self.member_list, self.protocol, self.data, self.members, self.epochs = members, protocol, data, k, protocol.epochs
        self.base_lrs = [[float(g["lr"]) for g in member_groups] for member_groups in groups]
        self.desc = f"train {data.name} x{k}"
        self.train_x, self.train_y = data.train_images.to(device), data.train_labels.to(device)
        self.net = torch.compile(self.fused) if compile else self.fused

    def resume(self, state: dict[str, Any], path: str | Path) -> tuple[list[list[dict]], list[int | None]]:
        check_identities(state, self.identities, path)
        check_resumable(state, self.fingerprint, self.run, path, self.epochs)
        try:
            self.fused.net.load_state_dict(state["model"])
            self.opt.load_state_dict(state["optimizer"])
        except (RuntimeError, ValueError, KeyError) as err:
            raise ConfigError(f"checkpoint {str(path)!r} does not fit this fused group "
                              f"({str(err).splitlines()[0]}); delete it or pass another checkpoint path") from None
        return [[e["members"][i] for e in state["history"] if e["members"][i] is not None]
                for i in range(self.members)], list(state["diverged"])

    def checkpoint_state(self, done: int, histories: list[list[dict]], diverged: list[int | None]) -> dict[str, Any]:
        by_epoch = [{h["epoch"]: h for h in own} for own in histories]  # None: frozen that epoch
        history = [{"epoch": e, "members": [own.get(e) for own in by_epoch]} for e in range(1, done + 1)]
        return {"fingerprint": self.fingerprint, "run": self.run, "seed": self.member_list[0].seed,
                "epochs_done": done, "model": self.fused.net.state_dict(), "optimizer": self.opt.state_dict(),
                "scheduler": {"epochs_done": done}, "history": history, "members": self.identities,
                "diverged": diverged}

    def train_epoch(self, epoch: int, active: list[bool]) -> tuple[list[dict[str, Any] | None], int]:
        factor = cosine_factor(epoch, self.protocol)
        self.opt.set_factor(factor)
        setup, seed0 = self.setup, self.member_list[0].seed
        setup.seed_global(epoch_seed(seed0, epoch) + GLOBAL_RNG_OFFSET)  # dropout: none in NB201
        draws = [EpochDraw(self.train_x.shape[0], setup.generator(epoch_seed(m.seed, epoch)), setup)
                 for m in self.member_list]
        live = torch.tensor(active, device=setup.device)
        losses, accs, seen, tails = _fused_epoch(self.fused, self.net, self.opt, self.train_x, self.train_y, draws,
                                                 live, self.protocol.label_smoothing, setup)
        return [{"epoch": epoch + 1, "train_loss": losses[i], "train_acc": accs[i],
                 "lr": self.base_lrs[i][0] * factor,  # as LambdaLR: base x factor
                 "train_loss_tail": tails[i]} if active[i] else None for i in range(self.members)], seen

    def freeze(self, member: int) -> None:
        self.opt.freeze(member)
        self.fused.silence_member(member)

    def end_epoch(self, epoch: int) -> None:
        """Nothing: the next epoch sets its own LR factor."""

    def evaluate(self, batch_size: int) -> list[Evaluation] | None:
        dev = self.setup.device
        test = _evaluate(self.fused, self.net, self.data.test_images.to(dev), self.data.test_labels.to(dev),
                         batch_size, self.setup, self.data.num_classes)
        return None if test is None else list(zip(*test))

    def finish(self) -> None:
        """Each member's weights back into its own model, as ``train`` leaves them."""
        for i, m in enumerate(self.member_list):
            m.model.to(self.setup.device, memory_format=self.setup.memory_format).load_state_dict(
                self.fused.member_state_dict(i))


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
    settings = LoopSettings(checkpoint, checkpoint_every, eval_batch_size, stop_after, keep_checkpoint, progress,
                            on_epoch)
    check_loop_args(data, settings)
    core = FusedCore(members, data, device=torch.device(device), compile=compile)
    return run_epochs(core, data, settings)
