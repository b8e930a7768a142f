"""A training job as one value: :class:`TrainJob` (and the dataset it names, :class:`DataSpec`).

A job is everything that determines one training result -- canonical architecture, cell
family (by content digest), dataset identity (name, test split, subset sizes; not where the
files are), model size, the fully resolved protocol and the seed. :meth:`TrainJob.key` hashes
exactly that, so the result store, the checkpoints and ``nasrescale train`` all agree on what
"the same run" means; :meth:`TrainJob.run` builds, initializes (seeded), derives the param
groups, trains and returns a JSON-ready record with provenance (package and torch versions,
device, host, time) outside the key.

>>> from nasrescale.space.registry import get_family
>>> from nasrescale.protocol import load_protocol
>>> job = TrainJob("3_33_333", get_family("nb201"), DataSpec("cifar10-subset"), load_protocol("nb201"), seed=0)
>>> job.arch.count("nor_conv_3x3"), len(job.key())
(6, 16)
>>> job.key() == TrainJob(job.arch, job.family, DataSpec("cifar10-subset", path="/elsewhere"), job.protocol, 0).key()
True
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import platform
import socket
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from ..config import to_table
from ..errors import ConfigError
from ..protocol import Protocol, has_base_lr
from ..space.encodings import format_arch, parse_arch
from ..space.families import CellFamily
from ..space.topology import is_degenerate

__all__ = ["DataSpec", "TrainJob", "KEY_VERSION", "resolve_device", "provenance", "discard_unreadable",
           "trained_precision"]

#: bumped when the meaning of a key changes (old stores then simply see new jobs)
KEY_VERSION = 1


def _default_test_split(name: str) -> str:
    """The test split a dataset is evaluated on when none is named (the benchmark's choice)."""
    from ..data.benchmark_splits import default_test_split

    return default_test_split(name)


@dataclass(frozen=True)
class DataSpec:
    """Which dataset a job trains and tests on.

    Attributes:
        name: dataset name (:func:`nasrescale.data.dataset_names`).
        path: where its files are (``None``: the default data root); not part of the identity.
        test_split: ``full``, ``x-test`` or ``x-valid``; ``None`` is the dataset's default.
        train_subset: train on a class-balanced subset of this many images (``None``: all).
        test_subset: test on a class-balanced subset of this many images (``None``: all).

    Subsets are drawn with a fixed seed (0), so every seed and protocol of a pipeline sees the
    same images: seed noise then measures init and batch order only, as in the benchmark.
    """

    name: str
    path: str | None = None
    test_split: str | None = None
    train_subset: int | None = None
    test_subset: int | None = None

    def identity(self) -> dict[str, Any]:
        """What identifies the data (the test split resolved; the path left out)."""
        return {"name": self.name, "test_split": self.test_split or _default_test_split(self.name),
                "train_subset": self.train_subset, "test_subset": self.test_subset}

    def load(self) -> Any:
        """The :class:`~nasrescale.data.ImageData` (cached per process: jobs share it)."""
        return _load_data(self)


@functools.lru_cache(maxsize=2)
def _load_data(spec: DataSpec) -> Any:
    from ..data import load_dataset, subset

    data = load_dataset(spec.name, spec.path, test_split=spec.test_split)
    return subset(data, spec.train_subset, spec.test_subset, seed=0)


def resolve_device(name: str) -> str:
    """``auto`` -> ``cuda`` if available else ``cpu``; a CUDA name without CUDA is an error."""
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device {name!r}: CUDA is not available on this machine; use cpu")
    return name


def provenance(device: str) -> dict[str, Any]:
    """Where and with what a result was computed (kept outside the job key)."""
    import torch

    from .. import __version__

    dev = torch.device(device)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else (platform.processor() or platform.machine())
    return {"nasrescale": __version__, "torch": torch.__version__, "cuda": torch.version.cuda,
            "device": str(device), "device_name": name, "hostname": socket.gethostname(),
            "python": platform.python_version(),
            "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


@dataclass(frozen=True)
class TrainJob:
    """One architecture trained under one protocol with one seed.

    Attributes:
        arch: the architecture, any encoding; stored in the family's canonical string form.
        family: its cell family (keyed by :meth:`CellFamily.digest`).
        data: the dataset.
        protocol: the resolved protocol (every key counts, precision included).
        seed: seeds the init and every draw in training.
        width: model width override (``None``: the family's macro value).
        cells: cells-per-stage override (``None``: the family's macro value).
        label: the pipeline's name for the protocol (``default``, ``rescaled``); not in the key.
    """

    arch: str
    family: CellFamily
    data: DataSpec
    protocol: Protocol
    seed: int = 0
    width: int | None = None
    cells: int | None = None
    label: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "arch", format_arch(parse_arch(self.arch, self.family), self.family))

    def size(self) -> dict[str, int]:
        """The model's actual size settings (``width``, and ``cells`` where the skeleton has them)."""
        from ..models import macro_settings

        return macro_settings(self.family, self.width, self.cells)

    def identity(self) -> dict[str, Any]:
        """Exactly what determines the result, as a JSON-able dict (the key hashes it)."""
        size = self.size()
        return {"v": KEY_VERSION, "arch": self.arch, "family": self.family.name, "family_digest": self.family.digest(),
                "data": self.data.identity(), "width": size.get("width"), "cells": size.get("cells"),
                "protocol": to_table(self.protocol), "seed": self.seed}

    def key(self) -> str:
        """Content hash of :meth:`identity` (16 hex digits)."""
        text = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def degenerate(self) -> bool:
        """The cell has no input->output path (not trained: chance accuracy)."""
        return is_degenerate(parse_arch(self.arch, self.family), self.family)

    def cost(self) -> float:
        """Relative run time: cell work x width^2 x cells x epochs x train images (0 if degenerate)."""
        if self.degenerate:
            return 0.0
        size = self.size()
        images = self.data.train_subset or 50_000  # relative: full sets all count alike
        return (_cell_work(self.arch, self.family) * size.get("width", 1) ** 2 * size.get("cells", 1)
                * self.protocol.epochs * images)

    def to_json(self) -> dict[str, Any]:
        """The job's defining fields as JSON (stored with it)."""
        return {"arch": self.arch, "family": self.family.name, "family_digest": self.family.digest(),
                "data": dataclasses.asdict(self.data), "protocol": to_table(self.protocol), "seed": self.seed,
                "width": self.width, "cells": self.cells, "label": self.label, "cost": self.cost()}

    def checkpoint_path(self, checkpoint_dir: str | Path) -> Path:
        """This job's checkpoint file in ``checkpoint_dir`` (named by its key)."""
        return Path(checkpoint_dir) / f"{self.key()}.pt"

    def base_record(self, model: Any, plan: Any, data: Any, device: str = "cpu") -> dict[str, Any]:
        """The record's job fields and LR derivation for a built, initialized ``model`` (``plan``: its
        ``LrPlan``) trained on ``device``; shared by :meth:`run` and
        :func:`nasrescale.jobs.fusion.train_jobs_fused`. ``precision`` is what trains on ``device``
        (``precision_setting`` the protocol's); ``base_lr`` is ``None`` where the protocol has
        none (a fixed LR without μP: ``lr`` is the LR)."""
        from ..models import count_params

        size = self.size()
        return {
            "key": self.key(), "arch": self.arch, "family": self.family.name, "family_digest": self.family.digest(),
            "dataset": self.data.name, "protocol": self.label or self.protocol.name, "protocol_name": self.protocol.name,
            "init": self.protocol.init, "lr_rule": self.protocol.lr_rule,
            "base_lr": plan.base_lr if has_base_lr(self.protocol.lr_rule, self.protocol.init) else None, "lr": plan.lr,
            "lr_scale": plan.lr_scale, "kernel_rule": plan.kernel_rule, "kernel_factor": plan.kernel_factor,
            "degenerate": self.degenerate, "epochs": self.protocol.epochs, "batch_size": self.protocol.batch_size,
            "seed": self.seed, "width": size.get("width"), "cells": size.get("cells"), "params": count_params(model),
            "test_split": data.test_split, "test_images": int(data.test_images.shape[0]),
            "train_images": int(data.train_images.shape[0]),
            "precision": trained_precision(self.protocol.precision, device),
            "precision_setting": self.protocol.precision}

    def run(self, *, device: str = "cpu", checkpoint_dir: str | Path | None = None, progress: bool = False,
            on_epoch: Callable[[dict[str, Any]], None] | None = None, checkpoint: str | Path | None = None,
            checkpoint_every: int = 1, keep_checkpoint: bool = True, compile: bool = False) -> dict[str, Any]:
        """Build, initialize, train and evaluate; return the JSON-ready record.

        Args:
            device: ``cpu``, ``cuda``, ``cuda:1`` or ``auto``.
            checkpoint_dir: folder of the job's checkpoint (``<key>.pt``); ``None``: none.
            progress: show a tqdm bar over epochs.
            on_epoch: called with each epoch's ``{epoch, train_loss, train_acc, lr}``.
            checkpoint: an explicit checkpoint file (overrides ``checkpoint_dir``).
            checkpoint_every: checkpoint every this many epochs.
            keep_checkpoint: keep the final checkpoint (rerunning then only re-evaluates);
                the pipeline driver deletes it once the result is stored.
            compile: ``torch.compile`` the model.

        Returns:
            The record: job fields, LR derivation, metrics, history and ``provenance``.
            A degenerate cell is not trained: ``test_accuracy`` is chance (100 / classes).
        """
        import torch

        from ..models import build_model
        from ..scaling import apply_init, lr_plan, param_groups
        from ..train import train

        start, device, size = time.perf_counter(), resolve_device(device), self.size()
        self.protocol.require_lr()
        data = self.data.load()
        torch.manual_seed(self.seed)
        model = build_model(self.arch, self.family, data.num_classes, in_shape=data.image_shape, **size)
        optimizer = None
        if self.protocol.init == "mup":  # μP baseline: MuReadout, base shapes, MuSGD (the mup extra)
            from ..scaling.mup_param import mup_parametrize, musgd

            def build(width: int) -> Any:
                return build_model(self.arch, self.family, data.num_classes, in_shape=data.image_shape,
                                   **{**size, "width": width})

            mup_parametrize(model, build, self.protocol.mup_base_width or size["width"])
            optimizer = musgd
        else:
            apply_init(model, self.protocol.init)
        plan = lr_plan(model, self.protocol)
        record = self.base_record(model, plan, data, device)
        if record["degenerate"]:  # constant output: chance accuracy, nothing to train
            record.update(test_accuracy=100.0 / data.num_classes, test_loss=None, train_loss_last=None,
                          train_loss_best=None, train_accuracy_last=None, epochs_run=0, diverged=False,
                          diverged_epoch=None, images_per_s=None, lrs=[plan.lr], history=[], resumed_from=None,
                          finished=True)
        else:
            path = Path(checkpoint) if checkpoint is not None else None
            if path is None and checkpoint_dir is not None:
                path = self.checkpoint_path(checkpoint_dir)
                record["checkpoint_discarded"] = discard_unreadable(path)
            groups = param_groups(model, self.protocol)
            result = train(model, data, self.protocol, groups, device=device, seed=self.seed, checkpoint=path,
                           checkpoint_every=checkpoint_every, compile=compile, progress=progress,
                           fingerprint=self.key(), keep_checkpoint=keep_checkpoint, on_epoch=on_epoch,
                           identity=self.identity(), optimizer=optimizer)
            record.update(result.to_json())
        record["wall_time_s"] = time.perf_counter() - start
        record["provenance"] = provenance(device)
        return record


def trained_precision(setting: str, device: str) -> str:
    """The precision a run of ``setting`` trains in on ``device``: the setting on CUDA, ``fp32``
    elsewhere (bf16 autocast is CUDA-only, :class:`~nasrescale.train.setup.RunSetup`).

    >>> trained_precision("bf16", "cpu"), trained_precision("bf16", "cuda:0"), trained_precision("fp32", "cuda")
    ('fp32', 'bf16', 'fp32')
    """
    return setting if str(device).startswith("cuda") else "fp32"


def discard_unreadable(path: Path) -> str | None:
    """Check a job's checkpoint before resuming: a torn or corrupt file is reported (stderr and
    the returned reason, kept in the record), moved aside as ``<name>.corrupt`` and the job
    restarts from epoch 0. Returns ``None`` when the file is absent or sound."""
    import sys

    from ..errors import DataError
    from ..train.checkpoint import load_checkpoint

    try:
        load_checkpoint(path)
        return None
    except DataError as err:
        reason = str(err)
    path.replace(path.with_name(path.name + ".corrupt"))
    print(f"nasrescale: {reason.split('; delete')[0]}; moved aside, restarting the job from epoch 0", file=sys.stderr)
    return reason


def _cell_work(arch: str, family: CellFamily) -> float:
    """Relative compute of a cell: each live parametric edge counts its kernel area (k x k; 1 for
    linear ops), each live parameter-free edge 0.1, plus 1 for the fixed parts of the network.
    A cheap proxy (no model is built) that orders jobs for longest-first scheduling."""
    from ..space.topology import effective_edges

    work = 1.0
    for _, _, name in effective_edges(parse_arch(arch, family), family):
        op = family.op(name)
        work += (op.kernel or 1) ** 2 if op.parametric else 0.1
    return work
