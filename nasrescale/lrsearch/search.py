"""The base-LR search (Chen et al., ICLR 2024, §4, step 1) as stored, resumable training jobs.

The family's base architecture is trained for ``epochs`` (default 1) at every LR of a
log-spaced grid with several seeds; each run is a :class:`~nasrescale.jobs.job.TrainJob` (so the
store keys, resumes and never repeats it), and :func:`~nasrescale.lrsearch.select.select_lr` picks
the maximal LR by the settings' rule (``argmin``: each seed's LR of the smallest final training
loss, combined by their geometric mean; ``within_tol``: the largest LR within a tolerance of the
smallest mean loss). The same jobs, on other
architectures, measure each one's "ground-truth" maximal LR for the validation pipeline
(:mod:`nasrescale.kinds.lr_validation.grid`).

A search run differs from its protocol only in ``lr`` (the grid value), ``epochs`` (the
search's), ``schedule = "constant"`` (the LR under test is held; with one epoch a cosine
stepped per epoch trains identically, and the distinct protocol keeps a search run from
sharing its key -- and store row -- with a one-epoch pipeline job) and, where the
protocol's warmup would not fit, ``warmup_epochs = 0``.

>>> from nasrescale.protocol import load_protocol
>>> s = LrSearchSettings(lr_min=0.1, lr_max=1.0, points=3, seeds=(0,))
>>> [round(lr, 4) for lr in s.grid()], search_protocol(load_protocol("rescaled"), 0.1, s).epochs
([0.1, 0.3162, 1.0], 1)
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ..config import check_seeds
from ..errors import ConfigError, DataError
from ..fileio import save_figure
from ..protocol import Protocol
from ..space.families import CellFamily
from ..space.parsed_arch import ParsedArch
from ..store.job_status import FINAL, Status
from ..store.table_fields import LrSearchFields
from .select import SELECTION_RULES, Selection, log_grid, select_lr

if TYPE_CHECKING:  # the jobs load torch: imported where jobs are built, so the settings stay light
    from ..jobs.job import DataSpec, TrainJob

__all__ = ["LrSearchSettings", "search_protocol", "search_jobs", "losses_from_rows", "search_table", "rule_lines",
           "selection_json", "plot_selection", "SEARCH_PREFIX", "LOSS_KINDS"]

#: which final training loss a search run is judged by (:class:`LrSearchSettings`)
LOSS_KINDS = ("tail", "epoch")

#: the store's ``protocol`` column of a search job: ``lr-search:<protocol label>``
SEARCH_PREFIX = "lr-search:"


@dataclass(frozen=True)
class LrSearchSettings(LrSearchFields):
    """``[lr_search]``: the grid and how each LR is tried, checked (its fields, shared with the
    stored record :class:`~nasrescale.store.schema.LrSearchRecord`:
    :class:`~nasrescale.store.table_fields.LrSearchFields`)."""

    def __post_init__(self) -> None:
        if self.rule not in SELECTION_RULES:
            raise ConfigError(f"lr_search.rule: unknown rule {self.rule!r}; rules: {', '.join(SELECTION_RULES)}")
        if self.loss not in LOSS_KINDS:
            raise ConfigError(f"lr_search.loss: expected one of {', '.join(LOSS_KINDS)}, got {self.loss!r}")
        if self.extend < 0:
            raise ConfigError(f"lr_search.extend: must be >= 0, got {self.extend}")
        log_grid(self.lr_min, self.lr_max, self.points)  # raises on a bad grid
        check_seeds(self.seeds, "lr_search.seeds")
        if self.epochs < 1:
            raise ConfigError(f"lr_search.epochs: must be >= 1, got {self.epochs}")
        if not (self.rel_tol >= 0 and math.isfinite(self.rel_tol)):
            raise ConfigError(f"lr_search.rel_tol: must be >= 0, got {self.rel_tol}")

    def grid(self) -> list[float]:
        """The LRs tried, ascending."""
        return log_grid(self.lr_min, self.lr_max, self.points)


def search_protocol(protocol: Protocol, lr: float, settings: LrSearchSettings, **changes: Any) -> Protocol:
    """``protocol`` as one search run uses it: ``lr`` held constant for the search's epochs
    (warmup dropped if it would not fit), plus ``changes`` (e.g. ``lr_rule="fixed"`` for the validation runs)."""
    warmup = protocol.warmup_epochs if protocol.warmup_epochs < settings.epochs else 0
    return dataclasses.replace(protocol, lr=float(lr), epochs=settings.epochs, warmup_epochs=warmup,
                               schedule="constant", **changes)


def search_jobs(arch: ParsedArch, family: CellFamily, data: DataSpec, protocol: Protocol, settings: LrSearchSettings,
                label: str, width: int | None = None, cells: int | None = None,
                lrs: Sequence[float] | None = None, **changes: Any) -> list[tuple[float, TrainJob]]:
    """``(grid LR, job)`` for every LR x seed of the search of ``arch``.

    Args:
        arch: the architecture, parsed (:meth:`ParsedArch.parse <nasrescale.space.parsed_arch.ParsedArch.parse>`): every job shares it.
        family: its family.
        data: the dataset.
        protocol: the protocol whose LR is searched (its ``lr`` is replaced).
        settings: the grid, seeds and epochs.
        label: the store's protocol label of these jobs.
        width: model width (``None``: the family's).
        cells: cells per stage (``None``: the family's).
        lrs: the LRs to try (``None``: ``settings.grid()``).
        changes: further protocol changes (:func:`search_protocol`).
    """
    from ..jobs.job import TrainJob  # torch: see the import at the top

    return [(lr, TrainJob(arch, family, data, search_protocol(protocol, lr, settings, **changes), seed, width,
                          cells, label))
            for lr in (settings.grid() if lrs is None else lrs) for seed in settings.seeds]


def losses_from_rows(pairs: Sequence[tuple[float, str]], rows: Sequence[dict[str, Any]],
                     loss: str = "epoch") -> dict[float, list]:
    """Final training loss per grid LR from store rows (``None`` where a run diverged).

    Args:
        pairs: ``(grid LR, job key)`` of the search's jobs, seeds in order.
        rows: the store's job rows (:meth:`~nasrescale.store.sqlite_store.Store.rows`; for ``loss = "tail"``
            with ``train_loss_tail``, :meth:`~nasrescale.store.sqlite_store.Store.rows_with_tail`).
        loss: ``epoch`` (``train_loss_last``) or ``tail`` (``train_loss_tail``).

    Raises:
        DataError: some jobs have no final result (failed or not run), naming how many; a
            finished run has no tail loss (it was trained before nasrescale recorded one).
    """
    column = "train_loss_tail" if loss == "tail" else "train_loss_last"
    by_key = {r["key"]: r for r in rows}
    out: dict[float, list] = {}
    missing = 0
    for lr, key in pairs:
        row = by_key.get(key)
        if row is None or row["status"] not in FINAL:
            missing += 1
            continue
        if row["status"] == Status.DONE and column not in row:
            raise DataError(f"LR search: run {key} has no {column} (stored before nasrescale recorded it); "
                            "set lr_search.loss = \"epoch\" or rerun it in a new results folder")
        value = row.get(column)
        ok = row["status"] == Status.DONE and value is not None and math.isfinite(value)
        out.setdefault(lr, []).append(value if ok else None)
    if missing:
        raise DataError(f"LR search: {missing} of {len(pairs)} runs have no result (failed or not run); "
                        "rerun to retry them (see `nasrescale status`)")
    return out


def rule_lines(sel: Selection, seeds: Sequence[int] | None = None) -> list[str]:
    """What the rule did, in words: the rule that ran, each seed's argmin and how they were
    combined (``argmin``) or the tolerance and the best mean loss (``within_tol``), and the
    chosen LR, saying when it is no grid point. ``seeds``: the seeds' names (default: by position).

    >>> sel = select_lr({0.1: [2.0, 1.2], 0.316228: [1.5, 1.0], 1.0: [1.0, 1.1]})
    >>> print("\\n".join(rule_lines(sel, [0, 1])))
    rule argmin (the paper's): per seed, the LR of the smallest final training loss: seed 0 -> 1, seed 1 -> 0.316228; combined by their geometric mean (the mean in log LR)
    chosen lr = 0.562342: no grid point (the seeds' argmins differ), between the grid's 0.316228 and 1
    """
    names = [f"seed {s}" for s in seeds] if seeds is not None else [f"seed #{i + 1}" for i in range(len(sel.per_seed))]
    if sel.rule == "argmin":
        picks = ", ".join(f"{n} -> {'every run diverged' if lr is None else f'{lr:g}'}" for n, lr in zip(names, sel.per_seed))
        combined = ("the only seed's argmin" if len(sel.per_seed) == 1
                    else "combined by their geometric mean (the mean in log LR)")
        lines = [f"rule argmin (the paper's): per seed, the LR of the smallest final training loss: {picks}; {combined}"]
    else:
        lines = [f"rule within_tol: the largest LR whose mean loss over seeds is within {100 * sel.rel_tol:g}% "
                 f"(relative) of the smallest ({sel.mean_loss[sel.best_lr]:.4f} at lr {sel.best_lr:g}); "
                 "an LR at which any seed diverged loses"]
    if sel.chosen_lr in sel.grid:
        lines.append(f"chosen lr = {sel.chosen_lr:g} (a grid point, marked in the table)")
    else:
        below = max((lr for lr in sel.grid if lr < sel.chosen_lr), default=None)
        above = min((lr for lr in sel.grid if lr > sel.chosen_lr), default=None)
        where = " and ".join(f"{lr:g}" for lr in (below, above) if lr is not None)
        lines.append(f"chosen lr = {sel.chosen_lr:g}: no grid point (the seeds' argmins differ), between the grid's "
                     f"{where}")
    return lines


def search_table(sel: Selection, seeds: Sequence[int] | None = None) -> str:
    """The loss-vs-LR table: one row per LR, mean and per-seed losses; the chosen LR marked
    when it is a grid point, each seed's argmin marked (``argmin``) or the ties (``within_tol``);
    then :func:`rule_lines` and the grid-edge warning."""
    names = [str(s) for s in seeds] if seeds is not None else [f"#{i + 1}" for i in range(len(sel.per_seed))]
    lines = [f"{'lr':>10}  {'mean loss':>10}  per-seed final training loss"]
    for lr in sel.grid:
        mean = sel.mean_loss[lr]
        losses = "  ".join("diverged" if v is None else f"{v:.4f}" for v in sel.losses[lr])
        marks = ["chosen"] if lr == sel.chosen_lr else []
        argmin_of = [n for n, pick in zip(names, sel.per_seed) if pick == lr]
        if argmin_of:
            marks.append(f"argmin of seed{'s' if len(argmin_of) > 1 else ''} {', '.join(argmin_of)}")
        if lr in sel.tied and lr != sel.chosen_lr:
            marks.append("tie")
        if lr == sel.best_lr and lr != sel.chosen_lr:
            marks.append("smallest mean loss")
        mark = f"  <- {'; '.join(marks)}" if marks else ""
        lines.append(f"{lr:>10.4g}  {'diverged' if mean is None else f'{mean:.4f}':>10}  {losses}{mark}")
    lines += rule_lines(sel, seeds)
    if sel.edge_message():
        lines.append("warning: " + sel.edge_message())  # type: ignore[operator]
    return "\n".join(lines)


def selection_json(sel: Selection, seed_ids: Sequence[int] | None = None, **extra: Any) -> dict[str, Any]:
    """The selection as a JSON object (``chosen_lr``, ``rule``, ``seed_argmins``, ``on_grid``,
    ``grid``, ``losses``, ``per_lr``, ...); ``seed_ids`` names the seeds of ``seed_argmins``."""
    names = list(seed_ids) if seed_ids is not None else [f"#{i + 1}" for i in range(len(sel.per_seed))]
    return {"chosen_lr": sel.chosen_lr, "rule": sel.rule, "on_grid": sel.chosen_lr in sel.grid,
            "seed_argmins": [{"seed": n, "lr": lr} for n, lr in zip(names, sel.per_seed)],
            "combined_by": "geometric mean" if sel.rule == "argmin" else None, "rule_text": rule_lines(sel, seed_ids),
            "best_lr": sel.best_lr, "grid": sel.grid,
            "losses": {f"{lr:g}": sel.losses[lr] for lr in sel.grid},
            "per_lr": [{"lr": lr, "mean_loss": sel.mean_loss[lr], "losses": sel.losses[lr],
                        "diverged": lr in sel.diverged, "tied": lr in sel.tied} for lr in sel.grid],
            "diverged": sel.diverged, "tied": sel.tied, "rel_tol": sel.rel_tol, "edge": sel.edge,
            "edge_message": sel.edge_message(), **extra}


def plot_selection(sel: Selection, path: str | Path, title: str = "") -> Path:
    """Write the loss-vs-LR plot (log LR axis; seeds as dots, mean as a line, diverged LRs as x
    at the top, the choice as a dashed line) to ``path`` (PNG)."""
    import matplotlib  # local: matplotlib is slow to import and only plots need it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 4.0), dpi=120)
    finite = [v for lr in sel.grid for v in sel.losses[lr] if v is not None]
    top = max(finite) * 1.05 if finite else 1.0
    for lr in sel.grid:
        vals = [v for v in sel.losses[lr] if v is not None]
        ax.scatter([lr] * len(vals), vals, s=14, color="tab:blue", alpha=0.5, zorder=2)
    ok = [lr for lr in sel.grid if sel.mean_loss[lr] is not None]
    ax.plot(ok, [sel.mean_loss[lr] for lr in ok], "-o", color="tab:blue", ms=4, label="mean over seeds", zorder=3)
    if sel.diverged:
        ax.scatter(sel.diverged, [top] * len(sel.diverged), marker="x", color="tab:red", s=40, label="diverged")
    picks = [(lr, sel.losses[lr][i]) for i, lr in enumerate(sel.per_seed) if lr is not None]
    if picks:
        ax.scatter(*zip(*picks), s=60, marker="v", facecolors="none", edgecolors="tab:orange", zorder=4,
                   label="a seed's argmin")
    how = " (geometric mean of the seeds' argmins)" if sel.rule == "argmin" and len(picks) > 1 else ""
    ax.axvline(sel.chosen_lr, ls="--", color="tab:green", label=f"chosen lr = {sel.chosen_lr:g}{how}")
    ax.set_xscale("log")
    ax.set_xlabel("learning rate")
    ax.set_ylabel("final training loss (nats)")
    ax.set_title(textwrap.fill(title or "base-LR search", 64), fontsize=9)  # long NB201 strings wrap
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path)
    plt.close(fig)
    return path
