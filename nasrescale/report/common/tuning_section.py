"""The report's tuning section: each ``tune = true`` protocol's accuracy against its LR multiplier.

Read from the run record's tunings (meta ``tuning:<label>``, written by :mod:`nasrescale.pipeline.stages`):
the anchor LR, the multipliers tried, each one's mean test accuracy over the tuning cells and
seeds and every run's accuracy, and the choice. The figure ``tuning.png`` draws, per protocol,
the mean accuracy against the multiplier (log axis) with each tuning cell's runs behind it, the
chosen multiplier marked.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ...fileio import save_figure
from ...scaling.lr_rules import scales_per_arch
from ...lrsearch.tuning import TUNE_PREFIX, chance_accuracy, choose_multiplier, extend_multipliers
from ...store.job_status import FINAL, Status
from ...store.read import StoreData
from ...store.schema import TuningRecord
from ...store.stage_records import TuningResult

__all__ = ["tunings", "tuning_progress", "tuning_numbers", "tuning_lines", "tuned_lr_text"]


def tunings(store: StoreData) -> dict[str, dict[str, Any]]:
    """label -> its finished tuning (``anchor_lr``, ``means``, ``runs``, ``chosen``, ``lr``...), with
    ``added``: the multipliers past the pipeline's first grid, which extensions tried."""
    out = {}
    table = store.record.tuning
    first = set(map(float, table.multipliers)) if table is not None else set()
    for label, found in store.record.tunings.items():
        doc = out[label] = _finished(found)
        doc["added"] = sorted(set(map(float, doc["means"])) - first) if first else []
    return out


def _finished(found: TuningResult) -> dict[str, Any]:
    """A finished tuning as the section reads it (every run's ``diverged`` where it was stored)."""
    runs = {m: [{"arch": r.arch, "seed": r.seed, "test_accuracy": r.test_accuracy}
                | ({"diverged": r.diverged} if r.diverged is not None else {}) for r in rs]
            for m, rs in found.runs.items()}
    doc = {"protocol": found.protocol, "anchor_lr": found.anchor_lr, "cells": list(found.cells),
           "seeds": list(found.seeds), "chosen": found.chosen, "edge": found.edge, "means": dict(found.means),
           "diverged": dict(found.diverged), "lr": found.lr, "runs": runs}
    return doc | ({"criterion": found.criterion} if found.criterion is not None else {})


def tuning_progress(store: StoreData) -> dict[str, dict[str, Any]]:
    """label -> a tuning still running, from its stored ``tune:<label>@x<m>`` jobs: the mean
    accuracy per multiplier over the runs finished so far (``chosen`` is ``None``: no choice yet)."""
    jobs = store.jobs
    tune = jobs[jobs["protocol"].astype(str).str.startswith(TUNE_PREFIX) & jobs["status"].isin(list(FINAL))]
    record = store.record
    table = record.tuning or TuningRecord()
    chance = chance_accuracy(str(record.dataset or ""))
    out: dict[str, dict[str, Any]] = {}
    for (label, m), rows in tune.groupby(tune["protocol"].map(_arm_multiplier)):
        doc = out.setdefault(label, {"in_progress": True, "chosen": None, "edge": None, "means": {}, "runs": {},
                                     "seeds": list(table.seeds), "cells_planned": table.cells,
                                     "criterion": "mean test accuracy over the tuning cells and seeds",
                                     "planned": table.cells * len(table.seeds) * len(table.multipliers)})
        accs = [chance if st == Status.DIVERGED else a for st, a in zip(rows["status"], rows["test_accuracy"])]
        doc["runs"][f"{m:g}"] = [{"arch": a, "seed": int(sd), "test_accuracy": acc, "diverged": st == Status.DIVERGED}
                                 for a, sd, acc, st in zip(rows["arch"], rows["seed"], accs, rows["status"])]
        protocol = record.protocols.get(label)
        anchor = record.base_lr(label) if protocol is not None and protocol.searched else \
            (protocol.lr if protocol is not None else None)
        doc["anchor_lr"] = float(anchor or math.nan)
    for doc in out.values():
        _whole_cells(doc, [float(m) for m in table.multipliers])
        _grid_state(doc, table, chance)
    return out


def _whole_cells(doc: dict[str, Any], first: list[float]) -> None:
    """Keep, at the first grid's multipliers, only the runs of cells finished at every one of
    them that has a run (a cell's chunk still running would weigh some multipliers' means and
    not others), and
    set ``means``, ``diverged`` and ``runs_finished`` (every finished run, whole cell or not).

    >>> run = lambda arch: {"arch": arch, "seed": 0, "test_accuracy": 50.0, "diverged": False}
    >>> doc = {"runs": {"1": [run("a"), run("b")], "2": [run("a")]}}
    >>> _whole_cells(doc, [1.0, 2.0])
    >>> doc["means"], doc["runs_finished"], [r["arch"] for r in doc["runs"]["1"]]
    ({'1': 50.0, '2': 50.0}, 3, ['a'])
    >>> doc["cells"]
    ['a', 'b']
    """
    doc["runs_finished"] = sum(len(rs) for rs in doc["runs"].values())
    doc["cells"] = sorted({r["arch"] for rs in doc["runs"].values() for r in rs})  # with a finished run
    keys = [f"{m:g}" for m in first if doc["runs"].get(f"{m:g}")]
    if keys:
        whole = set.intersection(*({r["arch"] for r in doc["runs"].get(k, [])} for k in keys))
        for k in keys:
            doc["runs"][k] = [r for r in doc["runs"].get(k, []) if r["arch"] in whole]
    doc["runs"] = {k: rs for k, rs in doc["runs"].items() if rs}
    doc["means"] = {k: sum(r["test_accuracy"] for r in rs) / len(rs) for k, rs in doc["runs"].items()}
    doc["diverged"] = {k: sum(bool(r.get("diverged")) for r in rs) for k, rs in doc["runs"].items()}


def _grid_state(doc: dict[str, Any], table: TuningRecord, chance: float) -> None:
    """Where a running tuning stands: ``planned`` counts the runs of every multiplier tried so far
    (an extension's too) on all the planned tuning cells (``tuning.cells``); once each has all its
    runs, ``best`` and ``edge`` say whether the grid extends (``next``: the multiplier it adds,
    ``extension``: which one, of ``extend``)."""
    full = int(table.cells or len(doc["cells"])) * max(len(doc["seeds"]), 1)
    grid = sorted({*map(float, doc["means"]), *map(float, table.multipliers)})
    doc["planned"] = full * len(grid)
    if any(len(doc["runs"].get(f"{m:g}", [])) < full for m in grid):
        return
    choice = choose_multiplier({m: [r["test_accuracy"] for r in doc["runs"][f"{m:g}"]] for m in grid}, chance)
    doc["best"], doc["edge"] = choice.chosen, choice.edge
    if choice.edge is not None:
        doc["next"] = extend_multipliers(grid, choice.edge)[0 if choice.edge == "low" else -1]
        doc["extension"] = len(grid) - len(table.multipliers) + 1
        doc["extend"] = table.extend


def _arm_multiplier(label: str) -> tuple[str, float]:
    """``("flat", 0.5)`` of ``"tune:flat@x0.5"``."""
    arm, _, m = label[len(TUNE_PREFIX):].rpartition("@x")
    return arm, float(m)


def tuned_lr_text(doc: dict[str, Any], lr_rule: str | None) -> str:
    """How a tuned protocol's LR reads in the budget table.

    >>> tuned_lr_text({"lr": 0.2, "anchor_lr": 0.1, "chosen": 2.0}, "fixed")
    'LR 0.2 = 0.1 x 2, tuned (fixed)'
    """
    word = "base LR" if scales_per_arch(lr_rule) else "LR"
    return f"{word} {doc['lr']:g} = {doc['anchor_lr']:g} x {doc['chosen']:g}, tuned ({lr_rule})"


def tuning_numbers(found: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The numbers of the tunings ``found`` (:func:`tunings`) for ``report.json`` (``None``: none)."""
    if not found:
        return None
    return {label: {k: doc.get(k) for k in ("anchor_lr", "chosen", "lr", "edge", "means", "cells", "seeds",
                                            "in_progress") if k in doc}
            for label, doc in found.items()}


def _progress_head(label: str, doc: dict[str, Any], done: int) -> str:
    """The head of a tuning still running: how far it is, or that its best sits at an edge and
    the grid extends (or cannot extend further: the run stops there)."""
    head = f"**{label}**: anchor LR {doc['anchor_lr']:g}; "
    if doc.get("next") is None:
        return head + (f"tuning in progress: {done} of {doc.get('planned') or '?'} runs finished, no multiplier "
                       "chosen yet (the means below are of the tuning cells finished at every multiplier so far)")
    head += f"all {done} runs of the grid finished; its best, x{doc['best']:g}, is at the grid's {doc['edge']} edge"
    if not doc["extend"]:
        return head + ": flagged (tuning.extend = 0: the grid does not extend), and chosen as it is"
    if doc["extension"] > doc["extend"]:
        return head + f" after {doc['extend']} extension(s): no multiplier can be chosen (the run stops there)"
    return head + f", so the grid extends to x{doc['next']:g} (extension {doc['extension']} of {doc['extend']})"


def tuning_lines(found: dict[str, dict[str, Any]], run_dir: Path) -> list[str]:
    """``## LR tuning``: a table per tuned protocol of ``found`` (:func:`tunings`) and the figure;
    nothing when no protocol was tuned."""
    if not found:
        return []
    lines = ["## LR tuning", ""]
    first = next(iter(found.values()))
    cells = max(int(doc.get("cells_planned") or len(doc.get("cells", []))) for doc in found.values())
    lines += [f"Each tuned protocol trained at its anchor LR x each multiplier on {cells} "
              f"tuning cells (seeds {', '.join(map(str, first.get('seeds', [])))}), cells the evaluation reaches "
              f"later; criterion: {first.get('criterion', 'mean test accuracy')}; a diverged run counts at chance.", ""]
    for label, doc in found.items():
        means = {float(m): v for m, v in (doc.get("means") or {}).items()}
        diverged = {float(m): n for m, n in (doc.get("diverged") or {}).items()}
        runs = {float(m): rs for m, rs in (doc.get("runs") or {}).items()}
        done = doc.get("runs_finished", sum(len(r) for r in runs.values()))
        head = (_progress_head(label, doc, done) if doc.get("in_progress") else
                f"**{label}**: anchor LR {doc['anchor_lr']:g}; chosen x{doc['chosen']:g} -> LR {doc['lr']:g}"
                + (f" (at the grid's {doc['edge']} edge: flagged)" if doc.get("edge") else "")
                + (f"; the first grid's best sat at its edge, so it was extended by "
                   f"{', '.join(f'x{m:g}' for m in doc['added'])}" if doc.get("added") else ""))
        lines += [head, "",
                  "| multiplier | LR | mean test accuracy | runs | diverged |", "| --- | --- | --- | --- | --- |"]
        for m in sorted(means):
            mark = " **(chosen)**" if m == doc["chosen"] else ""
            lines.append(f"| x{m:g}{mark} | {doc['anchor_lr'] * m:.4g} | {means[m]:.2f} | {len(runs.get(m, []))} | "
                         f"{diverged.get(m, 0)} |")
        lines.append("")
    plot = _plot(found, run_dir / "tuning.png")
    return lines + [f"![accuracy vs LR multiplier]({plot.name})", ""]


def _plot(found: dict[str, dict[str, Any]], path: Path) -> Path:
    """Mean accuracy vs multiplier per protocol (each tuning cell's runs faint behind it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for i, (label, doc) in enumerate(found.items()):
        color = f"C{i}"
        means = sorted((float(m), v) for m, v in (doc.get("means") or {}).items())
        chosen = doc.get("chosen")
        ax.plot([m for m, _ in means], [v for _, v in means], "o-", color=color,
                label=f"{label} (x{chosen:g})" if chosen is not None else
                f"{label} ({'extending' if doc.get('next') is not None else 'in progress'})")
        by_arch: dict[str, list[tuple[float, float]]] = {}
        for m, rs in (doc.get("runs") or {}).items():
            for r in rs:
                acc = r.get("test_accuracy")
                if acc is not None and math.isfinite(acc):
                    by_arch.setdefault(f"{r['arch']}/{r['seed']}", []).append((float(m), acc))
        for pts in by_arch.values():
            pts.sort()
            ax.plot([m for m, _ in pts], [a for _, a in pts], "-", color=color, alpha=0.15, lw=0.8)
        if chosen is not None:
            ax.axvline(chosen, color=color, ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("multiplier of the anchor LR")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("LR tuning: mean over tuning cells (faint: each cell)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    return path
