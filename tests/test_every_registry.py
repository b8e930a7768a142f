"""Every registry of the package, listed once, and every entry of each one exercised.

Each executor kind constructs, each selection method selects, each pipeline kind plans a tiny
pipeline, each init rule starts a tiny network that takes an SGD step, each op kind and model
builder builds an edge module (a weightless one maps zeros to zeros), each macro skeleton and
each cell family builds a network that runs, each dataset loads or names what is missing.

A registry added to the package must be added to :data:`REGISTRIES`
(``test_every_registry_is_listed`` fails until it is); an entry added to a listed registry is
exercised by its registry's check (a pipeline kind that needs more than the tiny retrain
pipeline with its ``kind`` changed adds its own to ``_TINY_OF_KIND``).
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
import torch
from PIL import Image

import nasrescale
from nasrescale.registry import Registry
from nasrescale.data.datasets import DATASETS, load_dataset
from nasrescale.errors import ArchError, DataError
from nasrescale.executors.base import ExecutorSettings
from nasrescale.executors.executor_registry import EXECUTORS, get_executor
from nasrescale.jobs.job import DataSpec, TrainJob
from nasrescale.models.builders import BUILDERS, build_op
from nasrescale.models.network import MACROS, build_model
from nasrescale.models.norms import NORMS, with_norm
from nasrescale.pipeline.kind_registry import KINDS
from nasrescale.report.kind_reports import REPORTS
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.pipeline.tables import ArchSettings
from nasrescale.protocol import SCHEDULES, cosine_factor, load_protocol
from nasrescale.scaling.lr_rules import LR_RULES
from nasrescale.scaling.init_rules import INIT_REGISTRY, init_model
from nasrescale.space.edge_factors import KERNEL_RULES
from nasrescale.space.encodings import format_arch, make_graph, parse_arch
from nasrescale.space.families import CellFamily
from nasrescale.space.ops import OP_KINDS, CellOp, OpKind
from nasrescale.space.family_loader import load_families
from nasrescale.space.codecs import ENCODERS
from nasrescale.space.selection import METHODS, select_archs
from nasrescale.space.structure import STRUCTURES
from nasrescale.train.elr_control import WARMUP_RULES

from cellspace_helpers import arch_ops, uniform_arch
from pipeline_helpers import TINY, one_thread, private_cache  # noqa: F401  (autouse fixtures)

FAMILIES = load_families()  # the shipped cell families, a registry built from their files
IMAGE = (3, 8, 8)


class _Data:
    """What a network needs of a dataset: classes and image shape."""

    num_classes, image_shape = 10, IMAGE


def _size(family: CellFamily) -> dict[str, int]:
    cells = 3 if family.macro["kind"] == "darts" else 1  # a DARTS network needs 3 cells for a normal one
    return {"width": 4, **({"cells": cells} if "cells" in MACROS.get(family.macro["kind"]).keys else {})}


def _runs(model: torch.nn.Module) -> None:
    out = model(torch.randn(2, *IMAGE))
    assert out.shape == (2, _Data.num_classes)
    assert torch.isfinite(out).all()


# -- the check of one entry, per registry -------------------------------------------------------
def _executor(name: str, tmp_path: Path) -> None:
    requires = EXECUTORS.get(name).requires
    if requires:
        pytest.importorskip(requires)
    executor = get_executor(ExecutorSettings(kind=name, device="cpu"), checkpoint_dir=tmp_path, progress=False)
    assert callable(executor.run)


def _selection(name: str, tmp_path: Path) -> None:
    nb201 = FAMILIES.get("nb201")
    cells = ["3_33_333", "1_01_001"]
    (tmp_path / "archs.txt").write_text("\n".join(cells) + "\n")
    settings = ArchSettings(select=name, count=3, seed=0, names=tuple(cells), file="archs.txt")
    archs = select_archs(settings, nb201, "cifar10", tmp_path)
    assert archs
    assert all(format_arch(parse_arch(a, nb201), nb201) == a for a in archs)  # canonical cells


#: the tiny pipeline of a kind that needs more than the retrain one with its ``kind`` changed
_TINY_OF_KIND = {
    "calibration": TINY.replace('[protocols.rescaled]\nprotocol = "rescaled"\nbase_lr = 0.3\n', "")
    + "[budgets.small]\nepochs = 1\n",  # one protocol, one candidate budget
    "landscape": TINY.replace('[protocols.rescaled]\nprotocol = "rescaled"\nbase_lr = 0.3\n', "")
    + "[landscape]\nlr_min = 0.1\nlr_max = 0.4\n",  # one protocol, a 5-point grid
}


def _pipeline_kind(name: str, tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(_TINY_OF_KIND.get(name, TINY))
    pipeline = load_pipeline(path, {"pipeline.kind": name})
    archs = pipeline.arch_list()
    jobs = pipeline.jobs(archs)
    assert jobs
    assert all(isinstance(job, TrainJob) for job in jobs)
    assert pipeline.resolved(archs)["pipeline"]["name"] == "tiny"
    assert REPORTS.get(name).name == name  # the kind's runs have a report


def _kind_report(name: str, tmp_path: Path) -> None:
    """A report belongs to a pipeline kind, and reads the stores that kind writes."""
    assert KINDS.get(name).name == name


def _init_rule(name: str, tmp_path: Path) -> None:
    family = FAMILIES.get("nb201")
    run = init_model("3_33_333", family, _Data(), load_protocol("nb201", {"init": name, "lr": 0.1}), 0,
                     **_size(family))
    optimizer = (run.optimizer or torch.optim.SGD)(run.param_groups(), lr=0.1)
    before = [p.detach().clone() for p in run.model.parameters()]
    _runs(run.model)
    run.model(torch.randn(2, *IMAGE)).logsumexp(1).mean().backward()
    optimizer.step()
    assert any(not torch.equal(a, b) for a, b in zip(before, run.model.parameters()))


def _lr_rule(name: str, tmp_path: Path) -> None:
    """A protocol naming the rule starts a tiny network at a positive LR; a rule that scales
    gives a cell its own scale, one that does not trains at the protocol's LR."""
    family = FAMILIES.get("nb201")
    run = init_model("3_13_011", family, _Data(), load_protocol("nb201", {"lr_rule": name, "lr": 0.1}), 0,
                     **_size(family))
    groups = run.param_groups()
    assert run.plan.lr > 0 and all(g["lr"] > 0 for g in groups)
    assert (run.plan.lr_scale is not None) == LR_RULES.get(name).scales
    if not LR_RULES.get(name).scales:
        assert [g["lr"] for g in groups] == [0.1]


def _kernel_rule(name: str, tmp_path: Path) -> None:
    """Under a scaling LR rule the kernel rule gives every parameter a positive factor; a rule
    that does not scale gives 1 to all."""
    family = FAMILIES.get("nb201")
    run = init_model("2_22_222", family, _Data(), load_protocol("rescaled", {"kernel_rule": name, "lr": 0.1}), 0,
                     **_size(family))
    assert run.plan.kernel_rule == name
    factors = {g["kernel_factor"] for g in run.param_groups()} | {run.plan.kernel_factor}
    assert all(0 < f < float("inf") for f in factors)
    assert (factors != {1.0}) == KERNEL_RULES.get(name).scales  # 1x1 convs: q_base / q = 3


def _schedule(name: str, tmp_path: Path) -> None:
    """The schedule starts at the full LR and stays within (0, 1] over the epochs."""
    protocol = load_protocol("nb201", {"schedule": name, "epochs": 5})
    factors = [cosine_factor(e, protocol) for e in range(protocol.epochs)]
    assert factors[0] == 1.0 and all(0 < f <= 1 for f in factors)


def _warmup_rule(name: str, tmp_path: Path) -> None:
    """A job with the rule is made, and the rule's control warms a network's layers up."""
    family = FAMILIES.get("nb201")
    protocol = load_protocol("nb201", {"warmup_rule": name})
    TrainJob.from_arch("3_33_333", family, DataSpec("cifar10-subset"), protocol)
    net = build_model("3_33_333", family, _Data.num_classes, in_shape=IMAGE, **_size(family))
    assert WARMUP_RULES.get(name)(net, 1, protocol, torch.device("cpu")).configured


def _edge(kind: OpKind) -> None:
    """Build an edge of ``kind``: weights exactly when it is parametric; zeros in, zeros out
    when it is not (the pruned cell relies on that)."""
    module = build_op(CellOp(kind.name, kind, 3 if kind.needs_kernel else None), 4)
    assert any(p.numel() for p in module.parameters()) == kind.parametric
    if not kind.parametric:
        assert torch.equal(module(torch.zeros(2, 4, 6, 6)), torch.zeros(2, 4, 6, 6))


def _op_kind(name: str, tmp_path: Path) -> None:
    kind = OP_KINDS.get(name)
    assert any(op.kind == kind for family in FAMILIES.values() for op in family.ops), \
        f"no shipped family uses op kind {name!r}, so no family check runs it"
    if kind.zero:
        with pytest.raises(ArchError):
            build_op(CellOp(name, kind), 4)
    else:
        _edge(kind)


def _builder(name: str, tmp_path: Path) -> None:
    kind = OP_KINDS.get(name)  # a builder serves a registered op kind
    assert not kind.zero
    _edge(kind)


def _macro(name: str, tmp_path: Path) -> None:
    users = [f.name for f in FAMILIES.values() if f.macro.get("kind") == name]
    assert users, f"no shipped family uses macro kind {name!r}"
    _family(users[0], tmp_path)


def _norm(name: str, tmp_path: Path) -> None:
    """Every shipped family's networks build and run under the normalization."""
    for family in FAMILIES.values():
        model = build_model(family.base, with_norm(family, name), _Data.num_classes, in_shape=IMAGE, **_size(family))
        _runs(model)


def _uniform_archs(family: CellFamily) -> list[str]:
    """For each op an architecture may name, the architecture with that op everywhere."""
    return [uniform_arch(family, op) for op in arch_ops(family)]


def _family(name: str, tmp_path: Path) -> None:
    """The base network, and for each non-zero op the network with that op everywhere."""
    family = FAMILIES.get(name)
    archs = [family.base] + _uniform_archs(family)
    for arch in archs:
        _runs(build_model(arch, family, _Data.num_classes, in_shape=IMAGE, **_size(family)))


def _dataset(name: str, tmp_path: Path) -> None:
    """Given a folder of a few images (an ``imagefolder`` layout, no benchmark files), each
    dataset loads, or fails naming the folder it looked in."""
    root = tmp_path / "images"
    for split, count in (("train", 2), ("test", 1)):
        for label in ("a", "b"):
            (root / split / label).mkdir(parents=True)
            for i in range(count):
                Image.fromarray(np.full((4, 4, 3), 40 * i + (label == "b") * 100, np.uint8)).save(
                    root / split / label / f"{i}.png")
    try:
        data = load_dataset(name, root, cache_dir=tmp_path / "cache")
    except DataError as err:
        assert str(root) in str(err), f"{name}: the error does not name the folder it looked in: {err}"
    else:
        assert data.num_classes > 0
        assert len(data.train_images) == len(data.train_labels) > 0


def _structure(name: str, tmp_path: Path) -> None:
    """A shipped family uses the structure, and its networks build and run."""
    users = [f.name for f in FAMILIES.values() if f.structure.name == name]
    assert users, f"no shipped family uses cell structure {name!r}"
    _family(users[0], tmp_path)


def _encoding(name: str, tmp_path: Path) -> None:
    """A shipped family writes its cells in the encoding, and every uniform cell round-trips."""
    users = [f for f in FAMILIES.values() if f.encoding == name]
    assert users, f"no shipped family uses encoding {name!r}"
    family = users[0]
    for arch in [family.base] + _uniform_archs(family):
        text = format_arch(parse_arch(arch, family), family)
        assert format_arch(parse_arch(text, family), family) == text


#: every registry of the package, with the check that exercises one of its entries
REGISTRIES: dict[str, tuple[Registry, Callable[[str, Path], None]]] = {
    "executors": (EXECUTORS, _executor),
    "selection methods": (METHODS, _selection),
    "pipeline kinds": (KINDS, _pipeline_kind),
    "kind reports": (REPORTS, _kind_report),
    "init rules": (INIT_REGISTRY, _init_rule),
    "LR rules": (LR_RULES, _lr_rule),
    "kernel rules": (KERNEL_RULES, _kernel_rule),
    "schedules": (SCHEDULES, _schedule),
    "warm-up rules": (WARMUP_RULES, _warmup_rule),
    "op kinds": (OP_KINDS, _op_kind),
    "model builders": (BUILDERS, _builder),
    "macro kinds": (MACROS, _macro),
    "normalizations": (NORMS, _norm),
    "cell families": (FAMILIES, _family),
    "datasets": (DATASETS, _dataset),
    "cell structures": (STRUCTURES, _structure),
    "encodings": (ENCODERS, _encoding),
}

ENTRIES = [(label, name) for label, (registry, _) in REGISTRIES.items() for name in registry]


@pytest.mark.parametrize(("label", "name"), ENTRIES, ids=[f"{label}:{name}" for label, name in ENTRIES])
def test_every_entry_of_every_registry_works(label: str, name: str, tmp_path: Path) -> None:
    REGISTRIES[label][1](name, tmp_path)


def test_every_registry_is_listed() -> None:
    listed = {id(registry) for registry, _ in REGISTRIES.values()}
    unlisted = []
    for info in pkgutil.walk_packages(nasrescale.__path__, "nasrescale."):
        if info.name.endswith("__main__"):
            continue  # running it is the command line
        module = importlib.import_module(info.name)
        unlisted += [f"{info.name}.{attr}" for attr, value in vars(module).items()
                     if isinstance(value, Registry) and id(value) not in listed]
    assert not unlisted, f"registries missing from REGISTRIES: {sorted(set(unlisted))}"
