"""A landscape run read once from its store: :func:`analyze` computes every figure the report
states (:class:`~nasrescale.kinds.landscape.figures.LandscapeAnalysis`), :class:`LandscapeSummary`
holds it with the run, its settings and the cells its figures draw. ``report.json`` is
:meth:`LandscapeSummary.to_json`. Below :data:`~.stats.MIN_CELLS` finished cells the report gives
figures only: no interval and no verdict.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .settings import LandscapeSettings
from ...space.encodings import parse_arch
from ...space.family_loader import get_family
from ...space.topology import effective_edges
from ...store.read import StoreData, read_store
from ...report.common.reference import load_reference, reference_spec
from . import verdicts as verdicts_module
from .cells import CellLandscape, read_cells, read_plan
from .criterion import criterion_rows
from .figures import LandscapeAnalysis
from .recipe import recipe_scores
from .stats import ARMS, MIN_CELLS, arm_scores, elr_stats, headroom, ranking, slope_stats, strata_stats
from .verdicts import verdicts

__all__ = ["analyze", "LandscapeSummary", "summarize_landscape"]


def _reference(store: StoreData) -> dict[str, float] | None:
    source, _ = load_reference(*reference_spec(store.record))
    return None if source is None else source.runs.groupby("arch")["accuracy"].mean().to_dict()


def _conv_of(store: StoreData) -> Callable[[str], bool]:
    """``arch -> whether a parametric op (a conv) lies on one of its live edges``, in the store's family."""
    family = get_family(store.record.family_or("nb201"))
    return lambda arch: any(family.op(op).parametric for _, _, op in effective_edges(parse_arch(arch, family), family))


def _cell_json(c: CellLandscape, lr: Any) -> dict[str, Any]:
    return {"arch": c.arch, "lr_scale": c.lr_scale, "sum_l3": c.sum_l3, "best_lr": lr(c.best),
            "vertex_lr": lr(c.vertex), "vertex_ci": None if c.vertex_ci is None else [lr(v) for v in c.vertex_ci],
            "edge": c.edge, "best_mean": float(np.mean(c.acc[c.best])), "lrs": [lr(k) for k in sorted(c.acc)],
            "mean_acc": [float(np.mean(c.acc[k])) for k in sorted(c.acc)]}


def _compared(out: dict[str, Any], store: StoreData, cells: list[CellLandscape], settings: LandscapeSettings,
              n_boot: int) -> None:
    """The slope, arms, headroom, ranking, strata and effective steps (3 cells or more), into ``out``."""
    out["slope"] = slope_stats(cells, settings.lr, "vertex")
    out["slope_argmax"] = slope_stats(cells, settings.lr, "argmax")
    out["rule_constant"] = float(np.exp(np.mean([math.log(settings.lr(c.vertex) / c.lr_scale) for c in cells])))
    scores = arm_scores(cells, settings.points_per_octave)
    out["arms"] = {arm: {"lr": [settings.lr(k) for k in scores[arm]["k"]]} for arm in ARMS}
    out["arms"]["global"]["options"] = [settings.lr(k) for k in scores["global_options"]]
    out["rule_clipped"] = scores["clipped"]
    out["headroom"] = headroom(scores, n_boot)
    out["ranking"] = ranking(cells, scores, settings.top_percent, _reference(store))
    out["strata"] = strata_stats(cells, settings.strata, settings.lr, _conv_of(store))
    out["elr"] = elr_stats(cells, settings.lr, Counter(scores["global"]["k"]).most_common(1)[0][0])


def analyze(store: StoreData, n_boot: int = 9999, n_sim: int | None = None) -> LandscapeAnalysis:
    """Everything the report states, from the store (and the ``criterion`` runs beside it);
    ``n_sim`` scales the verdicts' simulations (0: no verdicts; default :data:`~.verdicts.N_SIM`)."""
    plan, settings = read_plan(store)
    cells, pending = read_cells(store, min(n_boot, 2000))
    out: dict[str, Any] = {"label": plan.label, "seeds": list(plan.seeds), "epochs": plan.epochs,
                           "settings": plan.settings.to_json(), "cells": len(cells), "pending": pending,
                           "degenerate": sum(bool(c.degenerate) for c in plan.cells.values()),
                           "per_cell": [_cell_json(c, settings.lr) for c in cells]}
    if len(cells) < 3:
        return LandscapeAnalysis.from_plain(out)
    _compared(out, store, cells, settings, n_boot)
    n_sim = verdicts_module.N_SIM if n_sim is None else n_sim
    if n_sim and len(cells) >= MIN_CELLS:
        recipe = (recipe_scores(settings.recipe, cells, list(plan.seeds), store.path.parent.parent)
                  if settings.recipe else None)
        out["verdicts"] = verdicts(cells, settings.points_per_octave, settings.lr, n_sim, min(n_boot, 2000),
                                   recipe=recipe)
    if settings.criterion:
        out["criterion"] = criterion_rows(settings.criterion, cells, settings.lr, store.path.parent.parent,
                                          get_family(store.record.family_or("nb201")))
    return LandscapeAnalysis.from_plain(out)


@dataclass(frozen=True)
class LandscapeSummary:
    """A landscape run, read once.

    Attributes:
        run_dir, name, store: the run folder, its name and its store.
        settings: the landscape's settings as planned (its LR grid: ``settings.lr(k)``).
        analysis: every figure the report states.
        figure_cells: the finished cells as its figures draw them (none below 3 cells).
    """

    run_dir: Path
    name: str
    store: StoreData
    settings: LandscapeSettings
    analysis: LandscapeAnalysis
    figure_cells: tuple[CellLandscape, ...]

    @property
    def compared(self) -> bool:
        """Whether enough cells finished (3) to compare anything."""
        return self.analysis.cells >= 3

    @property
    def full(self) -> bool:
        """Whether enough cells finished (:data:`~.stats.MIN_CELLS`) for intervals and verdicts."""
        return self.analysis.cells >= MIN_CELLS

    def to_json(self) -> dict[str, Any]:
        """``report.json``: the analysis."""
        return self.analysis.to_plain()


def summarize_landscape(run_dir: Path, n_boot: int = 9999, n_sim: int | None = None) -> LandscapeSummary:
    """Read the landscape in ``run_dir`` (its ``store.sqlite``) into its summary."""
    store = read_store(Path(run_dir) / "store.sqlite")
    analysis = analyze(store, n_boot, n_sim)
    _, settings = read_plan(store)
    figure_cells = tuple(read_cells(store, 200)[0]) if analysis.cells >= 3 else ()
    return LandscapeSummary(Path(run_dir), store.record.name or Path(run_dir).name, store, settings, analysis,
                            figure_cells)
