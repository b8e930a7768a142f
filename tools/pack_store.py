"""Write a consistent gzipped copy of a results store, for versioning it beside its report.

A run's ``store.sqlite`` may be in use (a long run still writing it, in WAL mode): this takes
SQLite's online backup (one consistent snapshot, no ``-wal`` file needed), then gzips it
(level 9, no timestamp in the header, so the same snapshot packs to the same bytes) as
``store.sqlite.gz`` beside it. Every nasrescale command unpacks that file when the store
itself is absent (a fresh clone), and a rerun of the pipeline resumes from it: jobs that were
running when the snapshot was taken run again, finished ones never do.

Usage::

    python tools/pack_store.py results/nb201_cifar10_cpu            # -> .../store.sqlite.gz
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
import tempfile
from pathlib import Path

from nasrescale.pipeline.slice_record import copy_store


def pack_store(run_dir: Path) -> Path:
    """``run_dir/store.sqlite.gz`` from a consistent snapshot of ``run_dir/store.sqlite``."""
    store = run_dir / "store.sqlite"
    if not store.is_file():
        raise FileNotFoundError(f"{store}: no store to pack; give a run folder holding store.sqlite")
    target = run_dir / "store.sqlite.gz"
    with tempfile.TemporaryDirectory(dir=run_dir) as tmp:
        snapshot = copy_store(store, Path(tmp) / "store.sqlite")
        packed = Path(tmp) / "store.sqlite.gz"
        with open(snapshot, "rb") as src, open(packed, "wb") as raw, \
                gzip.GzipFile(filename="store.sqlite", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as dst:
            shutil.copyfileobj(src, dst)
        packed.replace(target)
    return target


def main(argv: list[str] | None = None) -> int:
    """Pack each run folder given; print what was written; exit 2 on a folder without a store."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR", help="results/<pipeline> folder")
    args = parser.parse_args(argv)
    for run_dir in args.run_dirs:
        try:
            path = pack_store(run_dir)
        except (FileNotFoundError, OSError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        print(f"wrote {path} ({path.stat().st_size / 2**20:.2f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
