"""What a job's record holds besides its metrics: the device, provenance, precision, LR fields.

Shared by a single job (:meth:`nasrescale.jobs.job.TrainJob.run`) and a fused group
(:func:`nasrescale.jobs.fusion.train_jobs_fused`), so both record a run alike.
"""

from __future__ import annotations

import platform
import socket
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .. import __version__
from ..data.types import ImageData
from ..errors import ConfigError, DataError
from ..models import count_params
from ..scaling.lr import LrPlan
from ..train.checkpoint import load_checkpoint
from ..train.options import RunOptions
from ..train.precision import trained_precision
from ..scaling.init_rules import has_base_lr
from .interfaces import TrainSpec

__all__ = ["resolve_device", "provenance", "discard_unreadable", "trained_precision", "base_record"]


def resolve_device(name: str) -> str:
    """``auto`` -> ``cuda`` if available else ``cpu``; a CUDA name without CUDA is an error."""
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device {name!r}: CUDA is not available on this machine; use cpu")
    return name


def provenance(device: str) -> dict[str, Any]:
    """Where and with what a result was computed (kept outside the job key)."""
    dev = torch.device(device)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else (platform.processor() or platform.machine())
    return {"nasrescale": __version__, "torch": torch.__version__, "cuda": torch.version.cuda,
            "device": str(device), "device_name": name, "hostname": socket.gethostname(),
            "python": platform.python_version(), "threads": torch.get_num_threads(),
            "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def discard_unreadable(path: Path) -> str | None:
    """Check a job's checkpoint before resuming: a torn or corrupt file is reported (stderr and
    the returned reason, kept in the record), moved aside as ``<name>.corrupt`` and the job
    restarts from epoch 0. Returns ``None`` when the file is absent or sound."""
    try:
        load_checkpoint(path)
        return None
    except DataError as err:
        reason = str(err)
    path.replace(path.with_name(path.name + ".corrupt"))
    print(f"nasrescale: {reason.split('; delete')[0]}; moved aside, restarting the job from epoch 0", file=sys.stderr)
    return reason


def base_record(job: TrainSpec, model: nn.Module, plan: LrPlan, data: ImageData, options: RunOptions) -> dict[str, Any]:
    """A record's job fields and LR derivation for ``job`` with its built, initialized ``model``
    trained with ``options``. ``precision`` is what trains on the options' device
    (:func:`~nasrescale.train.precision.trained_precision`; ``precision_setting`` the
    protocol's); ``base_lr`` is ``None`` where the protocol has none (a fixed LR that no init
    rule scales: ``lr`` is the LR)."""
    size, protocol = job.size(), job.protocol
    return {
        "key": job.key(), "arch": job.arch, "family": job.family.name, "family_digest": job.family.digest(),
        "dataset": job.data.name, "protocol": job.label or protocol.name, "protocol_name": protocol.name,
        "init": protocol.init, "lr_rule": protocol.lr_rule,
        "base_lr": plan.base_lr if has_base_lr(protocol.lr_rule, protocol.init) else None, "lr": plan.lr,
        "lr_scale": plan.lr_scale, "kernel_rule": plan.kernel_rule, "kernel_factor": plan.kernel_factor,
        "degenerate": job.degenerate, "epochs": protocol.epochs, "batch_size": protocol.batch_size,
        "seed": job.seed, "width": size.get("width"), "cells": size.get("cells"), "params": count_params(model),
        "test_split": data.test_split, "test_images": int(data.test_images.shape[0]),
        "train_images": int(data.train_images.shape[0]),
        "precision": trained_precision(protocol.precision, options.device, options.cpu_autocast),
        "precision_setting": protocol.precision}
