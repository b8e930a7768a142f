"""The init rules a protocol may name (``protocol.init``): one registry, one entry per rule.

An :class:`InitRule` says everything about its rule: how it draws each conv/linear weight from
what the scaling map knows of that weight (:class:`WeightSite`, read once per network by
:func:`~nasrescale.models.scaling_map.build_scaling_map`), the LR factor it brings to a weight,
whether it prepares a network its own way instead (μP), which optimizer trains it, and its
description (what a report's method table prints). Rules that need more than this layer holds
(μP's base shapes and optimizer) are registered from :mod:`nasrescale.scaling.init_rules`.

Every rule that draws weights (``weight_spec``) sets biases to 0 and BatchNorm to weight 1 and
bias 0, as the paper's released code does.

>>> rule = INIT_REGISTRY.get("in_degree_source")
>>> rule.weight_spec(WeightSite("edge", 3.0, 2.0, "fan_in", (16, 16, 3, 3))).divisor  # the source's in-degree
2.0
>>> INIT_REGISTRY.get("default").weight_spec is None  # PyTorch's own init: nothing drawn
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import nn

from ..protocol import Protocol
from ..registry import Registry
from .init_spec import InitSpec

__all__ = ["WeightSite", "InitRule", "Prepare", "INIT_REGISTRY", "register_init_rule", "weight_rules"]

#: ``prepare(model, rebuild, protocol, width)``: puts a built ``model`` in place into the rule's
#: parametrization; ``rebuild(width)`` builds the same network at another width
Prepare = Callable[[nn.Module, Callable[[int], nn.Module], Protocol, int], Any]


@dataclass(frozen=True)
class WeightSite:
    """What an init rule reads of one conv/linear weight.

    Attributes:
        role: ``stem``, ``edge``, ``skeleton`` or ``readout``.
        target_divisor: the in-degree of the node the weight writes into (the paper's text).
        source_divisor: the released code's divisor (the source node's raw in-degree).
        released_fan_mode: the released code's fan mode for this network (``fan_in`` or ``fan_out``).
        shape: the weight's shape (``C_out, C_in, k, k`` or ``out, in``).
    """

    role: str
    target_divisor: float
    source_divisor: float
    released_fan_mode: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class InitRule:
    """One value of ``protocol.init``.

    Attributes:
        name: the value.
        description: the rule in words, as a report's method table prints it (empty: its name).
        weight_spec: how the rule draws a conv/linear weight; ``None``: it draws none through the
            scaling map (PyTorch's own init, or a rule with its own ``prepare``).
        lr_factor: the LR factor the rule brings to a conv/linear weight (``None``: 1).
        prepare: puts a built network into the rule's parametrization (see :data:`Prepare`);
            ``None``: the weights are drawn by ``weight_spec``
            (:func:`nasrescale.scaling.init.apply_init`).
        optimizer: ``factory(param_groups, lr=, momentum=, nesterov=, weight_decay=)``;
            ``None``: ``torch.optim.SGD``.
        fusable: runs may train as members of one fused network (plain SGD per member).
        scales_lr: the protocol's ``lr`` is a base LR that the rule scales, even under the
            ``fixed`` LR rule.
    """

    name: str
    description: str = ""
    weight_spec: Callable[[WeightSite], InitSpec] | None = None
    lr_factor: Callable[[WeightSite], float] | None = None
    prepare: Prepare | None = None
    optimizer: Callable[..., torch.optim.Optimizer] | None = None
    fusable: bool = True
    scales_lr: bool = False


#: the registered rules, by ``protocol.init``
INIT_REGISTRY: Registry[InitRule] = Registry(
    "protocol.init", "init rules",
    hint="register a rule with nasrescale.scaling.init_rules.register_init_rule (docs/protocols.md)")


def register_init_rule(rule: InitRule) -> InitRule:
    """Add ``rule`` to :data:`INIT_REGISTRY` (replacing one of the same name); returns it."""
    return INIT_REGISTRY.add(rule.name, rule)


def weight_rules() -> tuple[str, ...]:
    """The rules that work on a built network's weights alone (no ``prepare`` of their own):
    PyTorch's ``default`` and every rule drawn through the scaling map, in registration order.

    >>> weight_rules()[0]
    'default'
    """
    return tuple(name for name, rule in INIT_REGISTRY.items() if rule.prepare is None)


def _in_degree(site: WeightSite) -> InitSpec:
    if site.role == "readout":  # variance 2 / n^2 (paper eq. 2)
        return InitSpec(divisor=float(site.shape[1]))
    return InitSpec(divisor=site.target_divisor)


def _in_degree_source(site: WeightSite) -> InitSpec:
    if site.role == "readout":  # std 2 / fan in the released code's fan mode
        return InitSpec(fan_mode=site.released_fan_mode, power=2)
    return InitSpec(divisor=site.source_divisor, fan_mode=site.released_fan_mode)


def _fan_ratio(site: WeightSite) -> float:
    """``fan_out / fan_in`` (the kernel's ``k^2`` cancels)."""
    return site.shape[0] / site.shape[1]


register_init_rule(InitRule("default", "PyTorch default"))
register_init_rule(InitRule("in_degree", "`in_degree`: by the target layer's in-degree (the paper's text)",
                            weight_spec=_in_degree))
register_init_rule(InitRule("in_degree_source",
                            "`in_degree_source`: by the source node's in-degree (the released code)",
                            weight_spec=_in_degree_source))
register_init_rule(InitRule("spectral", weight_spec=lambda site: InitSpec(spectral=True), lr_factor=_fan_ratio,
                            scales_lr=True))
