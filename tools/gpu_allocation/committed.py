"""What earlier loans committed under ``results/gpu_allocations/`` (one folder per loan, its files
copied flat by ``collect``): the steps measured for a GPU kind and code, and the speed a science
slice is sized by (docs/gpu_allocation.md, "The plan")."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CODE_PATHS", "EVAL_OVERHEAD", "OUTPUT", "Speed", "gpu_kind", "local_gpu_name", "code_digest",
           "allocations", "committed_steps", "measured_speed", "newest_kind"]

#: the files that decide what bench, parity and modes measure: a change in them measures again
CODE_PATHS = ("benchmarks", "nasrescale/train", "nasrescale/models")
#: a job's time over its training images at the bench speed: evaluation, data and start-up (assumed
#: until a committed slice of the pipeline times it)
EVAL_OVERHEAD = 1.10
#: what each measuring step leaves in a committed folder (collect copies the files flat)
OUTPUT = {"bench": "bench.json", "parity": "parity.txt", "modes": "modes.txt"}


def gpu_kind(name: str | None) -> str:
    """The kind of a device name: its model token (``NVIDIA H100 80GB HBM3`` -> ``H100``).

    >>> gpu_kind("NVIDIA H100 80GB HBM3"), gpu_kind("cuda (NVIDIA H200)"), gpu_kind("NVIDIA A100-SXM4-40GB")
    ('H100', 'H200', 'A100')
    >>> gpu_kind(None), gpu_kind("Tesla V100-PCIE-16GB"), gpu_kind("CPU (x86_64, 2 cores)")
    ('none', 'V100', 'CPU (x86_64, 2 cores)')
    """
    if not name:
        return "none"
    match = re.search(r"\b([A-Z]{1,2}\d{2,4}[A-Z]?)\b", name)
    return match.group(1) if match else name.strip()


def local_gpu_name() -> str | None:
    """This machine's first CUDA device's name, or ``None`` (no torch, no GPU)."""
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def code_digest(root: Path, paths: tuple[str, ...] = CODE_PATHS) -> str:
    """16 hex digits of the Python files under ``paths`` (names and contents, caches left out): the
    same in a git checkout and in a copy of its files without ``.git``, as a GPU machine may get."""
    digest = hashlib.sha256()
    files = sorted(f for p in paths for f in (root / p).rglob("*.py") if "__pycache__" not in f.parts)
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def allocations(alloc_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Committed folders with their allocation.json, newest first (unreadable ones left out)."""
    out = []
    for summary in sorted(alloc_dir.glob("*/allocation.json"), reverse=True):
        try:
            out.append((summary.parent, json.loads(summary.read_text())))
        except (OSError, ValueError):
            continue
    return out


def committed_steps(alloc_dir: Path, kind: str, code: str) -> dict[str, str]:
    """``step -> folder name`` (the newest) for each measuring step a committed loan ran ``ok`` on GPU
    ``kind`` at ``code``, its output file beside it (folders before plans were recorded never match)."""
    found: dict[str, str] = {}
    for folder, record in allocations(alloc_dir):
        plan = record.get("plan") or {}
        if record.get("dry_run") or plan.get("gpu_kind") != kind or plan.get("code") != code:
            continue
        for step in record.get("steps", []):
            name = step.get("step")
            if name in OUTPUT and step.get("status") == "ok" and (folder / OUTPUT[name]).is_file():
                found.setdefault(name, folder.name)
    return found


@dataclass(frozen=True)
class Speed:
    """How fast the science trains: seconds per job, and where that figure comes from."""

    job_s: float
    source: str


def _bench_ips(bench: dict[str, Any], precision: str, members: int) -> float | None:
    """The best model-images/s of the engine or a fused group of at most ``members`` in ``precision``."""
    best = None
    for row in bench.get("rows", []):
        label, ips = str(row.get("label", "")), row.get("model_ips")
        fused = re.search(r"fused K=(\d+) (\w+)$", label)
        single = re.search(r"engine, 1 run (\w+)$", label)
        k, prec = (int(fused.group(1)), fused.group(2)) if fused else (1, single.group(1)) if single else (0, "")
        if prec == precision and 1 <= k <= members and isinstance(ips, (int, float)) and ips > 0:
            best = max(best or 0.0, float(ips))
    return best


def _slice_speed(folders: list[tuple[Path, dict[str, Any]]], kind: str, pipeline: str,
                 precision: str) -> Speed | None:
    """The per-job seconds of the newest committed slice of ``pipeline`` on ``kind`` in ``precision``
    (a slice from before plans chose a precision counts as the one asked)."""
    for folder, record in folders:
        plan, slice_ = record.get("plan") or {}, record.get("reeval") or {}
        trained = (plan.get("precision") or {}).get("precision", precision)
        if plan.get("pipeline") == pipeline and gpu_kind(slice_.get("device")) == kind and trained == precision \
                and isinstance(slice_.get("job_s"), (int, float)):
            return Speed(float(slice_["job_s"]), f"the slice of {pipeline} in {folder.name} ({kind})")
    return None


def measured_speed(alloc_dir: Path, kind: str, pipeline: str, precision: str, job_images: float,
                   members: int) -> Speed | None:
    """Seconds per job on GPU ``kind`` in ``precision``: a committed slice of ``pipeline`` on that kind
    (its ``job_s``), else a committed ``bench.json`` of that kind (``job_images`` / best speed x
    :data:`EVAL_OVERHEAD`), else the newest bench of another kind (said so); ``None`` where nothing is
    committed."""
    folders = allocations(alloc_dir)
    speed = _slice_speed(folders, kind, pipeline, precision)
    if speed is not None:
        return speed
    others = []
    for folder, _ in folders:
        try:
            bench = json.loads((folder / "bench.json").read_text())
        except (OSError, ValueError):
            continue
        ips = _bench_ips(bench, precision, members)
        if ips is not None:
            others.append((gpu_kind(bench.get("device")) != kind, folder.name, gpu_kind(bench.get("device")), ips))
    if not others:
        return None
    other, name, where, ips = min(others, key=lambda o: o[0])  # this kind first, then the newest
    note = f"; measured on an {where}, not an {kind}" if other else ""
    return Speed(job_images / ips * EVAL_OVERHEAD,
                 f"bench {name}: {ips:,.0f} model-images/s {precision}, fused K <= {members}{note}")


def newest_kind(alloc_dir: Path) -> str | None:
    """The GPU kind the newest committed allocation ran on (its slice's or its bench's device)."""
    for folder, record in allocations(alloc_dir):
        device = (record.get("reeval") or {}).get("device")
        if not device and (folder / "bench.json").is_file():
            device = json.loads((folder / "bench.json").read_text()).get("device")
        if device:
            return gpu_kind(device)
    return None
