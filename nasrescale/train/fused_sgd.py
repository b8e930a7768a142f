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
kernels over lists built once (like ``SGD(foreach=True)``): :func:`sgd_update`, run eagerly, or
captured (:class:`CapturedUpdate`: ``torch.compile`` of it, as CUDA graphs with
``mode="reduce-overhead"`` on CUDA) when the run compiles its network; the LRs are device tensors
written in place, so a captured update never sees a new Python value and never recompiles for
the schedule.

>>> import torch
>>> p = torch.nn.Parameter(torch.ones(4))   # 2 members x 2 weights
>>> opt = FusedSGD([p], [[0.1, 0.2]], [[0.0, 0.0]], members=2, momentum=0.9, nesterov=False)
>>> p.grad = torch.ones(4); opt.step()
>>> [round(v, 6) for v in p.detach().tolist()]  # member 0 moved by 0.1, member 1 by 0.2
[0.9, 0.9, 0.8, 0.8]
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Sequence

import torch

from ..errors import ConfigError

__all__ = ["FusedSGD", "sgd_update", "CapturedUpdate", "update_for"]

#: the update's signature: (params, grads, buffers, lrs, weight decays or None, the one weight decay
#: or None, momentum, nesterov, first step)
Update = Callable[..., None]


def _member_values(param: torch.Tensor, values: Sequence[float], members: int) -> torch.Tensor:
    """A tensor shaped like ``param`` holding ``values[k]`` on member ``k``'s slice (in ``param``'s dtype)."""
    out = torch.empty_like(param)
    _fill(out, values, members)
    return out


def _fill(out: torch.Tensor, values: Sequence[float], members: int) -> None:
    column = torch.tensor([float(v) for v in values], dtype=out.dtype, device=out.device)
    view = out.unflatten(0, (members, -1))  # a view whatever the memory format (splits dim 0)
    view.copy_(column.view((members,) + (1,) * (view.dim() - 1)).expand_as(view))


def sgd_update(params: list[torch.Tensor], grads: list[torch.Tensor], bufs: list[torch.Tensor],
               lrs: list[torch.Tensor], wds: list[torch.Tensor] | None, uniform_wd: float | None,
               momentum: float, nesterov: bool, first: bool) -> None:
    """One SGD update of ``params`` in place (the module docstring's four lines), foreach kernels only:
    ``wds`` per-member decays (``None``: the one decay ``uniform_wd``), ``bufs`` the momentum buffers
    (unused without momentum), ``first`` the first step (``buf = d``)."""
    if uniform_wd is not None:
        d = torch._foreach_add(grads, params, alpha=uniform_wd) if uniform_wd else grads
    else:
        d = torch._foreach_addcmul(grads, params, wds)  # type: ignore[arg-type]
    if momentum:
        if first:
            torch._foreach_copy_(bufs, d)
        else:
            torch._foreach_mul_(bufs, momentum)
            torch._foreach_add_(bufs, d)
        d = torch._foreach_add(d, bufs, alpha=momentum) if nesterov else bufs
    torch._foreach_addcmul_(params, d, lrs, value=-1.0)


class CapturedUpdate:
    """:func:`sgd_update` through ``torch.compile(mode=mode)`` (``reduce-overhead``: a CUDA graph on
    CUDA where inductor captures the in-place update, else its fused kernels; never measured on a
    GPU yet), eager from the first call whose compiling fails (warned once; the same arithmetic, up
    to float rounding). ``error`` holds why it fell back (``None``: compiled)."""

    def __init__(self, mode: str = "default") -> None:
        self.mode, self.error = mode, None
        self.compiled: Update | None = torch.compile(sgd_update, mode=mode, dynamic=False)

    def __call__(self, *args: Any) -> None:
        if self.compiled is not None:
            try:
                return self.compiled(*args)
            except Exception as err:  # noqa: BLE001 - a backend that cannot compile here: eager, said once
                self.compiled, self.error = None, f"{type(err).__name__}: {err}"[:300]
                warnings.warn(f"the fused SGD update runs eagerly: compiling it failed ({self.error})", stacklevel=2)
        return sgd_update(*args)


def update_for(compile: bool, mode: str = "default") -> Update:
    """The update a run uses: captured with ``compile`` (:class:`CapturedUpdate`), else eager."""
    return CapturedUpdate(mode) if compile else sgd_update


class FusedSGD:
    """SGD over stacked member parameters with per-member LR and weight decay.

    Args:
        params: the fused parameters; dim 0 of each is ``members`` blocks, block ``k`` member ``k``'s.
        base_lrs: per parameter, the K members' base LRs (before the schedule).
        weight_decays: per parameter, the K members' weight decays.
        members: K.
        momentum: SGD momentum (shared: it is part of the fusion key).
        nesterov: Nesterov momentum (shared).
        update: :func:`sgd_update` (eager, the default) or a captured one (:func:`update_for`).

    Raises:
        ConfigError: lists of mismatched lengths.
    """

    def __init__(self, params: Sequence[torch.nn.Parameter], base_lrs: Sequence[Sequence[float]],
                 weight_decays: Sequence[Sequence[float]], *, members: int, momentum: float, nesterov: bool,
                 update: Update = sgd_update) -> None:
        if not (len(params) == len(base_lrs) == len(weight_decays)):
            raise ConfigError(f"FusedSGD: {len(params)} params, {len(base_lrs)} LR rows, "
                              f"{len(weight_decays)} weight-decay rows; give one row per parameter")
        if any(len(r) != members for r in list(base_lrs) + list(weight_decays)):
            raise ConfigError(f"FusedSGD: every LR / weight-decay row needs {members} values (one per member)")
        self.params = list(params)
        self.members, self.momentum, self.nesterov, self.update = members, momentum, nesterov, update
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

        first = self.buffers is None
        if self.momentum and self.buffers is None:
            self.buffers = [torch.zeros_like(p) for p in self.params]
        self.update(pick(self.params), pick(grads), pick(self.buffers) if self.momentum else [], pick(self.lr),
                    None if self.wd is None else pick(self.wd), self.uniform_wd, self.momentum, self.nesterov,
                    first)

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
