"""The report's tuning section: each ``tune = true`` protocol's accuracy against its LR multiplier.

Read from the run record's tunings (meta ``tuning:<label>``, written by :mod:`nasrescale.pipeline.stages`):
the anchor LR, the multipliers tried, each one's mean test accuracy over the tuning cells and
seeds and every run's accuracy, and the choice. Each tuning, finished (:func:`tunings`) or still
running (:func:`tuning_progress`), is read once into a
:class:`~nasrescale.report.common.tuning_view.TuningView` that the table, the
figure (:mod:`~nasrescale.report.common.tuning_plot`), ``report.json``'s numbers
(:func:`tuning_numbers`), the budget's LR text (:func:`tuned_lr_text`) and ``nasrescale status``
read by attribute.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

from ...scaling.lr_rules import scales_per_arch
from ...lrsearch.tuning import TUNE_PREFIX, chance_accuracy, choose_multiplier, extend_multipliers
from ...store.job_status import FINAL, Status
from ...store.read import StoreData
from ...store.record import RunRecord
from ...store.schema import TuningRecord
from ...store.stage_records import TuningResult, TuningRun
from .tuning_plot import tuning_plot
from .tuning_view import TuningView

__all__ = ["tunings", "tuning_progress", "tuning_numbers", "tuning_lines", "tuned_lr_text"]

_RUNNING_CRITERION = "mean test accuracy over the tuning cells and seeds"


def tunings(store: StoreData) -> dict[str, TuningView]:
    """label -> its finished tuning, with
    :attr:`~nasrescale.report.common.tuning_view.TuningView.added`: the multipliers past the
    pipeline's first grid, which extensions tried."""
    table = store.record.tuning
    first = set(map(float, table.multipliers)) if table is not None else set()
    return {label: _finished(found, first) for label, found in store.record.tunings.items()}


def _finished(found: TuningResult, first: set[float]) -> TuningView:
    """A finished tuning as the section reads it (every run's ``diverged`` where it was stored)."""
    means = dict(found.means)
    return TuningView(**{name: getattr(found, name) for name in TuningResult.fields()},
                      added=tuple(sorted(set(map(float, means)) - first)) if first else ())


def tuning_progress(store: StoreData) -> dict[str, TuningView]:
    """label -> a tuning still running, from its stored ``tune:<label>@x<m>`` jobs: the mean
    accuracy per multiplier over the runs finished so far (``chosen`` is ``None``: no choice yet)."""
    jobs = store.jobs
    tune = jobs[jobs["protocol"].astype(str).str.startswith(TUNE_PREFIX) & jobs["status"].isin(list(FINAL))]
    record = store.record
    table = record.tuning or TuningRecord()
    chance = chance_accuracy(str(record.dataset or ""))
    runs: dict[str, dict[str, tuple[TuningRun, ...]]] = {}
    for (label, m), rows in tune.groupby(tune["protocol"].map(_arm_multiplier)):
        accs = [chance if st == Status.DIVERGED else a for st, a in zip(rows["status"], rows["test_accuracy"])]
        runs.setdefault(label, {})[f"{m:g}"] = tuple(
            TuningRun(arch=a, seed=int(sd), test_accuracy=acc, diverged=st == Status.DIVERGED)
            for a, sd, acc, st in zip(rows["arch"], rows["seed"], accs, rows["status"]))
    first = [float(m) for m in table.multipliers]
    return {label: _grid_state(_whole_cells(TuningView(
        protocol=label, anchor_lr=_anchor(record, label), criterion=_RUNNING_CRITERION, seeds=tuple(table.seeds),
        runs=by_m, in_progress=True, cells_planned=table.cells), first), table, chance)
        for label, by_m in runs.items()}


def _anchor(record: RunRecord, label: str) -> float:
    """The LR protocol ``label``'s tuning multiplies: its searched base LR or its fixed LR (NaN: none yet)."""
    protocol = record.protocols.get(label)
    anchor = record.base_lr(label) if protocol is not None and protocol.searched else \
        (protocol.lr if protocol is not None else None)
    return float(anchor or math.nan)


def _whole_cells(view: TuningView, first: list[float]) -> TuningView:
    """``view`` keeping, at the first grid's multipliers, only the runs of cells finished at every
    one of them that has a run (a cell's chunk still running would weigh some multipliers' means
    and not others), with its ``means``, ``diverged``, ``cells`` (with a finished run) and
    ``runs_finished`` (every finished run, whole cell or not).

    >>> run = lambda arch: TuningRun(arch=arch, seed=0, test_accuracy=50.0, diverged=False)
    >>> view = _whole_cells(TuningView(runs={"1": (run("a"), run("b")), "2": (run("a"),)}), [1.0, 2.0])
    >>> view.means, view.runs_finished, [r.arch for r in view.runs["1"]]
    ({'1': 50.0, '2': 50.0}, 3, ['a'])
    >>> view.cells
    ('a', 'b')
    """
    runs = dict(view.runs)
    cells = tuple(sorted({r.arch for rs in runs.values() for r in rs}))
    keys = [f"{m:g}" for m in first if runs.get(f"{m:g}")]
    if keys:
        whole = set.intersection(*({r.arch for r in runs.get(k, ())} for k in keys))
        for k in keys:
            runs[k] = tuple(r for r in runs.get(k, ()) if r.arch in whole)
    runs = {k: rs for k, rs in runs.items() if rs}
    means = {k: sum(r.test_accuracy for r in rs) / len(rs) for k, rs in runs.items()}  # type: ignore[misc]
    return replace(view, runs=runs, cells=cells, runs_finished=sum(len(rs) for rs in view.runs.values()),
                   means=means, diverged={k: sum(bool(r.diverged) for r in rs) for k, rs in runs.items()})


def _grid_state(view: TuningView, table: TuningRecord, chance: float) -> TuningView:
    """Where a running tuning stands: ``planned`` counts the runs of every multiplier tried so far
    (an extension's too) on all the planned tuning cells (``tuning.cells``); once each has all its
    runs, ``best`` and ``edge`` say whether the grid extends (``next``: the multiplier it adds,
    ``extension``: which one, of ``extend``)."""
    full = int(table.cells or len(view.cells)) * max(len(view.seeds), 1)
    grid = sorted({*map(float, view.means), *map(float, table.multipliers)})
    view = replace(view, planned=full * len(grid))
    if any(len(view.runs.get(f"{m:g}", ())) < full for m in grid):
        return view
    choice = choose_multiplier({m: [r.test_accuracy for r in view.runs[f"{m:g}"]] for m in grid}, chance)
    view = replace(view, best=choice.chosen, edge=choice.edge)
    if choice.edge is None:
        return view
    return replace(view, next=extend_multipliers(grid, choice.edge)[0 if choice.edge == "low" else -1],
                   extension=len(grid) - len(table.multipliers) + 1, extend=table.extend)


def _arm_multiplier(label: str) -> tuple[str, float]:
    """``("flat", 0.5)`` of ``"tune:flat@x0.5"``."""
    arm, _, m = label[len(TUNE_PREFIX):].rpartition("@x")
    return arm, float(m)


def tuned_lr_text(view: TuningView, lr_rule: str | None) -> str:
    """How a tuned protocol's LR reads in the budget table.

    >>> tuned_lr_text(TuningView(lr=0.2, anchor_lr=0.1, chosen=2.0), "fixed")
    'LR 0.2 = 0.1 x 2, tuned (fixed)'
    """
    word = "base LR" if scales_per_arch(lr_rule) else "LR"
    return f"{word} {view.lr:g} = {view.anchor_lr:g} x {view.chosen:g}, tuned ({lr_rule})"


def tuning_numbers(found: Mapping[str, TuningView]) -> dict[str, Any] | None:
    """The numbers of the tunings ``found`` (:func:`tunings`) for ``report.json`` (``None``: none):
    ``lr`` only of a finished tuning, ``in_progress`` only of a running one."""
    if not found:
        return None
    return {label: _numbers(view) for label, view in found.items()}


def _numbers(view: TuningView) -> dict[str, Any]:
    out: dict[str, Any] = {"anchor_lr": view.anchor_lr, "chosen": view.chosen}
    if not view.in_progress:
        out["lr"] = view.lr
    out |= {"edge": view.edge, "means": dict(view.means), "cells": list(view.cells), "seeds": list(view.seeds)}
    return out | ({"in_progress": True} if view.in_progress else {})


def _progress_head(label: str, view: TuningView, done: int) -> str:
    """The head of a tuning still running: how far it is, or that its best sits at an edge and
    the grid extends (or cannot extend further: the run stops there)."""
    head = f"**{label}**: anchor LR {view.anchor_lr:g}; "
    if view.next is None:
        return head + (f"tuning in progress: {done} of {view.planned or '?'} runs finished, no multiplier "
                       "chosen yet (the means below are of the tuning cells finished at every multiplier so far)")
    head += f"all {done} runs of the grid finished; its best, x{view.best:g}, is at the grid's {view.edge} edge"
    if not view.extend:
        return head + ": flagged (tuning.extend = 0: the grid does not extend), and chosen as it is"
    if (view.extension or 0) > view.extend:
        return head + f" after {view.extend} extension(s): no multiplier can be chosen (the run stops there)"
    return head + f", so the grid extends to x{view.next:g} (extension {view.extension} of {view.extend})"


def _finished_head(label: str, view: TuningView) -> str:
    """The head of a finished tuning: its choice, flagged where it sits at the grid's edge, and
    the multipliers extensions added."""
    return (f"**{label}**: anchor LR {view.anchor_lr:g}; chosen x{view.chosen:g} -> LR {view.lr:g}"
            + (f" (at the grid's {view.edge} edge: flagged)" if view.edge else "")
            + (f"; the first grid's best sat at its edge, so it was extended by "
               f"{', '.join(f'x{m:g}' for m in view.added)}" if view.added else ""))


def tuning_lines(found: Mapping[str, TuningView], run_dir: Path) -> list[str]:
    """``## LR tuning``: a table per tuned protocol of ``found`` (:func:`tunings`) and the figure
    (:func:`~nasrescale.report.common.tuning_plot.tuning_plot`); nothing when no protocol was tuned."""
    if not found:
        return []
    lines = ["## LR tuning", ""]
    first = next(iter(found.values()))
    cells = max(int(view.cells_planned or len(view.cells)) for view in found.values())
    criterion = first.criterion if first.criterion is not None else "mean test accuracy"
    lines += [f"Each tuned protocol trained at its anchor LR x each multiplier on {cells} "
              f"tuning cells (seeds {', '.join(map(str, first.seeds))}), cells the evaluation reaches "
              f"later; criterion: {criterion}; a diverged run counts at chance.", ""]
    for label, view in found.items():
        means = {float(m): v for m, v in view.means.items()}
        diverged = {float(m): n for m, n in view.diverged.items()}
        runs = {float(m): rs for m, rs in view.runs.items()}
        done = view.runs_finished if view.runs_finished is not None else sum(len(r) for r in runs.values())
        head = _progress_head(label, view, done) if view.in_progress else _finished_head(label, view)
        lines += [head, "",
                  "| multiplier | LR | mean test accuracy | runs | diverged |", "| --- | --- | --- | --- | --- |"]
        for m in sorted(means):
            mark = " **(chosen)**" if m == view.chosen else ""
            lines.append(f"| x{m:g}{mark} | {view.anchor_lr * m:.4g} | {means[m]:.2f} | {len(runs.get(m, ()))} | "
                         f"{diverged.get(m, 0)} |")
        lines.append("")
    plot = tuning_plot(found, run_dir / "tuning.png")
    return lines + [f"![accuracy vs LR multiplier]({plot.name})", ""]
