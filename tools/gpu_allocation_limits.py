"""Limits of a time-limited GPU allocation's transfers, both ways (``tools/gpu_allocation.py``).

* What goes to the GPU machine: the checkout's files and the included paths, at most
  ``--max-mib`` (``tools/gpu_allocation.sh size`` checks it before anything is sent).
* What comes back from the output folder: at most ``--max-files`` files of at most
  ``--max-file-mib`` each, at most ``--max-depth`` folders down, with portable names. The
  defaults fit a full ``env bench reeval`` (7 files, two folders down, the largest a store of a
  few MiB). The command checks its output against them at its end and says what breaks them (in
  ``allocation.json`` and its exit code), so a copy-back that keeps only a bounded output (a
  job's staging quota, a capped ``rsync``) loses nothing unnoticed.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

__all__ = ["OutputLimits", "out_tree", "MIB", "DEFAULT_MAX_MIB", "add_limit_options", "positive"]

MIB = 2**20
#: default cap on what is copied to the GPU machine (MiB)
DEFAULT_MAX_MIB = 64.0
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")


def out_tree(out: Path) -> list[tuple[str, int]]:
    """Every file under ``out``: (relative path, bytes), sorted."""
    return sorted((p.relative_to(out).as_posix(), p.stat().st_size) for p in out.rglob("*") if p.is_file())


@dataclass(frozen=True)
class OutputLimits:
    """What may come back from the output folder."""

    max_files: int = 8
    max_file_mib: float = 16.0
    max_depth: int = 2

    def problems(self, out: Path) -> list[str]:
        """How ``out`` breaks these limits (empty: it does not)."""
        files = out_tree(out)
        problems = [f"{len(files)} files (at most {self.max_files} come back)"] if len(files) > self.max_files else []
        for rel, size in files:
            parts = rel.split("/")
            if size > self.max_file_mib * MIB:
                problems.append(f"{rel}: {size / MIB:.1f} MiB (at most {self.max_file_mib:g} MiB)")
            if len(parts) - 1 > self.max_depth:
                problems.append(f"{rel}: more than {self.max_depth} folders down")
            if not all(_NAME.match(p) for p in parts):
                problems.append(f"{rel}: a name with characters other than letters, digits, '.', '_', '-'")
        return problems


def positive(kind: Callable[[str], int | float]) -> Callable[[str], int | float]:
    """An argparse type: ``kind`` (int or float) at least 0, else a message naming the value."""
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"{text!r} is negative: give 0 or more")
        return value

    return parse


def add_limit_options(p: argparse.ArgumentParser) -> None:
    """``--max-mib`` (what goes) and ``--max-files``, ``--max-file-mib``, ``--max-depth`` (what
    comes back), each defaulting to the values above."""
    defaults = OutputLimits()
    p.add_argument("--max-mib", type=positive(float), default=DEFAULT_MAX_MIB, metavar="MIB",
                   help=f"size: the most MiB copied to the GPU machine (default {DEFAULT_MAX_MIB:g})")
    p.add_argument("--max-files", type=positive(int), default=defaults.max_files, metavar="N",
                   help=f"the most files the output folder may hold (default {defaults.max_files})")
    p.add_argument("--max-file-mib", type=positive(float), default=defaults.max_file_mib, metavar="MIB",
                   help=f"the largest output file in MiB (default {defaults.max_file_mib:g})")
    p.add_argument("--max-depth", type=positive(int), default=defaults.max_depth, metavar="N",
                   help=f"the most folders down an output file may lie (default {defaults.max_depth})")
