"""Datasets as uint8 image tensors: CIFAR-10/100, ImageNet16-120, image folders and the
shipped CIFAR-10 subset.

The public API, re-exported from the modules that define it:

* :func:`load_dataset`, :func:`dataset_names` (:mod:`.datasets`), returning :class:`ImageData`
* :func:`default_test_split`, :data:`TEST_SPLITS`: the benchmark's test halves (:mod:`.benchmark_splits`)
* :func:`subset`, a class-balanced deterministic subset (:mod:`.sampling`)
* the benchmark's normalization constants, [0, 1] units (:mod:`.normalization`)
"""

from .benchmark_splits import SPLIT_FILES, TEST_SPLITS, default_test_split
from .datasets import dataset_names, load_dataset
from .normalization import (
    CIFAR10_CLASSES,
    CIFAR10_MEAN,
    CIFAR10_STD,
    CIFAR100_MEAN,
    CIFAR100_STD,
    IMAGENET16_MEAN,
    IMAGENET16_STD,
    NORMALIZATIONS,
    channel_stats,
    crop_padding_for,
    normalization_names,
)
from .paths import default_data_root, resolve_cache_dir
from .sampling import subset
from .types import ImageData

__all__ = [
    "ImageData", "load_dataset", "dataset_names", "subset", "TEST_SPLITS", "SPLIT_FILES", "default_test_split",
    "CIFAR10_MEAN", "CIFAR10_STD", "CIFAR100_MEAN", "CIFAR100_STD", "IMAGENET16_MEAN", "IMAGENET16_STD",
    "CIFAR10_CLASSES", "NORMALIZATIONS", "normalization_names", "channel_stats", "crop_padding_for",
    "default_data_root", "resolve_cache_dir",
]
