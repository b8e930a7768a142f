"""SGD for a fused network: one step for K members, each at its own learning rate.

``torch.optim.SGD`` (momentum, Nesterov, weight decay, no dampening) is elementwise, so K
independent runs of it equal one run over the stacked parameters in which the learning rate
(and weight decay) is a tensor holding member ``k``'s value on member ``k``'s slice. This
module is that run. Per step, as ``torch.optim.SGD``::

    d = grad + wd * p                       # weight decay (L2), member-wise wd
    buf = d (first step) | m * buf + d      # momentum buffer
    d = d + m * buf (Nesterov) | buf
    p = p - lr * d                          # member-wise lr

The schedule multiplies every member's base LRs by one factor: :meth:`FusedSGD.set_factor`
computes ``base_lr * factor`` in double precision, as ``LambdaLR`` does, and writes the LR
tensors (in the parameters' dtype) once per epoch. The update is a few ``torch._foreach_*``
kernels over lists built once (like ``SGD(foreach=True)``).

>>> import torch
>>> p = torch.nn.Parameter(torch.ones(4))   # 2 members x 2 weights
>>> opt = FusedSGD([p], [[0.1, 0.2]], [[0.0, 0.0]], members=2, momentum=0.9, nesterov=False)
>>> p.grad = torch.ones(4); opt.step()
>>> [round(v, 6) for v in p.detach().tolist()]  # member 0 moved by 0.1, member 1 by 0.2
[0.9, 0.9, 0.8, 0.8]
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

from ..errors import ConfigError

__all__ = ["FusedSGD"]


def _member_values(param: torch.Tensor, values: Sequence[float], members: int) -> torch.Tensor:
    """A tensor shaped like ``param`` holding ``values[k]`` on member ``k``'s slice (in ``param``'s dtype)."""
    out = torch.empty_like(param)
    _fill(out, values, members)
    return out


def _fill(out: torch.Tensor, values: Sequence[float], members: int) -> None:
    column = torch.tensor([float(v) for v in values], dtype=out.dtype, device=out.device)
    view = out.unflatten(0, (members, -1))  # a view whatever the memory format (splits dim 0)
    view.copy_(column.view((members,) + (1,) * (view.dim() - 1)).expand_as(view))


class FusedSGD:
    """SGD over stacked member parameters with per-member LR and weight decay.

    Args:
        params: the fused parameters; dim 0 of each is ``members`` blocks, block ``k`` member ``k``'s.
        base_lrs: per parameter, the K members' base LRs (before the schedule).
        weight_decays: per parameter, the K members' weight decays.
        members: K.
        momentum: SGD momentum (shared: it is part of the fusion key).
        nesterov: Nesterov momentum (shared).

    Raises:
        ConfigError: lists of mismatched lengths.
    """

    def __init__(self, params: Sequence[torch.nn.Parameter], base_lrs: Sequence[Sequence[float]],
                 weight_decays: Sequence[Sequence[float]], *, members: int, momentum: float, nesterov: bool) -> None:
        if not (len(params) == len(base_lrs) == len(weight_decays)):
            raise ConfigError(f"FusedSGD: {len(params)} params, {len(base_lrs)} LR rows, "
                              f"{len(weight_decays)} weight-decay rows; give one row per parameter")
        if any(len(r) != members for r in list(base_lrs) + list(weight_decays)):
            raise ConfigError(f"FusedSGD: every LR / weight-decay row needs {members} values (one per member)")
        self.params = list(params)
        self.members, self.momentum, self.nesterov = members, momentum, nesterov
        self.base_lrs = [[float(v) for v in row] for row in base_lrs]
        self.active = [True] * members
        self.factor = 1.0
        self.lr = [_member_values(p, row, members) for p, row in zip(self.params, self.base_lrs)]
        # one shared decay when all agree (the usual case): a scalar alpha, no extra tensors
        flat = {float(v) for row in weight_decays for v in row}
        self.uniform_wd: float | None = flat.pop() if len(flat) == 1 else None
        self.wd = None if self.uniform_wd is not None else [
            _member_values(p, row, members) for p, row in zip(self.params, weight_decays)]
        self.buffers: list[torch.Tensor] | None = None  # momentum buffers, made at the first step

    def member_lr(self, param_index: int, member: int) -> float:
        """The current LR of ``member`` for parameter ``param_index`` (0 once frozen)."""
        return self.base_lrs[param_index][member] * self.factor if self.active[member] else 0.0

    def set_factor(self, factor: float) -> None:
        """Set the schedule factor: LR = base LR x ``factor`` (double precision, then the parameters' dtype)."""
        self.factor = float(factor)
        for i, out in enumerate(self.lr):
            _fill(out, [self.member_lr(i, k) for k in range(self.members)], self.members)

    @torch.no_grad()
    def freeze(self, member: int) -> None:
        """Stop updating ``member``: its LR becomes 0 and its momentum buffers 0."""
        self.active[member] = False
        self.set_factor(self.factor)
        for buf in self.buffers or []:
            buf.unflatten(0, (self.members, -1))[member].zero_()

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """One SGD step of every member (parameters without a gradient are skipped, as SGD does)."""
        grads = [p.grad for p in self.params]
        live = None if all(g is not None for g in grads) else [i for i, g in enumerate(grads) if g is not None]

        def pick(tensors: list) -> list:  # the lists built once, or their entries with a gradient
            return tensors if live is None else [tensors[i] for i in live]

        params, grads = pick(self.params), pick(grads)
        if self.uniform_wd is not None:
            d = torch._foreach_add(grads, params, alpha=self.uniform_wd) if self.uniform_wd else grads
        else:
            d = torch._foreach_addcmul(grads, params, pick(self.wd))  # type: ignore[arg-type]
        if self.momentum:
            first = self.buffers is None
            self.buffers = self.buffers or [torch.zeros_like(p) for p in self.params]
            bufs = pick(self.buffers)
            if first:
                torch._foreach_copy_(bufs, d)  # first step: buf = d
            else:
                torch._foreach_mul_(bufs, self.momentum)
                torch._foreach_add_(bufs, d)
            d = torch._foreach_add(d, bufs, alpha=self.momentum) if self.nesterov else bufs
        torch._foreach_addcmul_(params, d, pick(self.lr), value=-1.0)

    def state_dict(self) -> dict[str, Any]:
        """Momentum buffers, schedule factor and frozen members (plain tensors and lists)."""
        return {"factor": self.factor, "active": list(self.active),
                "buffers": [] if self.buffers is None else [b.detach().clone() for b in self.buffers]}

    @torch.no_grad()
    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved (buffers are moved to the parameters' device)."""
        buffers = list(state["buffers"])
        if buffers and (len(buffers) != len(self.params)
                        or any(b.shape != p.shape for b, p in zip(buffers, self.params))):
            raise ConfigError("optimizer state does not fit this fused network (momentum buffer shapes differ)")
        if len(state["active"]) != self.members:
            raise ConfigError(f"optimizer state has {len(state['active'])} members, this run {self.members}")
        self.buffers = None
        if buffers:
            self.buffers = [torch.empty_like(p).copy_(b) for b, p in zip(buffers, self.params)]
        self.active = [bool(a) for a in state["active"]]
        self.set_factor(float(state["factor"]))
