"""What each step runs (docs/gpu_allocation.md, "The steps"): ``runner(args, out, end, record)``
runs until ``end`` (monotonic), writes into the output folder ``out``, may add to the allocation's
``record`` and returns its status (``ok``, ``exit N``, ``killed ...``, ``refused: ...``)."""

from __future__ import annotations

import argparse
import hashlib
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from . import MIB, ROOT
from .pipelines import pipeline_table
from .process import run_logged, utc
from .sizes import (DRY_BENCH, DRY_MODES, DRY_NAME, DRY_PARITY, DRY_REEVAL, ENV_PY, FULL_BENCH, FULL_MODES,
                    FULL_PARITY)

__all__ = ["Runner", "RUNNERS", "step_env", "step_bench", "step_parity", "step_modes", "step_reeval",
           "science_settings"]

Runner = Callable[[argparse.Namespace, Path, float, dict[str, Any]], str]


def step_env(args: argparse.Namespace, out: Path, end: float, record: dict[str, Any]) -> str:
    """env/env.txt (the date, host and data pack, then ``ENV_PY``), and ``pytest -m gpu`` into
    env/pytest_gpu.txt (exit 5, nothing selected, is ok)."""
    pack = ROOT / args.data
    data = "shipped CIFAR-10 subset (dry run)" if args.dry_run else \
        f"{args.data} ({pack.stat().st_size / MIB:.1f} MiB, sha256 {hashlib.sha256(pack.read_bytes()).hexdigest()})"
    (out / "env").mkdir(parents=True, exist_ok=True)
    (out / "env" / "env.txt").write_text(f"date: {utc()}\nhost: {platform.node()}\ndata: {data}\n", encoding="utf-8")
    facts = run_logged([sys.executable, "-c", ENV_PY], out / "env" / "env.txt", end)
    tests = ["tests/train/test_engine.py"] if args.dry_run else []  # the rehearsal checks the marker selection
    status = run_logged([sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider", *tests],
                        out / "env" / "pytest_gpu.txt", end)
    return "ok" if facts == "ok" and status in ("ok", "exit 5") else f"env.txt: {facts}; pytest: {status}"


def step_bench(args: argparse.Namespace, out: Path, end: float, record: dict[str, Any]) -> str:
    """bench/bench.txt (the table, the ``ratio=`` line) and bench/bench.json."""
    left = end - time.monotonic()
    size = DRY_BENCH + ["--time-budget", str(max(5, int(left - 5)))] if args.dry_run else \
        FULL_BENCH + ["--data", str(args.data), "--time-budget", str(int(left - 40))]
    cmd = [sys.executable, "-u", "benchmarks/train_throughput.py", "--precisions", "bf16,fp32", "--accuracy",
           "--json", str(out / "bench" / "bench.json"), *size]
    return run_logged(cmd, out / "bench" / "bench.txt", end)


def step_parity(args: argparse.Namespace, out: Path, end: float, record: dict[str, Any]) -> str:
    """parity/parity.txt: each arm's accuracies and every comparison's verdict."""
    size = DRY_PARITY if args.dry_run else FULL_PARITY + ["--data", str(args.data)]
    return run_logged([sys.executable, "-u", "benchmarks/parity.py", *size], out / "parity" / "parity.txt", end)


def step_modes(args: argparse.Namespace, out: Path, end: float, record: dict[str, Any]) -> str:
    """modes/modes.txt: the engine and the largest fused group eager, compiled and as CUDA graphs."""
    left = end - time.monotonic()
    size = DRY_MODES + ["--time-budget", str(max(5, int(left - 5)))] if args.dry_run else \
        FULL_MODES + ["--data", str(args.data), "--time-budget", str(int(left - 40))]
    return run_logged([sys.executable, "-u", "benchmarks/train_throughput.py", *size], out / "modes" / "modes.txt",
                      end)


def science_settings(args: argparse.Namespace, record: dict[str, Any]) -> list[str] | str:
    """The ``--set`` options of the science slice, or why it is refused: a dry run's tiny settings; on
    a GPU the data pack and the precision the plan chose (no plan: refused, the precision unchecked)."""
    if args.dry_run:
        options = list(DRY_REEVAL)
    else:
        choice = (record.get("plan") or {}).get("precision")
        if not choice:
            return "no plan: the science's precision cannot be checked against the parity verdict and the store"
        if choice.get("refused"):
            return str(choice["refused"])
        options = [f"data.path={args.data}", *choice.get("settings", [])]
    reuse_key = _reuse_key(Path(args.pipeline))
    if reuse_key is not None:
        options.append(f"{reuse_key}=none")  # every job trained here (a store to copy from stays home)
    return options


def _reuse_key(pipeline: Path) -> str | None:
    """The key naming the pipeline's reuse store, where its kind has one (a landscape's
    ``landscape.reuse``, a trend's ``trend.reuse``)."""
    from nasrescale.pipeline.kind_registry import get_kind
    from nasrescale.pipeline.tables import PipelineSettings

    return get_kind(pipeline_table(pipeline).get("kind") or PipelineSettings().kind).reuse_key


def step_reeval(args: argparse.Namespace, out: Path, end: float, record: dict[str, Any]) -> str:
    """``nasrescale run --time-limit`` on the results root (a dry run: a throw-away one), its store
    copied to reeval/store.sqlite; the slice the store records goes into the record."""
    from nasrescale.pipeline.slice_record import copy_store, visit_records
    from nasrescale.store.read import store_path

    options = science_settings(args, record)
    if isinstance(options, str):
        return f"refused: {options}"
    results = args.results or (Path(tempfile.mkdtemp(prefix="gpu_allocation_")) if args.dry_run else ROOT / "results")
    store = store_path(DRY_NAME if args.dry_run else ROOT / args.pipeline, results)
    before = len(visit_records(store)) if store.is_file() else 0
    limit = int(end - time.monotonic() - (10 if args.dry_run else 60))  # the rest: starting up, the report
    cmd = [sys.executable, "-m", "nasrescale", "run", args.pipeline, "--time-limit", f"{max(1, limit)}s",
           "--max-cells", str(args.cells), "--results", str(results), "--quiet",
           *[w for o in options for w in ("--set", o)]]

    def copy_out() -> None:
        try:
            if store.is_file():
                copy_store(store, out / "reeval" / "store.sqlite")
        except Exception as err:  # noqa: BLE001 - a copy taken while the run writes is tried again
            print(f"gpu_allocation: store not copied yet ({type(err).__name__}: {err})", file=sys.stderr)

    try:
        status = run_logged(cmd, out / "reeval" / "reeval.log", end, copy_out)
        copy_out()
        record["reeval"] = (visit_records(store)[before:] or [None])[-1] if store.is_file() else None
        return status
    finally:
        if args.dry_run and not args.results:
            shutil.rmtree(results, ignore_errors=True)


RUNNERS: dict[str, Runner] = {"env": step_env, "bench": step_bench, "parity": step_parity, "modes": step_modes,
                              "reeval": step_reeval}
