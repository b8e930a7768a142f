"""The feature speed formula (Chizat & Netrapalli, *feature_speed*, §2 Thm. 2.1) on a network at init.

Seen as a chain of blocks with outputs ``f_1 .. f_L`` (:meth:`CellNetwork.trunk
<nasrescale.models.CellNetwork.trunk>`), a network trained by a gradient step with per-parameter
LRs ``eta`` moves block ``v``'s output at the velocity ``f'_v`` given by eq. 2::

    |f'_v| = Ldot_v / (cos(theta_v) |b_v|),      Ldot_v = sum over parameters of blocks <= v of eta |grad|^2

with ``b_v = dL/df_v`` the backward vector and ``theta_v`` the backward-feature angle (BFA)
between ``f'_v`` and ``-b_v`` (in ``[0, 90)`` degrees). :func:`feature_speed` measures, on one
batch, in float64:

* ``theta_v`` at init, from the velocity (a central difference of ``f_v`` along the step's direction);
* the update one step at the LRs ``eta`` makes according to the formula (first order in the step),
  ``Ldot_v / (cos(theta_v) |b_v|)``;
* the update that step really makes, ``|f_v(after) - f_v(before)|``.

Both updates are RMS norms (``|.| / sqrt(m_v)``, ``m_v`` the entries of ``f_v`` for the whole
batch; the paper's §2 convention). Their ratio shows how far one real step is from first order.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Mapping

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ConfigError

__all__ = ["BlockSpeed", "feature_speed"]


@dataclass(frozen=True)
class BlockSpeed:
    """The formula's quantities for one block.

    Attributes:
        block: the trunk block's name.
        angle_deg: the backward-feature angle ``theta_v`` at init (degrees; NaN if nothing before
            the block moves).
        predicted_rms: the one-step update of ``f_v`` the formula gives (RMS).
        measured_rms: the one-step update measured (RMS).
        loss_decrease: ``Ldot_v``, the first-order loss decrease the parameters up to ``v`` bring.
    """

    block: str
    angle_deg: float
    predicted_rms: float
    measured_rms: float
    loss_decrease: float


def _outputs_at(net: nn.Module, x: torch.Tensor, params: list[torch.Tensor], base: list[torch.Tensor],
                step: list[torch.Tensor], t: float, capture: dict[int, torch.Tensor], blocks: int) -> list[torch.Tensor]:
    """The blocks' outputs with every parameter at ``base + t * step`` (restored afterwards)."""
    with torch.no_grad():
        for p, p0, dp in zip(params, base, step):
            p.copy_(p0 + t * dp)
        capture.clear()
        net(x)
        out = [capture[i].detach().clone() for i in range(blocks)]
        for p, p0 in zip(params, base):
            p.copy_(p0)
    return out


def _chain(model: nn.Module) -> tuple[nn.Module, list[tuple[str, nn.Module]], list[tuple[str, torch.Tensor]],
                                       dict[int, int]]:
    """A float64 copy of ``model`` in training mode, its trunk, its trained parameters (named) and
    each parameter's block."""
    net = copy.deepcopy(model).double().train()
    blocks = net.trunk()  # type: ignore[operator]
    owner = {id(p): i for i, (_, m) in enumerate(blocks) for p in m.parameters()}
    named = [(n, p) for n, p in net.named_parameters() if p.requires_grad]
    missing = [n for n, p in named if id(p) not in owner]
    if missing:
        raise ConfigError(f"{type(model).__name__}.trunk(): parameter {missing[0]!r} is in no block; the trunk must "
                          "cover the network as a chain")
    return net, blocks, named, owner


def _speed(name: str, b: torch.Tensor | None, before: torch.Tensor, plus: torch.Tensor, minus: torch.Tensor,
           after: torch.Tensor, eps: float, ldot: float) -> BlockSpeed:
    """One block's angle (from the central-difference velocity), predicted and measured update."""
    velocity = (plus - minus) / (2 * eps)
    bv, rms = b if b is not None else torch.zeros_like(velocity), math.sqrt(velocity.numel())
    norm_b, norm_v = float(bv.norm()), float(velocity.norm())
    cos = -float((bv * velocity).sum()) / (norm_b * norm_v) if norm_b > 0 and norm_v > 0 else math.nan
    angle = math.degrees(math.acos(max(-1.0, min(1.0, cos)))) if math.isfinite(cos) else math.nan
    predicted = ldot / (cos * norm_b) if math.isfinite(cos) and cos > 0 else math.nan
    return BlockSpeed(name, angle, predicted / rms, float((after - before).norm()) / rms, ldot)


def feature_speed(model: nn.Module, x: torch.Tensor, y: torch.Tensor, lrs: Mapping[str, float],
                  eps: float = 1e-3) -> list[BlockSpeed]:
    """Measure the feature speed formula on a float64 copy of ``model`` (a ``CellNetwork`` in its
    init) for the batch ``x, y`` and one gradient step at ``lrs[name]`` for each parameter (see
    the module docstring).

    Raises:
        ConfigError: the network's trunk misses parameters (its blocks are not a chain).
    """
    net, blocks, named, owner = _chain(model)
    params, n = [p for _, p in named], len(blocks)
    capture: dict[int, torch.Tensor] = {}
    hooks = [m.register_forward_hook(lambda _m, _i, out, i=i: capture.__setitem__(i, out))
             for i, (_, m) in enumerate(blocks)]
    try:
        x = x.double()
        loss = F.cross_entropy(net(x), y)
        feats = [capture[i] for i in range(n)]
        grads = torch.autograd.grad(loss, feats + params, allow_unused=True)
        g = [torch.zeros_like(p) if gr is None else gr for p, gr in zip(params, grads[n:])]
        eta = [lrs[name] for name, _ in named]
        per_block = [0.0] * n
        for p, gr, e in zip(params, g, eta):
            per_block[owner[id(p)]] += e * float(gr.pow(2).sum())
        base, step = [p.detach().clone() for p in params], [-e * gr for gr, e in zip(g, eta)]
        plus, minus, after = (_outputs_at(net, x, params, base, step, t, capture, n) for t in (eps, -eps, 1.0))
    finally:
        for h in hooks:
            h.remove()
    return [_speed(name, grads[i], feats[i].detach(), plus[i], minus[i], after[i], eps, sum(per_block[:i + 1]))
            for i, (name, _) in enumerate(blocks)]
