"""Downsampling a dataset once at load: the ``resolution`` budget knob.

NAS-Bench-201's ImageNet16-120 is ImageNet box-downsampled to 16 x 16 (Chrabaszcz et al., 2017,
the variant the benchmark uses); :func:`downsample` gives any dataset the same treatment, so a
CPU budget can train on 16 x 16 CIFAR-10 at about a quarter of the 32 x 32 cost per image.
Each output pixel is the mean of the input pixels its box covers (``area`` interpolation),
rounded to the nearest integer and kept as uint8, so augmentation and normalization run on it
exactly as on the original images. The random crop's zero padding scales with the side
(CIFAR's 4 pixels at 32 become 2 at 16, ImageNet16-120's own padding).

>>> import torch
>>> from nasrescale.data.types import ImageData
>>> img = torch.arange(64, dtype=torch.uint8).view(1, 1, 8, 8).expand(1, 3, 8, 8).contiguous()
>>> d = ImageData("toy", img, torch.zeros(1, dtype=torch.int64), img, torch.zeros(1, dtype=torch.int64),
...               10, (0.5,) * 3, (0.25,) * 3, crop_padding=4)
>>> small = downsample(d, 4)  # 2 x 2 boxes: (0 + 1 + 8 + 9) / 4 = 4.5 rounds to even, 4
>>> small.train_images[0, 0, 0].tolist(), small.crop_padding, small.name
([4, 6, 8, 10], 2, 'toy@4px')
"""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F

from ..errors import DataError
from .types import ImageData

__all__ = ["downsample", "MIN_RESOLUTION"]

#: the smallest side :func:`downsample` makes (NB201's network halves the side twice)
MIN_RESOLUTION = 4


def _box(images: torch.Tensor, side: int) -> torch.Tensor:
    """uint8 ``(N, C, H, W)`` -> uint8 ``(N, C, side, side)``, each pixel its box's rounded mean."""
    out = torch.empty((images.shape[0], images.shape[1], side, side), dtype=torch.uint8)
    for start in range(0, images.shape[0], 4096):  # bounded float memory on the full training set
        chunk = images[start:start + 4096].to(torch.float64)
        out[start:start + 4096] = F.interpolate(chunk, size=(side, side), mode="area").round_().to(torch.uint8)
    return out


def downsample(data: ImageData, resolution: int) -> ImageData:
    """``data`` with every image box-downsampled to ``resolution`` x ``resolution`` pixels.

    Args:
        data: square images of side ``H``.
        resolution: the new side, ``MIN_RESOLUTION <= resolution <= H``; ``H`` returns ``data``.

    Returns:
        The dataset at the new side, named ``<name>@<resolution>px``, with the crop padding
        scaled by ``resolution / H`` (at least 1 where it was positive).

    Raises:
        DataError: a resolution out of range or non-square images (naming the allowed range).
    """
    _, height, width = data.image_shape
    if height != width:
        raise DataError(f"budget.resolution needs square images; {data.name} has {height} x {width}")
    if not MIN_RESOLUTION <= resolution <= height:
        raise DataError(f"budget.resolution = {resolution}: must be between {MIN_RESOLUTION} and the images' side "
                        f"{height} (e.g. 16 for a quarter of the pixels); leave it unset for full size")
    if resolution == height:
        return data
    padding = max(1, round(data.crop_padding * resolution / height)) if data.crop_padding else 0
    return dataclasses.replace(data, name=f"{data.name}@{resolution}px", train_images=_box(data.train_images, resolution),
                               test_images=_box(data.test_images, resolution), crop_padding=padding)
