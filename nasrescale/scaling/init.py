"""Initialization rules, applied in place to a built :class:`~nasrescale.models.CellNetwork`.

The rules are entries of the one init registry
(:data:`~nasrescale.models.init_registry.INIT_REGISTRY`); the built-in weight rules:

* ``default`` -- PyTorch's default init, untouched (the NB201 benchmark's init).
* ``in_degree`` -- docs/design.md §2 / paper Appendix A eq. 17: a weight is drawn
  ``N(0, 2 / (fan_in * d))`` with ``d`` the in-degree of the node it writes into (cell edge
  ``u -> v``: the effective in-degree of ``v``; NB201 reduction block: ``conv_a`` 1,
  ``conv_b`` and the shortcut 2; stem 1); the readout variance ``2 / n^2`` (paper eq. 2).
* ``in_degree_source`` -- the paper's released code, reproduced exactly: cell edges divided
  by the raw in-degree of the *source* node, stem by 1, NB201's reduction block ``conv_a``
  by 2, ``conv_b`` by 1, its 1x1 shortcut by 2, with the code's fan mode (``fan_in`` NB201,
  ``fan_out`` MLP/CNN DAG nets); readout ``std = 2 / fan`` in that mode: ``2 / fan_in`` on
  NB201 (variance ``4 / n^2``), ``2 / classes`` on the MLP/CNN nets (0.2 for 10 classes, at
  any width).

* ``spectral`` -- Yang, Simon & Bernstein, §4 Parametrization 1: a weight is drawn with
  ``std = sqrt(2 / fan_in) * min(1, sqrt(fan_out / fan_in))`` (its LR factor ``fan_out /
  fan_in`` is applied by :func:`~nasrescale.scaling.lr.param_groups`).

The in-degree and spectral rules set every bias to 0 and every BatchNorm to weight 1, bias 0 (as the
released code does). What each parameter gets is read from the network's scaling map
(:meth:`~nasrescale.models.CellNetwork.scaling_map`, table in
:mod:`nasrescale.models.scaling_map`); this module only applies it. In NB201 every conv is
followed by BatchNorm, so the init scale changes the effective learning rate of that conv
(``eta / |W|^2``), not the forward signal; ``nasrescale diagnose`` shows both effects.

>>> import torch
>>> from nasrescale.models import build_model
>>> from nasrescale.space.family_loader import get_family
>>> _ = torch.manual_seed(0)
>>> net = apply_init(build_model("3_33_333", get_family("nb201"), width=8, cells=1), "in_degree_source")
>>> abs(float(net.readout.weight.detach().std()) * 32 / 2 - 1) < 0.1  # std 2 / fan_in, fan_in = 4C = 32
True
"""

from __future__ import annotations

import torch
from torch import nn

from ..errors import ConfigError
from ..models.init_registry import INIT_REGISTRY, weight_rules
from ..models.network import CellNetwork

__all__ = ["apply_init", "weight_rules", "require_cell_network"]


def require_cell_network(model: object, caller: str) -> CellNetwork:
    """``model`` if it is a :class:`CellNetwork`, else a :class:`ConfigError` saying so.

    The scaling rules need the network's cell graph and per-parameter scaling map, which only
    networks built by :func:`nasrescale.models.build_model` have.
    """
    if not isinstance(model, CellNetwork):
        raise ConfigError(f"{caller}: expected a CellNetwork (a network from nasrescale.models.build_model, which "
                          f"carries its cell graph and scaling map), got {type(model).__name__}; the scaling rules "
                          "cannot place the parameters of an arbitrary module")
    return model


@torch.no_grad()
def apply_init(model: nn.Module, rule: str) -> nn.Module:
    """Initialize ``model`` (a :class:`CellNetwork`) in place under ``rule``; returns it.

    ``rule`` is one of :func:`weight_rules` (a registered rule without a ``prepare`` of its own);
    a rule with none of its own draws (``default``) leaves PyTorch's init.

    Raises:
        ConfigError: if ``rule`` is not a weight rule (naming the known ones) or ``model`` is not a
            :class:`CellNetwork`.
    """
    known = weight_rules()
    if rule not in known:
        raise ConfigError(f"unknown init rule {rule!r}; known rules: {', '.join(known)}")
    net = require_cell_network(model, "apply_init")
    if INIT_REGISTRY.get(rule).weight_spec is None:
        return net
    scales = net.scaling_map()
    for name, param in net.named_parameters():
        spec = scales[name].init[rule]
        if spec.constant is not None:
            param.fill_(spec.constant)
        else:
            param.normal_(0.0, spec.std(tuple(param.shape)))
    return net
