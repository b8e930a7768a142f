"""Learning rates: parameter groups for a stock ``torch.optim.SGD``.

The protocol's LR rule (:mod:`nasrescale.scaling.lr_rules`) says how its ``lr`` becomes the
architecture's. Under ``fixed`` (the NB201 protocol) every parameter is in one group at the
protocol's ``lr``. Under a rule that scales per architecture, ``path_depth`` (the rescaled
protocol, paper eq. 8), a parameter's LR is ``base_lr * lr_scale(arch)`` times its kernel
factor (paper eq. 9) under the kernel rule, read from the network's scaling map
(:mod:`nasrescale.models.scaling_map`): ``none`` 1; ``network`` ``q_base / q`` with q the
largest effective conv kernel of the cell, on every parameter; ``per_layer`` each cell-edge
conv's own ``q_base / q`` on its weight and bias, 1 elsewhere (stem, reduction blocks and
shortcut convs, BatchNorm, readout). Parameters are grouped by factor; with one factor there is
one group, as in the paper's released code (one SGD group over every parameter at the scaled
LR).

An init rule may bring its own per-parameter factor on top (``ParamScale.rule_lr``): under
``init = "spectral"`` every conv/linear weight's LR is multiplied by ``fan_out / fan_in``
(Yang, Simon & Bernstein, §4), whatever the LR rule; under the ``fixed`` rule the protocol's
``lr`` is then that rule's base LR.

A degenerate cell has no paths and hence no scale; it trains at ``base_lr`` (scale taken as
1, ``LrPlan.lr_scale`` is ``None``) so a benchmark-wide run never stops on one.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from ..protocol import Protocol
from ..space.edge_factors import kernel_factor
from .init import require_cell_network
from .lr_rules import get_lr_rule, kernel_rule_of

__all__ = ["LrPlan", "lr_plan", "param_groups"]


@dataclass(frozen=True)
class LrPlan:
    """How an architecture's LR was derived.

    Attributes:
        base_lr: the protocol's ``lr`` (``--base-lr``).
        lr_scale: the LR rule's per-architecture scale (``None`` under ``fixed`` or for a
            degenerate cell).
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
    rule = get_lr_rule(protocol.lr_rule)
    if rule.arch_scale is None:
        return LrPlan(base, None, "none", 1.0, base)
    graph, family = net.graph, net.family
    kernel = kernel_rule_of(protocol, family)
    scale = rule.arch_scale(graph, family)
    factor = kernel_factor(graph, family, kernel)
    return LrPlan(base, scale, kernel, factor, base * (1.0 if scale is None else scale) * factor)


def param_groups(model: nn.Module, protocol: Protocol, plan: LrPlan | None = None) -> list[dict]:
    """Parameter groups (``params``, ``lr``, ``kernel_factor``, ``rule_factor``) for
    ``torch.optim.SGD``, one per distinct pair of factors (kernel rule, init rule); weight decay
    and momentum come from the protocol through the optimizer's defaults. ``plan``: the
    model's :func:`lr_plan`, where the caller has it already (else derived here).

    >>> from nasrescale.protocol import load_protocol
    >>> from nasrescale.models import build_model
    >>> from nasrescale.space.family_loader import get_family
    >>> net = build_model("2_22_222", get_family("nb201"), width=4, cells=1)  # all nor_conv_1x1
    >>> groups = param_groups(net, load_protocol("rescaled", ["lr=0.46", "kernel_rule=per_layer"]))
    >>> [(round(g["lr"], 4), g["kernel_factor"], len(g["params"])) for g in groups]  # 3 cells x 6 edge convs
    [(0.041, 1.0, 57), (0.1229, 3.0, 18)]
    >>> spectral = param_groups(net, load_protocol("spectral", ["lr=0.1"]))  # fan_out / fan_in per weight
    >>> [(round(g["lr"], 4), len(g["params"])) for g in spectral]  # readout 10/16, square convs 1, stem 4/3, C -> 2C 2
    [(0.0625, 1), (0.1, 69), (0.1333, 1), (0.2, 4)]

    Raises:
        ConfigError: if the protocol has no base LR or ``model`` is not a ``CellNetwork``.
    """
    plan = plan if plan is not None else lr_plan(model, protocol)
    scales = model.scaling_map()  # type: ignore[operator]
    by_factor: dict[tuple[float, float], list] = {}
    for name, p in model.named_parameters():
        if p.requires_grad:
            entry = scales[name]
            factor = entry.lr_factors[plan.kernel_rule]  # kernel rule "none" (as under "fixed"): 1
            by_factor.setdefault((factor, entry.rule_lr.get(protocol.init, 1.0)), []).append(p)
    # the network-wide factor is already in plan.lr; the map's factor replaces it
    base = plan.lr / plan.kernel_factor
    return [{"params": ps, "lr": base * f * r, "kernel_factor": f, "rule_factor": r}
            for (f, r), ps in sorted(by_factor.items(), key=lambda item: (item[0][0] * item[0][1], item[0]))]
