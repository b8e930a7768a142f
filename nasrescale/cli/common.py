"""Helpers shared by the commands: family options and reading architectures."""

from __future__ import annotations

import argparse
import sys
from typing import Iterable

from ..families import CellFamily
from ..registry import resolve_family

__all__ = ["add_family_options", "family_from_args", "read_archs"]


def add_family_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--family`` and ``--cells`` to a command."""
    parser.add_argument("--family", "-f", metavar="F",
                        help="cell family name (default: the one family in --cells, else nb201)")
    parser.add_argument("--cells", action="append", default=[], metavar="PATH",
                        help="extra cell family file or folder of .toml files (repeatable)")


def family_from_args(args: argparse.Namespace) -> CellFamily:
    """The family selected by ``--family`` / ``--cells``."""
    return resolve_family(args.family, args.cells)


def read_archs(items: Iterable[str]) -> list[str]:
    """Architecture arguments, where ``-`` stands for one architecture per stdin line."""
    archs: list[str] = []
    for item in items:
        if item == "-":
            archs += [line.strip() for line in sys.stdin if line.strip() and not line.startswith("#")]
        else:
            archs.append(item)
    return archs
