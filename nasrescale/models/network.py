"""Networks around a cell, and :func:`build_model`, which picks one by the family's macro.

A family file's ``[macro]`` table names the network skeleton (``kind``) and its settings
(``width``, and for NB201 ``cells``; ``norm``, every skeleton's: :mod:`.norms`). Each skeleton registers itself with
:func:`register_macro`, declaring the settings it accepts; :func:`build_model` checks the
table against them, applies the caller's overrides and calls the skeleton's factory.
Size settings are positive integers.

>>> from nasrescale.space.family_loader import get_family
>>> net = build_model("3_33_333", get_family("nb201"), width=4, cells=1)
>>> type(net).__name__, len(net.cells()), net.released_fan_mode
('NB201Network', 3, 'fan_in')
>>> entry = net.scaling_map()["body.0.edges.0_1.1.weight"]  # edge 0->1's conv, first cell
>>> entry.role, entry.edge, entry.kernel, entry.init["in_degree_source"].divisor
('edge', (0, 1), 3, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

import networkx as nx
from torch import nn

from ..registry import Registry
from ..errors import ConfigError
from ..space.encodings import parse_arch
from ..space.families import CellFamily
from .cell import Cell
from .norms import apply_norm, family_norm
from .scaling_map import ParamScale, build_scaling_map

__all__ = ["CellNetwork", "MacroFactory", "Macro", "MACROS", "register_macro", "macro_kinds", "macro_settings",
           "build_model"]


class CellNetwork(nn.Module):
    """Base class of every network built around a cell.

    Subclasses set :attr:`stem` and :attr:`readout` and hold their cells as submodules; a
    skeleton with further conv/linear layers declares their init divisors in
    :meth:`skeleton_init_divisors` (BatchNorm needs no declaration).

    Attributes:
        graph: the cell graph every cell of the network uses.
        family: the cell family.
        stem: the module applied to the input first.
        readout: the final ``nn.Linear`` (logits).
        released_fan_mode: fan mode the paper's released code initializes this network with
            (``"fan_in"`` or ``"fan_out"``); the init rules read it.
    """

    released_fan_mode: ClassVar[str] = "fan_in"
    stem: nn.Module
    readout: nn.Linear

    def __init__(self, graph: nx.DiGraph, family: CellFamily) -> None:
        super().__init__()
        self.graph = graph
        self.family = family

    def cells(self) -> list[Cell]:
        """The network's cells, in forward order."""
        return [m for m in self.modules() if isinstance(m, Cell)]

    def trunk(self) -> list[tuple[str, nn.Module]]:
        """The network as a chain of blocks in forward order, ``(name, module)``: each block's
        output is the next one's only way to the loss, and every parameter is in one block (what
        the feature-speed diagnosis reads, :mod:`nasrescale.scaling.feature_speed`). Here: stem,
        each cell, readout; a skeleton with more between them overrides it."""
        return [("stem", self.stem), *[(f"cell{i}", c) for i, c in enumerate(self.cells())], ("readout", self.readout)]

    def skeleton_init_divisors(self) -> dict[nn.Module, tuple[float, float]]:
        """Conv/linear layers outside the stem, cells and readout -> their init divisors
        ``(target rule, released code)``; see :mod:`~nasrescale.models.scaling_map`. None here."""
        return {}

    def scaling_map(self) -> dict[str, ParamScale]:
        """Parameter name -> how it is initialized and LR-scaled (built on first call, then
        cached; :mod:`~nasrescale.models.scaling_map`). The init and LR rules read only this."""
        cached = self.__dict__.get("_scaling_map")
        if cached is None:
            cached = self.__dict__["_scaling_map"] = build_scaling_map(self)
        return cached


#: ``factory(graph, family, *, num_classes, in_shape, prune, **settings) -> CellNetwork``
MacroFactory = Callable[..., CellNetwork]


@dataclass(frozen=True)
class Macro:
    """A registered skeleton: its factory and the settings the ``[macro]`` table may give
    besides ``kind``."""

    factory: MacroFactory
    keys: tuple[str, ...]


#: the registered skeletons, by ``[macro] kind``
MACROS: Registry[Macro] = Registry("macro.kind", "macro kinds", unique=True,
                                    hint="a new skeleton registers itself with nasrescale.models.register_macro")


def register_macro(kind: str, keys: tuple[str, ...]) -> Callable[[MacroFactory], MacroFactory]:
    """Decorator registering a network skeleton for ``[macro] kind = "<kind>"``.

    Args:
        kind: the macro kind name.
        keys: the settings the skeleton takes (positive integers), e.g. ``("width", "cells")``;
            each must be in the family's ``[macro]`` table or passed to :func:`build_model`.

    Returns:
        A decorator that registers the factory and returns it unchanged.

    Raises:
        ConfigError: if another factory is registered under ``kind``.
    """
    return MACROS.decorator(kind, lambda factory: Macro(factory, tuple(keys)))


def macro_kinds() -> dict[str, tuple[str, ...]]:
    """Registered macro kinds and the settings each accepts."""
    return {kind: macro.keys for kind, macro in MACROS.items()}


def _positive_int(value: Any, where: str, fix: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{where}: expected a positive integer, got {value!r}; {fix}")
    return value


def _settings(family: CellFamily, overrides: Mapping[str, int | None]) -> tuple[Macro, dict[str, int]]:
    """Check ``family.macro`` and merge the overrides into the factory's settings."""
    source = str(family.source) if family.source is not None else f"family {family.name!r}"
    table = dict(family.macro)
    kind = table.pop("kind", None)
    table.pop("norm", None)  # every skeleton's (nasrescale.models.norms), applied by build_model
    if kind is None:
        raise ConfigError(f"{source}: macro.kind: missing; set it to one of: {', '.join(MACROS)}")
    macro = MACROS.get(kind, f"{source}: macro.kind")
    allowed = ", ".join(("kind", "norm") + macro.keys)
    for key in table:
        if key not in macro.keys:
            raise ConfigError(f"{source}: macro.{key}: unknown key; allowed: {allowed}")
    settings: dict[str, int] = {}
    for key in macro.keys:
        value = overrides.get(key)
        if value is not None:
            settings[key] = _positive_int(value, f"{key}=", f"pass a positive integer {key}")
        elif key in table:
            settings[key] = _positive_int(table[key], f"{source}: macro.{key}", "fix the family file")
        else:
            raise ConfigError(f"{source}: macro.{key}: missing; add `{key} = <positive integer>` "
                              f"to the [macro] table or pass {key}=")
    for key, value in overrides.items():
        if value is not None and key not in macro.keys:
            raise ConfigError(f"{key}={value!r}: macro kind {kind!r} of family {family.name!r} has no "
                              f"{key!r} setting; its settings: {', '.join(macro.keys) or 'none'}")
    return macro, settings


def macro_settings(family: CellFamily, width: int | None = None, cells: int | None = None) -> dict[str, int]:
    """The size settings :func:`build_model` would use and a caller can override, ``width`` and
    ``cells`` (those the skeleton takes): the family's ``[macro]`` values with the overrides
    applied. A skeleton's other settings (DARTS's ``stem_multiplier``, NB101's ``stacks``) come
    from the family file only.

    >>> from nasrescale.models import macro_settings
    >>> from nasrescale.space.family_loader import get_family
    >>> macro_settings(get_family("nb201")), macro_settings(get_family("nb201"), width=4, cells=1)
    ({'width': 16, 'cells': 5}, {'width': 4, 'cells': 1})

    Raises:
        ConfigError: as :func:`build_model` for a bad macro table or override.
    """
    settings = _settings(family, {"width": width, "cells": cells})[1]
    return {key: value for key, value in settings.items() if key in ("width", "cells")}


def build_model(
    arch: str | nx.DiGraph,
    family: CellFamily,
    num_classes: int = 10,
    *,
    in_shape: tuple[int, int, int] = (3, 32, 32),
    width: int | None = None,
    cells: int | None = None,
    prune: bool = True,
) -> CellNetwork:
    """Build the network of ``arch`` in ``family``'s macro skeleton.

    Args:
        arch: architecture string (any encoding), parsed here, or the canonical graph (what
            :func:`~nasrescale.space.encodings.parse_arch` returns, a job's ``graph``), used as
            given: it is not checked again (:func:`~nasrescale.space.encodings.as_graph` checks
            a graph built by hand).
        family: its cell family; ``family.macro["kind"]`` selects the skeleton.
        num_classes: outputs of the readout.
        in_shape: ``(channels, height, width)`` of one input image.
        width: overrides ``macro.width`` (NB201: C, the first stage's channels).
        cells: overrides ``macro.cells`` (NB201: N, cells per stage); only for skeletons with cells.
        prune: cells skip provably-zero and dead work (same outputs; see :mod:`.cell`).

    Returns:
        The network, in train mode, with PyTorch's default initialization.

    Raises:
        ArchError: if ``arch`` is malformed for the family.
        ConfigError: if the macro table or an argument is invalid (the message names which).
    """
    graph = arch if isinstance(arch, nx.DiGraph) else parse_arch(arch, family)
    macro, settings = _settings(family, {"width": width, "cells": cells})
    _positive_int(num_classes, "num_classes", "pass the number of classes")
    if not (isinstance(in_shape, (tuple, list)) and len(in_shape) == 3):
        raise ConfigError(f"in_shape: expected (channels, height, width), got {in_shape!r}")
    shape = tuple(_positive_int(s, "in_shape", "give (channels, height, width)") for s in in_shape)
    norm = family_norm(family)
    model = macro.factory(graph, family, num_classes=num_classes, in_shape=shape, prune=prune, **settings)
    return apply_norm(model, norm)
