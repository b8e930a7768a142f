"""The init rules a protocol may name (``protocol.init``), as one registry
(:data:`~nasrescale.models.init_registry.INIT_REGISTRY`, re-exported here with its entry type).

Each :class:`InitRule` says how a freshly built network is put into its parametrization and
which optimizer trains it:

* ``default``, ``in_degree``, ``in_degree_source``, ``spectral`` -- weight init rules
  (:func:`~nasrescale.scaling.init.apply_init`), trained with ``torch.optim.SGD``; ``spectral``
  also scales each weight's LR (``fan_out / fan_in``), so its protocol LR is a base LR;
* ``mup`` -- the μP baseline (:mod:`~nasrescale.scaling.mup_param`): MuReadout and base shapes,
  trained with ``mup.MuSGD``; its protocol LR is a base LR that μP scales, and its runs do not
  fuse (the fused engine steps plain SGD).

:func:`init_model` is the one way a run's network is made: seed, build, apply the rule, derive
the LR plan -- used by a single job and by every member of a fused group alike.

>>> INIT_RULE_NAMES[0], "in_degree_source" in INIT_RULE_NAMES  # PyTorch's own first; one entry per rule
('default', True)
>>> get_init_rule("mup").fusable, get_init_rule("in_degree").scales_lr
(False, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import networkx as nx
import torch
from torch import nn

from ..data.types import ImageData
from ..models import build_model, macro_settings
from ..protocol import Protocol
from ..space.families import CellFamily
from ..models.init_registry import INIT_REGISTRY, InitRule, register_init_rule
from .init import apply_init
from .lr import LrPlan, lr_plan, param_groups
from .lr_rules import LR_RULES, get_lr_rule, kernel_rule_of
from .mup_param import mup_parametrize, musgd

__all__ = ["InitRule", "INIT_REGISTRY", "INIT_RULE_NAMES", "register_init_rule", "get_init_rule", "has_base_lr",
           "check_rules", "InitializedModel", "init_model"]


def _mup_prepare(model: nn.Module, rebuild: Callable[[int], nn.Module], protocol: Protocol, width: int) -> Any:
    return mup_parametrize(model, rebuild, protocol.mup_base_width or width)


register_init_rule(InitRule("mup", prepare=_mup_prepare,
                            optimizer=musgd, fusable=False, scales_lr=True))

#: every valid ``protocol.init``, in order
INIT_RULE_NAMES = INIT_REGISTRY.names()
#: the registered rule of a name; an unknown name is a ConfigError listing the registered ones
get_init_rule = INIT_REGISTRY.get


def has_base_lr(lr_rule: str | None, init: str | None) -> bool:
    """Whether a protocol's ``lr`` is a base LR that something scales (an LR rule that scales
    per architecture, or an init rule that scales the LR: μP, the spectral rule's per-layer
    factors) rather than the LR itself (``fixed``: NB201's 0.1 is no base LR). A stored
    protocol without an LR rule, or with one no longer registered, counts as scaled.

    >>> has_base_lr("path_depth", "in_degree"), has_base_lr("fixed", "default"), has_base_lr("fixed", "spectral")
    (True, False, True)
    """
    if lr_rule not in LR_RULES or LR_RULES.get(lr_rule).scales:  # type: ignore[arg-type]
        return True
    return init in INIT_REGISTRY and INIT_REGISTRY.get(init).scales_lr  # type: ignore[arg-type]


def check_rules(protocol: Protocol, family: CellFamily) -> None:
    """``protocol``'s init, LR and kernel rules are registered; else a ConfigError naming the key
    (``protocol.init``, ``protocol.lr_rule``, ``protocol.kernel_rule``) and the registered names.
    A job checks them when it is made: the protocol layer, below this one, cannot.

    >>> from nasrescale.protocol import load_protocol
    >>> from nasrescale.space.family_loader import get_family
    >>> check_rules(load_protocol("nb201", lr_rule="sqrt"), get_family("nb201"))
    Traceback (most recent call last):
    ...
    nasrescale.errors.ConfigError: protocol.lr_rule: expected one of 'fixed', 'path_depth' (the registered LR rules), got 'sqrt'; register a rule with nasrescale.scaling.lr_rules.register_lr_rule (docs/protocols.md)
    """
    get_init_rule(protocol.init)
    get_lr_rule(protocol.lr_rule)
    kernel_rule_of(protocol, family)


@dataclass
class InitializedModel:
    """A run's network, built and initialized, with its LR plan and optimizer factory."""

    model: nn.Module
    plan: LrPlan
    protocol: Protocol
    optimizer: Callable[..., torch.optim.Optimizer] | None

    def param_groups(self) -> list[dict]:
        """The optimizer's param groups (:func:`~nasrescale.scaling.lr.param_groups`)."""
        return param_groups(self.model, self.protocol, self.plan)


def init_model(arch: str | nx.DiGraph, family: CellFamily, data: ImageData, protocol: Protocol, seed: int, *,
               width: int | None = None, cells: int | None = None) -> InitializedModel:
    """Seed, build, apply ``protocol.init`` and derive the LR plan: how every run starts.

    >>> from nasrescale.space.family_loader import get_family
    >>> from nasrescale.data import load_dataset
    >>> from nasrescale.protocol import load_protocol
    >>> run = init_model("3_33_333", get_family("nb201"), load_dataset("cifar10-subset"),
    ...                  load_protocol("rescaled", ["lr=0.5"]), 1, width=4, cells=1)
    >>> round(run.plan.lr_scale, 4), run.optimizer is None
    (0.0891, True)
    """
    rule = get_init_rule(protocol.init)
    size = macro_settings(family, width, cells)

    def rebuild(w: int) -> nn.Module:
        return build_model(arch, family, data.num_classes, in_shape=data.image_shape, **{**size, "width": w})

    torch.manual_seed(seed)
    model = build_model(arch, family, data.num_classes, in_shape=data.image_shape, **size)
    if rule.prepare is None:
        apply_init(model, rule.name)
    else:
        rule.prepare(model, rebuild, protocol, size.get("width", 0))
    return InitializedModel(model, lr_plan(model, protocol), protocol, rule.optimizer)
