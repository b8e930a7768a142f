"""``nasrescale train ARCH --seeds 0,1,2 --protocols nb201,rescaled [--fuse]``: several runs of one cell.

Every (protocol, seed) pair is one :class:`~nasrescale.jobs.job.TrainJob`, keyed, built and
initialized exactly as ``nasrescale train`` does it; ``--fuse`` trains them all as one fused
network (:func:`nasrescale.jobs.fusion.train_jobs_fused`: each run in its own channel slice, equal to
its independent run), otherwise one after another. One JSON line per run, in protocol-major
order, with the fields of ``train`` (``run_key`` = the job's key) plus ``fused`` (the group's
size: 1 without ``--fuse``, 0 for a degenerate cell, which is never trained). ``--base-lr`` goes to the protocols without an
LR of their own (``rescaled``), or to all when none lacks one; ``--set``, ``--epochs`` and
``--batch-size`` apply to all. A subset (``--train-subset``) is drawn once (seed 0) for every run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import ConfigError
from ..protocol import Protocol, load_protocol
from ..train.options import RunOptions
from .shared_options import (add_seeds_option, family_from_args, parse_archs, print_records, protocol_overrides,
                             seeds_from_args)

__all__ = ["add_fuse_options", "wants_fused", "run_fused"]


def add_fuse_options(p: argparse.ArgumentParser) -> None:
    """The ``train`` options for several runs of one cell (``--seeds``, ``--protocols``, ``--fuse``)."""
    add_seeds_option(p, help="several seeds, one run each (see --fuse)")
    p.add_argument("--protocols", metavar="P,P,..", help="several protocols, e.g. nb201,rescaled (x --seeds)")
    p.add_argument("--fuse", action="store_true",
                   help="train the runs of --seeds x --protocols as one fused network (same results, "
                        "one network of K channel slices; for GPUs)")


def wants_fused(args: argparse.Namespace) -> bool:
    """Whether ``train`` should run here (several runs, or ``--fuse``) instead of its single-run path."""
    return bool(args.fuse or args.seeds or args.protocols)


def _protocols(args: argparse.Namespace) -> list[Protocol]:
    names = [n.strip() for n in (args.protocols or args.protocol).split(",") if n.strip()]
    if not names or len(set(names)) != len(names):
        raise ConfigError(f"--protocols {args.protocols!r}: give one or more distinct protocols, e.g. nb201,rescaled")
    common = protocol_overrides(args.set, epochs=args.epochs, batch_size=args.batch_size)
    protocols = [load_protocol(n, common) for n in names]
    if args.base_lr is not None:
        lacking = [p.lr is None for p in protocols]
        protocols = [load_protocol(n, {**common, "lr": args.base_lr}) if lack or not any(lacking) else p
                     for n, p, lack in zip(names, protocols, lacking)]
    return protocols


def run_fused(args: argparse.Namespace) -> int:
    """Build a :class:`~nasrescale.jobs.job.TrainJob` per (protocol, seed), train them (fused with
    ``--fuse``: :func:`nasrescale.jobs.fusion.train_jobs_fused`), print one JSON line per run."""
    from ..data.paths import resolve_cache_dir  # torch (via data): loaded only to train, so the CLI starts fast
    from ..jobs.fusion import group_checkpoint_name, train_jobs_fused  # torch: as above
    from ..executors.threads import resume_threads, use_threads  # torch: as above
    from ..jobs.job import DataSpec, TrainJob, resolve_device
    from ..space.parsed_arch import ParsedArch

    family = family_from_args(args)
    seeds = seeds_from_args(args.seeds) if args.seeds else [args.seed]
    protocols = _protocols(args)
    if args.checkpoint_every < 1:
        raise ConfigError("--checkpoint-every must be >= 1")
    device = resolve_device(args.device)
    data = DataSpec(args.dataset, args.data_path, args.test_split, args.train_subset, args.test_subset, args.resolution)
    cell = ParsedArch.of_graph(parse_archs([args.arch], family, args)[0], family)  # another family's: its error names it
    jobs = [TrainJob(cell, family, data, protocol, seed=seed, width=args.width, cells=args.cells)
            for protocol in protocols for seed in seeds]  # each checks its protocol's base LR
    if args.download:  # fetch the files first; the jobs themselves never download
        from ..data import load_dataset  # torch: loaded only to train, so the CLI starts fast

        load_dataset(args.dataset, args.data_path, download=True)
    if args.checkpoint and not args.fuse and len(jobs) > 1:
        raise ConfigError("--checkpoint names one file: use it with --fuse (one group), or leave it out")
    cache = resolve_cache_dir() / "checkpoints"
    common = RunOptions(device=device, checkpoint_every=args.checkpoint_every, compile=args.compile,
                        progress=not args.quiet, keep_checkpoint=bool(args.checkpoint))
    if args.fuse:
        trained = [j for j in jobs if not j.degenerate]
        checkpoint = None if args.no_checkpoint or not trained else (
            Path(args.checkpoint) if args.checkpoint else cache / group_checkpoint_name(trained))
        use_threads(resume_threads(args.threads, [checkpoint]))  # a resumed group keeps the count that began it
        records = train_jobs_fused(jobs, common.replace(checkpoint=checkpoint))
        sizes = [len(trained) if not j.degenerate else 0 for j in jobs]
    else:  # one after another, each exactly as `nasrescale train` runs it (same checkpoint file)
        checkpoints = [None if args.no_checkpoint else (
            Path(args.checkpoint) if args.checkpoint else cache / f"train-{job.key()}.pt") for job in jobs]
        use_threads(resume_threads(args.threads, checkpoints))  # picked once, for every run of the command
        records = [job.run(common.replace(checkpoint=c)) for job, c in zip(jobs, checkpoints)]
        sizes = [0 if j.degenerate else 1 for j in jobs]
    if any(r.get("resumed_from") for r in records):
        print(f"resumed from epoch {max(r.get('resumed_from') or 0 for r in records)} of a checkpoint", file=sys.stderr)
    for record, job, size in zip(records, jobs, sizes):  # the fields of `train`, plus the group size
        record.update(device=device, run_key=job.key(), fused=size)
    print_records(records, args.out, args.history)
    return 0
