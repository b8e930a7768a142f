"""The runs a group trains: what each brings (:class:`FusedMember`), what a fused group must
share, and its identity.

A single run is a group of one member (:func:`~nasrescale.train.train`); runs fuse
(:func:`~nasrescale.train.train_fused`) when they share the architecture, model size, data and
:func:`fusion_key` (the protocol without its name, LR, weight decay and init rules); each member
keeps its own seed, init, LR, weight decay, param groups and identity.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch
from torch import nn

from ..config import to_table
from ..data.types import ImageData
from ..errors import ConfigError
from ..models.fused import FusedNetwork
from ..protocol import Protocol
from ..space.topology import is_degenerate
from .checkpoint import derive_fingerprint, identity_differences, run_identity

__all__ = ["FusedMember", "fusion_key", "check_param_groups", "check_trainable", "check_members", "lr_rows",
           "group_fingerprint", "check_identities"]

# Protocol fields that may differ between members of one fused group (everything else is shared).
_PER_MEMBER = {"name": "", "lr": None, "weight_decay": 0.0, "init": "default", "lr_rule": "fixed",
               "kernel_rule": "family"}


def fusion_key(protocol: Protocol) -> str:
    """JSON of the protocol fields fused members must share (all but name, LR, weight decay and init
    rules: the fused SGD holds both per member).

    >>> from nasrescale.protocol import load_protocol
    >>> fusion_key(load_protocol("nb201")) == fusion_key(load_protocol("rescaled"))
    True
    >>> fusion_key(load_protocol("nb201", ["weight_decay=1e-3"])) == fusion_key(load_protocol("nb201"))
    True
    >>> fusion_key(load_protocol("nb201", ["epochs=12"])) == fusion_key(load_protocol("nb201"))
    False
    """
    return json.dumps(to_table(dataclasses.replace(protocol, **_PER_MEMBER)), sort_keys=True)


@dataclass
class FusedMember:
    """One run of a group (a single run is a group of one).

    Attributes:
        model: the network, built and initialized as its own run would be (seeded by the caller).
        protocol: its protocol (LR, init; in a fused group the rest must match the group's).
        param_groups: ``torch.optim.SGD`` groups of ``model``'s parameters with their LRs (and
            optionally ``weight_decay``), e.g. :func:`nasrescale.scaling.param_groups`.
        seed: seeds the member's batch order, crops and flips (and dropout, for a single run).
        identity: JSON-able dict identifying the run, stored in the checkpoint and compared
            on resume; default: the engine's fingerprint of protocol, seed, LRs and data.
        fingerprint: a single run's checkpoint fingerprint (default: derived, see
            :func:`~nasrescale.train.checkpoint.resolve_identity`); a fused group's is its
            members' identities.
        optimizer: a single run's optimizer factory (``factory(param_groups, lr=, momentum=,
            nesterov=, weight_decay=)``; ``None``: ``torch.optim.SGD``); such a run does not fuse.
    """

    model: nn.Module
    protocol: Protocol
    param_groups: list[dict]
    seed: int
    identity: Mapping[str, Any] | None = None
    fingerprint: str | None = None
    optimizer: Callable[..., torch.optim.Optimizer] | None = None


def check_param_groups(param_groups: Sequence[dict]) -> list[dict]:
    """Copies of ``param_groups`` with ``params`` as lists (a generator such as
    ``model.parameters()`` is read once, here).

    >>> [len(g["params"]) for g in check_param_groups([{"params": iter([torch.zeros(1)] * 2), "lr": 0.1}])]
    [2]
    """
    if not param_groups:
        raise ConfigError("train: param_groups is empty; pass at least one {'params': ..., 'lr': ...} group")
    for i, group in enumerate(param_groups):
        if "params" not in group or "lr" not in group:
            raise ConfigError(f"train: param group {i} needs both 'params' and 'lr' (has {sorted(group)})")
    return [{**g, "params": [g["params"]] if isinstance(g["params"], torch.Tensor) else list(g["params"])}
            for g in param_groups]


def check_trainable(members: Sequence[FusedMember]) -> None:
    """ConfigError for no members, or a member whose cell is degenerate (such runs are recorded
    at chance accuracy and never trained, :mod:`nasrescale.jobs.job_steps`)."""
    if not members:
        raise ConfigError("train_fused: no members; pass at least one FusedMember")
    for m in members:
        graph, family = getattr(m.model, "graph", None), getattr(m.model, "family", None)
        if graph is not None and family is not None and is_degenerate(graph, family):
            raise ConfigError("the architecture is degenerate (no input-output path): its runs are recorded at "
                              "chance accuracy and never trained; do not pass them to train_fused")


def lr_rows(members: Sequence[FusedMember], groups: Sequence[list[dict]], fused: FusedNetwork
            ) -> tuple[list[nn.Parameter], list[list[float]], list[list[float]]]:
    """Fused parameters in order, with each member's base LR and weight decay for each.

    ``groups[k]`` are member ``k``'s param groups (as :func:`check_members` returns them).
    """
    params = list(fused.net.named_parameters())
    lrs = [[0.0] * fused.k for _ in params]  # a parameter in no group is not trained (LR 0, no decay)
    wds = [[0.0] * fused.k for _ in params]
    for k, m in enumerate(members):
        where = {id(p): i for i, (_, p) in enumerate(m.model.named_parameters())}
        for group in groups[k]:
            for p in group["params"]:
                if id(p) not in where:
                    raise ConfigError(f"member {k}: a param group holds a tensor that is not a parameter of its model")
                i = where[id(p)]
                lrs[i][k] = float(group["lr"])
                wds[i][k] = float(group.get("weight_decay", m.protocol.weight_decay))
    return [p for _, p in params], lrs, wds


def check_members(members: Sequence[FusedMember], data: ImageData) -> tuple[list[str], list[list[dict]]]:
    """Validate a group; return each member's identity as canonical JSON (the caller's dict, or
    a derived one, plus precision, test split and seed as ``train`` adds them) and its param
    groups (with ``params`` as lists)."""
    key = fusion_key(members[0].protocol)
    identities, groups = [], []
    for k, m in enumerate(members):
        if fusion_key(m.protocol) != key:
            raise ConfigError(f"member {k} (protocol {m.protocol.name!r}) differs from member 0 in more than "
                              "LR, weight decay and init (epochs, batch size, momentum, schedule, augmentation, "
                              "precision must match); train it in another group")
        if m.optimizer is not None:
            raise ConfigError(f"member {k} brings its own optimizer, which does not fuse; train it alone")
        groups.append(check_param_groups(m.param_groups))
        identity = m.identity if m.identity is not None else {
            "protocol": m.protocol.name, "fingerprint": derive_fingerprint(m.protocol, m.seed, groups[-1], data)}
        identities.append(run_identity(identity, m.protocol, m.seed, data))
    return identities, groups


def group_fingerprint(identities: Sequence[str]) -> str:
    """16 hex digits identifying a group: its members' identities, in order."""
    return hashlib.sha256("|".join(identities).encode()).hexdigest()[:16]


def check_identities(state: dict[str, Any], identities: Sequence[str], path: str | Path) -> None:
    """A fused checkpoint resumes only the same members in the same order: name what differs.

    Raises:
        ConfigError: another member count, or a member whose identity differs (keys named).
    """
    saved = state.get("members")
    fix = f"delete {str(path)!r} to start over, or pass another checkpoint path"
    if not isinstance(saved, list) or len(saved) != len(identities):
        raise ConfigError(f"checkpoint {str(path)!r} is not a fused checkpoint of {len(identities)} members; {fix}")
    for k, (old, new) in enumerate(zip(saved, identities)):
        differing = identity_differences(json.loads(old), json.loads(new))
        if differing:
            raise ConfigError(f"checkpoint {str(path)!r}: member {k} differs in {'; '.join(differing)}; {fix}")
