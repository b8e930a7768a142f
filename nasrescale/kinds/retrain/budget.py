"""The report's budget section: what a run trained with, and what that budget cannot show.

A reader of a 4-epoch toy run must learn on the page that it checks the pipeline, not the
method: :func:`budget_facts` reads the budget from the stored pipeline and the job records
(epochs, width, cells, subset sizes, base LRs, seeds, precision, device), :func:`budget_limits`
says what that budget cannot show next to the benchmark's (200 epochs, full training set, C = 16,
N = 5, several seeds), and :func:`budget_lines` writes both as markdown.

>>> facts = {"epochs": 4, "train_images": 5000, "full_train_images": 50000, "width": 8, "cells": 1,
...          "seeds": [0], "archs": 12}
>>> limits = budget_limits(facts)
>>> len(limits), limits[3]
(5, 'one seed: no seed-noise band, so no tau difference can be told from seed noise')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...scaling.init_rules import has_base_lr
from ...store.read import StoreData
from ...store.record import ProtocolRecord
from ...store.stage_records import SearchSelection
from ...report.common.markdown import md_table
from ...report.common.records import job_records, record_precision
from ...report.common.tuning_section import tunings, tuned_lr_text
from ...report.common.tuning_view import TuningView

__all__ = ["budget_facts", "budget_limits", "budget_lines", "search_lines", "searches", "BENCHMARK_BUDGET"]

#: NAS-Bench-201's own budget: 200 epochs at width 16 with 5 cells per stage
BENCHMARK_BUDGET = {"epochs": 200, "width": 16, "cells": 5}
_FULL_TRAIN = {"cifar10": 50_000, "cifar10-subset": 50_000, "cifar100": 50_000, "imagenet16-120": 151_700}


def _distinct(values: list[Any]) -> list[Any]:
    return list(dict.fromkeys(v for v in values if v is not None))


def searches(store: StoreData) -> dict[str, dict[str, Any]]:
    """Per protocol with ``base_lr = "search"``: ``{chosen_lr, arch, plot, selection}`` (``chosen_lr``
    and the rest ``None`` while the search has not finished; ``selection``: its
    :class:`~nasrescale.store.stage_records.SearchSelection`); ``plot`` is the figure's file name
    when it is in the run folder."""
    out = {}
    for label, protocol in store.record.protocols.items():
        if not protocol.searched:
            continue
        sel = store.record.search_of(label) or SearchSelection()  # one shared search (lr_search.protocol) or its own
        plot = Path(str(sel.plot or f"lr_search_{label}.png")).name
        out[str(label)] = {"chosen_lr": sel.chosen_lr, "arch": sel.arch,
                           "plot": plot if (store.path.parent / plot).is_file() else None, "selection": sel}
    return out


def _lr_text(protocol: ProtocolRecord, found: dict[str, Any] | None = None, tuned: TuningView | None = None) -> str:
    if protocol.tuned:
        return "the LR tuning has not finished" if tuned is None else tuned_lr_text(tuned, protocol.lr_rule)
    if found is not None:
        lr = found["chosen_lr"]
        return "base LR: the LR search has not finished" if lr is None else \
            f"base LR {lr:g}, found by the LR search ({protocol.lr_rule})"
    lr = protocol.lr
    if lr is None:
        return "?"
    if has_base_lr(protocol.lr_rule, protocol.init):
        return f"base LR {lr} ({protocol.lr_rule})"
    return f"LR {lr} (fixed)"


def budget_facts(store: StoreData) -> dict[str, Any]:
    """The run's budget, from its pipeline (what was asked) and records (what ran)."""
    record, records = store.record, job_records(store)
    budget, protocols = record.budget, record.protocols

    def first(key: str) -> list[Any]:
        return _distinct([r.get(key) for r in records])

    dataset = record.dataset
    found, tuned = searches(store), tunings(store)
    labels = list(protocols)
    trained = store.jobs[store.jobs["protocol"].isin(labels)] if labels else store.jobs
    devices = _distinct([f"{(r.get('provenance') or {}).get('device')} "
                         f"({(r.get('provenance') or {}).get('device_name')})" for r in records if r.get("provenance")])
    return {
        "dataset": dataset,
        "epochs": budget.epochs or (first("epochs") or [None])[0],
        "width": budget.width or (first("width") or [None])[0],
        "cells": budget.cells or (first("cells") or [None])[0],
        "train_subset": budget.train_subset, "test_subset": budget.test_subset,
        "resolution": budget.resolution,
        "calibration": record.calibration,
        "train_images": max(first("train_images"), default=budget.train_subset),
        "test_images": max(first("test_images"), default=budget.test_subset),
        "full_train_images": _FULL_TRAIN.get(str(dataset)),
        "lrs": {label: _lr_text(p, found.get(label), tuned.get(label)) for label, p in protocols.items()},
        "seeds": list(record.seeds or sorted(store.jobs["seed"].dropna().unique().tolist())),
        "precision": _distinct([record_precision(r) for r in records]),
        "device": devices,
        "archs": int(trained["arch"].nunique()),  # the LR search's base architecture only if also trained
    }


def budget_limits(facts: dict[str, Any]) -> list[str]:
    """What this budget cannot show, one sentence per shortfall against the benchmark's."""
    out = []
    epochs, full, train = facts.get("epochs"), facts.get("full_train_images"), facts.get("train_images")
    if epochs is not None and epochs < BENCHMARK_BUDGET["epochs"]:
        out.append(f"{epochs} epochs, not the benchmark's {BENCHMARK_BUDGET['epochs']}: accuracies sit far below "
                   "the benchmark's, and a short run ranks cells by how fast they start, not where they end")
    if full and train and train < full:
        out.append(f"{train} training images of {full}: the run learns a different, noisier task")
    width, cells = facts.get("width"), facts.get("cells")
    if (width or 16) < BENCHMARK_BUDGET["width"] or (cells or 5) < BENCHMARK_BUDGET["cells"]:
        out.append(f"width {width} and {cells} cell(s) per stage, not NB201's {BENCHMARK_BUDGET['width']} and "
                   f"{BENCHMARK_BUDGET['cells']}: the networks are not the benchmark's")
    if facts.get("resolution"):
        out.append(f"images box-downsampled to {facts['resolution']} x {facts['resolution']} pixels, not the "
                   "benchmark's 32 x 32: the cells see coarser inputs")
    if len(facts.get("seeds") or []) < 2:
        out.append("one seed: no seed-noise band, so no tau difference can be told from seed noise")
    if (facts.get("archs") or 0) < 100:
        out.append(f"{facts.get('archs')} architectures: the top-K% taus rest on a handful of cells and their "
                   "confidence intervals are wide")
    return out


def search_lines(store: StoreData, found_by_label: dict[str, dict[str, Any]]) -> list[str]:
    """``## Base-LR search``, one paragraph per protocol with ``base_lr = "search"`` (``found_by_label``:
    :func:`searches`): the LR found, the rule and each seed's argmin, the architecture searched and
    its plot (nothing without one)."""
    lines: list[str] = []
    for label, found in found_by_label.items():
        sel: SearchSelection = found["selection"]
        if found["chosen_lr"] is None:
            lines += [f"Protocol {label}: the base-LR search has not finished; no run of {label} has trained yet.", ""]
            continue
        grid = sel.grid
        rule = "; ".join(sel.rule_text) or f"rule {sel.rule or '?'}"
        ranked = bool(((store.jobs["protocol"] == label) & (store.jobs["arch"] == found["arch"])).any())
        tuned = label in store.record.protocols and store.record.protocols[label].tuned
        lines += [f"Protocol **{label}** " + ("anchored its LR tuning at" if tuned else "trained at")
                  + f" base LR **{found['chosen_lr']:g}**, found by the LR search on "
                  f"`{found['arch'] or '?'}`" + ("" if ranked else " (searched only: not one of the architectures "
                                                                   "ranked below)")
                  + f", {len(grid)} LRs from {min(grid, default=0):g} to {max(grid, default=0):g}: {rule}.", ""]
        lines += [f"![LR search of {label}]({found['plot']})", ""] if found["plot"] else []
    return ["## Base-LR search", "", *lines] if lines else []


def budget_lines(facts: dict[str, Any]) -> list[str]:
    """The ``## Budget`` markdown lines of :func:`budget_facts` (with ``limits``: :func:`budget_limits`)."""
    subsets = (f"train {facts['train_images'] if facts['train_images'] is not None else 'all'}, "
               f"test {facts['test_images'] if facts['test_images'] is not None else 'all'} images")
    rows = [["dataset", facts["dataset"] or "?"], ["epochs", facts["epochs"]], ["width (C)", facts["width"]],
            ["cells per stage (N)", facts["cells"]], ["images", subsets],
            ["resolution", f"{facts['resolution']} x {facts['resolution']} px (box-downsampled)"
             if facts["resolution"] else "as stored"],
            ["learning rates", "; ".join(f"{k}: {v}" for k, v in facts["lrs"].items()) or "?"],
            ["seeds", ", ".join(map(str, facts["seeds"])) or "?"],
            ["precision (as trained)", ", ".join(facts["precision"]) or "?"],
            ["device", ", ".join(facts["device"]) or "?"], ["architectures", facts["archs"]]]
    lines = ["## Budget", "", *md_table(["setting", "value"], [[k, "?" if v is None else v] for k, v in rows]), ""]
    limits = facts["limits"]
    if limits:
        lines += ["**What this budget cannot show.** The paper's claims (and NAS-Bench-201's numbers) are at "
                  f"{BENCHMARK_BUDGET['epochs']} epochs on the full training set with several seeds. "
                  + ("How far this budget's ranking stands in for the benchmark's is measured by its calibration "
                     f"(`{facts['calibration']}`, in the claims section above); beyond that it differs:"
                     if facts.get("calibration") else
                     "This run checks that the pipeline works end to end; it says nothing about whether one "
                     "protocol ranks or trains architectures better than another:"), ""]
        lines += [f"- {limit}." for limit in limits] + [""]
    return lines
