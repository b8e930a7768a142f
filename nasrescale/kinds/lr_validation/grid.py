"""An LR validation's grid: its plan and its extensions past an edge.

Every selected architecture's maximal LR is grid-searched as the base-LR search does
(:func:`~nasrescale.lrsearch.search.search_jobs`), with the protocol's init and the grid LR used
as is (``lr_rule = "fixed"``). Where a seed's argmin sits at the grid's edge, :func:`extend_plan`
adds grid points past it (up to ``lr_search.extend`` rounds), so a measured LR is an interior
minimum or is flagged. The family's base architecture is always searched too: its measured LR is
the ``base_lr`` of the prediction. With ``[validation] kernels = [3, 5, 7]`` every conv op of
the family is given each kernel size in turn (the base is searched at ``kernel_base``), as the
paper's CNN experiment varies q. The plan is stored (meta ``validation_plan``) and analyzed by
:func:`nasrescale.lrsearch.validation.analyze`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ...errors import ConfigError
from ...jobs.job import DataSpec, TrainJob
from ...lrsearch.search import LrSearchSettings, search_jobs
from ...lrsearch.validation import selections
from ...scaling.lr_rules import kernel_rule_of
from ...space.edge_factors import kernel_factor
from ...space.families import CellFamily
from ...space.parsed_arch import CellMemo, ParsedArch
from ...space.topology import is_degenerate, lr_scale, sum_depth_cubed

__all__ = ["kernel_variant", "validation_plan", "extend_plan", "EXTEND_STEPS", "LR_BOUNDS"]

#: grid steps added past an edge per extension round
EXTEND_STEPS = 4
#: the extension never goes below / above these LRs
LR_BOUNDS = (1e-6, 1e3)


def kernel_variant(family: CellFamily, kernel: int) -> CellFamily:
    """``family`` with every conv op's kernel set to ``kernel`` (its digest changes with it).

    >>> from nasrescale.space.family_loader import get_family
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
    base = ParsedArch.parse(search.arch or family.base, family).text
    arch_list = [base] + [a for a in archs if a != base]
    grid = search.grid()
    plan: dict[str, Any] = {"base_arch": base, "rel_tol": search.rel_tol, "rule": search.rule, "loss": search.loss,
                            "step": grid[1] / grid[0] if len(grid) > 1 else 2 ** 0.25, "groups": {}}
    jobs: list[TrainJob] = []
    memos: dict[str, CellMemo] = {}  # each cell parsed once per family (a kernel's family is another)
    for label, entry, fam, q in _groups(family, entries, kernels):
        base_group = label if q is None else f"{entry.label}@k{fam.kernel_base}"
        rule = kernel_rule_of(entry.protocol, fam)
        members = []
        for arch, cell in zip(arch_list, memos.setdefault(fam.digest(), CellMemo(fam)).cells(arch_list)):
            graph = cell.graph
            pairs = search_jobs(cell, fam, data, entry.protocol, search, label, width, cells, lr_rule="fixed")
            degenerate = is_degenerate(graph, fam)
            if not degenerate:  # a degenerate cell's output is constant: it has no maximal LR
                jobs += [job for _, job in pairs]
            members.append({"arch": arch, "degenerate": degenerate, "lr_scale": lr_scale(graph, fam),
                            "kernel_factor": kernel_factor(graph, fam, rule), "sum_l3": sum_depth_cubed(graph, fam),
                            "runs": [] if degenerate else [[lr, job.key()] for lr, job in pairs]})
        plan["groups"][label] = {"protocol": entry.label, "kernel": q, "base_group": base_group, "archs": members}
    return plan, jobs


def _beyond(sel: Any, step: float) -> list[float]:
    """The LRs past the edge a selection sits at (:data:`EXTEND_STEPS` grid steps, within :data:`LR_BOUNDS`)."""
    if sel.edge == "high":
        lrs = [sel.grid[-1] * step ** i for i in range(1, EXTEND_STEPS + 1)]
    elif sel.edge == "low":
        lrs = [sel.grid[0] / step ** i for i in range(1, EXTEND_STEPS + 1)]
    else:
        return []
    return [float(f"{lr:.6g}") for lr in lrs if LR_BOUNDS[0] <= lr <= LR_BOUNDS[1]]


def extend_plan(plan: dict[str, Any], rows: Sequence[dict[str, Any]], family: CellFamily, entries: Sequence[Any],
                data: DataSpec, search: LrSearchSettings, kernels: Sequence[int] = (), width: int | None = None,
                cells: int | None = None) -> list[TrainJob]:
    """Add grid points past the edge for every architecture whose selection sits at an edge of
    its grid (a seed's argmin at the smallest or largest LR tried); ``plan`` is updated in
    place (its ``runs``) and the new jobs are returned (none: nothing at an edge, or the
    bounds reached). Architectures with unfinished runs are left for a later call. The other
    arguments are those of :func:`validation_plan`."""
    measured, _ = selections(plan, rows, partial=True)
    groups = {label: (entry, fam) for label, entry, fam, _ in _groups(family, entries, kernels)}
    memos = {fam.digest(): CellMemo(fam) for _, fam in groups.values()}
    jobs: list[TrainJob] = []
    for label, group in plan["groups"].items():
        entry, fam = groups[label]
        for m in group["archs"]:
            sel = measured.get((label, m["arch"]))
            lrs = [] if sel is None else _beyond(sel, plan["step"])
            if not lrs:
                continue
            pairs = search_jobs(memos[fam.digest()].get(m["arch"]), fam, data, entry.protocol, search, label, width,
                                cells, lrs=lrs, lr_rule="fixed")
            m["runs"] += [[lr, job.key()] for lr, job in pairs]
            jobs += [job for _, job in pairs]
    return jobs
