"""The quickstart alone and beside one busy process, per intra-op thread count (not a test).

A CPU job's default thread count (the policy of :mod:`nasrescale.executors.threads`) is chosen
from this measurement: ``nasrescale run quickstart --threads N`` is timed on an otherwise idle
machine and again beside one CPU-bound single-thread process (a Python busy loop), for each N.
It prints, side by side, each wall time, the slowdown beside the busy process (target: at most
1.5x) and each idle time against the reference run (two threads, the count PyTorch takes on a
2-core machine without a policy; target: at most 1.15x), with the machine's measured fp32 GEMM
and convolution peak of one and of all threads (``machine_peak.measure_peaks``) from the same run.

Usage (an idle machine; a few minutes per run)::

    python benchmarks/threads_under_load.py --threads 1 2 auto --out results/threads_under_load.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from machine_peak import measure_peaks, peak_of


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _quickstart(threads: str, root: Path, label: str) -> float:
    """Wall seconds of a fresh quickstart run with ``threads`` intra-op threads (``auto``: the
    default policy, the cores other processes leave free)."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    given = [] if threads == "auto" else ["--threads", threads]
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "nasrescale", "run", "quickstart", "--results", str(root / label),
                    "--quiet", *given], check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _beside_busy(threads: str, root: Path, label: str) -> float:
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        return _quickstart(threads, root, label)
    finally:
        busy.kill()
        busy.wait()


def _peaks() -> dict[str, float]:
    before = torch.get_num_threads()
    out = {}
    for n in (1, os.cpu_count() or 1):
        torch.set_num_threads(n)
        out[f"fp32 peak, {n} thread(s) (GFLOP/s)"] = peak_of(measure_peaks("cpu"), "fp32")[1]
    torch.set_num_threads(before)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", nargs="+", default=["1", "2", "auto"],
                        help="thread counts to time; auto: the default policy (no --threads)")
    parser.add_argument("--reference", default="2", help="the thread count the idle times are set against")
    parser.add_argument("--alone-only", nargs="*", default=[], metavar="N",
                        help="of --threads, the counts timed alone only (e.g. the reference, whose time beside a "
                             "busy process is already known)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.threads:
            rows[n] = {"alone_s": _quickstart(n, Path(tmp), f"alone{n}"),
                       "beside_busy_s": (float("nan") if n in args.alone_only
                                         else _beside_busy(n, Path(tmp), f"busy{n}"))}
    ref = rows.get(args.reference, next(iter(rows.values())))["alone_s"]
    print(f"machine: {_cpu_name()}, {os.cpu_count()} cores, torch {torch.__version__}")
    peaks = _peaks()
    for k, v in peaks.items():
        print(f"{k}: {v:.1f}")
    print(f"{'threads':>7} {'alone (s)':>10} {'beside a busy process (s)':>26} {'slowdown':>9} "
          f"{'alone / reference':>18}")
    for n, r in rows.items():
        r["slowdown"] = r["beside_busy_s"] / r["alone_s"]
        r["alone_vs_reference"] = r["alone_s"] / ref
        print(f"{n:>7} {r['alone_s']:>10.1f} {r['beside_busy_s']:>26.1f} {r['slowdown']:>8.2f}x "
              f"{r['alone_vs_reference']:>17.2f}x")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"cpu": _cpu_name(), "cores": os.cpu_count(), "torch": torch.__version__,
                                        "reference_threads": args.reference, "peaks": peaks,
                                        "runs": {str(n): r for n, r in rows.items()}}, indent=1))


if __name__ == "__main__":
    main()
