"""K networks of one architecture as ONE network: each member in its own slice of channels.

:class:`FusedNetwork` takes K networks of identical structure (same architecture, size and
class, each already initialized its own way) and builds one module that computes all K at
once, the way HFTA (Wang et al., MLSys 2021) fuses models:

* ``Conv2d(c_in, c_out, groups=g)`` becomes ``Conv2d(K c_in, K c_out, groups=K g)``: output
  block ``k`` sees only input block ``k`` (with ``split_convs``, :class:`MemberConv2d`: the
  same weights computed as K plain convolutions, for backends whose grouped kernels are slow);
* a BatchNorm over ``C`` channels becomes one over ``K C`` channels, which *is* K independent
  BatchNorms (statistics are per channel);
* ``Linear(n, m)`` becomes :class:`GroupedLinear` (a batched matmul per member);
* ReLU, pooling, identity, flatten are per channel (per feature) and stay as they are; so does
  the skeleton's own ``forward`` (a cell's sums, NB201's residual blocks, MLP flattening), which
  never mixes channels. A cell that concatenates along channels (DARTS, NAS-Bench-101) would
  interleave the members' blocks, so networks of such a family are refused.

The input is the members' images concatenated along channels, ``(B, K * 3, H, W)``; the output
is ``(B, K, classes)``. Every fused tensor (parameter or buffer) is the members' tensors
concatenated along dim 0, so packing and unpacking are one ``cat``/``chunk``, and member ``k``
of a fused parameter ``p`` is ``p.unflatten(0, (K, -1))[k]`` (a view).

>>> import torch
>>> from nasrescale.space.family_loader import get_family
>>> from nasrescale.models import build_model
>>> nets = [build_model("3_33_333", get_family("nb201"), width=4, cells=1) for _ in range(3)]
>>> fused = FusedNetwork(nets).eval()
>>> x = torch.randn(2, 3, 8, 8)
>>> out = fused(x.repeat(1, 3, 1, 1))
>>> out.shape, torch.allclose(out[:, 1], nets[1].eval()(x), atol=1e-5)
(torch.Size([2, 3, 10]), True)
"""

from __future__ import annotations

import copy
from typing import Any, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ConfigError
from .cell import Cell
from .dag_nets import CNNNetwork, MLPNetwork
from .nb201 import NB201Network, ResNetBasicBlock

__all__ = ["FusedNetwork", "GroupedLinear", "MemberConv2d", "register_fusable", "fusable_types"]

# Modules that act on each channel (or feature) on its own and hold no parameters, or whose
# forward only sums, pools and flattens their children's outputs: they are kept unchanged.
_PER_CHANNEL: set[type] = {
    nn.ReLU, nn.Identity, nn.AvgPool2d, nn.MaxPool2d, nn.AdaptiveAvgPool2d, nn.Flatten, nn.Dropout,
    nn.Sequential, nn.ModuleList, nn.ModuleDict,
    Cell, ResNetBasicBlock, NB201Network, MLPNetwork, CNNNetwork,
}


def register_fusable(cls: type) -> type:
    """Declare a module class channel-separable (kept as is in a fused network); returns it.

    A skeleton or op module may be registered only if its own ``forward`` never mixes
    channels (features): sums, per-channel activations and pooling, flattening of
    ``(B, C, ...)`` are fine; ``torch.cat`` along channels or a reshape across them is not.
    """
    _PER_CHANNEL.add(cls)
    return cls


def fusable_types() -> list[str]:
    """Names of the module classes kept unchanged in a fused network (besides conv/BN/linear)."""
    return sorted(t.__name__ for t in _PER_CHANNEL)


class GroupedLinear(nn.Module):
    """K independent ``Linear(in_features, out_features)`` layers on a ``(B, K * in)`` input.

    ``weight`` is ``(K * out, in)`` and ``bias`` ``(K * out,)``: the members' tensors stacked
    along dim 0, like every fused tensor. Returns ``(B, K * out)``.
    """

    def __init__(self, members: int, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.members, self.in_features, self.out_features = members, in_features, out_features
        self.weight = nn.Parameter(torch.empty(members * out_features, in_features))
        self.bias = nn.Parameter(torch.empty(members * out_features)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k, n, m = self.members, self.in_features, self.out_features
        h = x.reshape(x.shape[0], k, n).transpose(0, 1)  # (K, B, in): one matmul per member
        w = self.weight.view(k, m, n).transpose(1, 2)  # (K, in, out)
        out = torch.bmm(h, w) if self.bias is None else torch.baddbmm(self.bias.view(k, 1, m), h, w)
        return out.transpose(0, 1).reshape(x.shape[0], k * m)

    def extra_repr(self) -> str:
        return f"members={self.members}, in_features={self.in_features}, out_features={self.out_features}, " \
               f"bias={self.bias is not None}"


class MemberConv2d(nn.Conv2d):
    """A fused ``Conv2d`` (K members, ``groups`` = K x the member's) computed as K convolutions,
    one per member's block of channels, instead of one grouped convolution: the same parameters
    and state dict, the same result up to float rounding."""

    def __init__(self, members: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.members = members

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k = self.members
        weights = self.weight.chunk(k, 0)
        biases = self.bias.chunk(k, 0) if self.bias is not None else [None] * k
        return torch.cat([F.conv2d(xi, w, b, self.stride, self.padding, self.dilation, self.groups // k)
                          for xi, w, b in zip(x.chunk(k, 1), weights, biases)], 1)


def _fused_leaf(module: nn.Module, k: int, where: str, split_convs: bool = False) -> nn.Module:
    """The K-member replacement of one module (parameters left uninitialized), or ``module``."""
    if type(module) is nn.Conv2d:
        m = module
        args = (k * m.in_channels, k * m.out_channels, m.kernel_size, m.stride, m.padding, m.dilation)
        kwargs = dict(groups=k * m.groups, bias=m.bias is not None, padding_mode=m.padding_mode)
        return MemberConv2d(k, *args, **kwargs) if split_convs and m.padding_mode == "zeros" else nn.Conv2d(*args, **kwargs)
    if type(module) in (nn.BatchNorm1d, nn.BatchNorm2d):
        m = module
        return type(m)(k * m.num_features, m.eps, m.momentum, m.affine, m.track_running_stats)
    if type(module) is nn.Linear:
        return GroupedLinear(k, module.in_features, module.out_features, module.bias is not None)
    if type(module) in _PER_CHANNEL:
        return module
    raise ConfigError(
        f"cannot fuse module {where or '<root>'} of type {type(module).__name__}: fusion knows Conv2d, "
        f"BatchNorm, Linear and the channel-separable modules {', '.join(fusable_types())}; train such "
        "models one by one, or declare the class with nasrescale.models.fused.register_fusable")


def _fuse_structure(net: nn.Module, k: int, split_convs: bool = False) -> nn.Module:
    """A copy of ``net`` with every conv/BN/linear widened to K members (weights not set)."""
    fused = copy.deepcopy(net)
    for name, module in list(fused.named_modules()):
        for child_name, child in list(module._modules.items()):
            if child is None:
                continue
            where = f"{name}.{child_name}" if name else child_name
            module._modules[child_name] = _fused_leaf(child, k, where, split_convs)
    if type(fused) not in _PER_CHANNEL:
        _fused_leaf(fused, k, "")  # raises: the root's own forward is unknown
    return fused


def _check_same(members: Sequence[nn.Module]) -> dict[str, torch.Size]:
    """Members must share class and every tensor's name and shape; returns the shapes."""
    if not members:
        raise ConfigError("FusedNetwork needs at least one member network")
    family = getattr(members[0], "family", None)
    if family is not None and family.structure.concatenates:
        raise ConfigError(f"cannot fuse networks of family {family.name!r}: its cells concatenate nodes along "
                          "channels, which would interleave the members' channel blocks; train them one by one "
                          "(pipelines train such jobs alone)")
    first = members[0].state_dict()
    shapes = {name: t.shape for name, t in first.items()}
    graph = getattr(members[0], "graph", None)
    for i, net in enumerate(members[1:], 1):
        other = {name: t.shape for name, t in net.state_dict().items()}
        if type(net) is not type(members[0]) or other != shapes:
            raise ConfigError(f"member {i} ({type(net).__name__}) differs in structure from member 0 "
                              f"({type(members[0]).__name__}); only runs of one architecture and size fuse")
        g = getattr(net, "graph", None)
        if graph is not None and g is not None and sorted(g.edges(data="op")) != sorted(graph.edges(data="op")):
            raise ConfigError(f"member {i} has another cell than member 0; only runs of one architecture fuse")
    return shapes


class FusedNetwork(nn.Module):
    """K same-structure networks trained as one (see the module docstring).

    Args:
        members: the K networks (e.g. ``CellNetwork`` s built by
            :func:`~nasrescale.models.build_model`, each initialized as its own run would be);
            their weights are copied in, the networks themselves are not modified.
        split_convs: compute each convolution as K plain ones (:class:`MemberConv2d`).

    Attributes:
        k: the number of members.
        net: the widened network; its state-dict names are the members' names.

    Raises:
        ConfigError: the members differ in structure, or hold a module that cannot be fused.
    """

    def __init__(self, members: Sequence[nn.Module], split_convs: bool = False) -> None:
        super().__init__()
        self._shapes = _check_same(members)
        self.k = len(members)
        self.net = _fuse_structure(members[0], self.k, split_convs)
        with torch.no_grad():
            self.load_members([m.state_dict() for m in members])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, K, classes)`` of the members' inputs concatenated along dim 1."""
        out = self.net(x)
        return out.unflatten(1, (self.k, -1))

    def load_members(self, states: Sequence[dict[str, torch.Tensor]]) -> None:
        """Pack the members' state dicts (one per member, in order) into the fused tensors."""
        if len(states) != self.k:
            raise ConfigError(f"load_members: expected {self.k} member state dicts, got {len(states)}")
        packed = {}
        for name in self._shapes:
            tensors = [s[name] for s in states]
            if tensors[0].dim() == 0:  # BatchNorm's num_batches_tracked: one step count for all
                packed[name] = tensors[0]
            else:
                packed[name] = torch.cat([t.detach().to(tensors[0].device) for t in tensors], 0)
        self.net.load_state_dict(packed)

    def member_state_dict(self, index: int) -> dict[str, torch.Tensor]:
        """Member ``index``'s state dict (copies, on the fused module's device), loadable into
        a member network with ``load_state_dict``."""
        if not 0 <= index < self.k:
            raise ConfigError(f"member index {index} out of range 0..{self.k - 1}")
        out = {}
        for name, t in self.net.state_dict().items():
            if t.dim() == 0:
                out[name] = t.clone()
            else:
                out[name] = t.unflatten(0, (self.k, -1))[index].reshape(self._shapes[name]).clone()
        return out

    @torch.no_grad()
    def silence_member(self, index: int) -> None:
        """Zero member ``index``'s parameters and reset its BatchNorm statistics (mean 0, var 1).

        Its outputs become finite constants and its gradients zero, so a diverged member
        (NaN/inf weights) can stay in the network without producing NaNs; other members'
        slices are not touched.
        """
        for name, t in self.net.state_dict().items():
            if t.dim() == 0 or not t.is_floating_point():
                continue
            t.unflatten(0, (self.k, -1))[index].fill_(1.0 if name.endswith("running_var") else 0.0)

    @property
    def member_numel(self) -> int:
        """Parameters of one member."""
        return sum(p.numel() for p in self.net.parameters()) // self.k

    def extra_repr(self) -> str:
        return f"members={self.k}, params_per_member={self.member_numel:,}"
