"""Pack the whole of CIFAR-10 (JPEG files) into one image pack for GPU runs (~53 MiB).

Reads ``SRC/train/<class>/*`` and ``SRC/test/<class>/*`` of a folder of CIFAR-10 as JPEG files
(50,000 + 10,000 images, the format of the shipped subset) -- and stores every file's original
bytes (no re-encoding) in one deterministic ``.npz``: the shipped subset's format
(:mod:`nasrescale.data.packed`), only complete. Training then reads it with::

    nasrescale train ARCH --dataset cifar10 --data-path /path/cifar10.npz ...

Write it under an ignored folder (``.data/`` in a checkout): the file is data, not source.

Usage::

    python tools/pack_cifar10.py --src CIFAR10_JPEG_FOLDER --out .data/cifar10.npz
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

from nasrescale.data.packed import pack_imagefolder
from nasrescale.errors import NasRescaleError


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, write the pack, print a one-line summary; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, required=True, help="folder with train/<class>/ and test/<class>/")
    parser.add_argument("--out", type=Path, required=True, help="the .npz to write (e.g. .data/cifar10.npz)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        summary = pack_imagefolder(args.src, args.out, train_per_class=None, test_per_class=None)
    except NasRescaleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()
    print(f"wrote {args.out}: {summary['classes']} classes, {summary['train']:,} train + {summary['test']:,} test "
          f"images, {summary['bytes'] / 2**20:.1f} MiB, sha256 {digest}, {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
