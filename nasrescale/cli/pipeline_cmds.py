"""``nasrescale run / status / export``: drive a pipeline and look at its results."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from ..config import parse_overrides
from ..errors import ConfigError, NasRescaleError
from ..pipeline.files import early_run_dir, pipeline_names
from .shared_options import add_results_option
from .torch_pair import check_torch_pair
from .path_args import output_file

__all__ = ["register", "slice_line"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``run``, ``status`` and ``export`` commands."""
    shipped = ", ".join(pipeline_names()) or "none"
    p = sub.add_parser(
        "run", help="run a pipeline (resumable: a rerun finishes only what is missing)",
        description="Retrain a pipeline's architectures under its protocols and seeds, storing every result in "
                    "results/<name>/store.sqlite. Rerunning (after a crash or kill) finishes only what is missing.")
    p.add_argument("pipeline", metavar="PIPELINE", help=f"pipeline .toml file or shipped name ({shipped})")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a pipeline key, e.g. --set budget.epochs=3 or --set executor.kind=ray (repeatable)")
    add_results_option(p, writes=True)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--threads", metavar="N", type=_positive_int,
                   help="intra-op threads per CPU job (default: the cores other processes leave free when the run "
                        "first runs a job, stored and kept on resume: docs/benchmarks.md); "
                        "= --set executor.threads=N")
    p.add_argument("--time-limit", metavar="DURATION", type=parse_duration,
                   help="run cells until this much time has passed (e.g. 3h, 90m, 5400s), then stop; cells go in "
                        "spread order with every protocol and seed of a cell together, so what is finished is a "
                        "stratified sample; rerun to continue (fits a SLURM job's --time or an evening)")
    p.add_argument("--max-cells", metavar="N", type=_positive_int, help="run at most N unfinished cells (spread order)")
    p.add_argument("--dry-run", action="store_true",
                   help="plan every job and check the pipeline (architectures, protocols, executor, reference; not "
                        "the data), print what would run, write nothing")
    p.set_defaults(func=run_cmd)

    p = sub.add_parser("status", help="progress, counts by status and ETA of a pipeline run",
                       description="Show a pipeline run's progress: its jobs counted by status with an ETA, then "
                                   "each stage's state; with --commands, the `nasrescale train` command that "
                                   "reruns each job. Reads the results store only.")
    p.add_argument("pipeline", metavar="PIPELINE", help="pipeline file, shipped name, or the run's name")
    add_results_option(p, writes=False)
    p.add_argument("--commands", action="store_true",
                   help="instead, print per job the `nasrescale train` command that reruns it (same key, same record)")
    p.set_defaults(func=status_cmd)

    p = sub.add_parser("export", help="write a pipeline run's jobs as a tidy CSV, one row per job",
                       description="Write a pipeline run's jobs as a tidy CSV, one row per job (architecture, "
                                   "protocol, seed, accuracies, run settings), for analysis elsewhere or as a "
                                   "`rank` source (FILE.csv:PROTOCOL).")
    p.add_argument("pipeline", metavar="PIPELINE", help="pipeline file, shipped name, or the run's name")
    p.add_argument("--out", required=True, metavar="FILE.csv", type=output_file, help="CSV file to write")
    add_results_option(p, writes=False)
    p.set_defaults(func=export_cmd)


def _run_dir(name_or_path: str, results: str | None) -> Path:
    """The run folder of a pipeline given as a file, a shipped name, or a run's name."""
    from ..pipeline.spec import load_pipeline  # torch, pandas: loaded when a command runs, so the CLI starts fast
    from ..store.read import run_dir_for

    direct = run_dir_for(Path(name_or_path).stem if name_or_path.endswith(".toml") else name_or_path, results)
    try:
        name = load_pipeline(name_or_path).name
    except NasRescaleError:
        if any((direct / f).exists() for f in ("store.sqlite", "store.sqlite.gz")):
            return direct  # a run's name, its store gzipped as committed or even broken (judged there)
        if Path(name_or_path).is_file():
            raise  # a pipeline file that does not load: its own error
        raise ConfigError(f"{name_or_path!r} is neither a run in {str(direct.parent)!r} (no "
                          f"{direct.name}/store.sqlite there) nor a pipeline file or shipped pipeline "
                          f"({', '.join(pipeline_names()) or 'none'}); check the name, or point --results "
                          "at the folder that holds the run") from None
    return run_dir_for(name, results)


def parse_duration(text: str) -> float:
    """Seconds in ``3h``, ``90m``, ``5400s``, ``5400`` or ``1h30m``.

    >>> parse_duration("1h30m"), parse_duration("90"), parse_duration("2.5m")
    (5400.0, 90.0, 150.0)
    """
    match = _DURATION.fullmatch(text.strip().lower())
    if not match or not any(match.groups()):
        raise argparse.ArgumentTypeError(f"{text!r} is no duration; e.g. 3h, 90m, 1h30m, 5400s or 5400 (seconds)")
    hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the time limit must be positive")
    return total


_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a positive integer")
    return value


def _run_timed(pipeline: Any, args: argparse.Namespace) -> Any:
    """``run --time-limit/--max-cells``: one slice of cells (:func:`~nasrescale.pipeline.slices.run_slice`)."""
    from ..pipeline.slices import run_slice  # torch: as in run_cmd

    summary = run_slice(pipeline, args.results, max_cells=args.max_cells or len(pipeline.arch_list()),
                        deadline_s=args.time_limit or float("inf"), progress=not args.quiet,
                        log=lambda line: print(line, file=sys.stderr))
    print(slice_line(pipeline.name, summary), file=sys.stderr)
    return summary


def slice_line(name: str, summary: Any) -> str:
    """The closing line of a slice (a :class:`~nasrescale.pipeline.slices.SliceSummary`): what it
    ran, where the store stands, why it stopped. A slice that ran only LR-search or tuning jobs
    says so instead of "0 cell(s) run now".

    >>> from pathlib import Path
    >>> from nasrescale.pipeline.slices import SliceSummary
    >>> s = SliceSummary(Path("r"), stage_jobs_run=10, jobs_done=15, jobs_total=20, cells_total=5,
    ...                  waiting=["tuned"], stopped="time: 1 chunk(s) left for the next slice")
    >>> print(slice_line("study", s))  # doctest: +NORMALIZE_WHITESPACE
    study: 10 LR-search/tuning jobs run now, no evaluation cell; 0/5 cells and 15/20 jobs finished (the
    jobs of tuned wait for their LR search or tuning to choose; no cell is finished before they run);
    time: 1 chunk(s) left for the next slice
    >>> s = SliceSummary(Path("r"), cells_run=["3_11_111"], jobs_run=4, jobs_done=19, jobs_total=20,
    ...                  cells_done=4, cells_total=5, stopped="time: 1 chunk(s) left for the next slice")
    >>> print(slice_line("study", s))
    study: 1 cell(s) run now (4 jobs); 4/5 cells and 19/20 jobs finished; time: 1 chunk(s) left for the next slice
    """
    if summary.stage_jobs_run and not summary.cells_run:
        ran = f"{_jobs(summary.stage_jobs_run)} run now, no evaluation cell"
    else:
        stages = f", {_jobs(summary.stage_jobs_run)}" if summary.stage_jobs_run else ""
        ran = f"{len(summary.cells_run)} cell(s) run now ({summary.jobs_run} jobs{stages})"
    return (f"{name}: {ran}; {summary.cells_done}/{summary.cells_total} cells and {summary.jobs_done}/"
            f"{summary.jobs_total} jobs finished{_waiting_text(summary.waiting)}; {summary.stopped}")


def _jobs(count: int) -> str:
    """``count`` LR-search/tuning job(s), in words.

    >>> _jobs(1), _jobs(10)
    ('1 LR-search/tuning job', '10 LR-search/tuning jobs')
    """
    return f"{count} LR-search/tuning job{'' if count == 1 else 's'}"


def _waiting_text(labels: list[str]) -> str:
    """What the counts leave out while an LR stage has not chosen: its protocols' jobs (a cell is
    finished once every protocol ran it)."""
    if not labels:
        return ""
    return (f" (the jobs of {', '.join(labels)} wait for their LR search or tuning to choose; no cell is "
            "finished before they run)")


def run_cmd(args: argparse.Namespace) -> int:
    """Run the pipeline; print the final table; exit 1 if some jobs failed.

    The run folder's driver lock is taken first, before the pipeline (torch), its data or its
    reference are loaded, so a second driver is refused at once; SIGTERM ends the run as Ctrl-C does (exit
    143), and the lock's pid file goes with it."""
    from ..pipeline.lock import lock_if_present  # light: no torch yet
    from ..pipeline.signals import sigterm_as_interrupt

    overrides = parse_overrides(args.set + ([f"executor.threads={args.threads}"] if args.threads else []))
    if args.dry_run:  # writes nothing: no lock, it may look at a folder a driver is working in
        return _run_locked(args, overrides)
    with sigterm_as_interrupt(), lock_if_present(early_run_dir(args.pipeline, overrides, args.results)):
        check_torch_pair()  # imports torch: after the lock, so a second driver is refused without it
        return _run_locked(args, overrides)


def _run_locked(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """:func:`run_cmd` once the run folder's lock is held (or, for ``--dry-run``, not needed)."""
    from ..pipeline.runner import run_pipeline  # torch: as in _run_dir
    from ..pipeline.spec import load_pipeline
    from ..report.kind_reports import end_of_run
    from ..store.job_status import Status

    pipeline = load_pipeline(args.pipeline, overrides)
    if args.dry_run:
        return _dry_run(pipeline, args.results)
    if args.time_limit is not None or args.max_cells is not None:
        summary = _run_timed(pipeline, args)
        end_of_run(summary.run_dir)
        return _failed_exit(summary.failed, args)
    summary = run_pipeline(pipeline, args.results, progress=not args.quiet)
    c = summary.counts
    print(f"{pipeline.name}: {summary.total} jobs ({summary.new} new, {summary.ran} run now); "
          f"done {c[Status.DONE]}, diverged {c[Status.DIVERGED]}, failed {c[Status.FAILED]}; results in {summary.run_dir}",
          file=sys.stderr)
    end_of_run(summary.run_dir)
    return _failed_exit(summary.failed, args)


def _failed_exit(failed: int, args: argparse.Namespace) -> int:
    """Exit 1 with a line naming the status command when some jobs failed, else 0."""
    if failed:
        print(f"nasrescale run: {failed} job(s) failed; see `{status_command(args.pipeline, args.results)}`; "
              "rerun to retry them", file=sys.stderr)
        return 1
    return 0


def _dry_run(pipeline: Any, results: str | None) -> int:
    """``run --dry-run``: plan and check (:func:`~nasrescale.pipeline.runner.plan_pipeline`, data
    left out), print the jobs per protocol; nothing is written."""
    from ..pipeline.runner import check_store, plan_pipeline  # torch: as in run_cmd
    from ..store.read import run_dir_for

    where = run_dir_for(pipeline.name, results)
    plan = plan_pipeline(pipeline, data=False, run_dir=where)
    check_store(pipeline, plan.archs, where)  # a store of another pipeline under this name: refused as a run would
    if plan.jobs is None:
        print(f"{pipeline.name}: {len(plan.archs)} architectures; jobs are planned after the base-LR search "
              "and the tuning; "
              f"would write {where}; data not checked")
        return 0
    per_label: dict[str, int] = {}
    for job in plan.jobs:
        per_label[job.label or job.protocol.name] = per_label.get(job.label or job.protocol.name, 0) + 1
    counts = ", ".join(f"{label} {n}" for label, n in per_label.items())
    print(f"{pipeline.name}: {len(plan.jobs)} jobs over {len(plan.archs)} architectures ({counts}); "
          f"would write {where}; nothing written, data not checked")
    return 0


def status_command(pipeline: str, results: str | None) -> str:
    """The ``nasrescale status`` command line that shows this run (``--results`` kept).

    >>> status_command("my pipe.toml", "/tmp/r")
    "nasrescale status 'my pipe.toml' --results /tmp/r"
    """
    words = ["nasrescale", "status", pipeline] + (["--results", results] if results is not None else [])
    return shlex.join(words)


def status_cmd(args: argparse.Namespace) -> int:
    """Print the run's progress (or, with ``--commands``, each job's ``nasrescale train`` command)."""
    from ..lrsearch.tuning import tuning_of
    from ..pipeline.lock import driver_active
    from ..pipeline.progress import stage_lines
    from ..store.status import commands_text, status_text  # pandas: as in _run_dir

    def group(label: str) -> tuple[str, str] | None:  # a tuning's jobs on one line, its multipliers listed
        of = tuning_of(label)
        return None if of is None else (f"tuning runs of {of[0]}", of[1])

    run_dir = _run_dir(args.pipeline, args.results)
    if args.commands:
        print(commands_text(run_dir))
    else:
        print("\n".join([status_text(run_dir, driver=driver_active(run_dir), group=group), *stage_lines(run_dir)]))
    return 0


def export_cmd(args: argparse.Namespace) -> int:
    """Write the CSV."""
    from ..store.export import export_csv  # pandas: as in _run_dir

    out = Path(args.out)  # its folder exists and can be written (checked where parsed)
    n = export_csv(_run_dir(args.pipeline, args.results), out)
    print(f"wrote {n} rows to {out}", file=sys.stderr)
    return 0
