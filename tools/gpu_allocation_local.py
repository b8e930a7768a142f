"""The halves of a GPU allocation run on the machine that holds the checkout, without a GPU
(``tools/gpu_allocation.py size`` and ``collect``).

* :func:`check_size`: what must be copied to the GPU machine -- tracked files, untracked files
  that git does not ignore, and the included ignored paths (the data pack) -- measured with
  ``du``, against a cap (``--max-mib``, default 64). Run it before copying: a transfer or
  staging area with a size cap refuses an oversized tree only once the allocation has started.
* :func:`collect`: an output folder, copied back from the GPU machine, into ``results/``: the
  re-evaluation store into ``results/<its pipeline name>/store.sqlite`` (refusing one with
  fewer finished jobs than the committed store), the env/bench/summary files into
  ``results/gpu_allocations/<started_at>/``, then the run's ``report.md`` and the index
  ``results/README.md``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from gpu_allocation_limits import DEFAULT_MAX_MIB, MIB

__all__ = ["check_size", "collect", "travelling_bytes", "OUTPUT_FOLDER"]

#: where ``collect`` puts the text files of each output folder, under the results root
OUTPUT_FOLDER = "gpu_allocations"


def _git_files(root: Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "-co", "--exclude-standard"],
                         capture_output=True, check=True)
    return [name for name in out.stdout.decode().split("\0") if name and (root / name).is_file()]


def _du_bytes(root: Path, paths: list[str]) -> int:
    """``du -cb`` over ``paths`` (relative to ``root``): apparent bytes, each file once."""
    if not paths:
        return 0
    out = subprocess.run(["du", "-cb", "--files0-from=-"], input="\0".join(paths).encode(), cwd=root,
                         capture_output=True, check=True)
    return int(out.stdout.decode().strip().splitlines()[-1].split()[0])


def travelling_bytes(root: Path, include: list[Path]) -> dict[str, int]:
    """Bytes per part of what is copied: ``project`` (tracked + untracked not ignored) and each
    included path."""
    parts = {"project": _du_bytes(root, _git_files(root))}
    for path in include:
        parts[str(path)] = _du_bytes(root, [str(path)])
    return parts


def check_size(root: Path, include: list[Path], limit_bytes: int = int(DEFAULT_MAX_MIB * MIB)) -> int:
    """Print what must be copied; exit code 2 with a clear message if it exceeds ``limit_bytes``
    or an included path is missing, else 0."""
    missing = [c for c in include if not (root / c).exists()]
    if missing:
        print(f"gpu_allocation size: included path {str(missing[0])!r} does not exist under {root}; make it first "
              "(the CIFAR-10 pack: python tools/pack_cifar10.py --src CIFAR10_JPEG_FOLDER --out .data/cifar10.npz)",
              file=sys.stderr)
        return 2
    try:
        parts = travelling_bytes(root, include)
    except (OSError, subprocess.CalledProcessError) as err:
        print(f"gpu_allocation size: cannot measure the working tree ({err}); run it inside the git checkout",
              file=sys.stderr)
        return 2
    total = sum(parts.values())
    for name, size in parts.items():
        print(f"  {name:<32} {size / MIB:8.2f} MiB")
    print(f"  {'total (du -cb)':<32} {total / MIB:8.2f} MiB of {limit_bytes / MIB:g} MiB "
          f"({(limit_bytes - total) / MIB:.2f} MiB to spare)")
    if total > limit_bytes:
        print(f"gpu_allocation size: what must be copied is {total / MIB:.1f} MiB, over the {limit_bytes / MIB:g} MiB "
              "of --max-mib: delete or git-ignore untracked files (git status), include less, or raise --max-mib "
              "if the transfer allows more", file=sys.stderr)
        return 2
    return 0


def _done_jobs(path: Path) -> int:
    if not path.is_file():
        return 0
    db = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT count(*) FROM jobs WHERE status IN ('done', 'diverged')").fetchone()[0])
    finally:
        db.close()


def _store_name(path: Path) -> str:
    db = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'name'").fetchone()
    finally:
        db.close()
    if row is None:
        raise ValueError(f"{path} holds no pipeline name: not a nasrescale store")
    return str(row[0])


def _take_store(new: Path, run_dir: Path) -> str | None:
    """Copy the store that came back over the committed one; a message if it would lose results."""
    from nasrescale.pipeline.slices import copy_store

    old = run_dir / "store.sqlite"
    if _done_jobs(new) < _done_jobs(old):
        return (f"{new} holds {_done_jobs(new)} finished jobs, fewer than the {_done_jobs(old)} of {old}: "
                "not overwriting (was the committed store copied to the GPU machine with the checkout?)")
    for suffix in ("-wal", "-shm"):
        Path(str(old) + suffix).unlink(missing_ok=True)
    copy_store(new, old)
    return None


def _output_folder(out: Path, results: Path) -> Path:
    started = "unknown"
    if (out / "allocation.json").is_file():
        started = json.loads((out / "allocation.json").read_text(encoding="utf-8")).get("started_at", started)
    return results / OUTPUT_FOLDER / started.replace(":", "").replace("-", "")


def collect(out: Path, results: Path, n_boot: int = 1000) -> int:
    """Take an output folder copied back from the GPU machine into ``results``; write the report
    (``n_boot`` bootstrap resamples) and the index. Exit code."""
    from nasrescale.report.report import write_report
    from nasrescale.report.results_index import write_index

    if not out.is_dir():
        print(f"gpu_allocation collect: no folder {str(out)!r} (the output folder, copied back from the GPU "
              "machine)", file=sys.stderr)
        return 2
    store = out / "reeval" / "store.sqlite"
    run_dir = results / _store_name(store) if store.is_file() else None
    problem = _take_store(store, run_dir) if run_dir is not None else None
    if problem:
        print(f"gpu_allocation collect: {problem}", file=sys.stderr)
        return 2
    target = _output_folder(out, results)
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(out.rglob("*")):
        if path.is_file() and path.suffix in (".txt", ".json", ".log"):
            shutil.copyfile(path, target / path.name)
    if run_dir is not None:
        print(f"wrote {write_report(run_dir, n_boot=n_boot)}")
    print(f"wrote {write_index(results)}\ncopied the output's text files to {target}; now: git add {results} && git commit")
    return 0
