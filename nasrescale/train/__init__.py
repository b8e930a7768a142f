"""Training engine: train one model on an in-memory dataset with a protocol, resumably.

* :func:`train` -> :class:`TrainResult` (:mod:`nasrescale.train.engine`); K runs fused:
  :mod:`nasrescale.train.fused`; both are cores driven by the one epoch loop
  (:mod:`nasrescale.train.loop`)
* per-run device settings and epoch draws: :mod:`nasrescale.train.setup`
* on-device augmentation: :mod:`nasrescale.train.augment`
* crash-safe, fingerprinted checkpoints: :mod:`nasrescale.train.checkpoint`
"""

from .augment import crop_flip, draw_augmentation, normalize
from .checkpoint import derive_fingerprint, load_checkpoint, save_checkpoint
from .engine import train
from .result import TrainResult
from .setup import epoch_seed

__all__ = [
    "train", "TrainResult", "epoch_seed",
    "crop_flip", "draw_augmentation", "normalize",
    "derive_fingerprint", "load_checkpoint", "save_checkpoint",
]
