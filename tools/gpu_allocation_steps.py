"""The steps of one command in a time-limited GPU allocation (``tools/gpu_allocation.py``):
env, bench, reeval, and the summary.

Each step gets a time share in seconds, writes under ``<out>/<step>/`` and records itself in
``Allocation.record`` (status, seconds, share); :func:`finish` writes ``allocation.json`` and
checks the output folder against the limits on what comes back
(:class:`~gpu_allocation_limits.OutputLimits`).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from gpu_allocation_limits import OutputLimits, out_tree

__all__ = ["Allocation", "STEPS", "finish", "run_logged"]

#: what a step would like (seconds), and what a later step needs at least (kept back for it)
WANT = {"env": 150.0, "bench": 330.0, "reeval": 10_000.0}
KEEP = {"env": 60.0, "bench": 240.0, "reeval": 240.0}
DRY_KEEP = {"env": 20.0, "bench": 30.0, "reeval": 20.0}

#: --dry-run: the reeval pipeline shrunk to seconds on the CPU
DRY_REEVAL = ["pipeline.name=gpu_slices_dryrun", "data.name=cifar10-subset", "data.path=", "archs.count=4",
              "budget.width=4", "budget.cells=1", "budget.epochs=1", "budget.train_subset=256",
              "budget.test_subset=200", "executor.jobs_per_gpu=2", "executor.device=cpu"]


@dataclass
class Allocation:
    """One command in a GPU allocation: where it writes, what it runs on, its deadline, the
    limits on its output and its record."""

    root: Path
    out: Path
    dry_run: bool
    data: Path
    pipeline: str
    results: Path | None
    cells: int
    deadline: float
    limits: OutputLimits = field(default_factory=OutputLimits)
    record: dict[str, Any] = field(default_factory=dict)
    _digest: str | None = None

    def __post_init__(self) -> None:
        self.record = {"started_at": _utc(), "dry_run": self.dry_run, "argv": sys.argv[1:], "steps": []}

    def check_inputs(self, steps: list[str]) -> str | None:
        """A message if the command cannot start (no data pack, no pipeline file), else ``None``."""
        self.out.mkdir(parents=True, exist_ok=True)
        data = self.root / self.data
        if not self.dry_run and {"bench", "reeval"} & set(steps) and not data.is_file():
            return (f"the CIFAR-10 pack {str(self.data)!r} is missing: make it once with `python "
                    f"tools/pack_cifar10.py --src CIFAR10_JPEG_FOLDER --out {self.data}` and copy it to the GPU "
                    f"machine with the checkout (it is git-ignored: `tools/gpu_allocation.sh size --include "
                    f"{self.data}` measures both)")
        if "reeval" in steps and not (self.root / self.pipeline).is_file():
            return f"no pipeline file {self.pipeline!r} (relative to the repository root)"
        return None

    def share(self, step: str, later: list[str]) -> float:
        """Seconds for ``step``: what it wants, less what the later steps are kept."""
        left = self.deadline - time.monotonic()
        if not later:
            return max(0.0, left - (2.0 if self.dry_run else 10.0))
        keep = DRY_KEEP if self.dry_run else KEEP
        return max(0.0, min(WANT[step], left - sum(keep[s] for s in later)))

    def data_copy(self) -> str:
        """What the real steps train on, for provenance."""
        if self.dry_run:
            return "shipped CIFAR-10 subset (dry run)"
        path = self.root / self.data
        if self._digest is None:
            self._digest = hashlib.sha256(path.read_bytes()).hexdigest()
        return (f"CIFAR-10 JPEG pack {self.data} ({path.stat().st_size / 2**20:.1f} MiB, sha256 {self._digest[:16]}): "
                "the 60,000 CIFAR-10 images as JPEG files, byte for byte (tools/pack_cifar10.py), not "
                "torchvision's pickles")

    def step_dir(self, step: str) -> Path:
        """``<out>/<step>/``, created."""
        path = self.out / step
        path.mkdir(parents=True, exist_ok=True)
        return path

    def env(self) -> dict[str, str]:
        """Environment of the subprocesses: the project importable, unbuffered output."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(self.root), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["PYTHONUNBUFFERED"] = "1"
        return env


def _utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def run_logged(cmd: list[str], log: Path, timeout: float, env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Run ``cmd``, copying its output line by line to ``log`` and to stdout; kill its process
    group after ``timeout`` s. Returns ``(exit code, status)``; what it wrote stays either way."""
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {' '.join(cmd)}\n")
        f.flush()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=cwd,
                                start_new_session=True)

        def pump() -> None:
            for line in proc.stdout:  # type: ignore[union-attr]
                f.write(line)
                f.flush()
                sys.stdout.write(line)
            sys.stdout.flush()

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            code = proc.wait(timeout=max(1.0, timeout))
            status = "ok" if code == 0 else f"exit {code}"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # its own process group: the process and its workers
            code, status = proc.wait(), f"killed at its {timeout:.0f}-s share"
        reader.join(timeout=10)
        f.write(f"# {status}\n")
    return code, status


def _step(alloc: Allocation, name: str, share: float, body: Callable[[], str]) -> None:
    """Run one step's ``body`` (returns its status), timing it into the record."""
    start = time.monotonic()
    print(f"== gpu_allocation {name}: share {share:.0f} s ==", flush=True)
    try:
        status = body() if share > 0 else "skipped: no time left"
    except Exception as err:  # noqa: BLE001 - one step's failure must not lose the others' output
        status = f"error: {type(err).__name__}: {err}"
    seconds = round(time.monotonic() - start, 1)
    alloc.record["steps"].append({"step": name, "status": status, "seconds": seconds, "share": round(share)})
    print(f"== gpu_allocation {name}: {status} ({seconds} s) ==", flush=True)


def env_text(alloc: Allocation) -> str:
    """Device, driver and software versions (and the data pack), as ``key: value`` lines."""
    import torch

    lines = {"date": _utc(), "host": platform.node(), "python": platform.python_version(), "torch": torch.__version__,
             "torch CUDA": str(torch.version.cuda), "cuDNN": str(torch.backends.cudnn.version()),
             "CUDA available": str(torch.cuda.is_available())}
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        lines.update({"device": props.name, "capability": f"{props.major}.{props.minor}",
                      "memory": f"{props.total_memory / 2**30:.1f} GiB", "SMs": str(props.multi_processor_count)})
    smi = _nvidia_smi()
    if smi:
        lines["nvidia-smi"] = smi
    for name in ("numpy", "networkx", "scipy", "pandas", "torchvision"):
        try:
            lines[name] = __import__(name).__version__
        except ImportError:
            lines[name] = "missing"
    lines["data"] = alloc.data_copy()
    lines["cpus"] = str(os.cpu_count())
    return "".join(f"{k}: {v}\n" for k, v in lines.items())


def _nvidia_smi() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def step_env(alloc: Allocation, share: float) -> None:
    """env/env.txt and env/pytest_gpu.txt."""
    def body() -> str:
        folder = alloc.step_dir("env")
        (folder / "env.txt").write_text(env_text(alloc), encoding="utf-8")
        print((folder / "env.txt").read_text(encoding="utf-8"), end="", flush=True)
        cmd = [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider"]
        if alloc.dry_run:  # one file: the marker selection is what the rehearsal checks
            cmd += ["tests/train/test_engine.py"]
        left = share - (time.monotonic() - start)
        code, status = run_logged(cmd, folder / "pytest_gpu.txt", left, alloc.env(), alloc.root)
        return "ok" if code in (0, 5) and status in ("ok", "exit 5") else f"pytest: {status}"

    start = time.monotonic()
    _step(alloc, "env", share, body)


def bench_args(alloc: Allocation, share: float) -> list[str]:
    """``benchmarks/train_throughput.py`` arguments: full size on CUDA, tiny with ``--dry-run``."""
    folder = alloc.step_dir("bench")
    common = ["--precisions", "bf16,fp32", "--accuracy", "--json", str(folder / "bench.json")]
    if alloc.dry_run:
        # no (d) rows: spawning pool processes costs ~20 s on a small CPU (tests/executors/test_executors.py covers the pool)
        return [*common, "--device", "cpu", "--width", "4", "--cells", "1", "--train-images", "128", "--epochs", "1",
                "--ks", "2", "--jobs-per-gpu", "", "--workers", "0", "--acc-images", "128", "--acc-epochs", "1",
                "--seeds", "1", "--time-budget", str(max(5, int(share - 5)))]
    return [*common, "--device", "cuda", "--data", str(alloc.data), "--width", "16", "--cells", "5",
            "--train-images", "10000", "--epochs", "2", "--ks", "2,6,12", "--jobs-per-gpu", "2,4", "--workers", "8",
            "--acc-images", "50000", "--acc-epochs", "2", "--seeds", "2", "--time-budget", str(int(share - 40))]


def step_bench(alloc: Allocation, share: float) -> None:
    """bench/bench.txt (the table, ``ratio=``) and bench/bench.json."""
    def body() -> str:
        cmd = [sys.executable, "-u", "benchmarks/train_throughput.py", *bench_args(alloc, share)]
        return run_logged(cmd, alloc.step_dir("bench") / "bench.txt", share, alloc.env(), alloc.root)[1]

    _step(alloc, "bench", share, body)


def step_reeval(alloc: Allocation, share: float) -> None:
    """The next slice of the reeval pipeline; reeval/store.sqlite after every chunk, reeval/reeval.log."""
    def body() -> str:
        from nasrescale.pipeline.spec import load_pipeline
        from nasrescale.pipeline.slices import copy_store, run_slice

        folder = alloc.step_dir("reeval")
        overrides = DRY_REEVAL if alloc.dry_run else [f"data.path={alloc.data}"]
        pipeline = load_pipeline(alloc.root / alloc.pipeline, overrides)
        throwaway = Path(tempfile.mkdtemp(prefix="gpu_allocation_")) if alloc.dry_run and not alloc.results else None
        results = alloc.results or throwaway or alloc.root / "results"
        store = results / pipeline.name / "store.sqlite"
        with open(folder / "reeval.log", "a", encoding="utf-8") as log_file, _removed(throwaway):
            def log(line: str) -> None:
                print(line, flush=True)
                log_file.write(line + "\n")
                log_file.flush()

            log(f"reeval: {pipeline.name} in {results}; data: {alloc.data_copy()}")
            summary = run_slice(pipeline, results, max_cells=alloc.cells, deadline_s=share - (5 if alloc.dry_run else 45),
                                visit=_slice_facts(alloc), log=log,
                                after_chunk=lambda: copy_store(store, folder / "store.sqlite"))
            copy_store(store, folder / "store.sqlite")
            log(f"reeval: ran {summary.jobs_run} jobs ({len(summary.cells_run)} cells) in {summary.wall_s} s; "
                f"done {summary.jobs_done}/{summary.jobs_total} jobs, {summary.cells_done}/{summary.cells_total} cells; "
                f"{summary.stopped}")
        alloc.record["reeval"] = {k: v for k, v in summary.to_json().items() if k != "cells_run"}
        return "ok"

    _step(alloc, "reeval", share, body)


@contextmanager
def _removed(folder: Path | None) -> Iterator[None]:
    """Delete ``folder`` (a dry run's throw-away results) on the way out."""
    try:
        yield
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _slice_facts(alloc: Allocation) -> dict[str, Any]:
    """What the store records of this slice (meta ``visit:<n>``: device, software, data copy)."""
    import torch

    cuda = torch.cuda.is_available() and not alloc.dry_run
    return {"device": torch.cuda.get_device_name(0) if cuda else f"CPU ({platform.machine()})",
            "torch": torch.__version__, "cuda": torch.version.cuda if cuda else None,
            "data_copy": alloc.data_copy(), "dry_run": alloc.dry_run, "started_at": alloc.record["started_at"]}


STEPS: dict[str, Callable[[Allocation, float], None]] = {"env": step_env, "bench": step_bench, "reeval": step_reeval}


def finish(alloc: Allocation) -> int:
    """Write ``allocation.json``, print the output tree; 0 if every step was ok and the output
    fits its limits."""
    alloc.record["finished_at"] = _utc()
    summary = alloc.out / "allocation.json"
    alloc.record["limit_problems"] = []
    summary.write_text(json.dumps(alloc.record, indent=1) + "\n", encoding="utf-8")  # counted with the rest
    problems = alloc.record["limit_problems"] = alloc.limits.problems(alloc.out)
    summary.write_text(json.dumps(alloc.record, indent=1) + "\n", encoding="utf-8")
    print(f"== gpu_allocation: {alloc.out} ==")
    for rel, size in out_tree(alloc.out):
        print(f"  {rel:<28} {size:>12,} bytes")
    for problem in problems:
        print(f"gpu_allocation: over the output limits: {problem}", file=sys.stderr)
    ok = all(s["status"] == "ok" for s in alloc.record["steps"]) and not problems
    print(f"gpu_allocation: {'all steps ok' if ok else 'some steps did not end ok (see allocation.json)'}")
    return 0 if ok else 1
