"""The in-memory dataset every loader returns and the training engine consumes."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..errors import DataError

__all__ = ["ImageData", "TEST_SPLITS"]

#: Test splits: the whole official test set, or NAS-Bench-201's halves of it
#: (:mod:`nasrescale.data.benchmark_splits`).
TEST_SPLITS = ("full", "x-test", "x-valid")


@dataclass(frozen=True)
class ImageData:
    """A labelled image-classification dataset held as uint8 tensors.

    Images stay uint8 (4x smaller than float) until the training engine normalizes them on
    the training device, after augmentation, as the benchmark's transforms do
    (crop/flip on raw pixels, then ``(x/255 - mean) / std``).

    Attributes:
        name: dataset name, e.g. ``cifar10`` or ``cifar10-subset``.
        train_images: uint8 ``(N, 3, H, W)``, CPU.
        train_labels: int64 ``(N,)``.
        test_images: uint8 ``(M, 3, H, W)``: the evaluation images, i.e. the part of the
            official test set that ``test_split`` names (``M`` = the count results record as
            ``test_images``).
        test_labels: int64 ``(M,)``.
        num_classes: number of classes.
        mean: per-channel mean in [0, 1] units (the benchmark's figures / 255).
        std: per-channel std in [0, 1] units.
        crop_padding: zero padding of the random crop in pixels (CIFAR 4, ImageNet16 2).
        test_split: which test images these are: ``full`` (the whole official test set),
            ``x-test`` or ``x-valid`` (NAS-Bench-201's halves, cifar100/imagenet16-120 only).
            The benchmark reports ``x-test`` for cifar100/imagenet16-120 and ``full`` for cifar10.

    Raises:
        DataError: if a tensor has the wrong dtype or shape, or ``test_split`` is unknown.
    """

    name: str
    train_images: torch.Tensor
    train_labels: torch.Tensor
    test_images: torch.Tensor
    test_labels: torch.Tensor
    num_classes: int
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    crop_padding: int = 4
    test_split: str = "full"

    def __post_init__(self) -> None:
        for split in ("train", "test"):
            images, labels = getattr(self, f"{split}_images"), getattr(self, f"{split}_labels")
            if images.dtype != torch.uint8 or images.dim() != 4 or images.shape[1] != 3:
                raise DataError(f"{split}_images must be uint8 (N, 3, H, W), got {images.dtype} {tuple(images.shape)}")
            if labels.dtype != torch.int64 or labels.shape != (images.shape[0],):
                raise DataError(f"{split}_labels must be int64 of shape ({images.shape[0]},)")
        if self.test_split not in TEST_SPLITS:
            raise DataError(f"test_split must be one of {', '.join(TEST_SPLITS)}, got {self.test_split!r}")

    @property
    def image_shape(self) -> tuple[int, int, int]:
        """``(channels, height, width)`` of one image."""
        return tuple(self.train_images.shape[1:])  # type: ignore[return-value]
