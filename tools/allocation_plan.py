"""The plan of one GPU loan for tools/gpu_allocation.py (docs/gpu_allocation.md, "The plan").

A loan spends at most :data:`OVERHEAD_CAP_S` on measuring (``bench``, ``parity``, ``modes``) and the
rest on science (``reeval``). A measuring step already committed under ``results/gpu_allocations/``
for the same GPU kind and the same code (:func:`code_digest` of the files that decide what it
measures) is skipped; the others are fitted into the cap in the order ``bench`` (the speed the
science is sized by), ``parity`` (the precision verdict), ``modes``, and what does not fit waits for
a later loan. The science slice is sized by the speed committed for that GPU kind: the per-job
seconds of a committed slice of the same pipeline, else the best fused training speed of a
committed ``bench.json`` in the pipeline's precision, plus :data:`EVAL_OVERHEAD` for evaluation
and start-up. ``tools/gpu_allocation.sh plan`` prints the plan on any machine; ``all`` on a GPU
runs it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["OVERHEAD_CAP_S", "PLAN_WANT", "CODE_PATHS", "EVAL_OVERHEAD", "Speed", "Plan", "gpu_kind", "code_digest",
           "committed_steps", "measured_speed", "make_plan", "format_plan", "local_gpu_name", "pipeline_facts",
           "newest_kind", "loan_plan"]

#: the most seconds of a loan spent on bench, parity and modes together
OVERHEAD_CAP_S = 180.0
#: seconds each step is planned when it runs (env always runs; the science gets the rest)
PLAN_WANT = {"env": 45.0, "bench": 90.0, "modes": 90.0, "parity": 180.0}
#: the order measuring steps are fitted into the cap: the speed, the precision verdict, the modes
MEASURING = ("bench", "parity", "modes")
#: the files that decide what bench, parity and modes measure: a change in them measures again
CODE_PATHS = ("benchmarks", "nasrescale/train", "nasrescale/models")
#: a job's time over its training images at the bench speed: evaluation, data and start-up (assumed
#: until a committed slice of the pipeline times it)
EVAL_OVERHEAD = 1.10
#: seconds of the science share that train nothing: `nasrescale run` starting, its report, the summary
SCIENCE_MARGIN_S = 70.0
#: training images of a full dataset (a job trains ``epochs`` passes over them)
TRAIN_IMAGES = {"cifar10": 50_000, "cifar100": 50_000, "cifar10-subset": 5_000, "imagenet16-120": 151_700}
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


def _allocations(alloc_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Committed folders with their allocation.json, newest first (unreadable ones left out)."""
    out = []
    for summary in sorted(alloc_dir.glob("*/allocation.json"), reverse=True):
        try:
            out.append((summary.parent, json.loads(summary.read_text())))
        except (OSError, ValueError):
            continue
    return out


def committed_steps(alloc_dir: Path, kind: str, code: str) -> dict[str, str]:
    """``step -> folder name`` for each measuring step a committed loan ran ``ok`` on GPU ``kind`` at
    ``code``, its output file beside it (folders before plans were recorded never match)."""
    found: dict[str, str] = {}
    for folder, record in _allocations(alloc_dir):
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


def measured_speed(alloc_dir: Path, kind: str, pipeline: str, precision: str, job_images: float,
                   members: int) -> Speed | None:
    """Seconds per job on GPU ``kind``: a committed slice of ``pipeline`` on that kind (its ``job_s``),
    else a committed ``bench.json`` of that kind (``job_images`` / best speed x :data:`EVAL_OVERHEAD`),
    else the newest bench of another kind (said so); ``None`` where nothing is committed."""
    folders = _allocations(alloc_dir)
    for folder, record in folders:
        slice_ = record.get("reeval") or {}
        if (record.get("plan") or {}).get("pipeline") == pipeline and gpu_kind(slice_.get("device")) == kind \
                and isinstance(slice_.get("job_s"), (int, float)):
            return Speed(float(slice_["job_s"]), f"the slice of {pipeline} in {folder.name} ({kind})")
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


@dataclass
class Plan:
    """One loan: its steps with their planned seconds, and the science slice's size."""

    gpu_kind: str
    code: str
    pipeline: str
    budget_s: float
    steps: list[tuple[str, float]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    deferred: list[str] = field(default_factory=list)
    science_s: float = 0.0
    jobs_per_cell: int = 0
    cells_left: int = 0
    speed: Speed | None = None
    cells_per_loan: int | None = None
    loans_left: int | None = None
    cells_per_bare_loan: int | None = None

    def wants(self) -> dict[str, float]:
        """Planned seconds per step (the science: the rest)."""
        return dict(self.steps)

    def to_json(self) -> dict[str, Any]:
        """The plan as allocation.json records it (a later loan reads ``gpu_kind``, ``code``, ``pipeline``)."""
        return asdict(self)


def make_plan(*, kind: str, code: str, alloc_dir: Path, budget_s: float, pipeline: str, precision: str,
              job_images: float, jobs_per_cell: int, cells_left: int) -> Plan:
    """The loan's plan (module docstring): steps in run order with their seconds, the science last."""
    plan = Plan(kind, code, pipeline, budget_s, jobs_per_cell=jobs_per_cell, cells_left=cells_left)
    plan.skipped = {s: f"committed in {f}" for s, f in committed_steps(alloc_dir, kind, code).items()}
    plan.steps.append(("env", PLAN_WANT["env"]))
    spent = 0.0
    for step in MEASURING:
        if step in plan.skipped:
            continue
        if spent + PLAN_WANT[step] > OVERHEAD_CAP_S:
            plan.deferred.append(step)
            continue
        plan.steps.append((step, PLAN_WANT[step]))
        spent += PLAN_WANT[step]
    plan.science_s = max(0.0, budget_s - sum(s for _, s in plan.steps))
    plan.steps.append(("reeval", plan.science_s))
    plan.speed = measured_speed(alloc_dir, kind, pipeline, precision, job_images, jobs_per_cell)
    if plan.speed is not None:
        cell_s = plan.speed.job_s * jobs_per_cell
        plan.cells_per_loan = int(max(0.0, plan.science_s - SCIENCE_MARGIN_S) // cell_s)
        plan.loans_left = math.ceil(cells_left / plan.cells_per_loan) if plan.cells_per_loan else None
        bare = budget_s - PLAN_WANT["env"] - SCIENCE_MARGIN_S  # a loan with nothing left to measure
        plan.cells_per_bare_loan = int(max(0.0, bare) // cell_s)
    return plan


def format_plan(plan: Plan) -> str:
    """The plan as the dry run prints it: minutes per step, then the science slice's size."""
    lines = [f"plan of a {plan.budget_s / 60:.1f}-minute loan on an {plan.gpu_kind} (code {plan.code}):"]
    lines += [f"  {step:<7} {seconds / 60:5.1f} min" for step, seconds in plan.steps]
    lines += [f"  {step:<7} skipped: {why}" for step, why in plan.skipped.items()]
    lines += [f"  {step:<7} next loan: over the {OVERHEAD_CAP_S / 60:g}-minute cap on measuring"
              for step in plan.deferred]
    if plan.speed is None:
        lines.append(f"science: {plan.pipeline}, {plan.cells_left} cell(s) left; no committed speed: the slice "
                     "starts a cell and times it")
        return "\n".join(lines)
    cell_s = plan.speed.job_s * plan.jobs_per_cell
    lines.append(f"science: {plan.pipeline}: {plan.speed.job_s:.1f} s a job, {cell_s / 60:.1f} min a cell of "
                 f"{plan.jobs_per_cell} jobs ({plan.speed.source})")
    loans = "the first grid of every cell is done" if not plan.cells_left else \
        f"{plan.loans_left} loan(s) like this one" if plan.loans_left else "a cell does not fit this loan's share"
    lines.append(f"  slice: {plan.cells_per_loan} cell(s) this loan; {plan.cells_left} cell(s) left: {loans}; "
                 f"{plan.cells_per_bare_loan} cell(s) a loan once bench, modes and parity are committed")
    return "\n".join(lines)


def pipeline_facts(pipeline_file: Path, results: Path, settings: list[str]) -> dict[str, Any]:
    """What sizes a slice of ``pipeline_file`` (with ``--set`` ``settings``): its run name, precision,
    images a job trains (epochs x training images), jobs per cell (its first plan's) and the cells
    whose first jobs are not all finished in the store under ``results`` (none: every cell)."""
    from nasrescale.pipeline.spec import load_pipeline
    from nasrescale.store.job_status import FINAL
    from nasrescale.store.read import reading, run_dir_for

    pipeline = load_pipeline(str(pipeline_file), settings)
    archs = pipeline.arch_list()
    jobs, _ = pipeline.kind.plan(pipeline, archs)
    protocol = jobs[0].protocol
    images = pipeline.budget.train_subset or TRAIN_IMAGES.get(pipeline.data.name, TRAIN_IMAGES["cifar10"])
    run_dir, done = run_dir_for(pipeline.name, results), set()
    if any((run_dir / n).is_file() for n in ("store.sqlite", "store.sqlite.gz")):
        with reading(run_dir) as store:
            done = {row["key"] for row in store.rows() if row["status"] in FINAL}
    left = {j.arch for j in jobs if j.key() not in done}
    return {"name": pipeline.name, "precision": protocol.precision, "job_images": float(protocol.epochs * images),
            "jobs_per_cell": math.ceil(len(jobs) / max(1, len({j.arch for j in jobs}))), "cells_left": len(left)}


def newest_kind(alloc_dir: Path) -> str | None:
    """The GPU kind the newest committed allocation ran on (its slice's or its bench's device)."""
    for folder, record in _allocations(alloc_dir):
        device = (record.get("reeval") or {}).get("device")
        if not device and (folder / "bench.json").is_file():
            device = json.loads((folder / "bench.json").read_text()).get("device")
        if device:
            return gpu_kind(device)
    return None


def loan_plan(args: Any, root: Path) -> Plan:
    """The plan for gpu_allocation.py's arguments (``gpu``, ``results``, ``pipeline``, ``budget``):
    for ``--gpu``, else this machine's GPU, else the kind of the newest committed allocation."""
    results = args.results or root / "results"
    alloc = results / "gpu_allocations"
    kind = gpu_kind(args.gpu or local_gpu_name() or newest_kind(alloc))
    facts = pipeline_facts(root / args.pipeline, results, [])
    return make_plan(kind=kind, code=code_digest(root), alloc_dir=alloc, budget_s=args.budget, pipeline=facts["name"],
                     precision=facts["precision"], job_images=facts["job_images"],
                     jobs_per_cell=facts["jobs_per_cell"], cells_left=facts["cells_left"])
