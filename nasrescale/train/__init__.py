"""Training engine: train one model, or K runs fused into one network, resumably.

* :func:`train` -> :class:`TrainResult`; :func:`train_fused` -> one per member: thin wrappers
  of the one epoch loop (:mod:`nasrescale.train.engine`); the step: :mod:`nasrescale.train.step`
* how a run is carried out: :class:`RunOptions` (:mod:`nasrescale.train.options`, no torch)
* per-run device settings and epoch draws: :mod:`nasrescale.train.run_setup`
* on-device augmentation: :mod:`nasrescale.train.augment`
* crash-safe, fingerprinted checkpoints: :mod:`nasrescale.train.checkpoint`

Names load on first use, so ``nasrescale.train.options`` imports without torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "train", "train_fused", "FusedMember", "RunOptions", "TrainResult", "epoch_seed",
    "crop_flip", "draw_augmentation", "normalize",
    "derive_fingerprint", "load_checkpoint", "save_checkpoint",
]

_HOME = {"train": "engine", "train_fused": "engine", "FusedMember": "members", "RunOptions": "options",
         "TrainResult": "result", "epoch_seed": "run_setup", "crop_flip": "augment", "draw_augmentation": "augment",
         "normalize": "augment", "derive_fingerprint": "checkpoint", "load_checkpoint": "checkpoint",
         "save_checkpoint": "checkpoint"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
