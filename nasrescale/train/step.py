"""One training step for K members at once (a single run is K = 1), its epoch and the evaluation.

Everything a step does, in order (:func:`train_epoch`):

1. **batch** (:class:`Batches`): member ``k``'s batch is its own run's -- its epoch draw
   (:class:`~nasrescale.train.run_setup.EpochDraw`: order, crop offsets, flips, from its seed).
   One indexing of the zero-padded channels-last uint8 images gathers, crops and flips every
   member's batch straight into ``(B, H, W, K, C)``, which normalized in place *is* the
   ``(B, K * C, H, W)`` channels-last input (member ``k`` in channels ``kC..kC+C-1``): no
   transposing or layout copies. The window indices are built once per epoch.
2. **forward**: ``net(x)``, viewed as ``(B, K, classes)`` (a plain model's ``(B, classes)``
   is K = 1; a :class:`~nasrescale.models.fused.FusedNetwork` gives K members).
3. **loss** (:func:`member_losses`): each member's mean cross-entropy; their sum (active
   members only) is differentiated, so each member's gradient is its own. For K = 1 it is
   the one ``cross_entropy`` call a plain training loop makes.
4. **backward and update**: ``opt.zero_grad(); loss.backward(); opt.step()`` --
   ``torch.optim.SGD`` (or the caller's optimizer) for K = 1,
   :class:`~nasrescale.train.fused_sgd.FusedSGD` for K > 1 -- with the ELR work around the step
   (:class:`~nasrescale.train.elr_control.ElrControl`: the last step's ELRs for the history, and
   the subcritical warm-up's scaled update while it lasts; on the device).
5. **sums** on the device (loss, hits, the tail's loss, per member): never read here; the
   caller reads them once per epoch, so a step never waits for the device.

:func:`evaluate` likewise keeps per-member loss, hits and per-class hits in one device tensor.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .augment import crop_windows, normalize
from .elr_control import ElrControl
from .metrics import class_counts
from .run_setup import EpochDraw, RunSetup, tail_start

__all__ = ["DeviceImages", "Batches", "member_losses", "loss_input", "train_epoch", "evaluate"]


def loss_input(out: torch.Tensor) -> torch.Tensor:
    """Logits for the loss: bf16/fp16 raised to fp32, fp32 and fp64 kept as they are."""
    return out if out.dtype == torch.float64 else out.float()


class DeviceImages:
    """A split on the device: uint8 pixels ``(N, H + 2p, W + 2p, C)`` (zero padded by ``padding``)
    and labels ``(N,)``."""

    def __init__(self, images: torch.Tensor, labels: torch.Tensor, padding: int, device: torch.device) -> None:
        padded = F.pad(images, (padding,) * 4) if padding else images
        self.pixels = padded.to(device).permute(0, 2, 3, 1).contiguous()
        self.labels = labels.to(device)
        self.padding = padding
        self.height, self.width = images.shape[2], images.shape[3]

    def __len__(self) -> int:
        return self.labels.shape[0]


def _network_input(x: torch.Tensor, setup: RunSetup) -> torch.Tensor:
    """Normalized ``(B, H, W, K, C)`` -> ``(B, K * C, H, W)`` in the setup's memory format (a view
    for channels last, unless ``x`` is an expanded view, which is copied once)."""
    b, h, w = x.shape[:3]
    x = x.reshape(b, h, w, -1).permute(0, 3, 1, 2)
    return x if setup.channels_last else x.contiguous()


class Batches:
    """One epoch's batches of K members, each from its own draw (see the module docstring)."""

    def __init__(self, draws: list[EpochDraw], images: DeviceImages, setup: RunSetup) -> None:
        self.k, self.images, self.setup, self.starts = len(draws), images, setup, draws[0].starts
        self.perm = torch.stack([d.perm for d in draws], 1)  # (n, K)
        self.per_sample = draws[0].aug is not None
        if self.per_sample:
            dy, dx, flip = (torch.stack(t, 1) for t in zip(*(d.aug for d in draws)))  # (n, K) each
        else:  # the uncropped window: offset ``padding`` (images are stored padded by it)
            dy = dx = torch.full((1, 1), images.padding, dtype=torch.long, device=setup.device)
            flip = torch.zeros((1, 1), dtype=torch.bool, device=setup.device)
        self.rows, self.cols = crop_windows(dy, dx, flip, images.height, images.width)

    def at(self, s: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The batch starting at position ``s``: inputs ``(B, K * C, H, W)`` and labels ``(B, K)``."""
        end = s + self.setup.batch_size
        idx = self.perm[s:end]
        rows, cols = (self.rows[s:end], self.cols[s:end]) if self.per_sample else (self.rows, self.cols)
        x = self.images.pixels[idx[:, None, None, :], rows, cols]  # (B, H, W, K, C) uint8
        return _network_input(normalize(x, self.setup.mean, self.setup.std), self.setup), self.images.labels[idx]


def member_losses(out: torch.Tensor, y: torch.Tensor, smoothing: float = 0.0, reduction: str = "mean") -> torch.Tensor:
    """Each member's cross-entropy ``(K,)`` (mean or sum over the batch) of logits ``(B, K, classes)``
    against labels ``(B, K)``.

    >>> out, y = torch.randn(5, 2, 3), torch.randint(0, 3, (5, 2))
    >>> torch.allclose(member_losses(out, y)[1], F.cross_entropy(out[:, 1], y[:, 1]))
    True
    """
    if out.shape[1] == 1:  # one member: exactly a plain run's cross_entropy call (its rounding)
        return F.cross_entropy(loss_input(out[:, 0]), y[:, 0], reduction=reduction, label_smoothing=smoothing).view(1)
    per_sample = F.cross_entropy(loss_input(out.flatten(0, 1)), y.flatten(), reduction="none",
                                 label_smoothing=smoothing).view(y.shape)
    return per_sample.mean(0) if reduction == "mean" else per_sample.sum(0)


def train_epoch(net: nn.Module, opt: torch.optim.Optimizer, batches: Batches, active: torch.Tensor,
                smoothing: float, elr: ElrControl | None = None) -> tuple[torch.Tensor, int, int]:
    """One pass of every member over the training set (the steps of the module docstring) with
    ``net`` (in training mode) and its optimizer; ``active`` ``(K,)`` bool: members still training;
    ``elr``: the group's ELR work (none: plain steps).

    Returns ``(sums, images, tail images)``: ``sums`` ``(3, K)`` float64 on the device -- loss x
    batch size, correct predictions, loss x batch size of the epoch's tail steps
    (:func:`~nasrescale.train.run_setup.tail_start`) -- and the images one member saw in all and in
    the tail."""
    sums = torch.zeros(3, batches.k, dtype=torch.float64, device=active.device)
    seen = tail_seen = 0
    tail_from, last = tail_start(len(batches.starts)), len(batches.starts) - 1
    for step, s in enumerate(batches.starts):
        x, y = batches.at(s)
        with batches.setup.autocast():
            out = net(x).view(x.shape[0], batches.k, -1)
            losses = member_losses(out, y, smoothing)
            loss = torch.where(active, losses, torch.zeros_like(losses)).sum()
        opt.zero_grad()
        loss.backward()
        if elr is not None:
            elr.before_update(last=step == last)
        opt.step()
        if elr is not None:
            elr.after_update()
        count = y.shape[0]  # a host int: no sync
        sums[0] += losses.detach() * count
        sums[1] += (out.detach().argmax(2) == y).sum(0)
        seen += count
        if step >= tail_from:
            sums[2] += losses.detach() * count
            tail_seen += count
    return sums, seen, tail_seen


def evaluate(net: nn.Module, k: int, images: DeviceImages, batch_size: int, setup: RunSetup,
             num_classes: int) -> torch.Tensor:
    """Every member's test sums in one float64 device tensor (read by the caller): row ``k`` of
    ``(K + 1, 2 + classes)`` holds member ``k``'s summed cross-entropy, correct predictions and
    correct predictions per class; the last row's per-class part the images per class.
    Each member sees every test image, only normalized, in order, ``batch_size`` at a time."""
    totals = torch.zeros(k + 1, 2 + num_classes, dtype=torch.float64, device=setup.device)
    net.eval()
    with torch.inference_mode():
        for s in range(0, len(images), batch_size):
            x = normalize(images.pixels[s:s + batch_size], setup.mean, setup.std)  # (B, H, W, C)
            x = _network_input(x[:, :, :, None, :].expand(-1, -1, -1, k, -1), setup)  # every member sees all
            y = images.labels[s:s + batch_size]
            with setup.autocast():
                out = net(x).view(x.shape[0], k, -1)
            yk = y[:, None].expand(-1, k)
            pred = out.argmax(2)
            hits, counts = class_counts(pred, y, num_classes)
            totals[:k, 0] += member_losses(out, yk, reduction="sum")
            totals[:k, 1] += (pred == yk).sum(0)
            totals[:k, 2:] += hits
            totals[k, 2:] += counts
    return totals
