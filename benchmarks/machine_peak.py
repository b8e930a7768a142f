"""The machine's measured limit and a configuration's share of it (not a test).

* :func:`measure_peaks`: fp32 GEMM (``n x n`` matmul) and 3x3-convolution (forward, NCHW and
  channels_last, stride 1, padding 1) throughput in GFLOP/s on the device, timed here;
* :func:`train_flops_per_image`: the FLOPs one trained image costs an NB201 network:
  3 x the forward pass (forward, and a backward of about twice its cost), the forward counted
  by :func:`nasrescale.models.cost.model_cost` (multiply-accumulates of the pruned network x 2);
* :func:`profile_top_ops`: ``torch.profiler``'s busiest ops of a callable.

``python benchmarks/machine_peak.py`` prints the peaks alone; ``train_throughput.py`` prints them
beside every configuration's achieved GFLOP/s and ``peak_fraction``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import torch
import torch.nn.functional as F

from nasrescale.models.cost import model_cost
from nasrescale.space.families import CellFamily

__all__ = ["measure_peaks", "train_flops_per_image", "profile_top_ops"]


def _rate(fn: Callable[[], Any], flops: float, cuda: bool, seconds: float = 1.0) -> float:
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


def measure_peaks(device: str, channels: int = 16, side: int = 32, batch: int = 256, n: int = 2048
                  ) -> dict[str, float]:
    """fp32 GFLOP/s of a ``n x n`` GEMM and of a 3x3 convolution (``channels`` in and out,
    ``side x side``, ``batch`` images) in NCHW and in channels_last, on ``device``."""
    cuda = device.startswith("cuda")
    g = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(n, n, device=device, generator=g)
    b = torch.randn(n, n, device=device, generator=g)
    x = torch.randn(batch, channels, side, side, device=device, generator=g)
    w = torch.randn(channels, channels, 3, 3, device=device, generator=g)
    conv_flops = 2.0 * batch * side * side * channels * channels * 9
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False  # fp32, as "fp32" trains
    try:
        with torch.no_grad():
            out = {"gemm_gflops": _rate(lambda: a @ b, 2.0 * n ** 3, cuda),
                   "conv3x3_nchw_gflops": _rate(lambda: F.conv2d(x, w, padding=1), conv_flops, cuda)}
            xc, wc = x.contiguous(memory_format=torch.channels_last), w.contiguous(memory_format=torch.channels_last)
            out["conv3x3_channels_last_gflops"] = _rate(lambda: F.conv2d(xc, wc, padding=1), conv_flops, cuda)
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
    return out


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
    print(f"device {args.device}, {torch.get_num_threads()} threads: " + ", ".join(
        f"{k}={v:.1f}" for k, v in peaks.items()))


if __name__ == "__main__":
    main()
