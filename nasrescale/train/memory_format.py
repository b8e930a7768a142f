"""Which memory format a run's activations and weights take: :func:`pick_memory_format`.

The default rule, used where nothing was measured (``RunOptions(memory_format="auto")``): NCHW
(``contiguous``) on CUDA in exact fp32, where cuDNN's fp32 3x3 convolutions at NB201's widths
run several times faster in NCHW than in NHWC, and ``channels_last`` everywhere else (oneDNN's
convolutions on the CPU, cuDNN's tensor-core ones in bf16). Given a measured table (GFLOP/s of
the same convolution per format, e.g. from ``benchmarks/machine_peak.py``), the faster format
wins and a tie keeps the rule's.
"""

from __future__ import annotations

from typing import Mapping

__all__ = ["default_memory_format", "pick_memory_format"]


def default_memory_format(device_type: str, precision: str) -> str:
    """The rule's format for a device type (``cpu``, ``cuda``) and the precision a run trains in.

    >>> default_memory_format("cuda", "fp32"), default_memory_format("cuda", "bf16"), default_memory_format("cpu", "fp32")
    ('contiguous', 'channels_last', 'channels_last')
    """
    return "contiguous" if device_type == "cuda" and precision == "fp32" else "channels_last"


def pick_memory_format(device_type: str, precision: str, measured: Mapping[str, float] | None = None) -> str:
    """The rule's format unless ``measured`` (GFLOP/s per format) shows the other one faster.

    >>> pick_memory_format("cuda", "fp32", {"contiguous": 9.3, "channels_last": 2.3})
    'contiguous'
    >>> pick_memory_format("cuda", "fp32", {"contiguous": 2.0, "channels_last": 2.3})
    'channels_last'
    >>> pick_memory_format("cpu", "fp32", {"contiguous": 3.0, "channels_last": 3.0})
    'channels_last'
    """
    rule = default_memory_format(device_type, precision)
    if not measured or rule not in measured:
        return rule
    best = max(measured, key=measured.__getitem__)
    return best if measured[best] > measured[rule] else rule
