"""Normalization layers of a network: kept as built (``batch``) or removed (``none``).

Every NB201 conv is ReLU-Conv-BN, and a conv followed by a BatchNorm is scale-invariant: its
learning rate acts through ``lr / |W|^2`` only, which may absorb an architecture-aware LR rule
(Chen et al., ICLR 2024, name normalization layers as their rule's limitation; their MLP and CNN
validations have none). A family's ``[macro] norm`` chooses, for every skeleton, by name from
:data:`NORMS`:

* ``batch`` (the default) -- the network as its skeleton builds it;
* ``none`` -- every ``BatchNorm1d/2d`` replaced by an identity (its affine shift, the only bias
  of a conv branch, goes with it).

:func:`with_norm` makes the family variant a pipeline's ``budget.norm`` asks for; the key joins
the family's ``[macro]`` table, so the family digest, and every run key, tell the two apart
(``batch`` leaves the family as it is: its runs keep their keys).

>>> from torch import nn
>>> net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
>>> [type(m).__name__ for m in apply_norm(net, "none")]
['Conv2d', 'Identity', 'ReLU']
>>> from nasrescale.space.family_loader import get_family
>>> nb = get_family("nb201")
>>> with_norm(nb, "batch") is nb, with_norm(nb, "none").digest() != nb.digest()
(True, True)
>>> with_norm(nb, "layer")
Traceback (most recent call last):
...
nasrescale.errors.ConfigError: budget.norm: expected one of 'batch', 'none' (the registered normalizations), got 'layer'
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Callable

from torch import nn

from ..registry import Registry
from ..space.families import CellFamily

__all__ = ["NORMS", "DEFAULT_NORM", "apply_norm", "with_norm", "family_norm", "check_norm"]

#: the norm every skeleton builds
DEFAULT_NORM = "batch"

#: ``name -> fn(model) -> model``: what a norm does to a built network
NORMS: Registry[Callable[[nn.Module], nn.Module]] = Registry("budget.norm", "normalizations")


def _strip_batchnorm(model: nn.Module) -> nn.Module:
    for name, child in list(model.named_children()):
        if isinstance(child, (nn.BatchNorm1d, nn.BatchNorm2d)):
            setattr(model, name, nn.Identity())
        else:
            _strip_batchnorm(child)
    return model


NORMS.add("batch", lambda model: model)
NORMS.add("none", _strip_batchnorm)


def check_norm(name: str, where: str = "budget.norm") -> str:
    """``name`` if registered; else a ConfigError naming ``where`` and the registered norms."""
    NORMS.get(name, where)
    return name


def apply_norm(model: nn.Module, name: str) -> nn.Module:
    """``model`` with the normalization ``name`` (in place; returned)."""
    return NORMS.get(check_norm(name, "norm"))(model)


def family_norm(family: CellFamily) -> str:
    """The norm a family's ``[macro]`` table asks for (``batch`` when it names none)."""
    return check_norm(family.macro.get("norm", DEFAULT_NORM), f"family {family.name!r}: macro.norm")


def with_norm(family: CellFamily, name: str, where: str = "budget.norm") -> CellFamily:
    """``family`` whose networks use the normalization ``name`` (itself when it already does)."""
    if check_norm(name, where) == family_norm(family):
        return family
    macro = {k: v for k, v in family.macro.items() if k != "norm"}
    if name != DEFAULT_NORM:
        macro["norm"] = name
    return dataclasses.replace(family, macro=MappingProxyType(macro))
