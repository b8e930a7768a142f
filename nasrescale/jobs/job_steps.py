"""The one job pipeline: seed -> build -> init rule -> LR plan -> train -> record.

:func:`start_run` does the first steps for one job (its record's job fields included) and is
shared by a single run (:func:`run_job`, behind :meth:`nasrescale.jobs.job.TrainJob.run`) and
every member of a fused group (:func:`nasrescale.jobs.fusion.train_jobs_fused`), so a fused
member starts exactly as its single run would.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..data.types import ImageData
from ..scaling.init_rules import InitializedModel, init_model
from ..train import train
from ..train.options import RunOptions
from .record_fields import base_record, discard_unreadable, provenance, resolve_device
from .interfaces import TrainSpec

__all__ = ["start_run", "run_job", "degenerate_metrics"]


def start_run(job: TrainSpec, data: ImageData, options: RunOptions) -> tuple[InitializedModel, dict[str, Any]]:
    """``job``'s network (seeded, built from the job's parsed graph, initialized by its protocol's
    init rule, with its LR plan) and its record's job fields for a run with ``options``.

    Raises:
        ConfigError: the job's base LR is still to be searched (it was planned only to be checked).
    """
    job.protocol.require_lr()  # before anything is built: no job trains at an LR not chosen yet
    run = init_model(job.graph, job.family, data, job.protocol, job.seed, **job.size())
    return run, base_record(job, run.model, run.plan, data, options)


def degenerate_metrics(plan_lr: float, num_classes: int) -> dict[str, Any]:
    """The metrics of a degenerate cell (constant output): chance accuracy, nothing trained."""
    return dict(test_accuracy=100.0 / num_classes, test_loss=None, train_loss_last=None, train_loss_best=None,
                train_accuracy_last=None, epochs_run=0, diverged=False, diverged_epoch=None, images_per_s=None,
                lrs=[plan_lr], history=[], resumed_from=None, finished=True)


def run_job(job: TrainSpec, options: RunOptions) -> dict[str, Any]:
    """Train ``job`` alone and return its record (see :meth:`~nasrescale.jobs.job.TrainJob.run`)."""
    start, options = time.perf_counter(), options.replace(device=resolve_device(options.device))
    data = job.data.load()
    run, record = start_run(job, data, options)
    if record["degenerate"]:  # constant output: chance accuracy, nothing to train
        record.update(degenerate_metrics(run.plan.lr, data.num_classes))
    else:
        path = Path(options.checkpoint) if options.checkpoint is not None else None
        if path is None and options.checkpoint_dir is not None:
            path = job.checkpoint_path(options.checkpoint_dir)
            record["checkpoint_discarded"] = discard_unreadable(path)
        result = train(run.model, data, job.protocol, run.param_groups(), options.replace(checkpoint=path),
                       seed=job.seed, fingerprint=job.key(), identity=job.identity(), optimizer=run.optimizer)
        record.update(result.to_json())
    record["wall_time_s"] = time.perf_counter() - start
    record["provenance"] = provenance(options.device)
    return record
