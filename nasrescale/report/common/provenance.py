"""Provenance of a stored run (device, torch, CUDA, precision as trained (:func:`~.records.precision_label`),
data copy, the slices that ran it) as facts and Markdown lines, shared by ``report.md`` and the results index."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...ranking.text import fmt
from ...store.read import StoreData
from ...store.stage_records import Visit
from .markdown import md_table
from .records import job_records, precision_label

__all__ = ["provenance", "provenance_lines"]


def _counted(values: list[str]) -> str:
    counts = Counter(v for v in values if v)
    return ", ".join(f"{v} ({n})" if len(counts) > 1 else v for v, n in counts.most_common()) or "-"


def provenance(store: StoreData) -> dict[str, str]:
    """Device, torch, CUDA, precision, the CPU jobs' intra-op threads and the data copy of a store's
    finished jobs (counts when mixed)."""
    records = [r for r in job_records(store, final_only=True) if not r.get("degenerate")]
    prov = [r.get("provenance") or {} for r in records]
    slices = _slices(store)
    copy = next((v.data_copy for v in reversed(slices) if v.data_copy), None)
    where = store.record.data_path
    return {
        "device": _counted([str(p.get("device_name") or p.get("device") or "") for p in prov]),
        "torch": _counted([str(p.get("torch") or "") for p in prov]),
        "CUDA": _counted([str(p.get("cuda") or "") for p in prov if str(p.get("device", "")).startswith("cuda")]),
        "precision": _counted([precision_label(r) for r in records]),
        "CPU threads per job": _counted([str(p.get("threads") or "") for p in prov
                                         if not str(p.get("device", "")).startswith("cuda")]),
        "data": f"{store.record.dataset or '?'}" + (f" from `{where}`" if where else "")
                + (f"; {copy}" if copy else ""),
    }


def provenance_lines(store: StoreData) -> list[str]:
    """The provenance of :func:`provenance` as Markdown lines (for ``report.md``)."""
    facts = provenance(store)
    lines = ["## Provenance", "", *md_table(["", "finished jobs ran with"], [[k, v] for k, v in facts.items()]), ""]
    slices = _slices(store)
    if slices:
        lines += _slice_table(slices) + [""]
    return lines


def _slices(store: StoreData) -> tuple[Visit, ...]:
    """The slices recorded by :func:`~nasrescale.pipeline.slices.run_slice` (meta ``visit:<n>``)."""
    return store.record.visits


def _known(value: Any) -> Any:
    """A visit's value, ``?`` where the slice did not record it."""
    return "?" if value is None else value


def _jobs_run(visit: Visit) -> str:
    """A slice's evaluation jobs, with its LR-search and tuning jobs where it ran some.

    >>> _jobs_run(Visit(jobs_run=0, stage_jobs_run=50)), _jobs_run(Visit(jobs_run=12))
    ('0 (+50 LR-search/tuning)', '12')
    """
    stage = visit.stage_jobs_run
    return f"{_known(visit.jobs_run)}" + (f" (+{stage} LR-search/tuning)" if stage else "")


def _slice_table(slices: tuple[Visit, ...]) -> list[str]:
    rows = [[i + 1, _known(v.finished_at), _known(v.device), _jobs_run(v),
             f"{_known(v.jobs_done)}/{_known(v.jobs_total)}", fmt(v.wall_s, 0), v.stopped or ""]
            for i, v in enumerate(slices)]
    return md_table(["slice", "finished (UTC)", "device", "jobs run", "jobs done/total", "wall (s)", "ended"], rows)
