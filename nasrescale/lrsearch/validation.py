"""Validating the LR rule: grid-searched maximal LRs against the predicted ones (paper Figs. 2, 3, 5).

A pipeline of ``kind = "lr_validation"`` grid-searches every selected architecture's maximal LR
exactly as the base-LR search does (:mod:`nasrescale.lrsearch.search`; same grid, seeds, epochs and
tie rule), with the protocol's init and the grid LR used as is (``lr_rule = "fixed"``). The
family's base architecture is always searched too: its measured LR is the ``base_lr`` of the
prediction ``base_lr * lr_scale(arch) * kernel_factor(arch)`` (paper eqs. 8, 9). With
``[validation] kernels = [3, 5, 7]`` every conv op of the family is given each kernel size in
turn (the base is searched at ``kernel_base``), as the paper's CNN experiment varies q.

The run stores a plan (meta ``validation_plan``: per group and architecture its scale, kernel
factor and job keys), so :func:`analyze` needs only the store; the report
(:func:`nasrescale.report.lr_validation.write_validation_report`) adds Pearson r on log LR and
on LR, Spearman rho and the predicted-vs-measured plot with y = x.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import ConfigError, DataError
from ..jobs.job import DataSpec, TrainJob
from ..space.encodings import format_arch, parse_arch
from ..space.families import CellFamily
from ..space.topology import is_degenerate, kernel_factor, lr_scale
from .search import LrSearchSettings, losses_from_rows, search_jobs
from .select import select_lr

__all__ = ["ValidationSettings", "kernel_variant", "validation_plan", "analyze", "correlations"]


@dataclass(frozen=True)
class ValidationSettings:
    """``[validation]`` of an ``lr_validation`` pipeline.

    Attributes:
        kernels: conv kernel sizes to validate (each family conv op takes each in turn); empty:
            the family as it is. Must contain the family's ``kernel_base`` when given.
    """

    kernels: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if any(k < 1 or k % 2 == 0 for k in self.kernels) or len(set(self.kernels)) != len(self.kernels):
            raise ConfigError(f"validation.kernels: expected distinct odd sizes, got {list(self.kernels)}")


def kernel_variant(family: CellFamily, kernel: int) -> CellFamily:
    """``family`` with every conv op's kernel set to ``kernel`` (its digest changes with it).

    >>> from nasrescale.space.registry import get_family
    >>> cnn = get_family("cnn_dag")
    >>> kernel_variant(cnn, 5).op("conv").kernel, kernel_variant(cnn, 5).digest() != cnn.digest()
    (5, True)
    """
    if not any(op.conv_kernel is not None for op in family.ops):
        raise ConfigError(f"validation.kernels: family {family.name!r} has no conv op to change the kernel of")
    ops = tuple(dataclasses.replace(op, kernel=kernel) if op.conv_kernel is not None else op for op in family.ops)
    return dataclasses.replace(family, ops=ops)


def _groups(family: CellFamily, entries: Sequence[Any],
            kernels: Sequence[int]) -> list[tuple[str, Any, CellFamily, int | None]]:
    """``(group label, protocol entry, family variant, kernel)`` per protocol x kernel."""
    if kernels and family.kernel_base not in kernels:
        raise ConfigError(f"validation.kernels: must contain the family's kernel_base ({family.kernel_base}), "
                          "where the base architecture's LR is measured")
    out = []
    for entry in entries:
        if not kernels:
            out.append((entry.label, entry, family, None))
        for q in kernels:
            out.append((f"{entry.label}@k{q}", entry, kernel_variant(family, q), q))
    return out


def validation_plan(archs: Sequence[str], family: CellFamily, entries: Sequence[Any], data: DataSpec,
                    search: LrSearchSettings, kernels: Sequence[int] = (), width: int | None = None,
                    cells: int | None = None) -> tuple[dict[str, Any], list[TrainJob]]:
    """The plan (JSON; stored as meta ``validation_plan``) and every job of the experiment.

    ``entries`` are the pipeline's protocol entries (``label`` and ``protocol`` each), ``search``
    its ``[lr_search]`` table, ``kernels`` its ``validation.kernels``, ``width`` and ``cells`` its
    budget. The plan maps each group (protocol label, ``@k<q>`` per kernel) to its base group and
    architectures, each with ``lr_scale``, ``kernel_factor``, ``degenerate`` and ``runs``
    (``[grid LR, job key]`` pairs).
    """
    base = format_arch(parse_arch(search.arch or family.base, family), family)
    arch_list = [base] + [a for a in archs if a != base]
    plan: dict[str, Any] = {"base_arch": base, "rel_tol": search.rel_tol, "groups": {}}
    jobs: list[TrainJob] = []
    for label, entry, fam, q in _groups(family, entries, kernels):
        base_group = label if q is None else f"{entry.label}@k{fam.kernel_base}"
        rule = fam.kernel_rule if entry.protocol.kernel_rule == "family" else entry.protocol.kernel_rule
        members = []
        for arch in arch_list:
            graph = parse_arch(arch, fam)
            pairs = search_jobs(arch, fam, data, entry.protocol, search, label, width, cells, lr_rule="fixed")
            degenerate = is_degenerate(graph, fam)
            if not degenerate:  # a degenerate cell's output is constant: it has no maximal LR
                jobs += [job for _, job in pairs]
            members.append({"arch": arch, "degenerate": degenerate, "lr_scale": lr_scale(graph, fam),
                            "kernel_factor": kernel_factor(graph, fam, rule),
                            "runs": [] if degenerate else [[lr, job.key()] for lr, job in pairs]})
        plan["groups"][label] = {"protocol": entry.label, "kernel": q, "base_group": base_group, "archs": members}
    return plan, jobs


def correlations(predicted: Sequence[float], measured: Sequence[float]) -> dict[str, float | None]:
    """Pearson r on log LR and on LR, Spearman rho; ``None`` where undefined (n < 3 or constant).

    >>> c = correlations([0.1, 0.2, 0.4, 0.8], [0.12, 0.2, 0.5, 0.7])
    >>> round(c["spearman"], 3), c["n"]
    (1.0, 4)
    """
    from scipy import stats

    out: dict[str, Any] = {"n": len(predicted), "pearson_log": None, "pearson": None, "spearman": None}
    if len(predicted) < 3 or len(set(predicted)) < 2 or len(set(measured)) < 2:
        return out
    logp, logm = [math.log(x) for x in predicted], [math.log(x) for x in measured]
    out["pearson_log"] = float(stats.pearsonr(logp, logm)[0])
    out["pearson"] = float(stats.pearsonr(predicted, measured)[0])
    out["spearman"] = float(stats.spearmanr(predicted, measured)[0])
    return out


def analyze(plan: dict[str, Any], rows: Sequence[dict[str, Any]], partial: bool = True) -> dict[str, Any]:
    """Measured vs predicted maximal LR per architecture, and the correlations.

    Args:
        plan: the stored plan (:func:`validation_plan`).
        rows: the store's job rows.
        partial: skip architectures whose runs are not all finished (else raise).

    Returns:
        ``{"points": [...], "overall": correlations, "groups": {label: correlations}, "skipped": n}``;
        each point has group, kernel, arch, lr_scale, kernel_factor, measured_lr, predicted_lr,
        edge, base (bool) and curve (``[grid LR, mean final loss or None if diverged]``).
    """
    rel_tol = plan["rel_tol"]
    measured: dict[tuple[str, str], Any] = {}
    skipped = 0
    for label, group in plan["groups"].items():
        for m in group["archs"]:
            if m["degenerate"]:
                continue
            try:
                losses = losses_from_rows([(lr, key) for lr, key in m["runs"]], rows)
                measured[(label, m["arch"])] = select_lr(losses, rel_tol)
            except DataError:
                if not partial:
                    raise
                skipped += 1
    points = []
    for label, group in plan["groups"].items():
        base_sel = measured.get((group["base_group"], plan["base_arch"]))
        for m in group["archs"]:
            sel = measured.get((label, m["arch"]))
            if sel is None or base_sel is None:
                continue
            predicted = base_sel.chosen_lr * m["lr_scale"] * m["kernel_factor"]
            points.append({"group": label, "kernel": group["kernel"], "arch": m["arch"], "lr_scale": m["lr_scale"],
                           "kernel_factor": m["kernel_factor"], "measured_lr": sel.chosen_lr,
                           "predicted_lr": predicted, "edge": sel.edge, "base": m["arch"] == plan["base_arch"],
                           "mean_loss_at_measured": sel.mean_loss[sel.chosen_lr],
                           "curve": [[lr, sel.mean_loss[lr]] for lr in sel.grid]})  # None: diverged
    overall = correlations([p["predicted_lr"] for p in points], [p["measured_lr"] for p in points])
    groups = {label: correlations([p["predicted_lr"] for p in points if p["group"] == label],
                                  [p["measured_lr"] for p in points if p["group"] == label])
              for label in plan["groups"]}
    return {"points": points, "overall": overall, "groups": groups, "skipped": skipped,
            "degenerate": sum(m["degenerate"] for g in plan["groups"].values() for m in g["archs"]),
            "at_edge": sum(p["edge"] is not None for p in points)}
