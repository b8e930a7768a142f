"""Learning rates: parameter groups for a stock ``torch.optim.SGD``.

Under LR rule ``fixed`` (the NB201 protocol) every parameter is in one group at the
protocol's ``lr``. Under ``path_depth`` (the rescaled protocol, paper eq. 8) the group LR is
``base_lr * lr_scale(arch)`` times the kernel factor (paper eq. 9) of the kernel rule:
``none`` 1; ``network`` ``q_base / q`` with q the largest effective conv kernel of the cell;
``per_layer`` each conv's own ``q_base / q`` (its weight and bias in a group of their own
factor; BatchNorm, linear layers and everything else keep factor 1).

A degenerate cell has no paths and hence no scale; it trains at ``base_lr`` (scale taken as
1, ``LrPlan.lr_scale`` is ``None``) so a benchmark-wide run never stops on one.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from ..protocol import Protocol
from ..topology import kernel_factor, lr_scale

__all__ = ["LrPlan", "lr_plan", "param_groups"]


@dataclass(frozen=True)
class LrPlan:
    """How an architecture's LR was derived.

    Attributes:
        base_lr: the protocol's ``lr`` (``--base-lr``).
        lr_scale: path-depth scale (``None`` under ``fixed`` or for a degenerate cell).
        kernel_rule: the kernel rule applied (``none`` under ``fixed``).
        kernel_factor: the network-wide factor (1 unless the rule is ``network``).
        lr: the LR of parameters outside per-layer conv groups.
    """

    base_lr: float
    lr_scale: float | None
    kernel_rule: str
    kernel_factor: float
    lr: float


def lr_plan(model: nn.Module, protocol: Protocol) -> LrPlan:
    """The LR derivation for ``model`` (a ``CellNetwork``) under ``protocol``."""
    base = protocol.require_lr()
    if protocol.lr_rule == "fixed":
        return LrPlan(base, None, "none", 1.0, base)
    graph, family = model.graph, model.family
    rule = family.kernel_rule if protocol.kernel_rule == "family" else protocol.kernel_rule
    scale = lr_scale(graph, family)
    factor = kernel_factor(graph, family, rule)
    return LrPlan(base, scale, rule, factor, base * (1.0 if scale is None else scale) * factor)


def param_groups(model: nn.Module, protocol: Protocol) -> list[dict]:
    """Parameter groups (``params``, ``lr``) for ``torch.optim.SGD``; weight decay and
    momentum come from the protocol through the optimizer's defaults.

    >>> from nasrescale.protocol import load_protocol
    >>> from torch import nn
    >>> groups = param_groups(nn.Linear(2, 2), load_protocol("nb201"))
    >>> len(groups), groups[0]["lr"], len(groups[0]["params"])
    (1, 0.1, 2)
    """
    params = [p for p in model.parameters() if p.requires_grad]
    if protocol.lr_rule == "fixed":
        return [{"params": params, "lr": protocol.require_lr()}]
    plan = lr_plan(model, protocol)
    if plan.kernel_rule != "per_layer":
        return [{"params": params, "lr": plan.lr}]
    kernel_base = model.family.kernel_base
    factor_of: dict[int, float] = {}
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            for p in m.parameters(recurse=False):
                factor_of[id(p)] = kernel_base / max(m.kernel_size)
    by_factor: dict[float, list] = {}
    for p in params:
        by_factor.setdefault(factor_of.get(id(p), 1.0), []).append(p)
    return [{"params": ps, "lr": plan.lr * f, "kernel_factor": f} for f, ps in sorted(by_factor.items())]
