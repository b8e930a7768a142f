"""The machine's measured limit per precision and a configuration's share of it (not a test).

* :func:`measure_peaks`: GFLOP/s of an ``n x n`` GEMM and of a 3x3 convolution (forward, stride 1,
  padding 1) in NCHW and in channels_last, per precision, timed here in the same run:
  ``fp32`` (exact: TF32 off), ``tf32`` (TF32 on; CUDA only) and ``bf16`` (bf16 tensors);
* :func:`peak_of`: a precision's peak, the fastest of its kernels;
* :func:`vendor_peaks`: the vendor's dense (no sparsity) datasheet peak of a known GPU, per
  precision, printed beside the measured one;
* :func:`train_flops_per_image`: the FLOPs one trained image costs an NB201 network:
  3 x the forward pass (forward, and a backward of about twice its cost), the forward counted
  by :func:`nasrescale.models.cost.model_cost` (multiply-accumulates of the pruned network x 2);
* :func:`profile_top_ops`: ``torch.profiler``'s busiest ops of a callable.

``python benchmarks/machine_peak.py`` prints the peaks alone; ``train_throughput.py`` prints them
beside every configuration's achieved GFLOP/s and its ``peak_fraction`` against the peak of the
precision it trains in.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from typing import Any, Callable, Iterator

import torch
import torch.nn.functional as F

from nasrescale.models.cost import model_cost
from nasrescale.space.families import CellFamily

__all__ = ["KERNELS", "measure_peaks", "device_precisions", "peak_of", "conv_rates", "vendor_peaks", "format_peaks",
           "train_flops_per_image", "profile_top_ops"]

#: the kernels timed per precision: a key of :func:`measure_peaks` is ``f"{kernel}_{precision}"``
KERNELS = ("gemm", "conv3x3_nchw", "conv3x3_channels_last")

#: dense (no structured sparsity) peak TFLOP/s from NVIDIA's datasheets, matched by a part of the
#: device name (the first match wins: H100 PCIe before the SXM part)
VENDOR_DENSE_TFLOPS: tuple[tuple[str, dict[str, float]], ...] = (
    ("H200", {"fp32": 67.0, "tf32": 494.7, "bf16": 989.4}),
    ("H100 PCIe", {"fp32": 51.2, "tf32": 378.0, "bf16": 756.0}),
    ("H100", {"fp32": 67.0, "tf32": 494.7, "bf16": 989.4}),
    ("A100", {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0}),
)


def _rate(fn: Callable[[], Any], flops: float, cuda: bool, seconds: float) -> float:
    """GFLOP/s of ``fn`` (``flops`` per call): one warm-up call, then calls for about ``seconds``."""
    fn()
    if cuda:
        torch.cuda.synchronize()
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        if cuda:
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and calls >= 3:
            return flops * calls / elapsed / 1e9


def device_precisions(device: str) -> tuple[str, ...]:
    """The precisions :func:`measure_peaks` times on ``device``: TF32 exists on CUDA only.

    >>> device_precisions("cpu"), device_precisions("cuda:0")
    (('fp32', 'bf16'), ('fp32', 'tf32', 'bf16'))
    """
    return ("fp32", "tf32", "bf16") if str(device).startswith("cuda") else ("fp32", "bf16")


@contextlib.contextmanager
def _tf32(enabled: bool) -> Iterator[None]:
    """TF32 in CUDA matmuls and cuDNN convolutions on or off inside the block; restored after."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def measure_peaks(device: str, channels: int = 16, side: int = 32, batch: int = 256, n: int = 2048,
                  precisions: tuple[str, ...] | None = None, seconds: float = 1.0) -> dict[str, float]:
    """GFLOP/s of every :data:`KERNELS` entry in every precision (default: :func:`device_precisions`),
    keyed ``f"{kernel}_{precision}"``: a ``n x n`` GEMM and a 3x3 convolution (``channels`` in and
    out, ``side x side``, ``batch`` images) in NCHW and channels_last."""
    cuda = str(device).startswith("cuda")
    g = torch.Generator(device=device).manual_seed(0)
    a, b = (torch.randn(n, n, device=device, generator=g) for _ in range(2))
    x = torch.randn(batch, channels, side, side, device=device, generator=g)
    w = torch.randn(channels, channels, 3, 3, device=device, generator=g)
    conv_flops = 2.0 * batch * side * side * channels * channels * 9
    out: dict[str, float] = {}
    for precision in precisions or device_precisions(device):
        dtype = torch.bfloat16 if precision == "bf16" else torch.float32
        pa, pb, px, pw = (t.to(dtype) for t in (a, b, x, w))
        cx, cw = (t.contiguous(memory_format=torch.channels_last) for t in (px, pw))
        with _tf32(precision == "tf32"), torch.no_grad():
            out[f"gemm_{precision}"] = _rate(lambda: pa @ pb, 2.0 * n ** 3, cuda, seconds)
            out[f"conv3x3_nchw_{precision}"] = _rate(lambda: F.conv2d(px, pw, padding=1), conv_flops, cuda, seconds)
            out[f"conv3x3_channels_last_{precision}"] = _rate(lambda: F.conv2d(cx, cw, padding=1), conv_flops, cuda,
                                                              seconds)
    return out


def peak_of(peaks: dict[str, float], precision: str) -> tuple[str, float]:
    """``(kernel, GFLOP/s)`` of ``precision``'s fastest measured kernel.

    >>> peak_of({"gemm_fp32": 40.0, "conv3x3_nchw_fp32": 9.0, "gemm_bf16": 300.0}, "fp32")
    ('gemm', 40.0)
    """
    own = {k[:-len(precision) - 1]: v for k, v in peaks.items() if k.endswith(f"_{precision}")}
    if not own:
        raise KeyError(f"no peak measured in {precision!r}; measured: {', '.join(peaks)}")
    kernel = max(own, key=own.__getitem__)
    return kernel, own[kernel]


def conv_rates(peaks: dict[str, float], precision: str) -> dict[str, float]:
    """The 3x3 convolution's GFLOP/s in ``precision`` per memory format (``contiguous`` is NCHW),
    the measured table :func:`nasrescale.train.memory_format.pick_memory_format` chooses from.

    >>> conv_rates({"conv3x3_nchw_fp32": 9.0, "conv3x3_channels_last_fp32": 2.3}, "fp32")
    {'contiguous': 9.0, 'channels_last': 2.3}
    """
    return {fmt: peaks[f"conv3x3_{name}_{precision}"] for fmt, name in
            (("contiguous", "nchw"), ("channels_last", "channels_last")) if f"conv3x3_{name}_{precision}" in peaks}


def vendor_peaks(device_name: str) -> dict[str, float] | None:
    """The vendor's dense peak GFLOP/s per precision of a known GPU; ``None`` for another device.

    >>> vendor_peaks("NVIDIA H200")["bf16"], vendor_peaks("NVIDIA H100 PCIe")["fp32"], vendor_peaks("cpu")
    (989400.0, 51200.0, None)
    """
    for part, tflops in VENDOR_DENSE_TFLOPS:
        if part in device_name:
            return {p: v * 1000.0 for p, v in tflops.items()}
    return None


def format_peaks(peaks: dict[str, float], device_name: str) -> list[str]:
    """One line per precision: its kernels' measured GFLOP/s, its peak and, for a known GPU, the
    vendor's dense peak beside it."""
    vendor = vendor_peaks(device_name) or {}
    precisions = list(dict.fromkeys(k.rsplit("_", 1)[1] for k in peaks))
    lines = []
    for p in precisions:
        kernel, best = peak_of(peaks, p)
        rates = ", ".join(f"{k}={peaks[f'{k}_{p}']:,.1f}" for k in KERNELS if f"{k}_{p}" in peaks)
        label = "fp32 (exact, TF32 off)" if p == "fp32" else p
        side = (f"; vendor dense peak {vendor[p]:,.0f} ({best / vendor[p]:.3f} of it measured)"
                if p in vendor else "; vendor dense peak: not known for this device")
        lines.append(f"peak {label}: {best:,.1f} GFLOP/s ({kernel}) [{rates}]{side}")
    return lines


def train_flops_per_image(arch: str, family: CellFamily, num_classes: int, width: int, cells: int,
                          side: int) -> float:
    """FLOPs of training one image: 3 x the pruned network's forward (2 x its multiply-accumulates)."""
    cost = model_cost(arch, family, num_classes, width=width, cells=cells, in_shape=(3, side, side))
    return 3 * 2 * cost["flops_m_effective"] * 1e6


def profile_top_ops(fn: Callable[[], Any], rows: int, cuda: bool) -> str:
    """``fn()`` under ``torch.profiler``; the table of its ``rows`` busiest ops (self time)."""
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
    with torch.profiler.profile(activities=activities) as prof:
        fn()
    key = "self_cuda_time_total" if cuda else "self_cpu_time_total"
    return prof.key_averages().table(sort_by=key, row_limit=rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--channels", type=int, default=16)
    parser.add_argument("--side", type=int, default=32)
    parser.add_argument("--n", type=int, default=2048, help="GEMM size")
    args = parser.parse_args()
    peaks = measure_peaks(args.device, args.channels, args.side, n=args.n)
    name = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else "cpu"
    print(f"device {name}, {torch.get_num_threads()} threads:")
    print("\n".join(format_peaks(peaks, name)))


if __name__ == "__main__":
    main()
