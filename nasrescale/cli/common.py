"""Helpers shared by the commands: family options, protocol overrides, reading architectures."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Iterable

from ..config import parse_overrides
from ..space.families import CellFamily
from ..space.registry import resolve_family

__all__ = ["add_family_options", "add_model_options", "family_from_args", "protocol_overrides", "read_archs"]


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


def protocol_overrides(sets: Iterable[str], **flags: Any) -> dict[str, Any]:
    """A command's protocol overrides, typed: its ``--set KEY=VALUE`` strings parsed (once, here),
    then its typed flags (``--epochs 3`` -> ``epochs=3``) that were given, which win.

    >>> protocol_overrides(["epochs=5", "weight_decay=3e-4"], epochs=3, batch_size=None)
    {'epochs': 3, 'weight_decay': 0.0003}
    """
    return {**parse_overrides(list(sets)), **{k: v for k, v in flags.items() if v is not None}}


def read_archs(items: Iterable[str]) -> list[str]:
    """Architecture arguments, where ``-`` stands for one architecture per stdin line."""
    archs: list[str] = []
    for item in items:
        if item == "-":
            archs += [line.strip() for line in sys.stdin if line.strip() and not line.startswith("#")]
        else:
            archs.append(item)
    return archs
