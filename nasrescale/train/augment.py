"""On-device augmentation and normalization, as NAS-Bench-201's torchvision transforms.

NB201 trains with ``RandomCrop(size, padding=p)`` + ``RandomHorizontalFlip()`` on the raw
image, then ``ToTensor()`` + ``Normalize(mean, std)``. Here the same happens on whole batches
of uint8 images already on the training device:

* :func:`crop_flip` takes every sample's crop window from the zero-padded image and mirrors
  it with ONE ``gather`` (crop offsets and the flip are folded into a per-sample column
  index), so there is no Python loop over samples. Padding is applied to the raw uint8
  pixels, so padded pixels are black (0) and become ``-mean / std`` after normalization,
  exactly as torchvision pads the PIL image before ``ToTensor``.
* :func:`draw_augmentation` draws the per-sample offsets (``0..2p`` in each axis) and flips
  (probability 1/2) from a caller's generator, so a run is reproducible from its seed.
* :func:`normalize` converts to the statistics' dtype (float32 unless the model trains in
  float64): ``(x / 255 - mean) / std``, mean/std in [0, 1] units.

>>> x = torch.arange(16, dtype=torch.uint8).view(1, 1, 4, 4).expand(1, 3, 4, 4)
>>> one = torch.ones(1, dtype=torch.long)
>>> crop_flip(x, 1, one, one, torch.tensor([True]))[0, 0].tolist()  # no shift, mirrored
[[3, 2, 1, 0], [7, 6, 5, 4], [11, 10, 9, 8], [15, 14, 13, 12]]
>>> crop_flip(x, 1, 0 * one, 2 * one, torch.tensor([False]))[0, 0].tolist()  # window up 1, right 1
[[0, 0, 0, 0], [1, 2, 3, 0], [5, 6, 7, 0], [9, 10, 11, 0]]
"""

from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F

__all__ = ["crop_flip", "draw_augmentation", "normalize", "stats_tensor"]


def crop_flip(images: torch.Tensor, padding: int, dy: torch.Tensor, dx: torch.Tensor, flip: torch.Tensor) -> torch.Tensor:
    """Random-crop with zero padding, then horizontal flip, for a whole batch in one gather.

    Sample ``n`` of the result is ``pad(images[n])[:, dy[n]:dy[n]+H, dx[n]:dx[n]+W]``,
    mirrored left-right where ``flip[n]``; offset ``p`` in both axes is the uncropped image.

    Args:
        images: ``(N, C, H, W)`` images, any dtype (uint8 in training; padding value is 0).
        padding: zero padding ``p`` in pixels on every side.
        dy: ``(N,)`` int64 row offsets into the padded image, each in ``0..2p``.
        dx: ``(N,)`` int64 column offsets, each in ``0..2p``.
        flip: ``(N,)`` bool, mirror the crop left-right.

    Returns:
        ``(N, C, H, W)`` tensor of the same dtype and device as ``images``.
    """
    n, c, h, w = images.shape
    padded = F.pad(images, (padding,) * 4) if padding else images
    wp = w + 2 * padding  # row stride of the padded image (pixels)
    rows = dy[:, None] + torch.arange(h, device=images.device)  # (N, H) rows in the padded image
    col = torch.arange(w, device=images.device)
    # Folding the flip into the index: output column j reads crop column W-1-j when flipped.
    cols = dx[:, None] + torch.where(flip[:, None], w - 1 - col, col)  # (N, W)
    index = (rows[:, :, None] * wp + cols[:, None, :]).reshape(n, 1, h * w).expand(n, c, h * w)
    return padded.reshape(n, c, -1).gather(2, index).view(n, c, h, w)


def draw_augmentation(n: int, padding: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Draw crop offsets and flips for ``n`` samples, as NB201's ``RandomCrop`` + ``RandomHorizontalFlip``.

    Args:
        n: number of samples.
        padding: crop padding ``p`` in pixels; offsets are uniform on ``0..2p``.
        generator: the source of randomness; the tensors are made on its device.

    Returns:
        ``(dy, dx, flip)``: int64 ``(N,)``, int64 ``(N,)``, bool ``(N,)``.
    """
    device = generator.device
    offsets = torch.randint(0, 2 * padding + 1, (2, n), generator=generator, device=device)
    flip = torch.randint(0, 2, (n,), generator=generator, device=device).bool()
    return offsets[0], offsets[1], flip


def stats_tensor(values: Sequence[float], device: torch.device | str,
                 dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Per-channel statistics as a ``(1, C, 1, 1)`` tensor of ``dtype`` on ``device``, for :func:`normalize`."""
    return torch.tensor([float(v) for v in values], dtype=dtype, device=device).view(1, -1, 1, 1)


def normalize(images: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    """``(x / 255 - mean) / std`` in the dtype of ``mean`` (float32 as a rule), as ``ToTensor()`` +
    ``Normalize(mean, std)``.

    Args:
        images: uint8 ``(N, C, H, W)``.
        mean: ``(1, C, 1, 1)`` per-channel mean in [0, 1] units (see :func:`stats_tensor`).
        std: ``(1, C, 1, 1)`` per-channel std in [0, 1] units.

    Returns:
        ``(N, C, H, W)`` of ``mean``'s dtype on the images' device.
    """
    return (images.to(mean.dtype) / 255.0 - mean) / std
