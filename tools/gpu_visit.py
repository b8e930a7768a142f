"""One short GPU visit, step by step, each step writing under ``$OUT`` and ending inside its time share.

Steps (run in the order given; ``all`` = env bench reeval):

* ``env``: device name, driver, torch/CUDA/cuDNN versions, the data pack's size and sha256
  (``env/env.txt``), then ``python -m pytest -m gpu -q`` (``env/pytest_gpu.txt``);
* ``bench``: ``benchmarks/train_throughput.py`` at full size (C = 16, N = 5, batch 256, full
  CIFAR-10 from the pack) with ``--accuracy``: rows (a)-(e), fused K = 2/6/12, jobs_per_gpu 2/4,
  bf16 and fp32, peak memory, the ``ratio=`` line (``bench/bench.txt``, ``bench/bench.json``);
* ``reeval``: the next slice of ``pipelines/nb201_cifar10_gpu_slices.toml`` (full CIFAR-10 from
  the JPEG pack), resuming the committed store ``results/<pipeline>/store.sqlite`` and copying it
  to ``reeval/store.sqlite`` after every chunk (``reeval/reeval.log``).

``visit.json`` sums up the visit (steps, status, seconds). Everything stays within the device
tool's limits: at most 8 files of at most 16 MiB, two folders down. ``--budget`` is the whole
command's time (default 540 s, under the 600-s limit of one command); each step stops before
its share runs out (a subprocess past its share is killed, and what it wrote stays).

Local subcommands (no GPU): ``size`` checks that what travels (tracked and untracked files not
ignored, ``shared/``, the carried paths) stays under 64 MiB; ``collect FOLDER`` takes a visit's
files back into ``results/`` (the store, its report, the index, the benchmark output).

``--dry-run`` shrinks every step to seconds on the CPU (shipped CIFAR-10 subset, tiny network,
a throw-away results folder), so a visit is never lost to a typo.

Usage::

    tools/gpu_visit.sh size --carry .data/cifar10.npz        # here, before the call
    tools/gpu_visit.sh env bench                             # device call 1 (~9 min)
    tools/gpu_visit.sh reeval                                # device call 2 (~9 min)
    tools/gpu_visit.sh collect /path/to/files_at             # here, after each call
    tools/gpu_visit.sh all --dry-run --out /tmp/visit        # CPU rehearsal (~1 min)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _path in (ROOT, ROOT / "tools"):  # the project (not installed on the device) and the step modules
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from gpu_visit_local import check_size, collect  # noqa: E402
from gpu_visit_steps import STEPS, Visit, finish_visit  # noqa: E402

__all__ = ["main", "parse_args"]

STEP_NAMES = ("env", "bench", "reeval")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("steps", nargs="+", metavar="STEP",
                   help="env, bench, reeval, all; or, here without a GPU: size, collect FOLDER")
    p.add_argument("--out", type=Path, default=None, help="output folder (default $OUT)")
    p.add_argument("--budget", type=float, default=540.0, help="seconds for the whole command (default 540)")
    p.add_argument("--dry-run", action="store_true", help="tiny CPU version of every step")
    p.add_argument("--data", type=Path, default=Path(".data/cifar10.npz"), help="the CIFAR-10 pack (carried)")
    p.add_argument("--pipeline", default="pipelines/nb201_cifar10_gpu_slices.toml", help="reeval pipeline")
    p.add_argument("--results", type=Path, default=None, help="results root (default results/; dry run: a temp folder)")
    p.add_argument("--cells", type=int, default=100, help="reeval: the most cells this visit runs")
    p.add_argument("--carry", action="append", default=[], help="size: a carried path (repeatable)")
    return p.parse_args(argv)


def _expand(steps: list[str]) -> list[str]:
    out: list[str] = []
    for step in steps:
        out += list(STEP_NAMES) if step == "all" else [step]
    bad = [s for s in out if s not in STEP_NAMES]
    if bad:
        raise SystemExit(f"gpu_visit: unknown step {bad[0]!r}; steps: env, bench, reeval, all (or size, collect)")
    return out


def _local(args: argparse.Namespace) -> int | None:
    """The local subcommands ``size`` and ``collect``; ``None`` if the first word is a visit step."""
    if args.steps[0] == "size":
        return check_size(ROOT, [Path(c) for c in args.carry or [str(args.data)]])
    if args.steps[0] == "collect":
        if len(args.steps) != 2:
            raise SystemExit("gpu_visit: collect FOLDER (the files_at folder of a device call)")
        return collect(Path(args.steps[1]), args.results or ROOT / "results")
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the steps; exit 0 if every step ended ok, 1 otherwise, 2 on bad input."""
    args = parse_args(argv)
    local = _local(args)
    if local is not None:
        return local
    steps = _expand(args.steps)
    out = args.out or (Path(os.environ["OUT"]) if os.environ.get("OUT") else None)
    if out is None:
        print("gpu_visit: no output folder: set $OUT (the device tool does) or pass --out DIR", file=sys.stderr)
        return 2
    visit = Visit(root=ROOT, out=out, dry_run=args.dry_run, data=args.data, pipeline=args.pipeline,
                  results=args.results, cells=args.cells, deadline=time.monotonic() + args.budget)
    problem = visit.check_inputs(steps)
    if problem:
        print(f"gpu_visit: {problem}", file=sys.stderr)
        return 2
    for i, step in enumerate(steps):
        STEPS[step](visit, visit.share(step, steps[i + 1:]))
    return finish_visit(visit)


if __name__ == "__main__":
    sys.exit(main())
