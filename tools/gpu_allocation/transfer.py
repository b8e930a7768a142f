"""``size``: what is copied to the GPU machine (the checkout's files git lists and the included
paths), against ``--max-mib``, and how much of it lies in results/ folders no step reads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from . import MIB, ROOT
from .pipelines import run_name
from .sizes import PACK_HINT

__all__ = ["size", "unread_result", "refuse"]


def refuse(message: str) -> int:
    """``message`` on stderr, prefixed with the tool's name; exit code 2 (bad input)."""
    print(f"gpu_allocation: {message}", file=sys.stderr)
    return 2


def unread_result(path: Path, own: str) -> bool:
    """Whether ``path`` lies in a results/ folder other than the run ``own``, the index and
    gpu_allocations/ (the plan reads the committed figures)."""
    try:
        parts = path.resolve().relative_to(ROOT / "results").parts
    except ValueError:
        return False
    return len(parts) > 1 and parts[0] not in (own, "gpu_allocations")


def size(include: list[Path], max_mib: float, pipeline: Path) -> int:
    """Print the MiB copied to the GPU machine (the files git lists, tracked or untracked but not
    ignored, and the included paths), and how much of it lies in results/ folders no step reads
    (every run's but the pipeline's own); 2 if an included path is missing or it all exceeds ``max_mib``."""
    missing = [str(p) for p in include if not (ROOT / p).exists()]
    if missing:
        return refuse(f"size: included path {missing[0]!r} does not exist; make it first ({PACK_HINT})")
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "-co", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    files = [ROOT / n for n in listed if n] + [f for p in include for f in [ROOT / p, *(ROOT / p).rglob("*")]]
    total = sum(f.stat().st_size for f in files if f.is_file()) / MIB
    own = run_name(pipeline)
    unread = sum(f.stat().st_size for f in files if f.is_file() and unread_result(f, own)) / MIB
    print(f"gpu_allocation size: {total:.2f} MiB of {max_mib:g} MiB ({max_mib - total:.2f} MiB to spare): the "
          f"checkout's files and {', '.join(map(str, include))}; of it {unread:.2f} MiB in results/ folders no "
          f"step reads (every run's but {own}'s)")
    return refuse(f"size: what must be copied is {total:.1f} MiB, over the {max_mib:g} MiB of --max-mib: delete or "
                  f"git-ignore untracked files, include less, of results/ copy results/{own}/ and "
                  "results/gpu_allocations/ alone (no step reads the others: docs/gpu_allocation.md, 'What is "
                  "copied'), or raise --max-mib") if total > max_mib else 0
