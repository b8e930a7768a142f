"""One landscape cell's grid LRs x seeds as one fused network against the same runs unfused (not a test).

The jobs are a shipped landscape's own (default ``landscape_nb201_cpu``: C = 16, N = 1, 16 px,
the flat protocol), for one cell at the first ``--lrs`` grid LRs x the pipeline's seeds, trained
for ``--epochs`` epochs on ``--train-images`` images. They run through the in-process executor
twice, back to back: unfused (one job after another) and fused (``executor.fuse``: the K members
as one network, each with its own LR). Per thread count it prints both wall times, the members'
training images per wall second (each run's test pass and set-up inside the wall, as a landscape
pays them), the fused/unfused speed ratio side by side, and each against the machine's fp32 peak
measured in the same run (``machine_peak.measure_peaks``; model GFLOP/s = images/s x the FLOPs of
training one image, 3 x the pruned network's forward). A ratio above 1 says fusing pays for CPU
landscapes on this machine; the executors leave CPU runs unfused unless it does.

Usage (an idle machine; about a minute per thread count at the defaults)::

    python benchmarks/fused_lr_grid.py --data .data/cifar10.npz --threads 1 2 --json out.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import time
from pathlib import Path

import torch

from nasrescale.executors.base import ExecutorSettings
from nasrescale.executors.local import LocalExecutor
from nasrescale.executors.threads import use_threads
from nasrescale.kinds.landscape.plan import landscape_jobs
from nasrescale.pipeline.spec import load_pipeline

from machine_peak import measure_peaks, peak_of, train_flops_per_image

#: an NB201 cell with two 3x3 convolutions, a 1x1 one, pooling and skips (a typical landscape cell)
CELL = "|nor_conv_3x3~0|+|nor_conv_1x1~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pipeline", default="landscape_nb201_cpu", help="a landscape pipeline (name or file)")
    p.add_argument("--data", default=None, help="an image pack (.npz); default: the pipeline's data")
    p.add_argument("--cell", default=CELL)
    p.add_argument("--lrs", type=int, default=6, help="grid LRs of the cell (from the grid's low end)")
    p.add_argument("--train-images", type=int, default=5000)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="more pipeline overrides")
    p.add_argument("--json", help="also write every figure to this JSON file")
    return p.parse_args(argv)


def _jobs(args: argparse.Namespace) -> list:
    overrides = [f"budget.epochs={args.epochs}", f"budget.train_subset={args.train_images}", "budget.test_subset=500"]
    if args.data:
        overrides.append(f"data.path={args.data}")
    overrides += args.set
    pipeline = load_pipeline(args.pipeline, overrides)
    return landscape_jobs(pipeline, args.cell, range(args.lrs))


def _peaks() -> dict[str, float]:
    """The machine's fp32 kernels' GFLOP/s, now."""
    return measure_peaks("cpu", precisions=("fp32",))


def _timed(jobs: list, fuse: bool, threads: int) -> float:
    """Wall seconds of every job through the in-process executor (fused or not)."""
    settings = ExecutorSettings(device="cpu", fuse=fuse, max_fused=len(jobs), threads=threads)
    outcomes: list = []
    start = time.perf_counter()
    LocalExecutor(settings, progress=False).run(jobs, outcomes.append)
    wall = time.perf_counter() - start
    failed = [o.key for o in outcomes if str(o.status) == "failed"]
    if failed:
        raise SystemExit(f"{len(failed)} runs failed, e.g. {failed[0]}: no timing")
    return wall


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    jobs = _jobs(args)
    job = jobs[0]
    side = job.data.resolution or 32
    flops = train_flops_per_image(job.arch, job.family, 10, job.width, job.cells, side)  # per trained image
    images = len(jobs) * args.train_images * args.epochs
    out = {"cpu": platform.processor() or platform.machine(), "torch": torch.__version__, "cell": args.cell,
           "members": len(jobs), "lrs": [j.protocol.lr for j in jobs[::len(jobs) // args.lrs]],
           "train_images": args.train_images, "epochs": args.epochs, "rows": []}
    print(f"{len(jobs)} runs of one cell ({args.lrs} LRs x {len(jobs) // args.lrs} seeds), "
          f"{args.train_images} images x {args.epochs} epoch(s) each, {side} px, fp32")
    print("| threads | unfused s | fused s | unfused img/s | fused img/s | fused / unfused | "
          "unfused / peak | fused / peak | fp32 peak |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for threads in args.threads:
        use_threads(threads)
        kernel, peak = peak_of(_peaks(), "fp32")
        _timed(jobs[:1], False, threads)  # warm-up: the data and the kernels loaded once
        unfused, fused = _timed(jobs, False, threads), _timed(jobs, True, threads)
        rate = {"unfused": images / unfused, "fused": images / fused}
        frac = {k: v * flops / 1e9 / peak for k, v in rate.items()}
        out["rows"].append({"threads": threads, "unfused_s": unfused, "fused_s": fused, **{f"{k}_img_s": v for k, v in rate.items()},
                            "ratio": unfused / fused, **{f"{k}_peak_fraction": v for k, v in frac.items()},
                            "peak_kernel": kernel, "peak_gflops": peak})
        print(f"| {threads} | {unfused:.1f} | {fused:.1f} | {rate['unfused']:,.0f} | {rate['fused']:,.0f} | "
              f"{unfused / fused:.2f}x | {frac['unfused']:.2f} | {frac['fused']:.2f} | {kernel} {peak:,.0f} GFLOP/s |")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
