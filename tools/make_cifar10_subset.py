"""Regenerate the CIFAR-10 subset shipped as ``nasrescale/data/cifar10_subset.npz``.

Takes the first ``--train-per-class`` files (sorted by name) of each class folder of
``SRC/train`` and the first ``--test-per-class`` of ``SRC/test`` and stores their original
bytes (no re-encoding) in one deterministic ``.npz``: rerunning on the same images writes a
byte-identical file.

Usage::

    python tools/make_cifar10_subset.py --src CIFAR10_JPEG_FOLDER \\
        --out nasrescale/data/cifar10_subset.npz [--train-per-class 500 --test-per-class 100]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from nasrescale.data.packed import pack_imagefolder
from nasrescale.errors import NasRescaleError


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, write the pack, print a one-line summary; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, required=True, help="folder with train/<class>/ and test/<class>/")
    parser.add_argument("--out", type=Path, required=True, help="the .npz to write")
    parser.add_argument("--train-per-class", type=int, default=500, help="training images per class (default 500)")
    parser.add_argument("--test-per-class", type=int, default=100, help="test images per class (default 100)")
    args = parser.parse_args(argv)
    try:
        summary = pack_imagefolder(args.src, args.out, args.train_per_class, args.test_per_class)
    except NasRescaleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()
    print(
        f"wrote {args.out}: {summary['classes']} classes, {summary['train']} train + {summary['test']} test "
        f"images, {summary['bytes']:,} bytes, sha256 {digest}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
