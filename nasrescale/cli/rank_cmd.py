"""``nasrescale rank SOURCE_A SOURCE_B`` and ``nasrescale report PIPELINE``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import ConfigError, notice
from ..ranking.boot_counts import DEFAULT_BOOT, VERDICT_BOOT
from .shared_options import add_family_options, add_results_option, deprecate_option, family_from_args, seed_int
from .path_args import require_writable
from .store_owner import import_stored_plugins, store_owner_note

__all__ = ["register"]

_SOURCES_HELP = ("A source is PIPELINE:PROTOCOL (a run's protocol, mean over its seeds), nb201:DATASET "
                 "(cifar10, cifar100, imagenet16-120), nats:DATASET (with --nats-file) or a CSV file "
                 "(FILE.csv, or FILE.csv:PROTOCOL for an export with a protocol column)")

_DEGENERATE_HELP = ("count degenerate cells (no input-output path, recorded at chance accuracy) in every statistic; "
                    "by default they are left out")


_ISOMORPHIC_HELP = ("count every cell of an isomorphism class (cells that compute the same function) in every "
                    "statistic; by default each class counts once, by its first cell in string order")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``rank`` and ``report`` commands."""
    p = sub.add_parser("rank", help="compare the ranking of two accuracy sources",
                       description="Kendall tau-b, Spearman, Pearson, the top-K% tau curve, precision@K, accuracy "
                                   "differences (B - A) with bootstrap 95% CIs, and the seed-noise baseline. "
                                   + _SOURCES_HELP + ".")
    p.add_argument("source_a", metavar="SOURCE_A")
    p.add_argument("source_b", metavar="SOURCE_B")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--topk-by", choices=("first", "second", "both"), default="first",
                   help="top-K%% subset by the first source's accuracy (default), the second's, or rows in "
                        "the top K%% of either")
    p.add_argument("--diverged", choices=("chance", "drop"), default="chance",
                   help="diverged runs count as chance accuracy (default) or are dropped")
    add_results_option(p, writes=False)
    p.add_argument("--bootstrap", type=int, default=DEFAULT_BOOT, metavar="N",
                   help=f"bootstrap resamples for the 95%% CIs and the top-K%% bands (0: none; default {DEFAULT_BOOT})")
    boot = p.add_argument("--bootstrap-seed", type=seed_int, default=0, metavar="S",
                          help="seed of the bootstrap resampling (default 0); not a training seed")
    deprecate_option(p, "--seed", boot)
    p.add_argument("--arch-col", default="arch", metavar="NAME", help="CSV architecture column (default arch)")
    p.add_argument("--acc-col", metavar="NAME",
                   help="CSV accuracy column (default accuracy, else test_accuracy)")
    p.add_argument("--classes", type=int, metavar="K",
                   help="a CSV dataset's class count (chance accuracy = 100/K, for diverged rows)")
    p.add_argument("--nats-file", metavar="PATH", help="NATS-Bench benchmark file or fast-mode folder")
    p.add_argument("--include-degenerate", action="store_true", help=_DEGENERATE_HELP)
    p.add_argument("--include-isomorphic", action="store_true", help=_ISOMORPHIC_HELP)
    add_family_options(p)
    p.set_defaults(func=_run_rank)

    r = sub.add_parser("report", help="write results/<pipeline>/report.md with plots",
                       description="Write a Markdown report with PNG plots comparing the protocols of a "
                                   "pipeline's run with each other and with the benchmark reference.")
    r.add_argument("pipeline", metavar="PIPELINE", nargs="?",
                   help="pipeline name (results/<name>/) or run folder; omit with --index")
    r.add_argument("--index", action="store_true",
                   help="only regenerate the results index <results>/README.md of the committed runs (a report "
                        "of a committed run also refreshes it)")
    add_results_option(r, writes=False)
    r.add_argument("--bootstrap", type=int, default=DEFAULT_BOOT, metavar="N",
                   help=f"bootstrap resamples of the CIs of tau, the correlations and the differences, and of the "
                        f"top-K%% bands (default {DEFAULT_BOOT}); the CIs of the mean gains that the verdicts read "
                        f"always take {VERDICT_BOOT:,}, as in README's Results table")
    r.add_argument("--include-degenerate", action="store_true", help=_DEGENERATE_HELP)
    r.add_argument("--include-tuning-cells", action="store_true",
                   help="count the LR tuning's cells and the cells isomorphic to them in every statistic, as a "
                        "sensitivity check (default: left out, and the report names them)")
    r.add_argument("--json", action="store_true",
                   help="print the report's figures (its report.json: for a landscape, the calibrated verdicts "
                        "too) to stdout, the paths written to stderr")
    r.set_defaults(func=_run_report)


def _run_rank(args: argparse.Namespace) -> int:
    # pandas, scipy: imported when the command runs, so the CLI starts fast
    from ..ranking.compare import compare
    from ..ranking.sources import load_source
    from ..ranking.text import format_table, to_json

    if args.bootstrap < 0:
        raise ConfigError(f"--bootstrap must be >= 0, got {args.bootstrap}")
    if args.classes is not None and args.classes < 2:
        raise ConfigError(f"--classes must be at least 2, got {args.classes}")
    family = family_from_args(args) if (args.family or args.family_files) else None
    options = dict(results=args.results, family=family, arch_column=args.arch_col,
                   accuracy_column=args.acc_col, nats_file=args.nats_file, classes=args.classes)
    a = load_source(args.source_a, **options)
    b = load_source(args.source_b, **options)
    result, _ = compare(a, b, policy=args.diverged, topk_by=args.topk_by, n_boot=args.bootstrap,
                        seed=args.bootstrap_seed, include_degenerate=args.include_degenerate,
                        include_isomorphic=args.include_isomorphic)
    print(to_json(result) if args.json else format_table(result))
    return 0


def _run_report(args: argparse.Namespace) -> int:
    # pandas, matplotlib: imported when the command runs, so the CLI starts fast
    from ..report.kind_reports import write_run_report
    from ..report.results_index import refresh_index, write_index
    from ..store.read import store_path

    if args.pipeline is None:
        if not args.index:
            raise ConfigError("give a PIPELINE to report on, or --index to regenerate only results/README.md")
        root = Path(args.results or "results")
        require_writable(root, "results folder")
        print(f"wrote {write_index(root)}")
        return 0
    run_dir = store_path(args.pipeline, args.results).parent
    require_writable(run_dir.parent, "results folder")  # both checked before anything is written
    require_writable(run_dir, "run folder")
    if not args.index:
        note = store_owner_note(args.pipeline, run_dir)  # another pipeline's store: said, as run --dry-run refuses it
        if note:
            notice(note)
        import_stored_plugins(run_dir)  # the run's own rules, where they are plug-ins
        written = write_run_report(run_dir, n_boot=args.bootstrap, include_degenerate=args.include_degenerate,
                                   include_tuning=args.include_tuning_cells)
        print(f"wrote {written}", file=sys.stderr if args.json else sys.stdout)
    index = refresh_index(run_dir) if not args.index else write_index(run_dir.parent)
    if index is not None:  # a local run is not in the index: it stays as it is
        print(f"wrote {index}", file=sys.stderr if args.json else sys.stdout)
    if args.json:
        figures = run_dir / "report.json"
        if not figures.is_file():
            raise ConfigError(f"{run_dir}: this kind of report writes no report.json; drop --json")
        print(figures.read_text().rstrip())
    return 0
