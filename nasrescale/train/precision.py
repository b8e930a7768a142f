"""Training precision: which one a run trains in (:func:`trained_precision`) and exact fp32 on
CUDA (:func:`no_tf32`).

``protocol.precision`` is ``bf16`` (autocast) or ``fp32``; the CPU trains in fp32 whatever the
protocol says (unless asked for bf16 autocast there too), so CPU results do not depend on a
CPU's bf16 support. PyTorch lets cuDNN convolutions use TF32 (10-bit mantissa) by default on
Ampere and newer GPUs; the benchmark's fp32 numbers predate that, so ``fp32`` turns TF32 off
for the run. :func:`cudnn_autotune` lets cuDNN pick its fastest convolution algorithms for a
run's fixed shapes.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch

__all__ = ["no_tf32", "cudnn_autotune", "trained_precision"]


def trained_precision(setting: str, device: str, cpu_autocast: bool = False) -> str:
    """The precision a run of ``setting`` trains in on ``device``: the setting on CUDA (and on
    the CPU with ``cpu_autocast``), ``fp32`` elsewhere.

    >>> trained_precision("bf16", "cpu"), trained_precision("bf16", "cuda:0"), trained_precision("fp32", "cuda")
    ('fp32', 'bf16', 'fp32')
    >>> trained_precision("bf16", "cpu", cpu_autocast=True)
    'bf16'
    """
    return setting if str(device).startswith("cuda") or cpu_autocast else "fp32"


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


@contextlib.contextmanager
def cudnn_autotune(enabled: bool = True) -> Iterator[None]:
    """``torch.backends.cudnn.benchmark`` set to ``enabled`` inside the block; restored after.

    >>> before = torch.backends.cudnn.benchmark
    >>> with cudnn_autotune():
    ...     torch.backends.cudnn.benchmark
    True
    >>> torch.backends.cudnn.benchmark == before
    True
    """
    saved = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = enabled
    try:
        yield
    finally:
        torch.backends.cudnn.benchmark = saved
