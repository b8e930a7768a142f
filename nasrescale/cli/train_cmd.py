"""``nasrescale train``: retrain one architecture under a protocol and print a JSON result."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..plugins import import_plugins
from ..protocol import load_protocol, protocol_names
from ..train.options import RunOptions
from .shared_options import (add_data_options, add_device_option, add_family_options, add_model_options,
                             family_from_args, int_at_least, parse_archs, positive_float, print_records,
                             protocol_overrides, seed_int)
from .fused_cmd import add_fuse_options, run_fused, wants_fused
from .path_args import output_file

__all__ = ["register", "train_job", "import_train_plugins"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``train`` command."""
    p = sub.add_parser(
        "train", help="train one architecture under a protocol (nb201, rescaled, spectral, elr_warmup, ...)",
        description="Train one architecture under a protocol and print a JSON result. A killed run "
                    "resumes from its checkpoint when the same command is run again.",
    )
    p.add_argument("arch", metavar="ARCH", help="architecture (any encoding)")
    add_family_options(p)
    p.add_argument("--protocol", default="nb201", metavar="P",
                   help=f"shipped protocol ({', '.join(protocol_names())}) or a protocol .toml file")
    p.add_argument("--import", dest="imports", action="append", default=[], metavar="FILE_OR_MODULE",
                   help="a .py file (relative to the working folder) or module that registers your own LR "
                        "rule, init rule, schedule or op kind, imported before the protocol is read (repeatable)")
    p.add_argument("--base-lr", type=positive_float, metavar="X", help="base learning rate (required by rescaled)")
    p.add_argument("--epochs", type=int_at_least(1), metavar="E", help="epochs (the cosine schedule spans them)")
    p.add_argument("--batch-size", type=int_at_least(1), metavar="B", help="training batch size")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override any protocol key, e.g. --set weight_decay=3e-4 (repeatable)")
    add_model_options(p)
    add_data_options(p)
    p.add_argument("--test-split", choices=("full", "x-test", "x-valid"), metavar="S",
                   help="test images: full, x-test or x-valid (NAS-Bench-201's halves; cifar100 and "
                        "imagenet16-120 only); default: what the benchmark reports (x-test for cifar100 "
                        "and imagenet16-120, full otherwise)")
    p.add_argument("--download", action="store_true", help="let torchvision download CIFAR into --data-path")
    p.add_argument("--seed", type=seed_int, default=0, metavar="S", help="seed of the init and of every draw in training")
    add_device_option(p)
    p.add_argument("--compile", action="store_true", help="torch.compile the model (worth it on GPUs)")
    p.add_argument("--checkpoint", metavar="PATH", type=output_file,
                   help="checkpoint file (default: one per run under the cache folder, deleted when done)")
    p.add_argument("--checkpoint-every", type=int_at_least(1), default=1, metavar="K", help="checkpoint every K epochs")
    p.add_argument("--no-checkpoint", action="store_true", help="do not checkpoint")
    p.add_argument("--out", metavar="FILE.json", type=output_file, help="also write the full result (with history) here")
    p.add_argument("--history", action="store_true", help="include the per-epoch history in the printed JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--threads", type=int_at_least(1), metavar="N",
                   help="intra-op CPU threads (default: the cores other processes leave free when it starts, "
                        "named in the result's provenance: docs/benchmarks.md)")
    add_fuse_options(p)
    p.set_defaults(func=run_train)


def import_train_plugins(args: argparse.Namespace) -> None:
    """Import the plug-ins of ``--import`` (:mod:`nasrescale.plugins`): ``.py`` files relative to the
    working folder, module names looked up there first, then on the Python path.

    Raises:
        ConfigError: naming ``--import`` and the file or module that is missing or fails to import.
    """
    import_plugins(list(getattr(args, "imports", None) or []), Path.cwd(), "--import")


def train_job(args: argparse.Namespace) -> Any:
    """The :class:`~nasrescale.jobs.job.TrainJob` that ``train`` runs for ``args`` (one run), after
    the plug-ins of ``--import``.

    Raises:
        ConfigError, ArchError: a plug-in that cannot be imported, a bad protocol key, a missing
            base LR (checked by the job), an architecture of another family.
    """
    from ..jobs.job import DataSpec, TrainJob  # torch: loaded only to train, so the CLI starts fast

    import_train_plugins(args)
    family = family_from_args(args)
    protocol = load_protocol(args.protocol, protocol_overrides(args.set, lr=args.base_lr, epochs=args.epochs,
                                                               batch_size=args.batch_size))
    if args.checkpoint_every < 1:
        raise ConfigError("--checkpoint-every must be >= 1")
    data = DataSpec(args.dataset, args.data_path, args.test_split, args.train_subset, args.test_subset, args.resolution)
    graph = parse_archs([args.arch], family, args)[0]  # a cell of another family: its error names that family
    return TrainJob.from_arch(graph, family, data, protocol, seed=args.seed, width=args.width, cells=args.cells)


def run_train(args: argparse.Namespace) -> int:
    """Train the architecture as one :class:`~nasrescale.jobs.job.TrainJob`; print its JSON result."""
    from ..executors.threads import resume_threads, use_threads  # the executors load torch: only to train

    import_train_plugins(args)  # before the family and the protocols are read (both paths below)
    if wants_fused(args):  # --seeds / --protocols / --fuse: several runs of the cell
        return run_fused(args)
    from ..data.paths import resolve_cache_dir  # torch (via data): loaded only to train, so the CLI starts fast
    from ..jobs.job import resolve_device  # torch: as above

    job = train_job(args)
    device = resolve_device(args.device)
    if args.download:  # fetch the files first; the job itself never downloads
        from ..data import load_dataset  # torch: loaded only to train, so the CLI starts fast

        load_dataset(args.dataset, args.data_path, download=True)
    key = job.key()
    checkpoint = None
    if not args.no_checkpoint:
        checkpoint = Path(args.checkpoint) if args.checkpoint else resolve_cache_dir() / "checkpoints" / f"train-{key}.pt"
    use_threads(resume_threads(args.threads, [checkpoint]))  # a resumed run keeps the count that began it
    record = job.run(RunOptions(device=device, checkpoint=checkpoint, checkpoint_every=args.checkpoint_every,
                                compile=args.compile, progress=not args.quiet, keep_checkpoint=bool(args.checkpoint)))
    if record.get("resumed_from"):
        print(f"resumed from epoch {record['resumed_from']} of {checkpoint}", file=sys.stderr)
    record["device"] = device
    record["run_key"] = key
    print_records([record], args.out, args.history, one=True)
    return 0
