"""The retrain report's per-architecture table.

The short names its legends and tables use are :func:`~nasrescale.report.common.names.short_names`,
with the full strings in this table as the key. :func:`arch_rows` and :func:`arch_lines` are that table: per
architecture, each protocol's accuracy per seed, their mean and the learning rate it trained
with, and the reference's accuracy. A cell that computes the same function as another one of the
table (an isomorphic duplicate, left out of every statistic) is marked with the cell kept for its
class.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...ranking.compare import aggregate, isomorphic_duplicates
from ...ranking.sources import Source
from ...ranking.text import fmt
from ...store.job_status import FINAL, Status
from ...store.read import StoreData
from ...report.common.markdown import md_table

__all__ = ["arch_rows", "arch_lines", "FOLD_ROWS"]

#: a per-architecture table longer than this is folded into a <details> block
FOLD_ROWS = 30


def _cell(value: float | None, diverged: bool) -> str:
    return "diverged" if diverged else fmt(value, 2)


def _runs(store: StoreData, label: str) -> pd.DataFrame:
    jobs = store.jobs[(store.jobs["protocol"] == label) & store.jobs["status"].isin(FINAL)]
    return jobs.assign(acc=jobs["test_accuracy"].where(jobs["status"] == Status.DONE))


def arch_rows(store: StoreData, sources: dict[str, Source], names: dict[str, str],
              reference: pd.Series | None = None, family: str | None = None) -> list[dict]:
    """The ``## Per architecture`` rows (for ``report.json``), sorted as the table shows them.

    Args:
        store: the run's store.
        sources: each protocol's source, in report order (the first one sorts the rows, best first).
        names: short name of each architecture (:func:`~nasrescale.report.common.names.short_names`).
        reference: the reference's accuracy per architecture (``None``: no reference).
        family: the cells' family; a row's ``same_as`` names the cell kept for its isomorphism
            class when the statistics drop it (among the cells with a result, the first of the
            class in string order, as :func:`~nasrescale.ranking.compare.compare` keeps), else ``None``.
    """
    labels = list(sources)
    means = {label: aggregate(src)["accuracy"] for label, src in sources.items()}  # what the rankings use
    ranked = sorted(a for a in names if any(a in m.index for m in means.values()))
    twins = isomorphic_duplicates(ranked, family) if isinstance(family, str) else {}
    rows: list[dict] = []
    for arch in names:
        row: dict[str, Any] = {"arch": arch, "short": names[arch], "degenerate": False, "protocols": {},
                               "same_as": twins.get(arch)}
        for label in labels:
            runs = _runs(store, label)
            mine = runs[runs["arch"] == arch]
            row["degenerate"] |= bool(mine["degenerate"].any()) if len(mine) else False
            per_seed = {int(r["seed"]): (None if pd.isna(r["acc"]) else float(r["acc"]), r["status"] == "diverged")
                        for _, r in mine.iterrows()}
            lrs = mine["lr"].dropna()
            row["protocols"][label] = {"seeds": {s: v[0] for s, v in per_seed.items()},
                                       "diverged": [s for s, v in per_seed.items() if v[1]],
                                       "mean": float(means[label][arch]) if arch in means[label].index else None,
                                       "lr": float(lrs.median()) if len(lrs) else None}
        if reference is not None:
            row["reference"] = float(reference[arch]) if arch in reference.index else None
        rows.append(row)
    first = labels[0] if labels else None

    def order(r: dict) -> tuple[bool, float]:
        mean = r["protocols"][first]["mean"] if first else None
        return r["degenerate"], float("inf") if mean is None else -mean

    rows.sort(key=order)
    return rows


def arch_lines(store: StoreData, rows: list[dict], labels: list[str], names: dict[str, str], key: str,
               reference_label: str | None = None) -> list[str]:
    """The ``## Per architecture`` markdown of :func:`arch_rows`; ``key`` says how to read the
    short ``names``; ``reference_label`` names the reference's column (``None``: no column)."""
    seeds = sorted(int(s) for s in store.jobs.loc[store.jobs["protocol"].isin(labels), "seed"].dropna().unique())
    first = labels[0] if labels else None
    reference = reference_label is not None
    numbered = not all(n.replace("_", "").isdigit() for n in names.values())
    head = ["architecture"] + (["full string"] if numbered else [])
    for label in labels:
        head += [f"{label} s{s}" for s in seeds] + [f"{label} mean", f"{label} LR"]
    head += [reference_label] if reference else []
    table = []
    for r in rows:
        twin = r.get("same_as")
        cells = [f"`{r['short']}`" + (" (degenerate)" if r["degenerate"] else "")
                 + (f" (= `{names.get(twin, twin)}`)" if twin else "")]
        cells += [f"`{r['arch']}`"] if numbered else []
        for label in labels:
            p = r["protocols"][label]
            cells += [_cell(p["seeds"].get(s), s in p["diverged"]) for s in seeds]
            cells += [fmt(p["mean"], 2), "-" if p["lr"] is None else f"{p['lr']:.3g}"]
        cells += [fmt(r.get("reference"), 2)] if reference else []
        table.append(cells)
    lines = ["## Per architecture", "",
             "Test accuracy (%) of each architecture under each protocol and seed (sN = seed N; - where the run "
             "has not finished), their mean (the number every ranking uses: a diverged run counts at chance "
             "accuracy) and the learning rate the protocol trained it with"
             + (f"; {reference_label} is the reference's accuracy" if reference else "")
             + f". Sorted by the mean under {first}, best first; degenerate cells (no input-output path, recorded "
               "at chance accuracy without training) last. " + key + _twin_key(rows), ""]
    folded = len(table) > FOLD_ROWS  # a long table folds away (GitHub renders <details>)
    lines += [f"<details><summary>{len(table)} architectures</summary>", ""] if folded else []
    lines += [*md_table(head, table), ""] + (["</details>", ""] if folded else [])
    return lines


def _twin_key(rows: list[dict]) -> str:
    """The sentence on the table's isomorphic duplicates (empty for none)."""
    twins = [r for r in rows if r.get("same_as")]
    if not twins:
        return ""
    return (f" {len(twins)} cell{'s' if len(twins) > 1 else ''} marked (= X) compute{'' if len(twins) > 1 else 's'} "
            "the same function as X (an isomorphic duplicate): the statistics count X for the class and leave the "
            "marked cell out.")
