"""Learning rates: parameter groups for a stock ``torch.optim.SGD``.

Under LR rule ``fixed`` (the NB201 protocol) every parameter is in one group at the
protocol's ``lr``. Under ``path_depth`` (the rescaled protocol, paper eq. 8) a parameter's
LR is ``base_lr * lr_scale(arch)`` times its kernel factor (paper eq. 9) under the kernel
rule, read from the network's scaling map (:mod:`nasrescale.models.scaling_map`): ``none``
1; ``network`` ``q_base / q`` with q the largest effective conv kernel of the cell, on every
parameter; ``per_layer`` each cell-edge conv's own ``q_base / q`` on its weight and bias,
1 elsewhere (stem, reduction blocks and shortcut convs, BatchNorm, readout). Parameters are
grouped by factor; with one factor there is one group, as in the paper's released code
(one SGD group over every parameter at the scaled LR).

A degenerate cell has no paths and hence no scale; it trains at ``base_lr`` (scale taken as
1, ``LrPlan.lr_scale`` is ``None``) so a benchmark-wide run never stops on one.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from ..protocol import Protocol
from ..space.topology import kernel_factor, lr_scale
from .init import require_cell_network

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
    """The LR derivation for ``model`` (a ``CellNetwork``) under ``protocol``.

    Raises:
        ConfigError: if the protocol has no base LR or ``model`` is not a ``CellNetwork``.
    """
    net = require_cell_network(model, "lr_plan")
    base = protocol.require_lr()
    if protocol.lr_rule == "fixed":
        return LrPlan(base, None, "none", 1.0, base)
    graph, family = net.graph, net.family
    rule = family.kernel_rule if protocol.kernel_rule == "family" else protocol.kernel_rule
    scale = lr_scale(graph, family)
    factor = kernel_factor(graph, family, rule)
    return LrPlan(base, scale, rule, factor, base * (1.0 if scale is None else scale) * factor)


def param_groups(model: nn.Module, protocol: Protocol) -> list[dict]:
    """Parameter groups (``params``, ``lr``, ``kernel_factor``) for ``torch.optim.SGD``, one per
    distinct LR factor; weight decay and momentum come from the protocol through the
    optimizer's defaults.

    >>> from nasrescale.protocol import load_protocol
    >>> from nasrescale.models import build_model
    >>> from nasrescale.space.registry import get_family
    >>> net = build_model("2_22_222", get_family("nb201"), width=4, cells=1)  # all nor_conv_1x1
    >>> groups = param_groups(net, load_protocol("rescaled", ["lr=0.46", "kernel_rule=per_layer"]))
    >>> [(round(g["lr"], 4), g["kernel_factor"], len(g["params"])) for g in groups]  # 3 cells x 6 edge convs
    [(0.041, 1.0, 57), (0.1229, 3.0, 18)]

    Raises:
        ConfigError: if the protocol has no base LR or ``model`` is not a ``CellNetwork``.
    """
    plan = lr_plan(model, protocol)
    scales = model.scaling_map()  # type: ignore[operator]
    by_factor: dict[float, list] = {}
    for name, p in model.named_parameters():
        if p.requires_grad:
            factor = 1.0 if protocol.lr_rule == "fixed" else scales[name].lr_factors[plan.kernel_rule]
            by_factor.setdefault(factor, []).append(p)
    # the network-wide factor is already in plan.lr; the map's factor replaces it
    base = plan.lr / plan.kernel_factor
    return [{"params": ps, "lr": base * f, "kernel_factor": f} for f, ps in sorted(by_factor.items())]
