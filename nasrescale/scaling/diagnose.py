"""Evidence that an init rule does what it claims (docs/design.md §2, paper eq. 7).

For each init rule, on one fixed input batch:

* **node second moments** ``E[x_v^2]`` of every cell node at init (the in-degree rule aims to
  keep them equal across nodes; in NB201 BatchNorm after every conv already does);
* **pre-activation change** ``E[(z' - z)^2]`` of every conv/linear output after one plain SGD
  step (no momentum, no weight decay) -- the paper's maximal-update desideratum wants it equal
  across layers; under BatchNorm the init scale shows up here (effective LR ``eta / |W|^2``);
* **feature speed** (:mod:`~nasrescale.scaling.feature_speed`, Chizat & Netrapalli Thm. 2.1): per
  block of the network's trunk, the backward-feature angle at init and the formula's predicted
  vs the measured update of the block's output after that step.

A protocol is measured the same way with its init rule, its per-parameter LRs (``lr`` as the base
LR where the protocol has none) and, under ``warmup_rule = "elr_subcritical"``, its warm-up's
factor on the scale-invariant weights for a plain step (``min(1, kappa)``, :mod:`nasrescale.models.elr`).

Cells of a network that share a width (an NB201 stage) are averaged per edge.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable

import torch
from torch import nn

from ..models.elr import layer_elrs, scale_invariant_convs, subcritical_factor
from ..protocol import Protocol
from .feature_speed import BlockSpeed, feature_speed
from .init import apply_init
from .lr import param_groups

__all__ = ["RuleDiagnosis", "diagnose_rule", "step_lrs"]


@dataclass
class RuleDiagnosis:
    """Measurements of one init rule.

    Attributes:
        rule: the init rule.
        node_moments: ``{stage: {node: E[x^2]}}`` at init (stage = 0-based width group).
        layer_moments: ``{layer: E[z^2]}`` of conv/linear outputs at init.
        layer_change: ``{layer: E[(z' - z)^2]}`` after one SGD step.
        loss: training loss of the batch at init.
        feature_speed: per trunk block, the angle and the predicted and measured update.
        warmup_factor: the ELR warm-up's factor of the step (a protocol with the warm-up only).
    """

    rule: str
    node_moments: dict[int, dict[int, float]] = field(default_factory=dict)
    layer_moments: dict[str, float] = field(default_factory=dict)
    layer_change: dict[str, float] = field(default_factory=dict)
    loss: float = float("nan")
    feature_speed: list[BlockSpeed] = field(default_factory=list)
    warmup_factor: float | None = None

    def to_json(self) -> dict:
        """A JSON-ready dict of every field."""
        return dataclasses.asdict(self)


def _stage_of(model: nn.Module) -> dict[int, int]:
    """0-based stage of each cell width (cells of equal width form a stage, in forward order)."""
    return {w: i for i, w in enumerate(dict.fromkeys(c.width for c in model.cells()))}


def _layer_names(model: nn.Module) -> dict[nn.Module, str]:
    """Display name of every conv/linear module: cell edges grouped by stage and edge, the edge's
    nodes numbered within its cell as the node moments are (a DARTS reduction cell's edges marked
    ``reduce``: its nodes are those of the other cell type, numbered alike)."""
    stage_of = _stage_of(model)
    names: dict[nn.Module, str] = {}
    for cell in model.cells():
        base = getattr(cell, "base", 0)  # a graph of several cells numbers them on; shown within the cell
        kind = ".reduce" if getattr(cell, "reduction", False) else ""
        for (u, v), op in cell.edge_items():
            for m in op.modules():
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    names[m] = f"stage{stage_of[cell.width] + 1}{kind}.edge{u - base}->{v - base}"
    for name, m in model.named_modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)) and m not in names:
            names[m] = "readout" if m is model.readout else name
    return names


def _capture(model: nn.Module, names: dict[nn.Module, str]) -> tuple[dict[str, list[torch.Tensor]], Callable[[], None]]:
    outputs: dict[str, list[torch.Tensor]] = defaultdict(list)
    hooks = [m.register_forward_hook(lambda mod, _i, out: outputs[names[mod]].append(out.detach().float()))
             for m in names]
    return outputs, lambda: [h.remove() for h in hooks]


def _node_moments(model: nn.Module, x: torch.Tensor) -> dict[int, dict[int, float]]:
    """``E[x_v^2]`` of every node, averaged over the cells of each width group."""
    stage_of = _stage_of(model)
    sums: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    hooks = []
    for cell in model.cells():
        stage = stage_of[cell.width]
        if hasattr(cell, "node_values"):  # a cell of several inputs or a concatenation computes its nodes itself
            def record(mod, inputs, _output, s=stage):  # noqa: ANN001 - torch hook signature
                for v, t in mod.node_values(*inputs).items():
                    sums[s][v].append(float(t.detach().float().pow(2).mean()))

            hooks.append(cell.register_forward_hook(record))
            continue
        edge_out: dict[tuple[int, int], torch.Tensor] = {}
        for (u, v), op in cell.edge_items():
            hooks.append(op.register_forward_hook(lambda _m, _i, out, e=(u, v), d=edge_out: d.__setitem__(e, out.detach())))

        def after(mod, inputs, output, d=edge_out, s=stage):  # noqa: ANN001 - torch hook signature
            nodes = {0: inputs[0].detach()}
            for v in range(1, mod.num_nodes):
                parts = [t for (a, b), t in d.items() if b == v]
                nodes[v] = sum(parts) if parts else torch.zeros_like(inputs[0])
            for v, t in nodes.items():
                sums[s][v].append(float(t.float().pow(2).mean()))
            d.clear()

        hooks.append(cell.register_forward_hook(after))
    try:
        model(x)
    finally:
        for h in hooks:
            h.remove()
    return {s: {v: sum(vals) / len(vals) for v, vals in nodes.items()} for s, nodes in sums.items()}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def step_lrs(model: nn.Module, protocol: Protocol | None, lr: float) -> dict[str, float]:
    """Each parameter's LR in the step: ``lr`` for all (no protocol), else the protocol's param
    groups (:func:`~nasrescale.scaling.lr.param_groups`; ``lr`` is its base LR if it has none)."""
    if protocol is None:
        return {name: lr for name, _ in model.named_parameters()}
    groups = param_groups(model, protocol if protocol.lr is not None else dataclasses.replace(protocol, lr=lr))
    by_id = {id(p): float(g["lr"]) for g in groups for p in g["params"]}
    return {name: by_id.get(id(p), 0.0) for name, p in model.named_parameters()}


def _warmup(model: nn.Module, lrs: dict[str, float]) -> tuple[float, dict[str, float]]:
    """The warm-up's factor for a plain step from the gradients in ``model`` (``min(1, kappa)``),
    and ``lrs`` with the scale-invariant weights' LRs scaled by it."""
    layers = scale_invariant_convs(model)
    if not layers:
        return 1.0, lrs
    names = {id(p): n for n, p in model.named_parameters()}
    weights = [conv.weight for _, conv in layers]
    unit = torch.tensor([[lrs[names[id(w)]]] for w in weights], dtype=weights[0].dtype)
    factor = min(1.0, float(subcritical_factor(layer_elrs(weights, 1) * unit)[0]))
    return factor, {**lrs, **{names[id(w)]: lrs[names[id(w)]] * factor for w in weights}}


def diagnose_rule(build: Callable[[], nn.Module], rule: str, x: torch.Tensor, y: torch.Tensor, lr: float,
                  protocol: Protocol | None = None) -> RuleDiagnosis:
    """Measure one init rule, or one protocol (see the module docstring).

    Args:
        build: returns a freshly built (seeded) network in train mode.
        rule: the column's name: the init rule to apply, or the protocol's name.
        x: input batch (normalized float images).
        y: labels of the batch.
        lr: learning rate of the single plain SGD step (a protocol's base LR where it has none).
        protocol: measure this protocol (its ``init``, LRs and warm-up) instead of ``rule``.
    """
    model = apply_init(build(), protocol.init if protocol is not None else rule)
    model.train()
    out, at_init = RuleDiagnosis(rule), copy.deepcopy(model)
    with torch.no_grad():
        out.node_moments = _node_moments(model, x)
    names = _layer_names(model)
    before, release = _capture(model, names)
    loss = nn.functional.cross_entropy(model(x), y)
    release()
    out.loss = float(loss.detach())
    loss.backward()
    lrs = step_lrs(model, protocol, lr)
    if protocol is not None and protocol.warmup_rule is not None:
        out.warmup_factor, lrs = _warmup(model, lrs)
    out.feature_speed = feature_speed(at_init, x, y, lrs)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.grad is not None:
                p.add_(p.grad, alpha=-lrs[name])
        after, release = _capture(model, names)
        model(x)
        release()
    out.layer_moments = {k: _mean([float(t.pow(2).mean()) for t in ts]) for k, ts in before.items()}
    out.layer_change = {
        k: _mean([float((t1 - t0).pow(2).mean()) for t0, t1 in zip(before[k], after[k])]) for k in before
    }
    return out
