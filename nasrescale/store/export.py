"""``nasrescale export``: a run's jobs as one tidy CSV row each (:data:`EXPORT_COLUMNS`; the last,
``train_command``, is the ``nasrescale train`` command that reruns the job: :mod:`nasrescale.store.reproduce`)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from ..fileio import atomic_writer
from ..scaling.init_rules import has_base_lr
from .read import reading
from .reproduce import command_text, not_rerunnable, stored_pipeline, train_command

__all__ = ["EXPORT_COLUMNS", "export_csv"]

EXPORT_COLUMNS = ("arch", "protocol", "seed", "status", "test_accuracy", "test_accuracy_released10", "test_loss",
                  "train_loss_last", "lr", "lr_scale", "base_lr", "epochs", "wall_time_s", "degenerate", "attempts",
                  "width", "cells", "dataset", "test_split", "test_images", "device_name", "key", "error",
                  "train_command")


def export_csv(run_dir: Path, out: str | Path) -> int:
    """Write one tidy row per job (:data:`EXPORT_COLUMNS`) to ``out``; returns the row count."""
    rows = []
    with reading(run_dir) as store:
        pipeline = stored_pipeline(store.get_meta("pipeline"))
        for row in store.rows():
            rec: dict[str, Any] = store.record(row["key"]) or {}
            job = store.job_json(row["key"])
            rows.append({
                **{c: rec.get(c) for c in EXPORT_COLUMNS}, **{c: row[c] for c in row if c in EXPORT_COLUMNS},
                "base_lr": _export_base_lr(rec, job.get("protocol", {})),
                "epochs": row["epochs"] if row["epochs"] is not None else job.get("protocol", {}).get("epochs"),
                "degenerate": None if row["degenerate"] is None else bool(row["degenerate"]),
                "device_name": (rec.get("provenance") or {}).get("device_name"),
                "error": (row["error"] or "").splitlines()[0] if row["error"] else None,
                "train_command": command_text(train_command(job, pipeline))
                if job.get("arch") and not not_rerunnable(job, pipeline) else None,
            })
    with atomic_writer(Path(out), newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(EXPORT_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def _export_base_lr(record: dict[str, Any], protocol: dict[str, Any]) -> float | None:
    """The base LR of a job, ``None`` for a protocol that has none (a fixed LR without μP;
    records stored before that rule still carry the LR there)."""
    if not has_base_lr(record.get("lr_rule", protocol.get("lr_rule")), record.get("init", protocol.get("init"))):
        return None
    return record.get("base_lr", protocol.get("lr"))

