"""The plan of one GPU loan (docs/gpu_allocation.md, "The plan").

A loan spends at most :data:`OVERHEAD_CAP_S` on measuring (``bench``, ``parity``, ``modes``) and the
rest on science (``reeval``). A measuring step already committed under ``results/gpu_allocations/``
for the same GPU kind and the same code (:func:`~gpu_allocation.committed.code_digest` of the files
that decide what it measures) is skipped; the others are fitted into the cap in the order ``bench``
(the speed the science is sized by), ``parity`` (the precision verdict), ``modes``, and what does
not fit waits for a later loan. The science trains in the precision
:func:`~gpu_allocation.precision.choose_precision` allows (bf16 only after a committed "equivalent"
parity verdict, never mixed within one store), and is sized by the speed committed for that GPU
kind in that precision: the per-job seconds of a committed slice of the same pipeline, else the
best fused training speed of a committed ``bench.json``, plus ``EVAL_OVERHEAD`` for evaluation and
start-up. ``tools/gpu_allocation.sh plan`` prints the plan on any machine; ``all`` on a GPU runs it.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .committed import Speed, code_digest, committed_steps, gpu_kind, local_gpu_name, measured_speed, newest_kind
from .precision import PrecisionChoice, choose_precision, committed_verdict, stored_precisions

__all__ = ["OVERHEAD_CAP_S", "PLAN_WANT", "MEASURING", "SCIENCE_MARGIN_S", "TRAIN_IMAGES", "Plan", "make_plan",
           "format_plan", "pipeline_facts", "loan_plan"]

#: the most seconds of a loan spent on bench, parity and modes together
OVERHEAD_CAP_S = 180.0
#: seconds each step is planned when it runs (env always runs; the science gets the rest)
PLAN_WANT = {"env": 45.0, "bench": 90.0, "modes": 90.0, "parity": 180.0}
#: the order measuring steps are fitted into the cap: the speed, the precision verdict, the modes
MEASURING = ("bench", "parity", "modes")
#: seconds of the science share that train nothing: `nasrescale run` starting, its report, the summary
SCIENCE_MARGIN_S = 70.0
#: training images of a full dataset (a job trains ``epochs`` passes over them)
TRAIN_IMAGES = {"cifar10": 50_000, "cifar100": 50_000, "cifar10-subset": 5_000, "imagenet16-120": 151_700}


@dataclass
class Plan:
    """One loan: its steps with their planned seconds, the science's precision and its slice's size."""

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
    precision: PrecisionChoice | None = None

    def wants(self) -> dict[str, float]:
        """Planned seconds per step (the science: the rest)."""
        return dict(self.steps)

    def to_json(self) -> dict[str, Any]:
        """The plan as allocation.json records it (a later loan reads ``gpu_kind``, ``code``,
        ``pipeline`` and ``precision``; the science step reads ``precision``)."""
        return asdict(self)

    @property
    def refused(self) -> str | None:
        """Why no science slice may run this loan (``None``: it may)."""
        return None if self.precision is None else self.precision.refused


def _measuring(plan: Plan, alloc_dir: Path, cap_s: float) -> None:
    """``env`` and the measuring steps not committed, fitted into ``cap_s`` (the rest deferred)."""
    plan.skipped = {s: f"committed in {f}" for s, f in committed_steps(alloc_dir, plan.gpu_kind, plan.code).items()}
    plan.steps.append(("env", PLAN_WANT["env"]))
    spent = 0.0
    for step in MEASURING:
        if step in plan.skipped:
            continue
        if spent + PLAN_WANT[step] > cap_s:
            plan.deferred.append(step)
            continue
        plan.steps.append((step, PLAN_WANT[step]))
        spent += PLAN_WANT[step]


def make_plan(*, kind: str, code: str, alloc_dir: Path, budget_s: float, pipeline: str, precision: str,
              job_images: float, jobs_per_cell: int, cells_left: int, choice: PrecisionChoice | None = None) -> Plan:
    """The loan's plan (module docstring): steps in run order with their seconds, the science last
    (``choice``: the science's precision, default ``precision`` as given; where it is refused, the
    science gets no time and measuring is not capped)."""
    choice = choice or PrecisionChoice(precision, "as given")
    plan = Plan(kind, code, pipeline, budget_s, jobs_per_cell=jobs_per_cell, cells_left=cells_left, precision=choice)
    # no science this loan (its precision refused): measuring may take the loan, parity included
    _measuring(plan, alloc_dir, budget_s - PLAN_WANT["env"] if choice.refused else OVERHEAD_CAP_S)
    plan.science_s = 0.0 if choice.refused else max(0.0, budget_s - sum(s for _, s in plan.steps))
    plan.steps.append(("reeval", plan.science_s))  # refused: it runs only to record why
    if choice.refused:
        return plan
    plan.speed = measured_speed(alloc_dir, kind, pipeline, choice.precision, job_images, jobs_per_cell)
    if plan.speed is not None:
        cell_s = plan.speed.job_s * jobs_per_cell
        plan.cells_per_loan = int(max(0.0, plan.science_s - SCIENCE_MARGIN_S) // cell_s)
        plan.loans_left = math.ceil(cells_left / plan.cells_per_loan) if plan.cells_per_loan else None
        bare = budget_s - PLAN_WANT["env"] - SCIENCE_MARGIN_S  # a loan with nothing left to measure
        plan.cells_per_bare_loan = int(max(0.0, bare) // cell_s)
    return plan


def format_plan(plan: Plan) -> str:
    """The plan as the dry run prints it: minutes per step, the precision, then the science slice's size."""
    lines = [f"plan of a {plan.budget_s / 60:.1f}-minute loan on an {plan.gpu_kind} (code {plan.code}):"]
    for step, seconds in plan.steps:
        planned = "refused (precision, below)" if step == "reeval" and plan.refused else f"{seconds / 60:5.1f} min"
        lines.append(f"  {step:<7} {planned}")
    lines += [f"  {step:<7} skipped: {why}" for step, why in plan.skipped.items()]
    lines += [f"  {step:<7} next loan: over the {OVERHEAD_CAP_S / 60:g}-minute cap on measuring"
              if not plan.refused else f"  {step:<7} next loan: over the loan's budget" for step in plan.deferred]
    if plan.precision is not None:
        choice = plan.precision
        lines.append(f"precision: refused: {choice.refused}" if choice.refused else
                     f"precision: {choice.precision} ({choice.reason})")
    if plan.refused:
        return "\n".join(lines)
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
    """What sizes a slice of ``pipeline_file`` (with ``--set`` ``settings``): its run name, each
    protocol's precision, images a job trains (epochs x training images), jobs per cell (its first
    plan's) and the cells whose first jobs are not all finished in the store under ``results``
    (none: every cell)."""
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
    return {"name": pipeline.name, "run_dir": run_dir, "precision": protocol.precision,
            "setting": {e.label: e.protocol.precision for e in pipeline.protocols},
            "job_images": float(protocol.epochs * images),
            "jobs_per_cell": math.ceil(len(jobs) / max(1, len({j.arch for j in jobs}))), "cells_left": len(left)}


def loan_plan(args: argparse.Namespace, root: Path) -> Plan:
    """The plan for gpu_allocation's arguments (``gpu``, ``results``, ``pipeline``, ``budget``,
    ``precision``): for ``--gpu``, else this machine's GPU, else the kind of the newest committed
    allocation; the science's precision from the committed parity verdict and the run's store."""
    results = args.results or root / "results"
    alloc = results / "gpu_allocations"
    kind, code = gpu_kind(args.gpu or local_gpu_name() or newest_kind(alloc)), code_digest(root)
    facts = pipeline_facts(root / args.pipeline, results, [])
    stored, ran = stored_precisions(facts["run_dir"])
    choice = choose_precision(committed_verdict(alloc, kind, code), kind, stored=stored.values(), ran=ran,
                              setting=facts["setting"], asked=getattr(args, "precision", "auto"))
    if choice.settings and not choice.refused:  # the jobs (and the cells left) of the pipeline in that precision
        facts = pipeline_facts(root / args.pipeline, results, choice.settings)
    return make_plan(kind=kind, code=code, alloc_dir=alloc, budget_s=args.budget, pipeline=facts["name"],
                     precision=choice.precision, job_images=facts["job_images"],
                     jobs_per_cell=facts["jobs_per_cell"], cells_left=facts["cells_left"], choice=choice)
