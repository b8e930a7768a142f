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
import os
import sys

from ..config import to_table
from ..errors import ConfigError
from ..lrsearch.search import LOSS_KINDS, LrSearchSettings, search_table, search_jobs
from ..lrsearch.select import SELECTION_RULES
from ..protocol import load_protocol
from .shared_options import (add_data_options, add_device_option, add_family_options, add_model_options,
                             add_results_option, add_seeds_option, family_from_args, int_at_least, parse_archs,
                             positive_float, protocol_overrides, seeds_from_args)
from .path_args import output_file, run_name

__all__ = ["register", "executor_device"]


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
    p.set_defaults(arch=None)  # before the two spellings, which keep their own default (none: not given)
    p.add_argument("arch", nargs="?", default=argparse.SUPPRESS, metavar="ARCH",
                   help="architecture to search (any encoding; default: the family's base architecture)")
    p.add_argument("--arch", default=argparse.SUPPRESS, help=argparse.SUPPRESS)  # its former spelling
    add_family_options(p)
    add_data_options(p, test_subset=500)
    p.add_argument("--protocol", default="rescaled", metavar="P", help="protocol name or .toml file (default rescaled)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a protocol key")
    p.add_argument("--lr-min", metavar="X", type=positive_float, default=d.lr_min, help=f"smallest LR (default {d.lr_min:g})")
    p.add_argument("--lr-max", metavar="Y", type=positive_float, default=d.lr_max, help=f"largest LR (default {d.lr_max:g})")
    p.add_argument("--points", metavar="N", type=int_at_least(1), default=d.points, help=f"LRs in the log-spaced grid (default {d.points})")
    add_seeds_option(p, d.seeds, help=f"seeds per LR (default {' '.join(map(str, d.seeds))})")
    p.add_argument("--epochs", metavar="E", type=int_at_least(1), default=d.epochs, help="epochs per run (default 1, as the paper)")
    p.add_argument("--rel-tol", metavar="T", type=float, default=d.rel_tol,
                   help=f"--rule within_tol: relative tolerance of a tie in mean final loss (default {d.rel_tol:g} = 1%%)")
    p.add_argument("--rule", metavar="R", default=d.rule, choices=SELECTION_RULES,
                   help="maximal-LR rule: argmin (default, the paper's) or within_tol")
    p.add_argument("--loss", metavar="L", default=d.loss, choices=LOSS_KINDS,
                   help=f"final training loss judged (default {d.loss}: the epoch's mean; tail: its last 10%% of steps)")
    p.add_argument("--batch-size", metavar="B", type=int_at_least(1), help="training batch size (default: the protocol's)")
    add_model_options(p)
    add_device_option(p)
    p.add_argument("--name", type=run_name, help="results folder name (default lr-search-<family>-<protocol>)")
    add_results_option(p, writes=True)
    p.add_argument("--plot", metavar="FILE.png", type=output_file, help="plot file (default <run folder>/lr_search.png)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=lr_search_cmd)


def lr_search_cmd(args: argparse.Namespace) -> int:
    """Run (or finish) the search, print the table or JSON, write the plot."""
    device = executor_device(args.device)  # before anything asks CUDA for its devices
    # torch, pandas: imported when the command runs, so the CLI starts fast
    from ..executors.base import ExecutorSettings
    from ..jobs.job import DataSpec
    from ..pipeline.lock import driver_lock
    from ..pipeline.preflight import LR_SEARCH_KEYS, check_data, check_executor
    from ..pipeline.runner import run_search
    from ..space.parsed_arch import ParsedArch
    from ..store.read import run_dir_for
    from ..store.sqlite_store import Store

    family = family_from_args(args)
    protocol = load_protocol(args.protocol, protocol_overrides(args.set, batch_size=args.batch_size))
    settings = LrSearchSettings(args.lr_min, args.lr_max, args.points, tuple(seeds_from_args(args.seeds)), args.epochs,
                                args.rel_tol,
                                args.arch, rule=args.rule, loss=args.loss)
    data = DataSpec(args.dataset, args.data_path, None, args.train_subset, args.test_subset, args.resolution)
    # a cell of another family: its error names that family
    graph = parse_archs([args.arch or family.base], family, args)[0]
    pairs = search_jobs(ParsedArch.of_graph(graph, family), family, data, protocol, settings, "lr-search", args.width,
                        args.cells)
    executor = ExecutorSettings(device=device)
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
        print(search_table(sel, settings.seeds))
        print(f"plot: {out['plot']}")
    if sel.edge_message() and args.json:
        print(f"nasrescale lr-search: warning: {sel.edge_message()}", file=sys.stderr)
    return 0


def executor_device(device: str) -> str:
    """The executor's device for ``--device``: ``cuda:N`` runs on GPU N alone, the one GPU the
    runs are shown (``CUDA_VISIBLE_DEVICES``, set here), as ``cuda``; other names pass through."""
    if not device.startswith("cuda:"):
        return device
    from ..executors.pool import pin_gpu  # torch: imported when the command runs

    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    try:
        os.environ["CUDA_VISIBLE_DEVICES"], _ = pin_gpu(device, visible)
    except IndexError:
        raise ConfigError(f"--device {device}: CUDA_VISIBLE_DEVICES={visible} shows fewer GPUs; "
                          "they are numbered from 0 in that list") from None
    return "cuda"
