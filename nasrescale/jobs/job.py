"""A training job as one value: :class:`TrainJob` (and the dataset it names, :class:`DataSpec`).

A job is everything that determines one training result -- canonical architecture, cell
family (by content digest), dataset identity (name, test split, subset sizes; not where the
files are), model size, the fully resolved protocol and the seed. :meth:`TrainJob.key` hashes
exactly that, so the result store, the checkpoints and ``nasrescale train`` all agree on what
"the same run" means; :meth:`TrainJob.run` builds, initializes (seeded), derives the param
groups, trains and returns a JSON-ready record with provenance (package and torch versions,
device, host, time) outside the key.

A job holds its architecture parsed (:class:`~nasrescale.space.parsed_arch.ParsedArch`: the
canonical string its key hashes and the graph everything downstream reads); planners parse each
architecture once and hand every job of it the same cell. :meth:`TrainJob.from_arch` parses a
string (or takes a graph) for a caller that has one job to make:

>>> from nasrescale.space.family_loader import get_family
>>> from nasrescale.space.parsed_arch import ParsedArch
>>> from nasrescale.protocol import load_protocol
>>> cell = ParsedArch.parse("3_33_333", get_family("nb201"))
>>> job = TrainJob(cell, get_family("nb201"), DataSpec("cifar10-subset"), load_protocol("nb201"), seed=0)
>>> job.arch.count("nor_conv_3x3"), len(job.key()), job.graph is cell.graph
(6, 16, True)
>>> job.key() == TrainJob.from_arch("3_33_333", job.family, DataSpec("cifar10-subset", path="/elsewhere"),
...                                 job.protocol, 0).key()
True

The job is the one place a protocol's base LR is checked: a job exists only with a resolved LR,
or with one still to be searched (:data:`~nasrescale.protocol.LR_TO_SEARCH`), which is checked
and counted but never keyed nor trained.

>>> TrainJob(cell, job.family, job.data, load_protocol("rescaled"))
Traceback (most recent call last):
...
nasrescale.errors.ConfigError: protocol.lr: protocol 'rescaled' needs a base learning rate: pass --base-lr X (or --set lr=X)
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import networkx as nx

from ..config import to_table
from ..data import load_dataset, subset
from ..data.benchmark_splits import default_test_split
from ..data.datasets import canonical_dataset_name
from ..data.resize import downsample
from ..data.types import ImageData
from ..models import macro_settings
from ..protocol import Protocol
from ..scaling.init_rules import check_rules
from ..space.families import CellFamily
from ..space.parsed_arch import ParsedArch
from ..space.topology import effective_edges, is_degenerate
from . import fusion
from .job_steps import run_job
from ..train.elr_control import require_warmup_layers
from ..train.options import RunOptions
from .record_fields import discard_unreadable, provenance, resolve_device, trained_precision

__all__ = ["DataSpec", "TrainJob", "KEY_VERSION", "resolve_device", "provenance", "discard_unreadable",
           "trained_precision"]

#: bumped when the meaning of a key changes (old stores then simply see new jobs)
KEY_VERSION = 1


@dataclass(frozen=True)
class DataSpec:
    """Which dataset a job trains and tests on.

    Attributes:
        name: dataset name (:func:`nasrescale.data.dataset_names`).
        path: where its files are (``None``: the default data root); not part of the identity.
        test_split: ``full``, ``x-test`` or ``x-valid``; ``None`` is the dataset's default.
        train_subset: train on a class-balanced subset of this many images (``None``: all).
        test_subset: test on a class-balanced subset of this many images (``None``: all).
        resolution: box-downsample every image to this side once at load
            (:func:`nasrescale.data.resize.downsample`; ``None``: the dataset's own size).

    Subsets are drawn with a fixed seed (0), so every seed and protocol of a pipeline sees the
    same images: seed noise then measures init and batch order only, as in the benchmark.
    """

    name: str
    path: str | None = None
    test_split: str | None = None
    train_subset: int | None = None
    test_subset: int | None = None
    resolution: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", canonical_dataset_name(self.name))  # imagenet16_120 -> imagenet16-120

    def identity(self) -> dict[str, Any]:
        """What identifies the data (the test split resolved; the path left out). ``resolution``
        appears only when set, so the keys of jobs at the dataset's own size never change."""
        out = {"name": self.name, "test_split": self.test_split or default_test_split(self.name),
               "train_subset": self.train_subset, "test_subset": self.test_subset}
        return out if self.resolution is None else {**out, "resolution": self.resolution}

    def load(self) -> Any:
        """The :class:`~nasrescale.data.ImageData` (cached per process: jobs share it)."""
        return _load_data(self)


@functools.lru_cache(maxsize=2)
def _load_data(spec: DataSpec) -> ImageData:
    data = load_dataset(spec.name, spec.path, test_split=spec.test_split)
    data = subset(data, spec.train_subset, spec.test_subset, seed=0)
    return data if spec.resolution is None else downsample(data, spec.resolution)


@dataclass(frozen=True)
class TrainJob:
    """One architecture trained under one protocol with one seed.

    The job is the boundary between what a user typed and what trains: it holds its
    architecture parsed (each planner parses a cell once for all its jobs), the protocol's rules
    and base LR are checked once, here, and everything downstream
    (:mod:`nasrescale.jobs.job_steps`, the model builder) reads :attr:`graph` and ``protocol.lr``
    without checking them again.

    Attributes:
        cell: the architecture, parsed (:meth:`ParsedArch.parse <nasrescale.space.parsed_arch.ParsedArch.parse>`): its
            canonical string (:attr:`arch`) and graph (:attr:`graph`).
        family: its cell family (keyed by :meth:`CellFamily.digest`).
        data: the dataset.
        protocol: the resolved protocol (every key counts, precision included); its ``lr`` may
            be :data:`~nasrescale.protocol.LR_TO_SEARCH` in a plan made before the LR search:
            such a job is checked and counted, and refuses to be keyed or trained.
        seed: seeds the init and every draw in training.
        width: model width override (``None``: the family's macro value).
        cells: cells-per-stage override (``None``: the family's macro value).
        label: the pipeline's name for the protocol (``default``, ``rescaled``); not in the key.

    Raises:
        ConfigError: the protocol has no base LR, or an unknown init, LR, kernel or warm-up rule.
    """

    cell: ParsedArch
    family: CellFamily
    data: DataSpec
    protocol: Protocol
    seed: int = 0
    width: int | None = None
    cells: int | None = None
    label: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.cell, ParsedArch):
            raise TypeError(f"TrainJob.cell: expected a ParsedArch, got {type(self.cell).__name__} "
                            "(TrainJob.from_arch parses a string)")
        if not self.protocol.lr_to_search:
            self.protocol.require_lr()  # the one check of the base LR
        check_rules(self.protocol, self.family)  # an unknown init, LR or kernel rule fails here, naming the known ones
        # a warm-up with nothing to warm up
        require_warmup_layers(self.protocol, self.arch, self.family, graph=self.graph)

    @classmethod
    def from_arch(cls, arch: str | nx.DiGraph, family: CellFamily, data: DataSpec, protocol: Protocol,
                  seed: int = 0, width: int | None = None, cells: int | None = None,
                  label: str | None = None) -> TrainJob:
        """The job of ``arch`` (any of the family's encodings, or its canonical graph), parsed here.

        Raises:
            ArchError: the architecture is not one of the family's.
        """
        return cls(ParsedArch.parse(arch, family), family, data, protocol, seed, width, cells, label)

    @property
    def arch(self) -> str:
        """The architecture in the family's canonical string form (what the key and the store hold)."""
        return self.cell.text

    @property
    def graph(self) -> nx.DiGraph:
        """The canonical cell graph (what ``degenerate``, ``cost`` and the model builder read; frozen)."""
        return self.cell.graph

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickle (a process pool's or Ray's worker); a job pickled by an earlier nasrescale,
        which held ``arch`` and ``graph`` apart, comes back with its cell."""
        if "cell" not in state and "arch" in state:
            state = dict(state)
            state["cell"] = ParsedArch(state.pop("arch"), state.pop("graph"))
        self.__dict__.update(state)

    def size(self) -> dict[str, int]:
        """The model's actual size settings (``width``, and ``cells`` where the skeleton has them)."""
        return macro_settings(self.family, self.width, self.cells)

    def identity(self) -> dict[str, Any]:
        """Exactly what determines the result, as a JSON-able dict (the key hashes it).

        Raises:
            ConfigError: the base LR is still to be searched (such a job has no identity yet).
        """
        self.protocol.require_lr()
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
        return is_degenerate(self.graph, self.family)

    def cost(self) -> float:
        """Relative run time: cell work x width^2 x cells x epochs x train images (0 if degenerate)."""
        if self.degenerate:
            return 0.0
        size = self.size()
        images = self.data.train_subset or 50_000  # relative: full sets all count alike
        pixels = (self.data.resolution or 32) ** 2 / 1024  # relative to a 32 x 32 image
        return (_cell_work(self.graph, self.family) * size.get("width", 1) ** 2 * size.get("cells", 1)
                * self.protocol.epochs * images * pixels)

    def fusion_key(self) -> str | None:
        """Jobs of one key may train as one fused network (:mod:`nasrescale.jobs.grouping`);
        ``None``: this job trains alone (degenerate, or an init rule that does not fuse)."""
        return fusion.fusable_key(self)

    @staticmethod
    def run_group(jobs: Sequence[TrainJob], options: RunOptions) -> list[dict[str, Any]]:
        """Train jobs of one :meth:`fusion_key` as one fused network; one record per job
        (:func:`nasrescale.jobs.fusion.train_jobs_fused`)."""
        return fusion.train_jobs_fused(jobs, options)

    def to_json(self) -> dict[str, Any]:
        """The job's defining fields as JSON (stored with it)."""
        return {"arch": self.arch, "family": self.family.name, "family_digest": self.family.digest(),
                "data": dataclasses.asdict(self.data), "protocol": to_table(self.protocol), "seed": self.seed,
                "width": self.width, "cells": self.cells, "label": self.label, "cost": self.cost()}

    def checkpoint_path(self, checkpoint_dir: str | Path) -> Path:
        """This job's checkpoint file in ``checkpoint_dir`` (named by its key)."""
        return Path(checkpoint_dir) / f"{self.key()}.pt"

    def run(self, options: RunOptions | None = None) -> dict[str, Any]:
        """Build, initialize, train and evaluate; return the JSON-ready record
        (:func:`nasrescale.jobs.job_steps.run_job`, the pipeline a fused group's members share).

        ``options`` (:class:`~nasrescale.train.options.RunOptions`; default: on the CPU, no
        checkpoint, quiet): ``device`` may be ``auto``; ``checkpoint_dir`` holds the job's
        checkpoint (``<key>.pt``), ``checkpoint`` names a file instead; ``keep_checkpoint``
        keeps the final one (rerunning then only re-evaluates; the pipeline driver deletes it
        once the result is stored); ``on_epoch`` gets each epoch's history entry.

        Returns:
            The record: job fields, LR derivation, metrics, history and ``provenance``.
            A degenerate cell is not trained: ``test_accuracy`` is chance (100 / classes).
        """
        return run_job(self, options or RunOptions())


def _cell_work(graph: nx.DiGraph, family: CellFamily) -> float:
    """Relative compute of a cell: each live parametric edge counts its kernel area (k x k; 1 for
    linear ops), each live parameter-free edge 0.1, plus 1 for the fixed parts of the network.
    A cheap proxy (no model is built) that orders jobs for longest-first scheduling."""
    work = 1.0
    for _, _, name in effective_edges(graph, family):
        op = family.op(name)
        work += (op.kernel or 1) ** 2 if op.parametric else 0.1
    return work
