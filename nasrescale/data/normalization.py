"""Per-channel normalization constants and the augmentation padding of each dataset.

The benchmark's constants (docs/design.md §3) are given in 0..255 pixel units; they are stored
here divided by 255, the units of :attr:`ImageData.mean <nasrescale.data.types.ImageData>`,
because the training engine normalizes as ``(x / 255 - mean) / std``.

>>> [round(v * 255, 2) for v in CIFAR10_MEAN]
[125.3, 123.0, 113.9]
>>> resolve_normalization(None, "cifar10") == (CIFAR10_MEAN, CIFAR10_STD)
True
>>> crop_padding_for(32), crop_padding_for(16), crop_padding_for(7)
(4, 2, 1)
"""

from __future__ import annotations

import torch

from ..errors import DataError

__all__ = [
    "CIFAR10_MEAN", "CIFAR10_STD", "CIFAR100_MEAN", "CIFAR100_STD",
    "IMAGENET16_MEAN", "IMAGENET16_STD", "CIFAR10_CLASSES",
    "NORMALIZATIONS", "normalization_names", "resolve_normalization", "channel_stats",
    "crop_padding_for",
]

Triple = tuple[float, float, float]


def _per255(*values: float) -> Triple:
    return tuple(v / 255.0 for v in values)  # type: ignore[return-value]


# NB201 / NATS-Bench training transforms (docs/design.md §3), 0..255 units -> [0, 1] units.
CIFAR10_MEAN: Triple = _per255(125.3, 123.0, 113.9)
CIFAR10_STD: Triple = _per255(63.0, 62.1, 66.7)
CIFAR100_MEAN: Triple = _per255(129.3, 124.1, 112.4)
CIFAR100_STD: Triple = _per255(68.2, 65.4, 70.4)
IMAGENET16_MEAN: Triple = _per255(122.68, 116.66, 104.01)
IMAGENET16_STD: Triple = _per255(63.22, 61.26, 65.09)

#: CIFAR-10's class names in label order (also the sorted order of its ImageFolder layout).
CIFAR10_CLASSES: tuple[str, ...] = (
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
)

#: Named constant normalizations: name -> (mean, std), [0, 1] units.
NORMALIZATIONS: dict[str, tuple[Triple, Triple]] = {
    "cifar10": (CIFAR10_MEAN, CIFAR10_STD),
    "cifar100": (CIFAR100_MEAN, CIFAR100_STD),
    "imagenet16": (IMAGENET16_MEAN, IMAGENET16_STD),
}


def normalization_names() -> list[str]:
    """The accepted values of ``normalization``: the named constants, then ``computed``."""
    return [*NORMALIZATIONS, "computed"]


def channel_stats(images: torch.Tensor) -> tuple[Triple, Triple]:
    """Exact per-channel mean and (population) std of uint8 images, in [0, 1] units.

    Counts the 256 pixel values per channel instead of converting to float, so 50,000
    CIFAR images take well under a second and no float copy is made.

    Args:
        images: uint8 ``(N, 3, H, W)``.

    Returns:
        ``(mean, std)``, each a 3-tuple of floats.

    Raises:
        DataError: if there are no images.

    >>> x = torch.tensor([0, 255], dtype=torch.uint8).view(2, 1, 1, 1).expand(2, 3, 1, 1)
    >>> channel_stats(x)
    ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
    """
    if images.numel() == 0:
        raise DataError("cannot compute normalization statistics of an empty training set")
    values = torch.arange(256, dtype=torch.float64) / 255.0
    means, stds = [], []
    for c in range(images.shape[1]):
        counts = torch.bincount(images[:, c].reshape(-1), minlength=256).to(torch.float64)
        total = counts.sum()
        mean = (counts * values).sum() / total
        var = (counts * (values - mean) ** 2).sum() / total
        means.append(float(mean))
        stds.append(float(var.sqrt()))
    return tuple(means), tuple(stds)  # type: ignore[return-value]


def resolve_normalization(
    choice: str | None, default: str, train_images: torch.Tensor | None = None
) -> tuple[Triple, Triple]:
    """Return ``(mean, std)`` for a ``normalization`` argument.

    Args:
        choice: ``None`` (use ``default``), a name in :data:`NORMALIZATIONS`, or
            ``computed`` (statistics of ``train_images``).
        default: the dataset's own normalization, used when ``choice`` is ``None``.
        train_images: uint8 ``(N, 3, H, W)`` training images; needed only for ``computed``.

    Returns:
        ``(mean, std)`` in [0, 1] units.

    Raises:
        DataError: if ``choice`` is not one of :func:`normalization_names`.
    """
    name = default if choice is None else choice
    if name == "computed":
        if train_images is None:  # pragma: no cover - every loader passes its images
            raise DataError("normalization 'computed' needs the training images")
        return channel_stats(train_images)
    if name not in NORMALIZATIONS:
        raise DataError(
            f"unknown normalization {name!r}; choose one of: {', '.join(normalization_names())}"
        )
    return NORMALIZATIONS[name]


def crop_padding_for(height: int) -> int:
    """Zero padding (pixels) of the random-crop augmentation for images ``height`` pixels tall.

    The benchmark pads 32-px CIFAR images by 4 and 16-px ImageNet16 images by 2, i.e. one
    eighth of the side; other sizes follow the same ratio, at least 1 px.
    """
    return max(1, height // 8)
