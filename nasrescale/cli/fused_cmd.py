"""``nasrescale train ARCH --seeds 0,1,2 --protocols nb201,rescaled [--fuse]``: several runs of one cell.

Every (protocol, seed) pair is one run, built and initialized exactly as ``nasrescale train``
builds it; ``--fuse`` trains them all as one fused network (:mod:`nasrescale.train.fused`:
each run in its own channel slice, equal to its independent run), otherwise one after another.
One JSON line per run, in protocol-major order. ``--base-lr`` goes to the protocols without an
LR of their own (``rescaled``), or to all when none lacks one; ``--set``, ``--epochs`` and
``--batch-size`` apply to all. A subset (``--subset``) is drawn once (seed 0) for every run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from ..config import to_table
from ..encodings import format_arch, parse_arch
from ..errors import ConfigError
from ..fileio import atomic_write_text
from ..protocol import Protocol, load_protocol
from ..topology import is_degenerate
from .common import family_from_args

__all__ = ["add_fuse_options", "wants_fused", "run_fused"]


def add_fuse_options(p: argparse.ArgumentParser) -> None:
    """The ``train`` options for several runs of one cell (``--seeds``, ``--protocols``, ``--fuse``)."""
    p.add_argument("--seeds", metavar="S,S,..", help="several seeds, e.g. 0,1,2 (one run each; see --fuse)")
    p.add_argument("--protocols", metavar="P,P,..", help="several protocols, e.g. nb201,rescaled (x --seeds)")
    p.add_argument("--fuse", action="store_true",
                   help="train the runs of --seeds x --protocols as one fused network (same results, "
                        "one network of K channel slices; for GPUs)")


def wants_fused(args: argparse.Namespace) -> bool:
    """Whether ``train`` should run here (several runs, or ``--fuse``) instead of its single-run path."""
    return bool(args.fuse or args.seeds or args.protocols)


def _int_list(text: str, flag: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ConfigError(f"{flag} {text!r}: expected comma-separated integers, e.g. 0,1,2") from None
    if not values or len(set(values)) != len(values):
        raise ConfigError(f"{flag} {text!r}: give one or more distinct integers, e.g. 0,1,2")
    return values


def _protocols(args: argparse.Namespace) -> list[Protocol]:
    names = [n.strip() for n in (args.protocols or args.protocol).split(",") if n.strip()]
    if not names or len(set(names)) != len(names):
        raise ConfigError(f"--protocols {args.protocols!r}: give one or more distinct protocols, e.g. nb201,rescaled")
    common = list(args.set) + [f"{k}={v!r}" for k, v in (("epochs", args.epochs), ("batch_size", args.batch_size))
                               if v is not None]
    protocols = [load_protocol(n, common) for n in names]
    if args.base_lr is not None:
        lacking = [p.lr is None for p in protocols]
        protocols = [load_protocol(n, common + [f"lr={args.base_lr!r}"]) if lack or not any(lacking) else p
                     for n, p, lack in zip(names, protocols, lacking)]
    for p in protocols:
        p.require_lr()
    return protocols


def _device(name: str) -> str:
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"--device {name}: CUDA is not available on this machine; use --device cpu")
    return name


def _key(identity: Any) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:16]


def run_fused(args: argparse.Namespace) -> int:
    """Build every (protocol, seed) run of the cell, train them (fused with ``--fuse``), print JSON lines."""
    from ..data import load_dataset, subset
    from ..data.paths import resolve_cache_dir
    from ..fusion import build_member
    from ..models import count_params
    from ..train.fused import train_fused

    family = family_from_args(args)
    graph = parse_arch(args.arch, family)
    arch = format_arch(graph, family)
    seeds = _int_list(args.seeds, "--seeds") if args.seeds else [args.seed]
    protocols = _protocols(args)
    if args.checkpoint_every < 1:
        raise ConfigError("--checkpoint-every must be >= 1")
    device = _device(args.device)
    data = load_dataset(args.dataset, args.data, download=args.download, test_split=args.test_split)
    data = subset(data, args.subset, args.test_subset, seed=0)  # one draw shared by every run

    runs, records = [], []
    for protocol in protocols:
        for seed in seeds:
            identity = {"arch": arch, "family": family.digest(), "dataset": data.name, "protocol": to_table(protocol),
                        "width": args.width, "cells": args.cells, "train_images": int(data.train_images.shape[0]),
                        "test_split": data.test_split, "test_images": int(data.test_images.shape[0]), "seed": seed}
            member, plan = build_member(graph, family, data, protocol, seed, width=args.width, cells=args.cells,
                                        identity=identity)
            model = member.model
            runs.append(member)
            records.append({
                "arch": arch, "family": family.name, "dataset": data.name, "protocol": protocol.name,
                "init": protocol.init, "lr_rule": protocol.lr_rule, "base_lr": plan.base_lr, "lr": plan.lr,
                "lr_scale": plan.lr_scale, "kernel_rule": plan.kernel_rule, "kernel_factor": plan.kernel_factor,
                "degenerate": is_degenerate(graph, family), "epochs": protocol.epochs,
                "batch_size": protocol.batch_size, "seed": seed, "test_split": data.test_split,
                "test_images": int(data.test_images.shape[0]),
                "precision": protocol.precision if device.startswith("cuda") else "fp32",
                "width": getattr(model, "width", None), "cells": getattr(model, "num_cells", None),
                "params": count_params(model), "device": device, "run_key": _key(identity)})

    if records[0]["degenerate"]:  # no input-output path: constant output, chance accuracy, nothing to train
        for r in records:
            r.update(test_accuracy=100.0 / data.num_classes, trained=False, fused=0)
    else:
        groups = [list(range(len(runs)))] if args.fuse else [[i] for i in range(len(runs))]
        if args.checkpoint and len(groups) > 1:
            raise ConfigError("--checkpoint names one file: use it with --fuse (one group), or leave it out")
        for group in groups:
            checkpoint = None
            if not args.no_checkpoint:
                name = "fused-" + _key([records[i]["run_key"] for i in group]) + ".pt"
                checkpoint = Path(args.checkpoint) if args.checkpoint else resolve_cache_dir() / "checkpoints" / name
            results = train_fused([runs[i] for i in group], data, device=device, checkpoint=checkpoint,
                                  checkpoint_every=args.checkpoint_every, compile=args.compile,
                                  progress=not args.quiet, keep_checkpoint=bool(args.checkpoint))
            if results[0].resumed_from:
                print(f"resumed from epoch {results[0].resumed_from} of {checkpoint}", file=sys.stderr)
            for i, result in zip(group, results):
                records[i].update(fused=len(group), **result.to_json())
    if args.out:
        atomic_write_text(args.out, json.dumps(records, indent=2) + "\n")
    for record in records:
        if not args.history:
            record.pop("history", None)
        print(json.dumps(record))
    return 0
