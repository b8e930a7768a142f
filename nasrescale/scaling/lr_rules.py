"""The LR rules a protocol may name (``protocol.lr_rule``), as one registry.

An :class:`LrRule` says how the protocol's ``lr`` becomes an architecture's LR:

* ``fixed`` -- every architecture trains at the protocol's ``lr`` (NB201's protocol); no
  kernel factor;
* ``path_depth`` -- ``lr * lr_scale(arch)`` (Chen et al., ICLR 2024, eq. 8: the cell's
  ``sum L_p^3`` against the family's base cell), times the kernel factor of the protocol's
  ``kernel_rule`` (eq. 9); the protocol's ``lr`` is then a base LR.

A rule with an ``arch_scale`` scales per architecture; :func:`~nasrescale.scaling.lr.lr_plan`
multiplies the base LR by it and by the kernel factor. Adding a rule is one entry here (or a
:func:`register_lr_rule` call in a module a protocol user imports) plus a protocol file naming
it (docs/protocols.md shows one).

>>> {"fixed", "path_depth"} <= set(LR_RULES.names()), get_lr_rule("path_depth").scales, get_lr_rule("fixed").scales
(True, True, False)
>>> get_lr_rule("linear")
Traceback (most recent call last):
...
nasrescale.errors.ConfigError: protocol.lr_rule: expected one of 'fixed', 'path_depth' (the registered LR rules), got 'linear'; register a rule with nasrescale.scaling.lr_rules.register_lr_rule (docs/protocols.md)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import networkx as nx

from ..errors import ConfigError
from ..protocol import FAMILY_KERNEL_RULE, Protocol
from ..registry import Registry
from ..space.edge_factors import KERNEL_RULES
from ..space.families import CellFamily
from ..space.topology import lr_scale

__all__ = ["LrRule", "LR_RULES", "register_lr_rule", "get_lr_rule", "scales_per_arch", "kernel_rule_of"]

#: ``arch_scale(graph, family)``: the factor of a cell's LR over the base LR (``None``: a cell
#: without paths, trained at the base LR)
ArchScale = Callable[[nx.DiGraph, CellFamily], "float | None"]


@dataclass(frozen=True)
class LrRule:
    """One value of ``protocol.lr_rule``.

    Attributes:
        name: the value.
        arch_scale: the per-architecture factor (see :data:`ArchScale`); ``None``: the
            protocol's ``lr`` is every architecture's LR, with no kernel factor.
        description: the rule in words, as a report's method table prints it.
    """

    name: str
    arch_scale: ArchScale | None = None
    description: str = ""

    @property
    def scales(self) -> bool:
        """Whether the rule scales the protocol's ``lr`` per architecture (a base LR then)."""
        return self.arch_scale is not None


#: the registered rules, by ``protocol.lr_rule``
LR_RULES: Registry[LrRule] = Registry("protocol.lr_rule", "LR rules",
                                      hint="register a rule with nasrescale.scaling.lr_rules.register_lr_rule "
                                           "(docs/protocols.md)")


def register_lr_rule(rule: LrRule) -> LrRule:
    """Add ``rule`` to :data:`LR_RULES` (replacing one of the same name); returns it."""
    return LR_RULES.add(rule.name, rule)


register_lr_rule(LrRule("fixed", description="one global LR"))
register_lr_rule(LrRule("path_depth", lr_scale, description="base LR x the cell's path-depth scale"))

#: the registered rule of a name; an unknown name is a ConfigError listing the registered ones
get_lr_rule = LR_RULES.get


def scales_per_arch(lr_rule: str | None) -> bool:
    """Whether ``lr_rule`` (a stored protocol's value; ``None`` or an unknown name: no) is a
    registered rule that scales per architecture.

    >>> scales_per_arch("path_depth"), scales_per_arch("fixed"), scales_per_arch(None)
    (True, False, False)
    """
    return lr_rule in LR_RULES and LR_RULES.get(lr_rule).scales  # type: ignore[arg-type]


def kernel_rule_of(protocol: Protocol, family: CellFamily) -> str:
    """The kernel rule ``protocol`` applies to ``family``'s networks: its ``kernel_rule``, or
    the family's own under ``family``.

    Raises:
        ConfigError: naming ``protocol.kernel_rule`` and the registered rules.
    """
    name = protocol.kernel_rule
    if name == FAMILY_KERNEL_RULE:
        return family.kernel_rule
    if name not in KERNEL_RULES:
        raise ConfigError(f"protocol.kernel_rule: expected {FAMILY_KERNEL_RULE!r} (the family's own rule) or one of "
                          f"{', '.join(map(repr, KERNEL_RULES))} (the registered kernel rules), got {name!r}")
    return name
