"""Members of a fused group: what each run brings, what the group must share, and its identity.

Used by :func:`~nasrescale.train.fused.train_fused`. Runs fuse when they share the architecture,
model size, data and :func:`fusion_key` (the protocol without its name, LR and init rules);
each :class:`FusedMember` keeps its own seed, init, LR, param groups and identity.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from torch import nn

from ..config import to_table
from ..data.types import ImageData
from ..errors import ConfigError
from ..models.fused import FusedNetwork
from ..protocol import Protocol
from ..space.topology import is_degenerate
from .checkpoint import derive_fingerprint, identity_differences, identity_json
from .loop import check_param_groups

__all__ = ["FusedMember", "fusion_key", "check_members", "lr_rows", "group_fingerprint", "check_identities"]

# Protocol fields that may differ between members of one fused group (everything else is shared).
_PER_MEMBER = {"name": "", "lr": None, "init": "default", "lr_rule": "fixed", "kernel_rule": "family"}


def fusion_key(protocol: Protocol) -> str:
    """JSON of the protocol fields fused members must share (all but name, LR and init rules).

    >>> from nasrescale.protocol import load_protocol
    >>> fusion_key(load_protocol("nb201")) == fusion_key(load_protocol("rescaled"))
    True
    >>> fusion_key(load_protocol("nb201", ["epochs=12"])) == fusion_key(load_protocol("nb201"))
    False
    """
    return json.dumps(to_table(dataclasses.replace(protocol, **_PER_MEMBER)), sort_keys=True)


@dataclass
class FusedMember:
    """One run of a fused group.

    Attributes:
        model: the network, built and initialized as its own run would be (seeded by the caller).
        protocol: its protocol (LR, init; the rest must match the group's).
        param_groups: ``torch.optim.SGD`` groups of ``model``'s parameters with their LRs (and
            optionally ``weight_decay``), e.g. :func:`nasrescale.scaling.param_groups`.
        seed: seeds the member's batch order, crops and flips (as ``train(seed=...)``).
        identity: JSON-able dict identifying the run, stored in the checkpoint and compared
            on resume; default: the engine's fingerprint of protocol, seed, LRs and data.
    """

    model: nn.Module
    protocol: Protocol
    param_groups: list[dict]
    seed: int
    identity: Mapping[str, Any] | None = None


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
    if not members:
        raise ConfigError("train_fused: no members; pass at least one FusedMember")
    key = fusion_key(members[0].protocol)
    identities, groups = [], []
    for k, m in enumerate(members):
        if fusion_key(m.protocol) != key:
            raise ConfigError(f"member {k} (protocol {m.protocol.name!r}) differs from member 0 in more than "
                              "LR and init (epochs, batch size, momentum, weight decay, schedule, augmentation, "
                              "precision must match); train it in another group")
        graph, family = getattr(m.model, "graph", None), getattr(m.model, "family", None)
        if graph is not None and family is not None and is_degenerate(graph, family):
            raise ConfigError("the architecture is degenerate (no input-output path): its runs are recorded at "
                              "chance accuracy and never trained; do not pass them to train_fused")
        groups.append(check_param_groups(m.param_groups))
        base = {"precision": m.protocol.precision, "test_split": data.test_split,
                "test_images": int(data.test_images.shape[0]), "seed": m.seed}  # as train(identity=) adds
        identity = dict(m.identity) if m.identity is not None else {
            "protocol": m.protocol.name, "fingerprint": derive_fingerprint(m.protocol, m.seed, groups[-1], data)}
        identities.append(identity_json({**base, **identity}))
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
