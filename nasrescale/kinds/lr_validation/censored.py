"""The criterion's slope fitted honestly: censored points kept as bounds, clones counted once, and
the path count beside the rule's scale.

A cell whose maximal LR sits at its grid's edge was not measured: its true maximal LR lies
beyond that edge (at most the lowest grid LR, or at least the highest). Deleting it biases the
slope toward the cells that fit; keeping the edge LR as if measured biases it the other way.
:func:`~nasrescale.report.common.tobit.tobit` fits the line by maximum likelihood with each such point as the bound it is (a
censored-normal, "Tobit", regression; Wald intervals from the numerical Hessian, Student-t on
``n - p`` degrees of freedom). :func:`criterion_fits` applies it to an ``lr_validation`` run's
points, after dropping every cell isomorphic to one before it (the base first: a clone of the
base has the base's losses, so it adds no information), to: every cell; the conv-bearing cells;
the cells with more than one input-output path; and log(maximal LR) on log(path count ``P``),
on log(path-depth scale) and on both, with each one-predictor fit's R^2 (least squares on the
measured points) so the report says which explains the maximal LR.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats

from ...space.families import CellFamily
from ...space.encodings import parse_arch
from ...space.isomorphism import first_of_each_class
from ...space.topology import effective_edges, path_depths
from ...report.common.tobit import tobit
from ...report.common.typed import ABSENT, Absent, Plain, jfield
from ...report.common.validation_run import Point

__all__ = ["Fit", "R2", "TwoPredictors", "CensoredFits", "criterion_fits"]


def _r2(x: np.ndarray, y: np.ndarray) -> float | None:
    if len(y) < 3 or np.ptp(x) == 0:
        return None
    return float(stats.linregress(x, y).rvalue ** 2)


@dataclass(frozen=True)
class Fit(Plain):
    """One censored fit of log(maximal LR) on log(path-depth scale)."""

    fit: str
    n: int
    slope: float | None
    slope_ci: list[float] | None
    censored: int


@dataclass(frozen=True)
class R2(Plain):
    """R^2 of log(maximal LR) on log(path count) and on log(path-depth scale), measured cells."""

    path_count: float | None
    lr_scale: float | None
    n: int


@dataclass(frozen=True)
class TwoPredictors(Plain):
    """Both predictors in one censored fit (the rule: path count 0, scale 1)."""

    path_count: float
    path_count_ci: list[float] | None
    lr_scale: float
    lr_scale_ci: list[float] | None
    n: int


@dataclass(frozen=True)
class CensoredFits(Plain):
    """The censored slopes and the path-count comparison (module docstring)."""

    cells: int
    clones_dropped: int
    fits: tuple[Fit, ...] = jfield(each=Fit)
    censored: int = 0
    r2: R2 = jfield(of=R2, default=None)
    two_predictors: TwoPredictors | Absent = jfield(of=TwoPredictors, default=ABSENT)


@dataclass(frozen=True)
class _Cell:
    arch: str
    x: float
    y: float
    paths: int
    conv: bool
    censor: int


def _cell_facts(points: Sequence[Point], family: CellFamily) -> list[_Cell]:
    """The non-base points whose cell is the first of its isomorphism class (the base first),
    with their path count and whether a conv lies on a live edge."""
    base = [p for p in points if p.base]
    keep, _ = first_of_each_class([p.arch for p in [*base, *points]], family)
    kept = set(keep) - {p.arch for p in base}
    out, seen = [], set()
    for p in points:
        if p.base or p.arch not in kept or p.arch in seen or not p.measured_lr:
            continue
        seen.add(p.arch)
        graph = parse_arch(p.arch, family)
        ops = [op for _, _, op in effective_edges(graph, family)]
        out.append(_Cell(p.arch, math.log(p.lr_scale), math.log(p.measured_lr), len(path_depths(graph, family)),
                         any(family.op(op).parametric for op in ops), {"low": -1, "high": 1}.get(p.edge or "", 0)))
    return out


def _weighted_label(family: CellFamily) -> str:
    """The stratum of cells with a weight layer on a live edge, named for the family's layers:
    ``conv-bearing cells`` where every weighted op is a conv (NB201, the CNN nets), else ``cells
    with a weight layer`` (the MLP nets' linear edges).

    >>> from nasrescale.space.family_loader import get_family
    >>> _weighted_label(get_family("nb201")), _weighted_label(get_family("mlp_dag"))
    ('conv-bearing cells', 'cells with a weight layer')
    """
    weighted = [op for op in family.ops if op.kind.parametric]
    return "conv-bearing cells" if all(op.kind.needs_kernel for op in weighted) else "cells with a weight layer"


def _slope_fit(name: str, cells: list[_Cell]) -> Fit:
    if len(cells) < 3 or len({c.x for c in cells}) < 2:
        return Fit(name, len(cells), None, None, 0)
    f = tobit(np.c_[np.ones(len(cells)), [c.x for c in cells]], np.array([c.y for c in cells]),
              np.array([c.censor for c in cells]))
    return Fit(name, f["n"], f["coef"][1], f["ci"][1], f["censored"])


def _two_predictors(cells: list[_Cell]) -> TwoPredictors:
    both = tobit(np.c_[np.ones(len(cells)), np.log([c.paths for c in cells]), [c.x for c in cells]],
                 np.array([c.y for c in cells]), np.array([c.censor for c in cells]))
    return TwoPredictors(both["coef"][1], both["ci"][1], both["coef"][2], both["ci"][2], both["n"])


def criterion_fits(points: Sequence[Point], family: CellFamily) -> CensoredFits:
    """The censored slopes and the path-count comparison (module docstring)."""
    cells = _cell_facts(points, family)
    fits = (_slope_fit("every cell (censored fit)", cells),
            _slope_fit(_weighted_label(family), [c for c in cells if c.conv]),
            _slope_fit("cells with more than one path", [c for c in cells if c.paths > 1]))
    measured = [c for c in cells if c.censor == 0]
    y = np.array([c.y for c in measured])
    logp, x = np.log([c.paths for c in measured]), np.array([c.x for c in measured])
    return CensoredFits(cells=len(cells), clones_dropped=sum(not p.base for p in points) - len(cells), fits=fits,
                        censored=sum(c.censor != 0 for c in cells),
                        r2=R2(_r2(logp, y), _r2(x, y), len(measured)),
                        two_predictors=_two_predictors(cells) if len(cells) >= 4 else ABSENT)
