"""The per-parameter scaling map (mup style): how each parameter is initialized and how its
learning rate is scaled, decided once per network from the topology functions.

:meth:`CellNetwork.scaling_map <nasrescale.models.CellNetwork.scaling_map>` builds it (on
first use, then cached); :func:`nasrescale.scaling.apply_init` and
:func:`nasrescale.scaling.param_groups` only read it. Every parameter of the network has an
entry (a parameter the map cannot place is an error, not a silent default).

**Init** (rules ``in_degree`` and ``in_degree_source``; ``default`` leaves PyTorch's init):
a conv/linear weight is drawn ``N(0, std^2)`` with ``std = sqrt(2 / (fan * divisor)) ** power``
(``fan`` = fan-in or fan-out, ``power`` 2 only for the released code's readout); biases are
0, BatchNorm weights 1 and biases 0. Divisors by layer role:

==================  ===========================  ===================================
role                ``in_degree`` (target)       ``in_degree_source`` (released code)
==================  ===========================  ===================================
stem                1                            1
cell edge u->v      effective in-degree of v     raw in-degree of u (inputs: 1)
                    (a layer inside the op that  (likewise 1)
                    does not write into v: 1)
skeleton conv       in-degree of the node it     the released code's own divisor
(NB201 reduction    writes into: conv_a 1,       (conv_a 2, conv_b 1, shortcut 2)
block)              conv_b 2, shortcut 2
readout             fan_in (variance 2/n^2,      1 with power 2 (std 2/fan: NB201
                    paper eq. 2)                 2/fan_in; MLP/CNN 2/classes = 0.2)
==================  ===========================  ===================================

The target rule follows the paper's derivation (Appendix A: a weight is divided by the
in-degree of the node it writes into; the reduction block's output node sums two branches)
and its eq. 2 readout; the source rule reproduces the released code, whose readout std is
``2/fan`` in its fan mode: ``2/fan_in`` on NB201 (variance ``4/n^2``), ``2/fan_out`` =
``2/classes`` (0.2 for 10 classes, at any width) on the MLP/CNN DAG nets. The fan mode is ``fan_in`` for the target rule and the network's
``released_fan_mode`` for the source rule (``fan_in`` NB201, ``fan_out`` MLP/CNN DAG nets).

**Spectral init and LR** (rule ``spectral``; Yang, Simon & Bernstein, *A Spectral Condition
for Feature Learning*, §4 Parametrization 1): a conv/linear weight is drawn with
``std = sqrt(2 / fan_in) * min(1, sqrt(fan_out / fan_in))`` and trained at ``fan_out / fan_in``
times the base LR (``rule_lr["spectral"]``), with PyTorch's fans: ``fan_in = C_in k^2``,
``fan_out = C_out k^2`` for a ``k x k`` conv (so its LR factor is ``C_out / C_in``). Biases
are 0, BatchNorm 1 and 0, both at LR factor 1 (docs/protocols.md says why).

**LR factor** (paper eq. 9, by kernel rule): ``none`` 1 everywhere; ``network`` the cell's
``q_base / q`` on every parameter (one LR for the whole network, as the paper's single
param group); ``per_layer`` ``q_base / q_e`` on the weight and bias of each *cell-edge* conv
(its own kernel ``q_e``), 1 on everything else. ``network`` is the paper's eq. 9 (one q per
network); ``per_layer`` is this project's extension, not in the paper. Skeleton convs (stem, NB201's reduction
blocks and 1x1 shortcut) keep 1 under ``per_layer``: they are the same in every
architecture of the family, its base architecture included, and the LR scale is relative to
that base, so their factor relative to it is 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Protocol

import networkx as nx
from torch import nn

from ..errors import ConfigError
from ..space.families import CellFamily
from ..space.edge_factors import KERNEL_RULES, edge_kernel_factors, init_divisors, kernel_factor
from .init_registry import INIT_REGISTRY, WeightSite
from .init_spec import InitSpec

__all__ = ["InitSpec", "ParamScale", "MappedNetwork", "build_scaling_map"]


class MappedNetwork(Protocol):
    """What the map reads of a network; :class:`~nasrescale.models.network.CellNetwork` is one
    (the network imports this module, never the reverse)."""

    graph: nx.DiGraph
    family: CellFamily
    stem: nn.Module
    readout: nn.Module
    released_fan_mode: str

    def cells(self) -> list[Any]: ...

    def skeleton_init_divisors(self) -> dict[nn.Module, tuple[float, float]]: ...

    def named_modules(self) -> Iterator[tuple[str, nn.Module]]: ...

_WEIGHTED = (nn.Conv2d, nn.Linear)


@dataclass(frozen=True)
class ParamScale:
    """The map's entry for one parameter.

    Attributes:
        module: qualified name of the module owning the parameter.
        role: ``stem``, ``edge``, ``skeleton``, ``readout`` or ``norm``.
        edge: the cell edge ``(u, v)`` for role ``edge``, else ``None``.
        kernel: the owning conv's kernel size ``q`` (``None`` if not a conv).
        init: init rule -> :class:`InitSpec`, for every registered rule that draws weights
            (:data:`~nasrescale.models.init_registry.INIT_REGISTRY` entries with a ``weight_spec``).
        lr_factors: kernel rule -> LR factor (paper eq. 9).
        rule_lr: init rule -> the LR factor that rule brings (its entry's ``lr_factor``;
            ``spectral``: ``fan_out / fan_in`` of a weight); a rule not listed brings 1.
    """

    module: str
    role: str
    edge: tuple[int, int] | None
    kernel: int | None
    init: Mapping[str, InitSpec] = field(default_factory=dict)
    lr_factors: Mapping[str, float] = field(default_factory=dict)
    rule_lr: Mapping[str, float] = field(default_factory=dict)


def _owner_roles(net: MappedNetwork) -> dict[nn.Module, tuple[str, tuple[int, int] | None, tuple[float, float]]]:
    """Each conv/linear module -> (role, edge, (target divisor, source divisor))."""
    roles: dict[nn.Module, tuple[str, tuple[int, int] | None, tuple[float, float]]] = {}
    target = init_divisors(net.graph, net.family, "target")
    source = init_divisors(net.graph, net.family, "source")
    for m in net.stem.modules():
        if isinstance(m, _WEIGHTED):
            roles[m] = ("stem", None, (1.0, 1.0))
    for cell in net.cells():
        for edge, op in cell.edge_items():
            # an op whose inner layers feed a chain (DARTS's sep_conv) names the ones that write into the sum
            summands = set(op.summand_layers()) if hasattr(op, "summand_layers") else None
            for m in op.modules():
                if isinstance(m, _WEIGHTED):
                    inner = summands is not None and m not in summands
                    roles[m] = ("edge", edge, (1.0, 1.0) if inner else (float(target[edge]), float(source[edge])))
    for m, divisors in net.skeleton_init_divisors().items():
        roles[m] = ("skeleton", None, divisors)
    roles[net.readout] = ("readout", None, (1.0, 1.0))
    return roles


def build_scaling_map(net: MappedNetwork) -> dict[str, ParamScale]:
    """The scaling map of ``net``: parameter name -> :class:`ParamScale`.

    Raises:
        ConfigError: if a parameter belongs to a module the map cannot place (a network
            skeleton must declare its extra conv/linear layers in ``skeleton_init_divisors``).
    """
    roles = _owner_roles(net)
    graph, family = net.graph, net.family
    edge_factors = {rule: edge_kernel_factors(graph, family, rule) for rule in KERNEL_RULES}
    # outside cell-edge convs: the one network-wide factor under `network`, else 1
    shared = {rule: kernel_factor(graph, family, rule) for rule in KERNEL_RULES}
    released = net.released_fan_mode
    rules = [rule for rule in INIT_REGISTRY.values() if rule.weight_spec is not None]
    entries: dict[str, ParamScale] = {}
    for mod_name, m in net.named_modules():
        own = list(m.named_parameters(recurse=False))
        if not own:
            continue
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            for p_name, _ in own:
                spec = InitSpec(constant=1.0 if p_name == "weight" else 0.0)
                entries[f"{mod_name}.{p_name}"] = ParamScale(mod_name, "norm", None, None,
                                                             {r.name: spec for r in rules},
                                                             {r: shared[r] for r in KERNEL_RULES})
            continue
        if m not in roles:
            raise ConfigError(
                f"{type(net).__name__}: parameter(s) of module {mod_name!r} ({type(m).__name__}) are not in the "
                "scaling map; a network skeleton declares its conv/linear layers outside the stem, cells and "
                "readout in skeleton_init_divisors(), and uses only BatchNorm besides")
        role, edge, (d_target, d_source) = roles[m]
        kernel = max(m.kernel_size) if isinstance(m, nn.Conv2d) else None
        site = WeightSite(role, d_target, d_source, released, tuple(m.weight.shape))
        weight_init = {r.name: r.weight_spec(site) for r in rules}  # type: ignore[misc]
        weight_lr = {r.name: r.lr_factor(site) for r in rules if r.lr_factor is not None}
        factors = {}
        for rule, entry in KERNEL_RULES.items():
            per_edge = entry.per_edge and role == "edge" and kernel is not None
            factors[rule] = edge_factors[rule].get(edge, 1.0) if per_edge else shared[rule]
        for p_name, _ in own:
            weight = p_name == "weight"
            init = weight_init if weight else {r.name: InitSpec(constant=0.0) for r in rules}
            entries[f"{mod_name}.{p_name}"] = ParamScale(mod_name, role, edge, kernel, init, factors,
                                                         weight_lr if weight else {})
    return entries

