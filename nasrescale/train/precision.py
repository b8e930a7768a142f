"""Exact fp32 on CUDA: :func:`no_tf32`, the training precision ``protocol.precision = "fp32"``.

PyTorch lets cuDNN convolutions use TF32 (10-bit mantissa) by default on Ampere and newer
GPUs; the benchmark's fp32 numbers predate that, so ``fp32`` turns TF32 off for the run.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch

__all__ = ["no_tf32"]


@contextlib.contextmanager
def no_tf32() -> Iterator[None]:
    """Disable TF32 in cuDNN convolutions and CUDA matmuls inside the block; restore after.

    >>> before = torch.backends.cudnn.allow_tf32
    >>> with no_tf32():
    ...     torch.backends.cudnn.allow_tf32
    False
    >>> torch.backends.cudnn.allow_tf32 == before
    True
    """
    saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved
