"""Parameter and FLOP counts, in NAS-Bench-201's convention.

NB201 reports "FLOPs" as multiply-accumulates per image, measured with forward hooks on one
input: each ``Conv2d`` counts ``k_h * k_w * C_in * C_out / groups * H_out * W_out`` (plus
``C_out * H_out * W_out`` if it has a bias) and each ``Linear`` ``in * out`` (plus ``out``);
BatchNorm, ReLU, pooling and additions count nothing. The benchmark runs every op of the
architecture string, dead ones included, so its figures come from the unpruned model; the
``*_effective`` figures come from what the pruned model actually runs.

>>> from nasrescale.space.family_loader import get_family
>>> cost = model_cost("|nor_conv_3x3~0|+|none~0|none~1|+|skip_connect~0|none~1|none~2|", get_family("nb201"),
...                   width=4, cells=1, in_shape=(3, 8, 8))
>>> cost["params"] > cost["params_effective"], cost["flops_m"] > cost["flops_m_effective"]
(True, True)
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import torch
from torch import nn

from ..space.families import CellFamily
from ..space.encodings import as_graph
from .darts_cost import KNOWN_KINDS, darts_cost
from .network import build_model, macro_settings

__all__ = ["count_params", "count_flops", "count_run_params", "model_cost"]


def count_params(model: nn.Module) -> int:
    """Number of trainable parameters (each shared tensor once)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _macs(module: nn.Module, output: torch.Tensor) -> int:
    """Multiply-accumulates of one call of ``module`` on one image (batch size 1)."""
    if isinstance(module, nn.Conv2d):
        k_h, k_w = module.kernel_size
        positions = output.shape[-2] * output.shape[-1]
        macs = k_h * k_w * (module.in_channels // module.groups) * module.out_channels * positions
        return macs + (module.out_channels * positions if module.bias is not None else 0)
    if isinstance(module, nn.Linear):
        return module.in_features * module.out_features + (module.out_features if module.bias is not None else 0)
    return 0


def _profile(model: nn.Module, in_shape: tuple[int, ...]) -> tuple[int, list[nn.Module]]:
    """Run one zero image through ``model`` (eval mode, no grad; its mode is restored) and
    return its multiply-accumulates and the modules that ran, in call order."""
    macs = 0
    ran: list[nn.Module] = []

    def hook(module: nn.Module, inputs: Any, output: Any) -> None:
        nonlocal macs
        ran.append(module)
        if isinstance(output, torch.Tensor):
            macs += _macs(module, output)

    first = next(model.parameters(), None)
    image = torch.zeros(1, *in_shape, device=first.device if first is not None else None,
                        dtype=first.dtype if first is not None and first.is_floating_point() else None)
    handles = [m.register_forward_hook(hook) for m in model.modules()]
    training = model.training
    try:
        model.eval()  # no running-stat updates, and BN accepts a single image
        with torch.no_grad():
            model(image)
    finally:
        model.train(training)
        for handle in handles:
            handle.remove()
    return macs, ran


def count_flops(model: nn.Module, in_shape: tuple[int, int, int] = (3, 32, 32)) -> int:
    """Multiply-accumulates per image of one forward pass, NB201's convention (module docstring).

    Args:
        model: any module taking ``(batch, *in_shape)``; what its forward runs is counted
            (an unpruned cell network runs every op, a pruned one only the live ones).
        in_shape: ``(channels, height, width)`` of one image.

    Returns:
        The count (an integer; NB201 reports it divided by 1e6).
    """
    return _profile(model, in_shape)[0]


def count_run_params(model: nn.Module, in_shape: tuple[int, int, int] = (3, 32, 32)) -> int:
    """Trainable parameters of the modules that one forward pass on ``in_shape`` calls.

    Args:
        model: the module.
        in_shape: ``(channels, height, width)`` of one image.

    Returns:
        The number of parameters, each tensor counted once.
    """
    seen: set[int] = set()
    total = 0
    for module in _profile(model, in_shape)[1]:
        for p in module.parameters(recurse=False):
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                total += p.numel()
    return total


def model_cost(
    arch: str | nx.DiGraph,
    family: CellFamily,
    num_classes: int = 10,
    *,
    width: int | None = None,
    cells: int | None = None,
    in_shape: tuple[int, int, int] = (3, 32, 32),
) -> dict[str, Any]:
    """Size and compute of an architecture's network, as the benchmark counts them and as run.

    Builds the network twice (unpruned and pruned) on the CPU; the global RNG state is left
    untouched.

    Args:
        arch: architecture string or canonical graph.
        family: its cell family.
        num_classes: readout outputs.
        width: overrides ``macro.width``.
        cells: overrides ``macro.cells``.
        in_shape: ``(channels, height, width)`` of one image.

    Returns:
        ``params`` (int, every built parameter, the benchmark's figure), ``params_effective``
        (int, parameters of the modules the pruned model runs), ``flops_m`` (float, millions of
        multiply-accumulates of the unpruned model, the benchmark's figure) and
        ``flops_m_effective`` (float, the same for the pruned model).

    Raises:
        ArchError: if ``arch`` is malformed.
        ConfigError: if the macro settings are invalid.
    """
    shaped = _cost_from_shapes(arch, family, num_classes, width, cells, in_shape)
    if shaped is not None:
        return shaped
    kwargs: dict[str, Any] = dict(num_classes=num_classes, in_shape=in_shape, width=width, cells=cells)
    with torch.random.fork_rng(devices=[]):  # building draws initial weights: keep the caller's RNG
        full = build_model(arch, family, prune=False, **kwargs)
        pruned = build_model(arch, family, prune=True, **kwargs)
    return {
        "params": count_params(full),
        "params_effective": count_run_params(pruned, in_shape),
        "flops_m": count_flops(full, in_shape) / 1e6,
        "flops_m_effective": count_flops(pruned, in_shape) / 1e6,
    }


def _cost_from_shapes(arch: str | nx.DiGraph, family: CellFamily, num_classes: int, width: int | None,
                      cells: int | None, in_shape: tuple[int, int, int]) -> dict[str, Any] | None:
    """The DARTS skeleton's figures added up from its layers' shapes (:mod:`.darts_cost`, no
    network built); ``None`` where a layer has no shape rule (then the network is built)."""
    if family.macro.get("kind") != "darts":
        return None
    settings = macro_settings(family, width, cells)
    graph = as_graph(arch, family)
    if any(family.op(op).kind.name not in KNOWN_KINDS for _, _, op in graph.edges(data="op")) \
            or in_shape[1] != in_shape[2]:
        return None
    return darts_cost(graph, family, num_classes, width=settings["width"], cells=settings["cells"],
                      in_shape=in_shape, stem_multiplier=int(family.macro.get("stem_multiplier", 3)))
