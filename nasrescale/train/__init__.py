"""Training engine: train one model on an in-memory dataset with a protocol, resumably.

* :func:`train` -> :class:`TrainResult` (:mod:`nasrescale.train.engine`)
* on-device augmentation: :mod:`nasrescale.train.augment`
* crash-safe, fingerprinted checkpoints: :mod:`nasrescale.train.checkpoint`
"""

from .augment import crop_flip, draw_augmentation, normalize
from .checkpoint import derive_fingerprint, load_checkpoint, save_checkpoint
from .engine import epoch_seed, train
from .result import TrainResult

__all__ = [
    "train", "TrainResult", "epoch_seed",
    "crop_flip", "draw_augmentation", "normalize",
    "derive_fingerprint", "load_checkpoint", "save_checkpoint",
]
