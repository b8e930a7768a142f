"""μP baseline (paper Appendix E.3): Microsoft's ``mup`` package on a nasrescale network.

``init = "mup"`` in a protocol (``protocols/mup.toml``) trains a network in the maximal update
parametrization as the ``mup`` package defines it, at the protocol's LR with ``MuSGD``:

1. the readout ``nn.Linear`` is replaced by ``mup.MuReadout`` (same shape; its forward divides
   by the width multiplier);
2. ``mup.set_base_shapes(model, base, delta=delta)`` marks which dimensions grow with width by
   comparing a *base* model of width ``mup_base_width`` with a *delta* model of twice that
   width (same architecture, cells and classes); it then rescales the readout and the
   biases from PyTorch's default (fan-in) init to μP's;
3. the optimizer is ``mup.MuSGD``, which splits every param group by width multiplier and
   scales its LR and weight decay (input-like and bias-like tensors x ``width_mult``,
   hidden matrices by their fan-in/fan-out multiplier ratio).

At ``width == mup_base_width`` every multiplier is 1: μP then trains exactly like the default
PyTorch parametrization with SGD, as μP is defined relative to its base model. The package is
an optional extra (``pip install 'nasrescale[mup]'``); without it, selecting the protocol is a
:class:`~nasrescale.errors.ConfigError` naming that command.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable

import torch
from torch import nn

from ..errors import ConfigError

__all__ = ["require_mup", "mup_parametrize", "musgd", "INSTALL_HINT"]

INSTALL_HINT = "pip install 'nasrescale[mup]'"


def require_mup() -> ModuleType:
    """The ``mup`` module, or a :class:`ConfigError` naming the install command."""
    try:
        import mup  # optional dependency (the mup extra)
    except ImportError as err:
        raise ConfigError(f"protocol init = \"mup\" needs Microsoft's mup package, which is not installed ({err}); "
                          f"install the extra: {INSTALL_HINT}") from None
    return mup


def _with_mu_readout(net: nn.Module, mup: ModuleType) -> nn.Module:
    """Replace ``net.readout`` (an ``nn.Linear``) by a ``MuReadout`` of the same shape and weights."""
    old = net.readout
    if not isinstance(old, nn.Linear):
        raise ConfigError(f"init = \"mup\": the network's readout is a {type(old).__name__}, not a Linear layer")
    new = mup.MuReadout(old.in_features, old.out_features, bias=old.bias is not None)
    with torch.no_grad():  # keep the drawn init (MuReadout's own is Linear's): the RNG stream is unchanged
        new.weight.copy_(old.weight)
        if old.bias is not None:
            new.bias.copy_(old.bias)
    net.readout = new
    return net


def mup_parametrize(model: nn.Module, build: Callable[[int], nn.Module], base_width: int) -> nn.Module:
    """Put ``model`` in μP (module docstring) in place and return it.

    Args:
        model: the network to train (PyTorch default init, as built); has a ``readout`` Linear.
        build: ``build(width)`` -> the same architecture at another width (the base and delta
            models; only their shapes are read).
        base_width: width of the μP base model (the width the LR was tuned at).

    Raises:
        ConfigError: ``mup`` is not installed, or ``base_width`` is not positive.
    """
    mup = require_mup()
    if base_width < 1:
        raise ConfigError(f"protocol.mup_base_width: must be >= 1, got {base_width}")
    _with_mu_readout(model, mup)
    base = _with_mu_readout(build(base_width), mup)
    delta = _with_mu_readout(build(2 * base_width), mup)
    mup.set_base_shapes(model, base, delta=delta)  # also rescales readout and biases to μP's init
    return model


def musgd(params: Any, **kwargs: Any) -> Any:
    """``mup.MuSGD`` (a ``torch.optim.SGD`` over width-scaled param groups); the engine's
    optimizer for ``init = "mup"``."""
    return require_mup().MuSGD(params, **kwargs)
