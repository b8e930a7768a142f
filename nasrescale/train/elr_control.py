"""What the epoch loop does with effective learning rates (:mod:`nasrescale.models.elr`), for K
members at once (a single run is K = 1), without a host sync per step.

* **Recording** (every run with scale-invariant layers): at the last step of each epoch the
  gradients are already there; their ELRs (one norm per channel, no extra pass) give the epoch's
  history entry ``elr`` (one value per layer, :attr:`ElrControl.names`, to 4 significant digits)
  and ``elr_spread`` (Def. 4.1, of the unrounded values).
* **Subcritical warm-up** (``protocol.warmup_rule = "elr_subcritical"``, Cor. 3.10): at every step
  until it ends, each member's scale-invariant weights take their update at ``w`` times their
  scheduled LR, ``w = min(1, (1 - momentum) * kappa)`` with ``kappa`` the flipping ratio of the two
  layers of highest ELR, ELRs measured per unit of each layer's scheduled LR (so per-layer LRs,
  e.g. the spectral rule's, count as the paper's one LR). ``1 - momentum`` turns a heavy-ball
  (or Nesterov) step, ``lr / (1 - momentum)`` gradients long once its buffer has filled, into the
  plain-SGD step the corollary is about (the paper leaves momentum out, its Appendix C.2). A
  member's warm-up ends at the first step where ``w`` reaches 1 (its scheduled LR is subcritical);
  from then on it follows the protocol's schedule alone. Other parameters (BatchNorm, readout,
  biases, unnormalized convs) follow the schedule throughout.

The update is scaled after the optimizer's step, ``W <- W_old + w (W_new - W_old)``: for SGD with
momentum, Nesterov and weight decay (plain, fused or μP's) that is exactly the step at ``w``
times the LR, since none of them feeds the LR into its momentum buffer. A member whose warm-up
has ended (or that diverged) gets ``w = 1``, which leaves its weights bit for bit as they are, so
a fused group equals its independent runs. The host learns that every member's warm-up has ended
at the epoch's one read (:meth:`ElrControl.end_epoch`), after which the per-step work stops.
"""

from __future__ import annotations

from typing import Any, Sequence

import networkx as nx
import torch
from torch import nn

from ..errors import ConfigError
from ..registry import Registry
from ..models import build_model, macro_settings
from ..protocol import Protocol
from ..space.families import CellFamily
from ..models.elr import layer_elrs, relative_spread, scale_invariant_convs, subcritical_factor

__all__ = ["ElrControl", "WARMUP_RULES", "require_warmup_layers"]

#: the values of ``protocol.warmup_rule`` (``None``: the linear warm-up of ``warmup_epochs``), each
#: with the class that runs it in a group's epoch loop
WARMUP_RULES: Registry[type["ElrControl"]] = Registry(
    "protocol.warmup_rule", "warm-up rules", hint="or leave warmup_rule out (the linear warm-up of warmup_epochs)")


class ElrControl:
    """The ELR work of one group's epoch loop (see the module docstring).

    Args:
        structure: the network whose modules are scanned (a fused group's widened network).
        members: K.
        protocol: the group's protocol (``warmup_rule``, ``momentum``).
        device: where the state lives.

    Attributes:
        names: the scale-invariant convs' qualified names, in order (the history's ``elr`` order).
        weights: their weights.
    """

    def __init__(self, structure: nn.Module, members: int, protocol: Protocol, device: torch.device) -> None:
        layers = scale_invariant_convs(structure)
        self.names = [name for name, _ in layers]
        self.weights: list[torch.Tensor] = [conv.weight for _, conv in layers]
        self.k, self.momentum = members, protocol.momentum
        rule = protocol.warmup_rule
        self.configured = rule is not None and WARMUP_RULES.get(rule) is type(self) and bool(self.weights)
        self.warming = self.configured
        self.done = torch.zeros(members, dtype=torch.bool, device=device)
        self.lrs = torch.ones(len(self.weights), members, device=device)
        self.factor = torch.ones(members, device=device)
        self.factor_sum = torch.zeros(members, device=device)
        self.steps = 0
        self.elr: torch.Tensor | None = None
        self._before: list[torch.Tensor] = []

    def start_epoch(self, lrs: Sequence[Sequence[float]]) -> None:
        """This epoch's scheduled LR of every scale-invariant weight, ``lrs[layer][member]``."""
        if self.weights:
            self.lrs = torch.tensor(lrs, dtype=self.weights[0].dtype).to(self.done.device, non_blocking=True)
        self.factor_sum.zero_()
        self.steps = 0

    @torch.no_grad()
    def before_update(self, last: bool) -> None:
        """After the backward pass: measure the ELRs (warm-up steps and the epoch's last step) and
        set this step's warm-up factor; keep the weights the update will be measured against."""
        if not self.weights or not (self.warming or last):
            return
        elr = layer_elrs(self.weights, self.k)
        if last:
            self.elr = elr
        if self.warming:
            w = subcritical_factor(elr * self.lrs) * (1.0 - self.momentum)
            w = torch.where(torch.isfinite(w), w, torch.ones_like(w)).clamp(max=1.0)
            self.done |= w >= 1.0
            self.factor = torch.where(self.done, torch.ones_like(w), w).to(self.factor.dtype)
            self.factor_sum += self.factor
            self.steps += 1
            self._before = [p.detach().clone() for p in self.weights]

    @torch.no_grad()
    def after_update(self) -> None:
        """After the optimizer's step: scale the scale-invariant weights' update by the factor."""
        if not self.warming:
            return
        keep = 1.0 - self.factor  # the share of the old weights: 0 once a member's warm-up ended
        for p, old in zip(self.weights, self._before):
            share = keep.to(p.dtype).repeat_interleave(p.shape[0] // self.k).view(-1, *([1] * (p.dim() - 1)))
            p.lerp_(old, share)
        self._before = []

    def freeze(self, member: int) -> None:
        """A diverged member: its warm-up is over."""
        self.done[member] = True

    def end_epoch(self) -> list[dict[str, Any]]:
        """Each member's history fields of the epoch (``elr``, ``elr_spread``; ``warmup_factor``, the
        mean factor of its steps, under the warm-up), in one host read; ends the warm-up once every
        member's has."""
        if not self.weights or self.elr is None:
            return [{} for _ in range(self.k)]
        steps = max(self.steps, 1)
        mean_factor = self.factor_sum / steps if self.steps else torch.ones_like(self.factor_sum)
        rows = torch.cat([self.elr, relative_spread(self.elr)[None], mean_factor[None].to(self.elr.dtype),
                          self.done[None].to(self.elr.dtype)]).T.tolist()  # the epoch's one read
        if self.warming and all(row[-1] for row in rows):
            self.warming = False
        out = []
        for row in rows:
            # 4 significant digits per layer: a 200-epoch record of ~100 layers stays ~150 kB of JSON
            entry: dict[str, Any] = {"elr": [float(f"{v:.4g}") for v in row[:len(self.weights)]],
                                     "elr_spread": row[len(self.weights)]}
            if self.configured:
                entry["warmup_factor"] = row[len(self.weights) + 1]
            out.append(entry)
        return out

    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps: which members' warm-up has ended."""
        return {"done": [bool(d) for d in self.done.tolist()]}

    def load(self, state: dict[str, Any] | None) -> None:
        """Restore :meth:`state` (a checkpoint without one: nothing ended yet)."""
        if state is None:
            return
        self.done.copy_(torch.tensor([bool(d) for d in state["done"]], device=self.done.device))
        self.warming = self.configured and not bool(self.done.all())


WARMUP_RULES.add("elr_subcritical", ElrControl)  # Mehmeti-Göpel & Wand's subcritical warm-up (Cor. 3.10)

_HAS_LAYERS: dict[tuple[str, str], bool] = {}  # (family digest, arch) -> has a scale-invariant layer


def require_warmup_layers(protocol: Protocol, arch: str, family: CellFamily, key: str = "protocol.warmup_rule", *,
                          graph: nx.DiGraph | None = None) -> None:
    """A :class:`ConfigError` naming ``key`` when ``protocol`` asks for an ELR warm-up and the
    network of ``arch`` (canonical string) in ``family`` has no scale-invariant layer to warm up.
    The network is built once per family and architecture, at the smallest size, from ``graph``
    (the canonical graph of ``arch``, where the caller has it; else ``arch`` is parsed), to read
    its structure; nothing is trained."""
    if protocol.warmup_rule is None:
        return
    WARMUP_RULES.get(protocol.warmup_rule, key)
    cache = (family.digest(), arch)
    if cache not in _HAS_LAYERS:
        size = dict.fromkeys(macro_settings(family), 1)
        net = build_model(arch if graph is None else graph, family, 2, in_shape=(3, 8, 8), **size)
        _HAS_LAYERS[cache] = bool(scale_invariant_convs(net))
    if not _HAS_LAYERS[cache]:
        raise ConfigError(f"{key}: {protocol.warmup_rule!r} warms up scale-invariant layers (a conv directly followed "
                          f"by BatchNorm), and the networks of family {family.name!r} have none; drop warmup_rule "
                          "for this family or train a family with BatchNorm")
