"""The job records of a store as the reports read them, and the one rule for the precision a
record trained in (:func:`record_precision`), shared by the budget and provenance sections, and
the cores one run held (:func:`cpus_per_run`), shared by the calibration and trend reports.

>>> record_precision({"precision": "bf16", "provenance": {"device": "cpu"}})  # before precision_setting
'fp32'
>>> record_precision({"precision": "bf16", "precision_setting": "bf16", "provenance": {"device": "cuda:0"}})
'bf16'
>>> precision_label({"precision": "fp32", "precision_setting": "bf16", "provenance": {"device": "cpu"}})
'fp32 (CPU)'

A run's per-epoch history (the ELRs the reports read) is read once, typed (:func:`epoch_history`):

>>> epoch_history('{"history": [{"lr": 0.5, "elr": [0.2, 0.0], "elr_spread": 1.5}, {"loss": 2.3}]}')
(EpochEntry(lr=0.5, elr=(0.2, 0.0), elr_spread=1.5), EpochEntry(lr=None, elr=(), elr_spread=None))
>>> epoch_history("not json"), epoch_history(None)
((), ())
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import pandas as pd

from ...jobs.job import trained_precision
from ...store.job_status import FINAL
from ...store.read import StoreData

__all__ = ["job_records", "record_precision", "precision_label", "cpus_per_run", "EpochEntry", "epoch_history"]


def _parsed(texts: Iterable[Any]) -> list[dict[str, Any]]:
    out = []
    for text in texts:
        try:
            rec = json.loads(text)
        except (TypeError, json.JSONDecodeError):
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def job_records(store: StoreData, *, final_only: bool = False) -> list[dict[str, Any]]:
    """The records of the store's jobs that parse (``final_only``: of finished jobs only)."""
    jobs = store.jobs
    if "record_json" not in jobs:
        return []
    if final_only:
        jobs = jobs[jobs["status"].isin(FINAL)]
    return _parsed(jobs.get("record_json", pd.Series(dtype=object)).dropna())


def _device(record: dict[str, Any]) -> str:
    return str((record.get("provenance") or {}).get("device", "cpu"))


def record_precision(record: dict[str, Any]) -> str | None:
    """The precision a record's run trained in (``None`` when it says none): the stored one, which
    is what trained since records carry ``precision_setting``; before that ``precision`` held the
    setting, and what trained follows from the device
    (:func:`~nasrescale.train.precision.trained_precision`)."""
    if record.get("precision") is None:
        return None
    if "precision_setting" in record:
        return str(record["precision"])
    return trained_precision(str(record["precision"]), _device(record))


def precision_label(record: dict[str, Any]) -> str:
    """:func:`record_precision` with the device class where it is not a GPU (``fp32 (CPU)``)."""
    precision = record_precision(record) or "?"
    return precision if _device(record).startswith("cuda") else f"{precision} (CPU)"


def cpus_per_run(store: StoreData) -> float:
    """CPU cores one run held: the executor's ``cpus_per_job`` under Ray, else the recorded threads."""
    executor = store.record.executor
    if executor.kind == "ray":
        return float(executor.cpus_per_job)
    threads = [json.loads(r).get("provenance", {}).get("threads") for r in store.jobs.get("record_json", []) if isinstance(r, str)]
    threads = [t for t in threads if t]
    return float(np.median(threads)) if threads else float("nan")


@dataclass(frozen=True)
class EpochEntry:
    """One epoch of a run's recorded history, as the reports read it.

    Attributes:
        lr: the epoch's scheduled LR (``None``: not recorded).
        elr: per layer ``|grad W| / |W|`` at the epoch's last mini-batch (empty: not recorded).
        elr_spread: the spread of those ELRs across layers (``None``: not recorded).
    """

    lr: float | None
    elr: tuple[float, ...]
    elr_spread: float | None


def _number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) else None


def epoch_history(record_json: Any) -> tuple[EpochEntry, ...]:
    """The per-epoch history of a job's stored record (``record_json``); empty where the record
    holds none or does not parse (a run that failed, a degenerate cell)."""
    try:
        history = json.loads(record_json).get("history") or []
    except (TypeError, ValueError, AttributeError):
        return ()
    return tuple(EpochEntry(lr=_number(h.get("lr")), elr=tuple(h["elr"]) if isinstance(h.get("elr"), list) else (),
                            elr_spread=_number(h.get("elr_spread")))
                 for h in history if isinstance(h, dict))
