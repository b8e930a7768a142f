"""The command line of tools/gpu_allocation.sh (docs/gpu_allocation.md, "Options"): the steps on a
GPU (or ``--dry-run`` on the CPU), and ``plan``, ``size`` and ``collect FOLDER`` on any machine."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import ROOT
from . import __doc__ as PACKAGE_DOC
from .collect import collect
from .plan import Plan, format_plan, loan_plan
from .runner import run_steps
from .sizes import PACK_HINT, STEPS
from .transfer import refuse, size

__all__ = ["parse_args", "main"]

_LIMITS = (("budget", 540.0, "SECONDS", "the whole command's time: the allocation's time left, less a margin"),
           ("cells", 100, "N", "reeval: the most cells"), ("max-mib", 64.0, "MIB", "size: the most MiB copied"),
           ("max-files", 10, "N", "the most files the output folder may hold"),
           ("max-file-mib", 16.0, "MIB", "the largest output file"),
           ("max-depth", 2, "N", "the most folders down an output file may lie"))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (docs/gpu_allocation.md); a negative number is refused."""
    p = argparse.ArgumentParser(prog="gpu_allocation.sh", description=(PACKAGE_DOC or "").split("\n\n")[0])
    p.add_argument("steps", nargs="+", metavar="STEP",
                   help="env, bench, parity, modes, reeval, all; without a GPU: plan, size, collect FOLDER")
    p.add_argument("--out", type=Path, metavar="DIR", help="output folder (default: $OUT)")
    p.add_argument("--dry-run", action="store_true", help="every step tiny, on the CPU")
    p.add_argument("--data", type=Path, default=Path(".data/cifar10.npz"), metavar="FILE",
                   help="the CIFAR-10 pack, git-ignored (default .data/cifar10.npz)")
    p.add_argument("--pipeline", default="pipelines/landscape_nb201_full_gpu.toml", metavar="FILE",
                   help="the pipeline reeval runs in slices (default pipelines/landscape_nb201_full_gpu.toml, the "
                        "per-cell LR landscape at full size, fp32)")
    p.add_argument("--gpu", metavar="NAME", help="plan: the GPU kind planned for (default: this machine's GPU, "
                                                 "else the newest committed allocation's)")
    p.add_argument("--precision", choices=("auto", "fp32", "bf16"), default="auto",
                   help="the science's precision: auto (default) bf16 where the committed parity verdict for the GPU "
                        "kind and code is 'equivalent', else fp32; never one the run's store does not already hold")
    p.add_argument("--results", type=Path, metavar="DIR",
                   help="results root (default results/; dry run: a temp folder)")
    p.add_argument("--include", action="append", default=[], type=Path, metavar="PATH",
                   help="size: an ignored path also copied (repeatable; default: --data)")
    for name, default, unit, what in _LIMITS:
        p.add_argument(f"--{name}", type=type(default), default=default, metavar=unit,
                       help=f"{what} (default {default:g})")
    args = p.parse_args(argv)
    for name in ("budget", "cells", "max_mib", "max_files", "max_file_mib", "max_depth"):
        if getattr(args, name) < 0:
            p.error(f"argument --{name.replace('_', '-')}: {getattr(args, name)!r} is negative: give 0 or more")
    return args


def _print_plan(args: argparse.Namespace) -> int:
    """``plan``: the loan's dry run; 2 where the science is refused (its precision), else 0."""
    plan = loan_plan(args, ROOT)
    print(format_plan(plan))
    return refuse(f"plan: no science slice: {plan.refused}") if plan.refused else 0


def _bad_input(args: argparse.Namespace, steps: list[str], out: Path | None) -> str | None:
    """Why the steps cannot start (``None``: they can)."""
    bad = [s for s in steps if s not in STEPS]
    if bad:
        return f"unknown step {bad[0]!r}; steps: {', '.join(STEPS)}, all (or plan, size, collect)"
    if out is None:
        return "no output folder: pass --out DIR (or set OUT in the environment)"
    if not args.dry_run and {"bench", "parity", "modes", "reeval"} & set(steps) and not (ROOT / args.data).is_file():
        return (f"the CIFAR-10 pack {str(args.data)!r} is missing: make it once ({PACK_HINT}) and copy it with the "
                f"checkout (`tools/gpu_allocation.sh size --include {args.data}` measures both)")
    if "reeval" in steps and not (ROOT / args.pipeline).is_file():
        return f"no pipeline file {args.pipeline!r} (relative to the repository root)"
    return None


def _plan_or_none(args: argparse.Namespace) -> Plan | None:
    """The loan's plan on a GPU (``None`` in a dry run, or where it cannot be made: said on stderr)."""
    if args.dry_run:
        return None
    try:
        return loan_plan(args, ROOT)
    except Exception as err:  # noqa: BLE001 - without a plan the steps run as given, with the fixed shares
        print(f"gpu_allocation: no plan ({type(err).__name__}: {err}); the steps run as given, the science "
              "refused (its precision unchecked)", file=sys.stderr)
        return None


def main(argv: list[str] | None = None) -> int:
    """Exit 0 if every step ended ok within the output limits, 1 otherwise, 2 on bad input."""
    args = parse_args(argv)
    # the steps' subprocesses import the checkout's package, whatever is installed
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    if args.steps[0] == "size":
        return size(args.include or [args.data], args.max_mib, Path(args.pipeline))
    if args.steps[0] == "plan":
        return _print_plan(args)
    if args.steps[0] == "collect":
        if len(args.steps) != 2:
            return refuse("collect FOLDER (the output folder, copied back from the GPU machine)")
        return collect(Path(args.steps[1]), args.results or ROOT / "results")
    steps = [s for step in args.steps for s in (STEPS if step == "all" else [step])]
    out = args.out or (Path(os.environ["OUT"]) if os.environ.get("OUT") else None)
    problem = _bad_input(args, steps, out)
    if problem or out is None:
        return refuse(problem or "no output folder")
    plan = _plan_or_none(args)
    planned = plan is not None and args.steps == ["all"]
    if planned:
        steps = [step for step, _ in plan.steps]
    out.mkdir(parents=True, exist_ok=True)
    return run_steps(args, steps, out, plan, planned)
