"""The local halves of a GPU visit (``tools/gpu_visit.py size`` and ``collect``), run without a GPU.

* :func:`check_size`: what a device call sends -- tracked files and untracked files that git does
  not ignore, ``shared/`` if the checkout has one, and the carried paths -- measured with ``du``,
  against the tool's 64 MiB. Run it before the call: an oversized tree is refused there anyway,
  after the machine has been started.
* :func:`collect`: a call's files (``files_at``) back into ``results/``: the re-evaluation store
  into ``results/<its pipeline name>/store.sqlite`` (refusing one with fewer finished jobs than the
  committed store), the env/bench/visit files into ``results/gpu_visits/<started_at>/``, then
  the run's ``report.md`` and the index ``results/README.md``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

__all__ = ["check_size", "collect", "travelling_bytes", "LIMIT_BYTES"]

LIMIT_BYTES = 64 * 2**20


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


def travelling_bytes(root: Path, carry: list[Path]) -> dict[str, int]:
    """Bytes per part of what travels: ``project`` (tracked + untracked not ignored), ``shared/``,
    and each carried path."""
    parts = {"project": _du_bytes(root, _git_files(root))}
    if (root / "shared").is_dir():
        parts["shared/"] = _du_bytes(root, ["shared"])
    for path in carry:
        parts[str(path)] = _du_bytes(root, [str(path)])
    return parts


def check_size(root: Path, carry: list[Path]) -> int:
    """Print what travels; exit code 2 with a clear message if it exceeds 64 MiB or a carried
    path is missing, else 0."""
    missing = [c for c in carry if not (root / c).exists()]
    if missing:
        print(f"gpu_visit size: carried path {str(missing[0])!r} does not exist under {root}; make it first "
              "(the CIFAR-10 pack: python tools/pack_cifar10.py --src CIFAR10_JPEG_FOLDER --out .data/cifar10.npz)",
              file=sys.stderr)
        return 2
    try:
        parts = travelling_bytes(root, carry)
    except (OSError, subprocess.CalledProcessError) as err:
        print(f"gpu_visit size: cannot measure the working tree ({err}); run it inside the git checkout",
              file=sys.stderr)
        return 2
    total = sum(parts.values())
    for name, size in parts.items():
        print(f"  {name:<32} {size / 2**20:8.2f} MiB")
    print(f"  {'total (du -cb)':<32} {total / 2**20:8.2f} MiB of {LIMIT_BYTES / 2**20:.0f} MiB "
          f"({(LIMIT_BYTES - total) / 2**20:.2f} MiB to spare)")
    if total > LIMIT_BYTES:
        print(f"gpu_visit size: what travels is {total / 2**20:.1f} MiB, over the device tool's 64 MiB: do not "
              "call the device; ignore or delete untracked files (git status), or carry less", file=sys.stderr)
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
    """Copy the visit's store over the committed one; a message if it would lose results."""
    from nasrescale.pipeline.slices import copy_store

    old = run_dir / "store.sqlite"
    if _done_jobs(new) < _done_jobs(old):
        return (f"{new} holds {_done_jobs(new)} finished jobs, fewer than the {_done_jobs(old)} of {old}: "
                "not overwriting (was the committed store carried to the visit?)")
    for suffix in ("-wal", "-shm"):
        Path(str(old) + suffix).unlink(missing_ok=True)
    copy_store(new, old)
    return None


def _visit_folder(files_at: Path, results: Path) -> Path:
    started = "unknown"
    if (files_at / "visit.json").is_file():
        started = json.loads((files_at / "visit.json").read_text(encoding="utf-8")).get("started_at", started)
    return results / "gpu_visits" / started.replace(":", "").replace("-", "")


def collect(files_at: Path, results: Path, n_boot: int = 1000) -> int:
    """Take a device call's files into ``results``; write the report (``n_boot`` bootstrap
    resamples) and the index. Exit code."""
    from nasrescale.report.report import write_report
    from nasrescale.report.results_index import write_index

    if not files_at.is_dir():
        print(f"gpu_visit collect: no folder {str(files_at)!r} (the files_at of the device call)", file=sys.stderr)
        return 2
    store = files_at / "reeval" / "store.sqlite"
    run_dir = results / _store_name(store) if store.is_file() else None
    problem = _take_store(store, run_dir) if run_dir is not None else None
    if problem:
        print(f"gpu_visit collect: {problem}", file=sys.stderr)
        return 2
    target = _visit_folder(files_at, results)
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(files_at.rglob("*")):
        if path.is_file() and path.suffix in (".txt", ".json", ".log"):
            shutil.copyfile(path, target / path.name)
    if run_dir is not None:
        print(f"wrote {write_report(run_dir, n_boot=n_boot)}")
    print(f"wrote {write_index(results)}\ncopied the visit's files to {target}; now: git add {results} && git commit")
    return 0
