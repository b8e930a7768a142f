"""Initialization rules, applied in place to a built :class:`~nasrescale.models.CellNetwork`.

* ``default`` -- PyTorch's default init, untouched (the NB201 benchmark's init).
* ``in_degree`` -- DESIGN.md §2 / paper Appendix A eq. 17: every conv/linear weight on cell
  edge ``(u, v)`` drawn from ``N(0, 2 / (fan_in * d_in(v)))`` with ``d_in(v)`` the effective
  in-degree of the *target* node; the stem He fan-in ``N(0, 2 / fan_in)``; the readout
  mean-field ``std = 2 / fan_in`` (variance ``4 / n^2``, paper eq. 2); biases 0; BatchNorm
  weight 1, bias 0 on the initialized parts.
* ``in_degree_source`` -- the paper's released code: the divisor is the raw in-degree of the
  edge's *source* node, and the fan is the code's own choice (``fan_in`` for NB201, ``fan_out``
  for the MLP/CNN DAG nets, ``CellNetwork.released_fan_mode``).

Both in-degree rules leave NB201's reduction blocks (and the head BatchNorm, already 1/0) at
PyTorch's default, as the released code does, so the two rules differ only in the divisor
and fan. In NB201 every cell conv is followed by BatchNorm, so the init scale changes the
effective learning rate of that conv (eta / |W|^2), not the forward signal; ``nasrescale
diagnose`` shows both effects.
"""

from __future__ import annotations

import math
from typing import Iterable

import torch
from torch import nn

from ..errors import ConfigError
from ..topology import init_divisors

__all__ = ["INIT_RULES", "apply_init", "he_normal_"]

INIT_RULES = ("default", "in_degree", "in_degree_source")

_WEIGHTED = (nn.Conv2d, nn.Linear)


def _fan(weight: torch.Tensor, mode: str) -> int:
    """Fan-in or fan-out of a conv/linear weight (``in * k * k`` or ``out * k * k``)."""
    receptive = weight[0, 0].numel() if weight.dim() > 2 else 1
    return (weight.shape[1] if mode == "fan_in" else weight.shape[0]) * receptive


@torch.no_grad()
def he_normal_(module: nn.Module, fan_mode: str = "fan_in", divisor: float = 1.0, power: int = 1) -> None:
    """Draw ``module.weight`` from ``N(0, std^2)`` with ``std = (sqrt(2 / (fan * divisor)))^power``
    and zero its bias. ``power = 2`` is the mean-field readout scale (``std = 2 / fan``)."""
    std = math.sqrt(2.0 / (_fan(module.weight, fan_mode) * divisor)) ** power
    module.weight.normal_(0.0, std)
    if module.bias is not None:
        module.bias.zero_()


@torch.no_grad()
def _reset_norms(modules: Iterable[nn.Module]) -> None:
    for m in modules:
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.affine:
            m.weight.fill_(1.0)
            m.bias.zero_()


def apply_init(model: nn.Module, rule: str) -> nn.Module:
    """Initialize ``model`` (a ``CellNetwork``) in place under ``rule``; returns it.

    Raises:
        ConfigError: naming the known rules, if ``rule`` is unknown.
    """
    if rule not in INIT_RULES:
        raise ConfigError(f"unknown init rule {rule!r}; known rules: {', '.join(INIT_RULES)}")
    if rule == "default":
        return model
    released = rule == "in_degree_source"
    fan_mode = model.released_fan_mode if released else "fan_in"
    divisors = init_divisors(model.graph, model.family, "source" if released else "target")

    for m in model.stem.modules():
        if isinstance(m, _WEIGHTED):
            he_normal_(m, fan_mode)
    _reset_norms(model.stem.modules())
    for cell in model.cells():
        for edge, op_module in cell.edge_items():
            for m in op_module.modules():
                if isinstance(m, _WEIGHTED):
                    he_normal_(m, fan_mode, divisors[edge])
            _reset_norms(op_module.modules())
    he_normal_(model.readout, fan_mode, power=2)
    return model
