"""``nasrescale train``: retrain one architecture under a protocol and print a JSON result."""

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
from ..protocol import load_protocol, protocol_names
from ..topology import is_degenerate
from .common import add_family_options, add_model_options, family_from_args
from .fused_cmd import add_fuse_options, run_fused, wants_fused

__all__ = ["register", "run_key"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``train`` command."""
    p = sub.add_parser(
        "train", help="train one architecture under a protocol (nb201 or rescaled)",
        description="Train one architecture under a protocol and print a JSON result. A killed run "
                    "resumes from its checkpoint when the same command is run again.",
    )
    p.add_argument("arch", metavar="ARCH", help="architecture (any encoding)")
    add_family_options(p, "--family-file")
    p.add_argument("--protocol", default="nb201", metavar="P",
                   help=f"shipped protocol ({', '.join(protocol_names())}) or a protocol .toml file")
    p.add_argument("--base-lr", type=float, metavar="X", help="base learning rate (required by rescaled)")
    p.add_argument("--epochs", type=int, metavar="E", help="epochs (the cosine schedule spans them)")
    p.add_argument("--batch-size", type=int, metavar="B", help="training batch size")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override any protocol key, e.g. --set weight_decay=3e-4 (repeatable)")
    add_model_options(p)
    p.add_argument("--dataset", default="cifar10-subset", metavar="NAME",
                   help="cifar10-subset (shipped, default), cifar10, cifar100, imagefolder, imagenet16-120")
    p.add_argument("--data", metavar="PATH", help="dataset folder (cifar10/100, imagefolder, imagenet16-120)")
    p.add_argument("--test-split", choices=("full", "x-test", "x-valid"), metavar="S",
                   help="test images: full, x-test or x-valid (NAS-Bench-201's halves; cifar100 and "
                        "imagenet16-120 only); default: what the benchmark reports (x-test for cifar100 "
                        "and imagenet16-120, full otherwise)")
    p.add_argument("--download", action="store_true", help="let torchvision download CIFAR into --data")
    p.add_argument("--subset", type=int, metavar="N", help="train on a class-balanced subset of N images")
    p.add_argument("--test-subset", type=int, metavar="M", help="evaluate on a class-balanced subset of M images")
    p.add_argument("--seed", type=int, default=0, help="seed of the init and of every draw in training")
    p.add_argument("--device", default="auto", help="auto (cuda if available), cpu, cuda, cuda:1, ...")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (worth it on GPUs)")
    p.add_argument("--checkpoint", metavar="PATH",
                   help="checkpoint file (default: one per run under the cache folder, deleted when done)")
    p.add_argument("--checkpoint-every", type=int, default=1, metavar="K", help="checkpoint every K epochs")
    p.add_argument("--no-checkpoint", action="store_true", help="do not checkpoint")
    p.add_argument("--out", metavar="FILE.json", help="also write the full result (with history) here")
    p.add_argument("--history", action="store_true", help="include the per-epoch history in the printed JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_fuse_options(p)
    p.set_defaults(func=run_train)


def _protocol_overrides(args: argparse.Namespace) -> list[str]:
    overrides = list(args.set)
    for key, value in (("lr", args.base_lr), ("epochs", args.epochs), ("batch_size", args.batch_size)):
        if value is not None:
            overrides.append(f"{key}={value!r}")
    return overrides


def run_key(parts: dict[str, Any]) -> str:
    """Content hash of everything that determines a run's result (16 hex digits)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _device(name: str) -> str:
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"--device {name}: CUDA is not available on this machine; use --device cpu")
    return name


def run_train(args: argparse.Namespace) -> int:
    """Build, initialize and train the architecture; print its JSON result."""
    if wants_fused(args):  # --seeds / --protocols / --fuse: several runs of the cell
        return run_fused(args)
    import torch

    from ..data import load_dataset, subset
    from ..data.paths import resolve_cache_dir
    from ..models import build_model, count_params
    from ..scaling import apply_init, lr_plan, param_groups
    from ..train import train

    family = family_from_args(args)
    graph = parse_arch(args.arch, family)
    protocol = load_protocol(args.protocol, _protocol_overrides(args))
    protocol.require_lr()
    if args.checkpoint_every < 1:
        raise ConfigError("--checkpoint-every must be >= 1")
    device = _device(args.device)
    data = load_dataset(args.dataset, args.data, download=args.download, test_split=args.test_split)
    data = subset(data, args.subset, args.test_subset, seed=args.seed)  # no sizes: the data itself

    torch.manual_seed(args.seed)
    model = build_model(graph, family, data.num_classes, in_shape=data.image_shape, width=args.width, cells=args.cells)
    apply_init(model, protocol.init)
    plan = lr_plan(model, protocol)
    groups = param_groups(model, protocol)

    arch = format_arch(graph, family)
    key = run_key({
        "arch": arch, "family": family.name, "ops": [(o.name, o.kind.name, o.kernel) for o in family.ops],
        "depth_offset": family.depth_offset, "base": family.base, "macro": dict(family.macro),
        "width": args.width, "cells": args.cells, "protocol": to_table(protocol), "seed": args.seed,
        "test_split": data.test_split,
        "data": [data.name, str(Path(args.data).resolve()) if args.data else None,
                 tuple(data.train_images.shape), tuple(data.test_images.shape), data.mean, data.std],
    })
    checkpoint = None
    if not args.no_checkpoint:
        checkpoint = Path(args.checkpoint) if args.checkpoint else resolve_cache_dir() / "checkpoints" / f"train-{key}.pt"
    identity = {"arch": arch, "family": family.digest(), "dataset": data.name, "protocol": to_table(protocol),
                "width": getattr(model, "width", None), "cells": getattr(model, "num_cells", None),
                "params": count_params(model)}
    result = train(model, data, protocol, groups, device=device, seed=args.seed, checkpoint=checkpoint,
                   checkpoint_every=args.checkpoint_every, compile=args.compile, progress=not args.quiet,
                   fingerprint=key, keep_checkpoint=bool(args.checkpoint), identity=identity)
    if result.resumed_from:
        print(f"resumed from epoch {result.resumed_from} of {checkpoint}", file=sys.stderr)

    record = {
        "arch": arch, "family": family.name, "dataset": data.name, "protocol": protocol.name,
        "init": protocol.init, "lr_rule": protocol.lr_rule, "base_lr": plan.base_lr, "lr": plan.lr,
        "lr_scale": plan.lr_scale, "kernel_rule": plan.kernel_rule, "kernel_factor": plan.kernel_factor,
        "degenerate": is_degenerate(graph, family),
        "epochs": protocol.epochs, "batch_size": protocol.batch_size, "seed": args.seed,
        "test_split": data.test_split, "test_images": int(data.test_images.shape[0]), "precision": protocol.precision,
        "width": getattr(model, "width", None), "cells": getattr(model, "num_cells", None), "params": count_params(model), "device": device, "run_key": key,
        **result.to_json(),
    }
    if args.out:
        atomic_write_text(args.out, json.dumps(record, indent=2) + "\n")
    if not args.history:
        record.pop("history", None)
    print(json.dumps(record))
    return 0

