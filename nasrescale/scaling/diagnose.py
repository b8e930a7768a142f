"""Evidence that an init rule does what it claims (docs/design.md §2, paper eq. 7).

For each init rule, on one fixed input batch:

* **node second moments** ``E[x_v^2]`` of every cell node at init (the in-degree rule aims to
  keep them equal across nodes; in NB201 BatchNorm after every conv already does);
* **pre-activation change** ``E[(z' - z)^2]`` of every conv/linear output after one plain SGD
  step (no momentum, no weight decay) -- the paper's maximal-update desideratum wants it equal
  across layers; under BatchNorm the init scale shows up here (effective LR ``eta / |W|^2``).

Cells of a network that share a width (an NB201 stage) are averaged per edge.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable

import torch
from torch import nn

from .init import apply_init

__all__ = ["RuleDiagnosis", "diagnose_rule"]


@dataclass
class RuleDiagnosis:
    """Measurements of one init rule.

    Attributes:
        rule: the init rule.
        node_moments: ``{stage: {node: E[x^2]}}`` at init (stage = 0-based width group).
        layer_moments: ``{layer: E[z^2]}`` of conv/linear outputs at init.
        layer_change: ``{layer: E[(z' - z)^2]}`` after one SGD step.
        loss: training loss of the batch at init.
    """

    rule: str
    node_moments: dict[int, dict[int, float]] = field(default_factory=dict)
    layer_moments: dict[str, float] = field(default_factory=dict)
    layer_change: dict[str, float] = field(default_factory=dict)
    loss: float = float("nan")


def _stage_of(model: nn.Module) -> dict[int, int]:
    """0-based stage of each cell width (cells of equal width form a stage, in forward order)."""
    return {w: i for i, w in enumerate(dict.fromkeys(c.width for c in model.cells()))}


def _layer_names(model: nn.Module) -> dict[nn.Module, str]:
    """Display name of every conv/linear module: cell edges grouped by stage and edge."""
    stage_of = _stage_of(model)
    names: dict[nn.Module, str] = {}
    for cell in model.cells():
        for (u, v), op in cell.edge_items():
            for m in op.modules():
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    names[m] = f"stage{stage_of[cell.width] + 1}.edge{u}->{v}"
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
        edge_out: dict[tuple[int, int], torch.Tensor] = {}
        stage = stage_of[cell.width]
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


def diagnose_rule(build: Callable[[], nn.Module], rule: str, x: torch.Tensor, y: torch.Tensor, lr: float) -> RuleDiagnosis:
    """Measure one init rule.

    Args:
        build: returns a freshly built (seeded) network in train mode.
        rule: init rule to apply.
        x: input batch (normalized float images).
        y: labels of the batch.
        lr: learning rate of the single plain SGD step.
    """
    model = apply_init(build(), rule)
    model.train()
    out = RuleDiagnosis(rule)
    with torch.no_grad():
        out.node_moments = _node_moments(model, x)
    names = _layer_names(model)
    before, release = _capture(model, names)
    loss = nn.functional.cross_entropy(model(x), y)
    release()
    out.loss = float(loss.detach())
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p.add_(p.grad, alpha=-lr)
        after, release = _capture(model, names)
        model(x)
        release()
    out.layer_moments = {k: _mean([float(t.pow(2).mean()) for t in ts]) for k, ts in before.items()}
    out.layer_change = {
        k: _mean([float((t1 - t0).pow(2).mean()) for t0, t1 in zip(before[k], after[k])]) for k in before
    }
    return out
