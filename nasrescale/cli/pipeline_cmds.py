"""``nasrescale run / status / export``: drive a pipeline and look at its results."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import NasRescaleError

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``run``, ``status`` and ``export`` commands."""
    from ..pipeline.spec import pipeline_names

    shipped = ", ".join(pipeline_names()) or "none"
    p = sub.add_parser(
        "run", help="run a pipeline (resumable: a rerun finishes only what is missing)",
        description="Retrain a pipeline's architectures under its protocols and seeds, storing every result in "
                    "results/<name>/store.sqlite. Rerunning (after a crash or kill) finishes only what is missing.")
    p.add_argument("pipeline", metavar="PIPELINE", help=f"pipeline .toml file or shipped name ({shipped})")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a pipeline key, e.g. --set budget.epochs=3 or --set executor.kind=ray (repeatable)")
    p.add_argument("--results", metavar="DIR", help="results root (default ./results)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run_cmd)

    p = sub.add_parser("status", help="progress, counts by status and ETA of a pipeline run")
    p.add_argument("pipeline", metavar="PIPELINE", help="pipeline file, shipped name, or the run's name")
    p.add_argument("--results", metavar="DIR", help="results root (default ./results)")
    p.set_defaults(func=status_cmd)

    p = sub.add_parser("export", help="write a pipeline run's jobs as a tidy CSV, one row per job")
    p.add_argument("pipeline", metavar="PIPELINE", help="pipeline file, shipped name, or the run's name")
    p.add_argument("--out", required=True, metavar="FILE.csv", help="CSV file to write")
    p.add_argument("--results", metavar="DIR", help="results root (default ./results)")
    p.set_defaults(func=export_cmd)


def _run_dir(name_or_path: str, results: str | None) -> Path:
    """The run folder of a pipeline given as a file, a shipped name, or a run's name."""
    from ..pipeline.runner import run_dir_for
    from ..pipeline.spec import load_pipeline

    direct = run_dir_for(Path(name_or_path).stem if name_or_path.endswith(".toml") else name_or_path, results)
    try:
        name = load_pipeline(name_or_path).name
    except NasRescaleError:
        if (direct / "store.sqlite").is_file():
            return direct
        raise
    return run_dir_for(name, results)


def run_cmd(args: argparse.Namespace) -> int:
    """Run the pipeline; print the final table; exit 1 if some jobs failed."""
    from ..pipeline.runner import run_pipeline
    from ..pipeline.spec import load_pipeline

    pipeline = load_pipeline(args.pipeline, args.set)
    summary = run_pipeline(pipeline, args.results, progress=not args.quiet)
    c = summary.counts
    print(f"{pipeline.name}: {summary.total} jobs ({summary.new} new, {summary.ran} run now); "
          f"done {c['done']}, diverged {c['diverged']}, failed {c['failed']}; results in {summary.run_dir}",
          file=sys.stderr)
    if pipeline.pipeline.kind == "lr_validation":
        from ..report.lr_validation import summary_text, write_validation_report

        print(summary_text(summary.run_dir))
        print(f"report: {write_validation_report(summary.run_dir)}", file=sys.stderr)
    else:
        _final_report(summary.run_dir)
    if summary.failed:
        print(f"nasrescale run: {summary.failed} job(s) failed; see `{status_command(args.pipeline, args.results)}`; "
              "rerun to retry them", file=sys.stderr)
        return 1
    return 0


def status_command(pipeline: str, results: str | None) -> str:
    """The ``nasrescale status`` command line that shows this run (``--results`` kept).

    >>> status_command("my pipe.toml", "/tmp/r")
    "nasrescale status 'my pipe.toml' --results /tmp/r"
    """
    import shlex

    words = ["nasrescale", "status", pipeline] + (["--results", results] if results is not None else [])
    return shlex.join(words)


def status_cmd(args: argparse.Namespace) -> int:
    """Print the run's progress."""
    from ..pipeline.runner import status_text

    print(status_text(_run_dir(args.pipeline, args.results)))
    return 0


def export_cmd(args: argparse.Namespace) -> int:
    """Write the CSV."""
    from ..pipeline.runner import export_csv

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    n = export_csv(_run_dir(args.pipeline, args.results), out)
    print(f"wrote {n} rows to {out}", file=sys.stderr)
    return 0


def _simple_table(run_dir: Path) -> str:
    """Mean test accuracy per protocol over the finished jobs (fallback when rank/report are absent)."""
    from ..store.write import Store

    store = Store(run_dir / "store.sqlite", readonly=True)
    try:
        rows = [r for r in store.rows() if r["status"] in ("done", "diverged")]
    finally:
        store.close()
    lines = [f"{'protocol':<12} {'jobs':>5} {'diverged':>8} {'mean acc %':>10}  best arch (mean over seeds)"]
    for label in dict.fromkeys(r["protocol"] for r in rows):
        accs: dict[str, list[float]] = {}
        mine = [r for r in rows if r["protocol"] == label]
        for r in mine:
            if r["test_accuracy"] is not None:  # diverged runs have none; counted apart
                accs.setdefault(r["arch"], []).append(r["test_accuracy"])
        means = {a: sum(v) / len(v) for a, v in accs.items()}
        allv = [x for v in accs.values() for x in v]
        best = max(means, key=means.get) if means else None
        mean = f"{sum(allv) / len(allv):>10.2f}" if allv else f"{'-':>10}"
        lines.append(f"{label:<12} {len(mine):>5} {len(mine) - len(allv):>8} {mean}  "
                     + (f"{best} ({means[best]:.2f})" if best else "-"))
    return "\n".join(lines)


def _final_report(run_dir: Path) -> None:
    """The end of ``run``: the ranking table, then the written report.

    LEAD: the single call site of rank/report (branch issue7-rank). With ``nasrescale.report.report``
    present it prints ``ranking_text(run_dir)`` and writes ``report.md``; without it, a simple
    table of mean accuracy per protocol.
    """
    try:
        from ..report.report import ranking_text, write_report  # type: ignore[attr-defined]
    except ImportError:
        print(_simple_table(run_dir))
        return
    try:
        print(ranking_text(run_dir))
        print(f"report: {write_report(run_dir)}", file=sys.stderr)
    except Exception as err:  # noqa: BLE001 - the results are stored; the report can be redone
        print(f"nasrescale run: the results are stored, but the report failed ({type(err).__name__}: {err}); "
              "retry with `nasrescale report`", file=sys.stderr)
