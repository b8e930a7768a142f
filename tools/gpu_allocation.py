"""The benchmark and a slice of the re-evaluation inside a time-limited GPU allocation.

A SLURM job with a wall-time limit, a preemptible instance or a notebook with a runtime cap
gives GPU time in bounded pieces. Each command here runs the steps given, in order, inside a
time budget (``--budget`` seconds), writes everything it measured under one output folder
(``--out DIR``, else ``$OUT``) and stops each step before its time share runs out, so what it
finished is never lost; the re-evaluation resumes the committed store the next time.

Steps (``all`` = env bench reeval):

* ``env``: device name, driver, torch/CUDA/cuDNN versions, the data pack's size and sha256
  (``env/env.txt``), then ``python -m pytest -m gpu -q`` (``env/pytest_gpu.txt``);
* ``bench``: ``benchmarks/train_throughput.py`` at full size (C = 16, N = 5, batch 256, full
  CIFAR-10 from the pack) with ``--accuracy``: rows (a)-(e), fused K = 2/6/12, jobs_per_gpu 2/4,
  bf16 and fp32, peak memory, the ``ratio=`` line (``bench/bench.txt``, ``bench/bench.json``);
* ``reeval``: the next slice of ``pipelines/nb201_cifar10_gpu_slices.toml`` (full CIFAR-10 from
  the JPEG pack), resuming the committed store ``results/<pipeline>/store.sqlite`` and copying it
  to ``reeval/store.sqlite`` after every chunk (``reeval/reeval.log``).

``allocation.json`` sums the command up (steps, status, seconds, time shares) and names what
breaks the limits on what comes back (``--max-files``, ``--max-file-mib``, ``--max-depth``).

Subcommands on the machine that holds the checkout (no GPU): ``size`` checks that what must be
copied to the GPU machine (tracked and untracked files git does not ignore, and the
``--include`` paths) stays under ``--max-mib``; ``collect FOLDER`` takes an output folder back
into ``results/`` (the store, its report, the index, the benchmark output).

``--dry-run`` shrinks every step to seconds on the CPU (shipped CIFAR-10 subset, tiny network,
a throw-away results folder), so a typo never costs GPU time.

Usage::

    tools/gpu_allocation.sh size --include .data/cifar10.npz   # before copying
    tools/gpu_allocation.sh env bench --out OUT_DIR            # on the GPU machine
    tools/gpu_allocation.sh reeval --budget 3300 --out OUT_DIR # a one-hour job
    tools/gpu_allocation.sh collect OUT_DIR                    # after copying OUT_DIR back
    tools/gpu_allocation.sh all --dry-run --out /tmp/gpu_out   # CPU rehearsal (~1 min)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _path in (ROOT, ROOT / "tools"):  # the project (importable without installing it) and the step modules
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from gpu_allocation_limits import MIB, OutputLimits, add_limit_options, positive  # noqa: E402
from gpu_allocation_local import check_size, collect  # noqa: E402
from gpu_allocation_steps import STEPS, Allocation, finish  # noqa: E402

__all__ = ["main", "parse_args"]

STEP_NAMES = ("env", "bench", "reeval")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("steps", nargs="+", metavar="STEP",
                   help="env, bench, reeval, all; or, without a GPU: size, collect FOLDER")
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help="output folder (default: $OUT)")
    p.add_argument("--budget", type=positive(float), default=540.0, metavar="SECONDS",
                   help="seconds for the whole command (default 540): the allocation's time left, less a margin "
                        "for starting and copying")
    p.add_argument("--dry-run", action="store_true", help="tiny CPU version of every step")
    p.add_argument("--data", type=Path, default=Path(".data/cifar10.npz"), metavar="FILE",
                   help="the CIFAR-10 pack, git-ignored (default .data/cifar10.npz)")
    p.add_argument("--pipeline", default="pipelines/nb201_cifar10_gpu_slices.toml", metavar="FILE",
                   help="the pipeline reeval runs in slices (default pipelines/nb201_cifar10_gpu_slices.toml)")
    p.add_argument("--results", type=Path, default=None, metavar="DIR",
                   help="results root (default results/; dry run: a temp folder)")
    p.add_argument("--cells", type=positive(int), default=100, metavar="N",
                   help="reeval: the most cells this command runs (default 100)")
    p.add_argument("--include", action="append", default=[], metavar="PATH",
                   help="size: an ignored path also copied to the GPU machine (repeatable; default: --data)")
    add_limit_options(p)
    return p.parse_args(argv)


def _expand(steps: list[str]) -> list[str]:
    out: list[str] = []
    for step in steps:
        out += list(STEP_NAMES) if step == "all" else [step]
    bad = [s for s in out if s not in STEP_NAMES]
    if bad:
        raise SystemExit(f"gpu_allocation: unknown step {bad[0]!r}; steps: env, bench, reeval, all (or size, collect)")
    return out


def _local(args: argparse.Namespace) -> int | None:
    """The subcommands ``size`` and ``collect``; ``None`` if the first word is a step."""
    if args.steps[0] == "size":
        return check_size(ROOT, [Path(c) for c in args.include or [str(args.data)]], int(args.max_mib * MIB))
    if args.steps[0] == "collect":
        if len(args.steps) != 2:
            raise SystemExit("gpu_allocation: collect FOLDER (the output folder, copied back from the GPU machine)")
        return collect(Path(args.steps[1]), args.results or ROOT / "results")
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the steps; exit 0 if every step ended ok within the output limits, 1 otherwise, 2 on bad input."""
    args = parse_args(argv)
    local = _local(args)
    if local is not None:
        return local
    steps = _expand(args.steps)
    out = args.out or (Path(os.environ["OUT"]) if os.environ.get("OUT") else None)
    if out is None:
        print("gpu_allocation: no output folder: pass --out DIR (or set OUT in the environment)", file=sys.stderr)
        return 2
    limits = OutputLimits(max_files=args.max_files, max_file_mib=args.max_file_mib, max_depth=args.max_depth)
    alloc = Allocation(root=ROOT, out=out, dry_run=args.dry_run, data=args.data, pipeline=args.pipeline,
                       results=args.results, cells=args.cells, deadline=time.monotonic() + args.budget, limits=limits)
    problem = alloc.check_inputs(steps)
    if problem:
        print(f"gpu_allocation: {problem}", file=sys.stderr)
        return 2
    for i, step in enumerate(steps):
        STEPS[step](alloc, alloc.share(step, steps[i + 1:]))
    return finish(alloc)


if __name__ == "__main__":
    sys.exit(main())
