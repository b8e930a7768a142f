"""Effective learning rates of scale-invariant layers (Mehmeti-Göpel & Wand, *elr_dynamics*).

A weight whose layer is directly followed by a normalization is **scale-invariant**: the
network's output does not change when it is multiplied by a positive number, so its gradient is
orthogonal to it (§3, eq. 2) and shrinks as it grows (eq. 1). What moves such a layer is its
**effective learning rate** (Def. 3.2, eq. 10), ``E = |grad W| / |W|``. Here, with BatchNorm,
every output channel of a conv is scale-invariant on its own; as the paper measures it (§4.3.1)
a layer's ELR is the largest of its channels' ELRs.

* :func:`scale_invariant_convs` finds those layers in a module's structure: a ``Conv2d``
  directly followed by a ``BatchNorm2d`` over its output channels in one ``nn.Sequential``
  (the conv's output then feeds that BatchNorm only). NB201: the stem, every cell conv, both
  convs of a reduction block -- not the 1x1 shortcut (summed without normalization) nor the
  readout. The MLP/CNN DAG networks (no normalization) have none.
* :func:`layer_elrs` -- the ``(layers, members)`` ELRs of a plain network (K = 1) or of a fused
  one (each member's channels are its own block of rows).
* :func:`relative_spread` -- Def. 4.1 (eq. 32), ``S_rel = std over layers of ln E``.
* :func:`subcritical_factor` -- Cor. 3.10: the LR that keeps every ELR ratio from flipping is the
  flipping ratio (Def. 3.8, eq. 24) of the two layers of highest ELR, ``kappa = 1 / sqrt(E_h E_h')``.

The per-step use in training (recording, the warm-up) is :mod:`nasrescale.train.elr_control`;
``nasrescale diagnose`` uses them for the warm-up's first step.

>>> import torch
>>> from torch import nn
>>> net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 4, 1))
>>> [name for name, _ in scale_invariant_convs(net)]  # the last conv has no BatchNorm after it
['0']
>>> elr = torch.tensor([[4.0], [1.0], [0.25]])  # three layers, one member
>>> float(subcritical_factor(elr)[0])  # 1 / sqrt(4 * 1): the two highest
0.5
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["scale_invariant_convs", "channel_elrs", "layer_elrs", "relative_spread", "subcritical_factor"]


def scale_invariant_convs(module: nn.Module) -> list[tuple[str, nn.Conv2d]]:
    """``(qualified name, conv)`` of every conv directly followed by a BatchNorm over its output
    channels inside one ``nn.Sequential`` of ``module``, in module order."""
    found = []
    for prefix, seq in module.named_modules():
        if not isinstance(seq, nn.Sequential):
            continue
        children = list(seq.named_children())
        for (name, a), (_, b) in zip(children, children[1:]):
            if isinstance(a, nn.Conv2d) and isinstance(b, nn.BatchNorm2d) and b.num_features == a.out_channels:
                found.append((f"{prefix}.{name}" if prefix else name, a))
    return found


def channel_elrs(weight: torch.Tensor, grad: torch.Tensor, members: int) -> torch.Tensor:
    """``(members,)``: each member's largest channel ELR ``|grad W_c| / |W_c|`` (a channel of
    zero weight counts 0). Dim 0 of ``weight`` is ``members`` equal blocks of output channels."""
    w = weight.detach().reshape(weight.shape[0], -1).norm(dim=1)
    g = grad.detach().reshape(grad.shape[0], -1).norm(dim=1)
    ratio = torch.where(w > 0, g / torch.where(w > 0, w, torch.ones_like(w)), torch.zeros_like(w))
    return ratio.view(members, -1).amax(dim=1)


def layer_elrs(weights: list[torch.Tensor], members: int) -> torch.Tensor:
    """``(layers, members)`` ELRs of ``weights`` from their current ``.grad`` (a weight without a
    gradient, e.g. a conv a pruned cell skips, counts 0)."""
    rows = [channel_elrs(w, w.grad, members) if w.grad is not None else
            torch.zeros(members, dtype=w.dtype, device=w.device) for w in weights]
    return torch.stack(rows)


def relative_spread(elr: torch.Tensor) -> torch.Tensor:
    """``(members,)``: the standard deviation over layers (population, ``ddof = 0``) of ``ln E``
    (Def. 4.1, eq. 32); layers of ELR 0 (no gradient) are left out.

    >>> float(relative_spread(torch.tensor([[1.0], [torch.e ** 2]])))  # ln E = 0 and 2
    1.0
    """
    logs = torch.log(elr)
    live = torch.isfinite(logs)
    count = live.sum(0).clamp(min=1)
    mean = torch.where(live, logs, 0).sum(0) / count
    return torch.sqrt((torch.where(live, logs - mean, 0) ** 2).sum(0) / count)


def subcritical_factor(elr: torch.Tensor) -> torch.Tensor:
    """``(members,)``: Cor. 3.10's warm-up LR, the flipping ratio (eq. 24) of the two layers of
    highest ELR, ``1 / sqrt(E_h E_h')`` (one layer: ``1 / E_h``). ``elr`` is ``(layers, members)``;
    given per-unit-LR ELRs, it is a multiplier of the LRs those were measured at.

    >>> round(float(subcritical_factor(torch.tensor([[9.0], [1.0], [4.0]]))[0]), 6)  # 1 / sqrt(9 * 4)
    0.166667
    """
    top = elr.topk(min(2, elr.shape[0]), dim=0).values
    return torch.rsqrt(top.prod(0) if top.shape[0] == 2 else top[0] ** 2)
