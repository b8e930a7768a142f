"""On-device augmentation and normalization, as NAS-Bench-201's torchvision transforms.

NB201 trains with ``RandomCrop(size, padding=p)`` + ``RandomHorizontalFlip()`` on the raw
image, then ``ToTensor()`` + ``Normalize(mean, std)``. Here the same happens on whole batches
of uint8 images already on the training device:

* :func:`crop_windows` gives every sample's crop window in the zero-padded image as row and
  column indices, the flip folded into the columns, so one indexing of the padded images
  crops and mirrors a whole batch (no Python loop over samples). Padding is applied to the
  raw uint8 pixels, so padded pixels are black (0) and become ``-mean / std`` after
  normalization, exactly as torchvision pads the PIL image before ``ToTensor``. The engine
  indexes channels-last images (:mod:`~nasrescale.train.step`); :func:`crop_flip` is the
  same on ``(N, C, H, W)`` images.
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

__all__ = ["crop_windows", "crop_flip", "draw_augmentation", "normalize", "stats_tensor"]


def crop_windows(dy: torch.Tensor, dx: torch.Tensor, flip: torch.Tensor, height: int, width: int
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows ``(B, H, 1, K)`` and columns ``(B, 1, W, K)`` of crop windows in the padded images
    for ``(B, K)`` draws: sample ``b`` of member ``k`` reads rows ``dy[b, k] + i`` and columns
    ``dx[b, k] + j`` (``dx[b, k] + W - 1 - j`` where ``flip[b, k]``). Indexing ``(N, H + 2p,
    W + 2p, C)`` images by ``(B, 1, 1, K)`` image indices and the two gives ``(B, H, W, K, C)``."""
    r = torch.arange(height, device=dy.device).view(1, -1, 1, 1)
    c = torch.arange(width, device=dy.device).view(1, 1, -1, 1)
    rows = dy[:, None, None, :] + r
    cols = dx[:, None, None, :] + torch.where(flip[:, None, None, :], width - 1 - c, c)
    return rows, cols


def crop_flip(images: torch.Tensor, padding: int, dy: torch.Tensor, dx: torch.Tensor, flip: torch.Tensor) -> torch.Tensor:
    """Random-crop with zero padding ``p``, then horizontal flip, of ``(N, C, H, W)`` images in one
    indexing: sample ``n`` is ``pad(images[n])[:, dy[n]:dy[n]+H, dx[n]:dx[n]+W]`` (offsets
    ``(N,)`` int64 in ``0..2p``; ``p, p`` is the uncropped image), mirrored where ``flip[n]``.
    Returns ``(N, C, H, W)`` (channels last in memory) of the images' dtype and device."""
    n, c, h, w = images.shape
    padded = (F.pad(images, (padding,) * 4) if padding else images).permute(0, 2, 3, 1)
    rows, cols = crop_windows(dy[:, None], dx[:, None], flip[:, None], h, w)
    index = torch.arange(n, device=images.device).view(n, 1, 1, 1)
    return padded[index, rows, cols].view(n, h, w, c).permute(0, 3, 1, 2)


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
    """``(x / 255 - mean) / std`` of uint8 images, as ``ToTensor()`` + ``Normalize(mean, std)``:
    a new tensor of their shape and layout in ``mean``'s dtype (computed in place on it). The
    statistics are in [0, 1] units, shaped to broadcast: ``(1, C, 1, 1)`` for ``(N, C, H, W)``
    (:func:`stats_tensor`), ``(C,)`` for channels last."""
    return images.to(mean.dtype, copy=True).div_(255.0).sub_(mean).div_(std)
