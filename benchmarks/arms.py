"""What the benchmarks train (not a test): NB201's network at a given size, through the engine
(one run, or K fused) and through the reference loop, each returning its speed and accuracy.

Every run of seed ``s`` starts from the weights ``torch.manual_seed(s)`` draws, whichever loop
trains it, so two arms with the same seeds start from the same networks.
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn

from nasrescale.data.types import ImageData
from nasrescale.jobs.fusion import build_member
from nasrescale.models import build_model
from nasrescale.protocol import Protocol
from nasrescale.scaling import param_groups
from nasrescale.space.families import CellFamily
from nasrescale.train import RunOptions, train, train_fused

from reference_loop import reference_train

__all__ = ["ARCH", "fresh_model", "ours_train", "fused_train", "engine_arm", "reference_arm"]

ARCH = "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|"

#: a parity arm: seed -> test accuracy %
ArmRun = Callable[[int], float]


def fresh_model(family: CellFamily, data: ImageData, width: int, cells: int, seed: int) -> nn.Module:
    """The benchmark's network, its weights drawn from ``seed``."""
    torch.manual_seed(seed)
    side = data.train_images.shape[-1]
    return build_model(ARCH, family, data.num_classes, in_shape=(3, side, side), width=width, cells=cells)


def ours_train(model: nn.Module, data: ImageData, protocol: Protocol, seed: int, options: RunOptions,
               lr_factor: float = 1.0) -> tuple[float, float]:
    """One engine run: (training images/s, test accuracy %); ``lr_factor`` scales every group's LR."""
    groups = [{**g, "lr": g["lr"] * lr_factor} for g in param_groups(model, protocol)]
    result = train(model, data, protocol, groups, options, seed=seed)
    return result.images_per_s, result.test_accuracy


def fused_train(k: int, family: CellFamily, data: ImageData, protocol: Protocol, width: int, cells: int,
                options: RunOptions) -> tuple[float, list[float]]:
    """K runs (seeds 0..K-1) as one fused network: (images/s per member, members' test accuracies)."""
    members = [build_member(ARCH, family, data, protocol, seed, width=width, cells=cells)[0] for seed in range(k)]
    results = train_fused(members, data, options)
    return results[0].images_per_s, [r.test_accuracy for r in results]


def engine_arm(family: CellFamily, data: ImageData, protocol: Protocol, width: int, cells: int,
               options: RunOptions, lr_factor: float = 1.0) -> ArmRun:
    """An arm training the engine (one run per seed) at ``lr_factor`` x the protocol's LR."""
    return lambda seed: ours_train(fresh_model(family, data, width, cells, seed), data, protocol, seed, options,
                                   lr_factor)[1]


def reference_arm(family: CellFamily, data: ImageData, protocol: Protocol, width: int, cells: int,
                  device: str, workers: int) -> ArmRun:
    """An arm training the reference loop (one run per seed) in the protocol's precision."""
    return lambda seed: reference_train(fresh_model(family, data, width, cells, seed), data, protocol, device,
                                        workers, seed, protocol.precision)[1]
