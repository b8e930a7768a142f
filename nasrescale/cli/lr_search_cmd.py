"""``nasrescale lr-search``: find the base learning rate on the family's base architecture.

Trains the base architecture (or ``--arch``) for ``--epochs`` (default 1) at every LR of a
log-spaced grid with several seeds, as stored, resumable jobs in
``results/<name>/store.sqlite`` (rerunning finishes only what is missing), and picks the
maximal LR by ``--rule`` (:mod:`nasrescale.lrsearch.select`). Prints the loss-vs-LR table with
the rule that ran, each seed's argmin and how they were combined (or ``--json``), and writes a plot.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..config import to_table
from ..lrsearch.search import LOSS_KINDS, LrSearchSettings, format_table, search_jobs
from ..lrsearch.select import SELECTION_RULES
from ..protocol import load_protocol
from ..space.registry import resolve_family
from .common import protocol_overrides
from .paths import output_file, writable_folder

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``lr-search`` command."""
    d = LrSearchSettings()
    p = sub.add_parser(
        "lr-search", help="grid-search the base learning rate on the family's base architecture (paper §4 step 1)",
        description="Train the base architecture for one epoch per LR of a log-spaced grid (several seeds) and "
                    "pick the maximal LR: by default the paper's rule, the LR of the smallest final training "
                    "loss per seed (the epoch's mean, as the paper's released code logs it), averaged over "
                    "seeds in log LR "
                    "(--rule within_tol: the largest LR within a relative tolerance of the best mean loss). "
                    "Runs are stored and resumable.")
    p.add_argument("--family", default="nb201", metavar="F", help="cell family name (default nb201)")
    p.add_argument("--family-file", action="append", default=[], metavar="FILE", help="extra cell family file")
    p.add_argument("--arch", help="architecture to search (default: the family's base architecture)")
    p.add_argument("--dataset", default="cifar10-subset", metavar="NAME", help="dataset name (default cifar10-subset, shipped)")
    p.add_argument("--data-path", metavar="PATH", help="dataset folder")
    p.add_argument("--protocol", default="rescaled", metavar="P", help="protocol name or .toml file (default rescaled)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a protocol key")
    p.add_argument("--lr-min", metavar="X", type=float, default=d.lr_min, help=f"smallest LR (default {d.lr_min:g})")
    p.add_argument("--lr-max", metavar="Y", type=float, default=d.lr_max, help=f"largest LR (default {d.lr_max:g})")
    p.add_argument("--points", metavar="N", type=int, default=d.points, help=f"LRs in the log-spaced grid (default {d.points})")
    p.add_argument("--seeds", metavar="S", type=int, nargs="+", default=list(d.seeds), help="seeds per LR (default 0 1 2)")
    p.add_argument("--epochs", metavar="E", type=int, default=d.epochs, help="epochs per run (default 1, as the paper)")
    p.add_argument("--rel-tol", metavar="T", type=float, default=d.rel_tol,
                   help=f"--rule within_tol: relative tolerance of a tie in mean final loss (default {d.rel_tol:g} = 1%%)")
    p.add_argument("--rule", metavar="R", default=d.rule, choices=SELECTION_RULES,
                   help=f"maximal-LR rule: argmin (default, the paper's) or within_tol")
    p.add_argument("--loss", metavar="L", default=d.loss, choices=LOSS_KINDS,
                   help=f"final training loss judged (default {d.loss}: the epoch's mean; tail: its last 10%% of steps)")
    p.add_argument("--batch-size", metavar="B", type=int, help="override the protocol's batch size")
    p.add_argument("--width", metavar="C", type=int, help="model width (default: the family's)")
    p.add_argument("--cells", metavar="N", type=int, help="cells per stage (default: the family's)")
    p.add_argument("--train-subset", metavar="N", type=int, help="train on a class-balanced subset of this many images")
    p.add_argument("--test-subset", metavar="N", type=int, default=500,
                   help="test images evaluated after each run (default 500; the search reads training loss only)")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"), help="device (default auto)")
    p.add_argument("--name", help="results folder name (default lr-search-<family>-<protocol>)")
    p.add_argument("--results", metavar="DIR", type=writable_folder, help="results root (default ./results)")
    p.add_argument("--plot", metavar="FILE.png", type=output_file, help="plot file (default <run folder>/lr_search.png)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=lr_search_cmd)


def lr_search_cmd(args: argparse.Namespace) -> int:
    """Run (or finish) the search, print the table or JSON, write the plot."""
    # torch, pandas: imported when the command runs, so the CLI starts fast
    from ..executors.base import ExecutorSettings
    from ..jobs.job import DataSpec
    from ..pipeline.lock import driver_lock
    from ..pipeline.preflight import LR_SEARCH_KEYS, check_data, check_executor
    from ..pipeline.runner import run_search
    from ..store.read import run_dir_for
    from ..store.write import Store

    family = resolve_family(args.family, [Path(f) for f in args.family_file])
    protocol = load_protocol(args.protocol, protocol_overrides(args.set, batch_size=args.batch_size))
    settings = LrSearchSettings(args.lr_min, args.lr_max, args.points, tuple(args.seeds), args.epochs, args.rel_tol,
                                args.arch, rule=args.rule, loss=args.loss)
    data = DataSpec(args.dataset, args.data_path, None, args.train_subset, args.test_subset)
    pairs = search_jobs(args.arch or family.base, family, data, protocol, settings, "lr-search", args.width,
                        args.cells)
    executor = ExecutorSettings(device=args.device)
    check_executor(executor, "--device")  # everything the runs need, before the first row is stored
    check_data(data, LR_SEARCH_KEYS)
    name = args.name or f"lr-search-{family.name}-{protocol.name}"
    run_dir = run_dir_for(name, args.results)
    identity = {"kind": "lr-search", "arch": pairs[0][1].arch, "family_digest": family.digest(),
                "data": data.identity(), "protocol": to_table(protocol), "search": to_table(settings),
                "size": pairs[0][1].size()}
    with driver_lock(run_dir):  # one driver per run folder, as for `nasrescale run`
        store = Store(run_dir / "store.sqlite")
        try:
            store.bind_pipeline(name, {**identity, "family": family.name}, identity, rename_hint="--name NAME")
            info = {"family": family.name, "protocol": protocol.name, "dataset": data.name,
                    "seeds": list(settings.seeds), "epochs": settings.epochs, "store": str(store.path)}
            title = f"base-LR search: {family.name} {pairs[0][1].arch} ({protocol.name}, {data.name})"
            sel, out, _ = run_search(store, pairs, settings, executor, run_dir, meta_key="lr_search",
                                     plot=args.plot or run_dir / "lr_search.png", info=info, title=title,
                                     progress=not args.quiet and not args.json)
        finally:
            store.close()
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"LR search: {family.name} {pairs[0][1].arch}, protocol {protocol.name}, {data.name}, "
              f"{len(settings.seeds)} seed(s) x {len(sel.grid)} LRs, {settings.epochs} epoch(s) each")
        print(format_table(sel, settings.seeds))
        print(f"plot: {out['plot']}")
    if sel.edge_message() and args.json:
        print(f"nasrescale lr-search: warning: {sel.edge_message()}", file=sys.stderr)
    return 0
