"""The benchmark and a slice of the re-evaluation inside a time-limited GPU allocation (a SLURM job's
wall time, a preemptible instance): docs/gpu_allocation.md.

The steps (``all`` = env bench parity modes reeval) run in order within ``--budget`` seconds, each
killed at the end of its share, and write into one output folder (``--out``, else ``$OUT``) that
``allocation.json`` sums up: ``env`` (software, device, data pack; ``pytest -m gpu``), ``bench``
(``benchmarks/train_throughput.py``: peaks per precision, like-for-like speed-ups), ``parity``
(``benchmarks/parity.py``: 10 seeds per arm past the anneal), ``modes`` (eager vs compile vs CUDA
graphs), ``reeval`` (``nasrescale run PIPELINE --time-limit``, its store copied into the folder
while it runs; the science runs in its pipeline's own precision). On a GPU, ``all`` follows the
loan's plan (``allocation_plan.py``): measuring capped at about 3 minutes, what is committed for
the GPU kind and code skipped, the rest science. Without a GPU, ``plan`` prints that plan (the
loan's dry run), ``size`` measures what is copied to the GPU machine and ``collect FOLDER`` takes
an output folder back into the results root; ``--dry-run`` shrinks every step to seconds on the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]  # the checkout's package, and pack_store beside this file
import allocation_plan  # noqa: E402  (beside this file: the loan's plan)

MIB = 2**20
STEPS = ("env", "bench", "parity", "modes", "reeval")
#: seconds a step would like, and what it is kept when a step before it runs (a dry run keeps 20 s)
WANT = {"env": 150.0, "bench": 330.0, "parity": 330.0, "modes": 300.0}
KEEP = {"env": 60.0, "bench": 240.0, "parity": 240.0, "modes": 180.0, "reeval": 240.0}
POLL_S = 30.0  # how often a running step's output is echoed and the re-evaluation's store copied out
GRACE_S = 20.0  # after SIGTERM at the end of a share, before SIGKILL: a slice writes its record in it
DRY_NAME = "gpu_slices_dryrun"
DRY_REEVAL = [f"pipeline.name={DRY_NAME}", "data.name=cifar10-subset", "data.path=", "archs.count=4",
              "budget.width=4", "budget.cells=1", "budget.epochs=1", "budget.train_subset=256",
              "budget.test_subset=200", "executor.jobs_per_gpu=2", "executor.device=cpu"]
DRY_BENCH = ["--device", "cpu", "--width", "4", "--cells", "1", "--train-images", "128", "--epochs", "1", "--ks", "2",
             "--jobs-per-gpu", "", "--workers", "0", "--acc-images", "128", "--acc-epochs", "1", "--seeds", "1"]
#: bench within its planned 1.5 minutes: the reference loop, the engine (K = 1) and a cell's fused group (K = 12)
FULL_BENCH = ["--device", "cuda", "--width", "16", "--cells", "5", "--train-images", "10000", "--epochs", "2",
              "--ks", "12", "--jobs-per-gpu", "", "--workers", "8", "--acc-images", "50000",
              "--acc-epochs", "2", "--seeds", "2"]
#: parity within its planned 3 minutes: one run per seed of each arm, 10 seeds, 4 epochs of 5,000
#: images (cosine past its anneal; 40 runs of 20,000 images)
DRY_PARITY = ["--device", "cpu", "--width", "4", "--cells", "1", "--images", "128", "--test-images", "100",
              "--resolution", "8", "--epochs", "4", "--seeds", "3", "--workers", "0", "--control-lr", "0.01"]
FULL_PARITY = ["--device", "cuda", "--width", "16", "--cells", "5", "--images", "5000", "--epochs", "4",
               "--seeds", "10", "--workers", "8", "--control-lr", "0.5"]
#: modes: eager vs torch.compile vs CUDA graphs (reduce-overhead) of the engine and a cell's fused group
#: (network and fused SGD update), in what its planned 1.5 minutes allow
DRY_MODES = ["--device", "cpu", "--width", "4", "--cells", "1", "--train-images", "128", "--epochs", "1", "--ks", "2",
             "--jobs-per-gpu", "", "--workers", "0", "--precisions", "fp32", "--modes", "eager"]
FULL_MODES = ["--device", "cuda", "--width", "16", "--cells", "5", "--train-images", "10000", "--epochs", "2",
              "--ks", "12", "--jobs-per-gpu", "", "--workers", "8", "--precisions", "bf16,fp32",
              "--modes", "eager,graphs,compile"]
#: the software and device lines of env/env.txt
ENV_PY = ("import os, platform, torch; cuda = torch.cuda.is_available(); print(f'python: {platform.python_version()}"
          "\\ntorch: {torch.__version__}\\ntorch CUDA: {torch.version.cuda}\\ncuDNN: {torch.backends.cudnn.version()}"
          "\\nCUDA available: {cuda}\\ndevice: ' + (torch.cuda.get_device_name(0) if cuda else "
          "f'CPU ({platform.machine()}, {os.cpu_count()} cores)'))")
PACK_HINT = "python tools/pack_cifar10.py --src CIFAR10_JPEG_FOLDER --out .data/cifar10.npz"


def share(args: argparse.Namespace, deadline: float, step: str, later: list[str],
          want: dict[str, float] | None = None) -> float:
    """Seconds for ``step``: what it wants, less what the later steps are kept (``want``, a plan's
    seconds: the later steps keep theirs); the last step the rest."""
    left = deadline - time.monotonic()
    if not later:
        return max(0.0, left - (2.0 if args.dry_run else 10.0))
    keep = KEEP if want is None else want
    return max(0.0, min((want or WANT)[step], left - sum(20.0 if args.dry_run else keep[s] for s in later)))


def _utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def run_logged(cmd: list[str], log: Path, end: float, tick: Callable[[], None] = lambda: None) -> str:
    """Run ``cmd`` in the checkout, its output appended to ``log`` and echoed, ``tick`` called every
    ``POLL_S``; at ``end`` (monotonic) its process group (workers included) gets SIGTERM (a slice
    then writes its record) and, ``GRACE_S`` later, SIGKILL. Its status."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a", encoding="utf-8") as out, open(log, encoding="utf-8", errors="replace") as echo:
        out.write(f"$ {shlex.join(cmd)}\n")
        out.flush()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
        status = ""
        while not status:
            try:
                code = proc.wait(timeout=max(0.1, min(POLL_S, end - time.monotonic())))
                status = "ok" if code == 0 else f"exit {code}"
            except subprocess.TimeoutExpired:
                if time.monotonic() >= end:
                    status = f"killed at the end of its share (exit {_stop(proc)})"
            print(echo.read(), end="", flush=True)
            tick()
        out.write(f"# {status}\n")
    return status


def _stop(proc: subprocess.Popen) -> int:
    """SIGTERM to ``proc``'s process group, then SIGKILL to what is left after ``GRACE_S``; its exit code."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group's workers too, had the leader already ended
    except ProcessLookupError:
        pass
    return proc.wait()


def step_env(args: argparse.Namespace, out: Path, end: float, record: dict[str, Any]) -> str:
    """env/env.txt (the date, host and data pack, then ``ENV_PY``), and ``pytest -m gpu`` into
    env/pytest_gpu.txt (exit 5, nothing selected, is ok)."""
    import hashlib

    pack = ROOT / args.data
    data = "shipped CIFAR-10 subset (dry run)" if args.dry_run else \
        f"{args.data} ({pack.stat().st_size / MIB:.1f} MiB, sha256 {hashlib.sha256(pack.read_bytes()).hexdigest()})"
    (out / "env").mkdir(parents=True, exist_ok=True)
    (out / "env" / "env.txt").write_text(f"date: {_utc()}\nhost: {platform.node()}\ndata: {data}\n", encoding="utf-8")
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


def step_reeval(args: argparse.Namespace, out: Path, end: float, record: dict[str, Any]) -> str:
    """``nasrescale run --time-limit`` on the results root (a dry run: a throw-away one), its store
    copied to reeval/store.sqlite; the slice the store records goes into the record."""
    from nasrescale.pipeline.slice_record import copy_store, visit_records
    from nasrescale.store.read import store_path

    results = args.results or (Path(tempfile.mkdtemp(prefix="gpu_allocation_")) if args.dry_run else ROOT / "results")
    store = store_path(DRY_NAME if args.dry_run else ROOT / args.pipeline, results)
    before = len(visit_records(store)) if store.is_file() else 0
    limit = int(end - time.monotonic() - (10 if args.dry_run else 60))  # the rest: starting up, the report
    options = DRY_REEVAL if args.dry_run else [f"data.path={args.data}"]
    if _pipeline_table(Path(args.pipeline)).get("kind") == "landscape":
        options = [*options, "landscape.reuse=none"]  # every job trained here (a store to copy from stays home)
    sets = [w for o in options for w in ("--set", o)]
    cmd = [sys.executable, "-m", "nasrescale", "run", args.pipeline, "--time-limit", f"{max(1, limit)}s",
           "--max-cells", str(args.cells), "--results", str(results), "--quiet", *sets]

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


RUNNERS: dict[str, Callable[[argparse.Namespace, Path, float, dict[str, Any]], str]] = {
    "env": step_env, "bench": step_bench, "parity": step_parity, "modes": step_modes, "reeval": step_reeval}


def limit_problems(out: Path, args: argparse.Namespace) -> list[str]:
    """How the output folder breaks the limits on what comes back (empty: it does not)."""
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    problems = [f"{len(files)} files (at most {args.max_files} come back)"] if len(files) > args.max_files else []
    for rel in files:
        if (out / rel).stat().st_size > args.max_file_mib * MIB:
            problems.append(f"{rel}: {(out / rel).stat().st_size / MIB:.1f} MiB (at most {args.max_file_mib:g} MiB)")
        if rel.count("/") > args.max_depth:
            problems.append(f"{rel}: more than {args.max_depth} folders down")
        if not re.fullmatch(r"[A-Za-z0-9._/-]+", rel):
            problems.append(f"{rel}: a name with characters other than letters, digits, '.', '_', '-'")
    return problems


def run_steps(args: argparse.Namespace, steps: list[str], out: Path, plan: Any = None) -> int:
    """Run the steps (with ``plan``, an ``allocation_plan.Plan``, its seconds), then write
    allocation.json (counted among what comes back, the plan in it); 0 if every step was ok and
    the output folder fits its limits, else 1."""
    deadline = time.monotonic() + args.budget
    record: dict[str, Any] = {"started_at": _utc(), "dry_run": args.dry_run, "argv": sys.argv[1:], "steps": [],
                              **({} if plan is None else {"plan": plan.to_json()})}
    want = None if plan is None else plan.wants()
    for i, step in enumerate(steps):
        seconds, start = share(args, deadline, step, steps[i + 1:], want), time.monotonic()
        print(f"== gpu_allocation {step}: share {seconds:.0f} s ==", flush=True)
        try:
            status = RUNNERS[step](args, out, start + seconds, record) if seconds > 0 else "skipped: no time left"
        except Exception as err:  # noqa: BLE001 - one step's failure must not lose the others' output
            status = f"error: {type(err).__name__}: {err}"
        record["steps"].append({"step": step, "status": status, "seconds": round(time.monotonic() - start, 1),
                                "share": round(seconds)})
        print(f"== gpu_allocation {step}: {status} ==", flush=True)
    record["limit_problems"] = []
    (out / "allocation.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    record["limit_problems"] = limit_problems(out, args)
    (out / "allocation.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    for problem in record["limit_problems"]:
        print(f"gpu_allocation: over the output limits: {problem}", file=sys.stderr)
    ok = all(s["status"] == "ok" for s in record["steps"]) and not record["limit_problems"]
    print(f"gpu_allocation: {'all steps ok' if ok else 'some steps did not end ok'}; see {out / 'allocation.json'}")
    return 0 if ok else 1


def size(include: list[Path], max_mib: float, pipeline: Path) -> int:
    """Print the MiB copied to the GPU machine (the files git lists, tracked or untracked but not
    ignored, and the included paths), and how much of it lies in results/ folders no step reads
    (every run's but the pipeline's own); 2 if an included path is missing or it all exceeds ``max_mib``."""
    missing = [str(p) for p in include if not (ROOT / p).exists()]
    if missing:
        return _refuse(f"size: included path {missing[0]!r} does not exist; make it first ({PACK_HINT})")
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "-co", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    files = [ROOT / n for n in listed if n] + [f for p in include for f in [ROOT / p, *(ROOT / p).rglob("*")]]
    total = sum(f.stat().st_size for f in files if f.is_file()) / MIB
    own = _run_name(pipeline)
    unread = sum(f.stat().st_size for f in files if f.is_file() and _unread_result(f, own)) / MIB
    print(f"gpu_allocation size: {total:.2f} MiB of {max_mib:g} MiB ({max_mib - total:.2f} MiB to spare): the "
          f"checkout's files and {', '.join(map(str, include))}; of it {unread:.2f} MiB in results/ folders no "
          f"step reads (every run's but {own}'s)")
    return _refuse(f"size: what must be copied is {total:.1f} MiB, over the {max_mib:g} MiB of --max-mib: delete or "
                   f"git-ignore untracked files, include less, of results/ copy results/{own}/ and "
                   "results/gpu_allocations/ alone (no step reads the others: docs/gpu_allocation.md, 'What is "
                   "copied'), or raise --max-mib") if total > max_mib else 0


def _pipeline_table(pipeline: Path) -> dict[str, Any]:
    """The ``[pipeline]`` table of a pipeline file (empty where it cannot be read)."""
    import tomllib

    try:
        table = tomllib.loads((ROOT / pipeline).read_text())["pipeline"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return {}
    return table if isinstance(table, dict) else {}


def _run_name(pipeline: Path) -> str:
    """The run (results/ folder) a pipeline file names; its file stem where it cannot be read."""
    return str(_pipeline_table(pipeline).get("name") or Path(pipeline).stem)


def _unread_result(path: Path, own: str) -> bool:
    """Whether ``path`` lies in a results/ folder other than the run ``own``, the index and
    gpu_allocations/ (the plan reads the committed figures)."""
    try:
        parts = path.resolve().relative_to(ROOT / "results").parts
    except ValueError:
        return False
    return len(parts) > 1 and parts[0] not in (own, "gpu_allocations")


def collect(out: Path, results: Path, n_boot: int = 1000) -> int:
    """Take an output folder copied back into ``results``: its store over the run's, gzipped beside it
    as committed runs ship, and reported; its text files into ``gpu_allocations/<start>/``."""
    from nasrescale.cli.main import main as nasrescale
    from nasrescale.pipeline.slice_record import copy_store
    from nasrescale.store.job_status import FINAL
    from nasrescale.store.read import reading, run_dir_for
    from pack_store import pack_store

    def finished(run_dir: Path) -> int:
        if not any((run_dir / name).is_file() for name in ("store.sqlite", "store.sqlite.gz")):
            return 0
        with reading(run_dir) as store:
            return sum(store.counts()[s] for s in FINAL)

    if not out.is_dir():
        return _refuse(f"collect: no folder {str(out)!r} (the output folder, copied back)")
    if (out / "reeval" / "store.sqlite").is_file():
        with reading(out / "reeval") as store:
            run_dir = run_dir_for(store.get_meta("name"), results)
        if finished(out / "reeval") < finished(run_dir):
            return _refuse(f"collect: {out / 'reeval'} holds {finished(out / 'reeval')} finished jobs, fewer than the "
                           f"{finished(run_dir)} of {run_dir}: not overwriting it")
        for stale in ("store.sqlite-wal", "store.sqlite-shm"):
            (run_dir / stale).unlink(missing_ok=True)
        pack_store(copy_store(out / "reeval" / "store.sqlite", run_dir / "store.sqlite").parent)
        if nasrescale(["report", run_dir.name, "--results", str(results), "--bootstrap", str(n_boot)]):
            return _refuse(f"collect: the store is taken, its report failed (above): `nasrescale report {run_dir}`")
    summary = json.loads((out / "allocation.json").read_text()) if (out / "allocation.json").is_file() else {}
    target = results / "gpu_allocations" / re.sub(r"[-:]", "", summary.get("started_at", "unknown"))
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(out.rglob("*")):
        if path.is_file() and path.suffix in (".txt", ".json", ".log"):
            shutil.copyfile(path, target / path.name)
    print(f"copied the output's text files to {target}; now: git add {results} && git commit")
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (docs/gpu_allocation.md); a negative number is refused."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("steps", nargs="+", metavar="STEP",
                   help="env, bench, parity, modes, reeval, all; without a GPU: plan, size, collect FOLDER")
    p.add_argument("--out", type=Path, metavar="DIR", help="output folder (default: $OUT)")
    p.add_argument("--dry-run", action="store_true", help="every step tiny, on the CPU")
    p.add_argument("--data", type=Path, default=Path(".data/cifar10.npz"), metavar="FILE",
                   help="the CIFAR-10 pack, git-ignored (default .data/cifar10.npz)")
    p.add_argument("--pipeline", default="pipelines/landscape_nb201_full_gpu.toml", metavar="FILE",
                   help="the pipeline reeval runs in slices (default pipelines/landscape_nb201_full_gpu.toml, the "
                        "per-cell LR landscape at full size, fp32)")
    p.add_argument("--gpu", metavar="NAME", help="plan: the GPU kind planned for (default: this machine's GPU, "
                                                 "else the newest committed allocation's)")
    p.add_argument("--results", type=Path, metavar="DIR",
                   help="results root (default results/; dry run: a temp folder)")
    p.add_argument("--include", action="append", default=[], type=Path, metavar="PATH",
                   help="size: an ignored path also copied (repeatable; default: --data)")
    for name, default, unit, what in (
            ("budget", 540.0, "SECONDS", "the whole command's time: the allocation's time left, less a margin"),
            ("cells", 100, "N", "reeval: the most cells"), ("max-mib", 64.0, "MIB", "size: the most MiB copied"),
            ("max-files", 10, "N", "the most files the output folder may hold"),
            ("max-file-mib", 16.0, "MIB", "the largest output file"),
            ("max-depth", 2, "N", "the most folders down an output file may lie")):
        p.add_argument(f"--{name}", type=type(default), default=default, metavar=unit,
                       help=f"{what} (default {default:g})")
    args = p.parse_args(argv)
    for name in ("budget", "cells", "max_mib", "max_files", "max_file_mib", "max_depth"):
        if getattr(args, name) < 0:
            p.error(f"argument --{name.replace('_', '-')}: {getattr(args, name)!r} is negative: give 0 or more")
    return args


def _refuse(message: str) -> int:
    print(f"gpu_allocation: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Exit 0 if every step ended ok within the output limits, 1 otherwise, 2 on bad input."""
    args = parse_args(argv)
    # the steps' subprocesses import the checkout's package, whatever is installed
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    if args.steps[0] == "size":
        return size(args.include or [args.data], args.max_mib, Path(args.pipeline))
    if args.steps[0] == "plan":
        print(allocation_plan.format_plan(allocation_plan.loan_plan(args, ROOT)))
        return 0
    if args.steps[0] == "collect":
        if len(args.steps) != 2:
            return _refuse("collect FOLDER (the output folder, copied back from the GPU machine)")
        return collect(Path(args.steps[1]), args.results or ROOT / "results")
    steps = [s for step in args.steps for s in (STEPS if step == "all" else [step])]
    out = args.out or (Path(os.environ["OUT"]) if os.environ.get("OUT") else None)
    bad = [s for s in steps if s not in STEPS]
    if bad or out is None:
        return _refuse(f"unknown step {bad[0]!r}; steps: {', '.join(STEPS)}, all (or size, collect)" if bad else
                       "no output folder: pass --out DIR (or set OUT in the environment)")
    if not args.dry_run and {"bench", "parity", "modes", "reeval"} & set(steps) and not (ROOT / args.data).is_file():
        return _refuse(f"the CIFAR-10 pack {str(args.data)!r} is missing: make it once ({PACK_HINT}) and copy it with "
                       f"the checkout (`tools/gpu_allocation.sh size --include {args.data}` measures both)")
    if "reeval" in steps and not (ROOT / args.pipeline).is_file():
        return _refuse(f"no pipeline file {args.pipeline!r} (relative to the repository root)")
    plan = None
    if not args.dry_run:
        try:
            plan = allocation_plan.loan_plan(args, ROOT)
        except Exception as err:  # noqa: BLE001 - without a plan the steps run as asked, with the fixed shares
            print(f"gpu_allocation: no plan ({type(err).__name__}: {err}); the steps run as given", file=sys.stderr)
    if plan is not None and args.steps == ["all"]:
        steps = [step for step, _ in plan.steps]
    out.mkdir(parents=True, exist_ok=True)
    return run_steps(args, steps, out, plan)


if __name__ == "__main__":
    sys.exit(main())
