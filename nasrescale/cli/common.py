"""Helpers shared by the commands: family options and reading architectures."""

from __future__ import annotations

import argparse
import sys
from typing import Iterable

from ..space.families import CellFamily
from ..space.registry import resolve_family

__all__ = ["add_family_options", "add_model_options", "family_from_args", "read_archs"]


def add_family_options(parser: argparse.ArgumentParser, path_flag: str = "--cells") -> None:
    """Add ``--family`` and the family-file option to a command.

    ``analyze`` takes family files as ``--cells PATH``; the commands that build networks use
    ``--cells N`` for NB201's cells per stage, so they take ``--family-file PATH`` instead.
    """
    parser.add_argument("--family", "-f", metavar="F",
                        help="cell family name (default: the one family in the family files given, else nb201)")
    flags = [path_flag] if path_flag == "--family-file" else [path_flag, "--family-file"]
    parser.add_argument(*flags, dest="family_files", action="append", default=[], metavar="PATH",
                        help="extra cell family file or folder of .toml files (repeatable)")


def family_from_args(args: argparse.Namespace) -> CellFamily:
    """The family selected by ``--family`` and the family-file option."""
    return resolve_family(args.family, args.family_files)


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--width`` and ``--cells`` (network size overrides of the family's macro)."""
    parser.add_argument("--width", type=int, metavar="C",
                        help="width: NB201's C (channels of the first stage), the MLP/CNN hidden width")
    parser.add_argument("--cells", type=int, metavar="N", help="NB201: cells per stage (default 5)")


def read_archs(items: Iterable[str]) -> list[str]:
    """Architecture arguments, where ``-`` stands for one architecture per stdin line."""
    archs: list[str] = []
    for item in items:
        if item == "-":
            archs += [line.strip() for line in sys.stdin if line.strip() and not line.startswith("#")]
        else:
            archs.append(item)
    return archs
