"""A landscape cell's grid LRs x seeds train as one fused network (``executor.fuse``): each member's
record equals its independent run under the same job key, one store row per job, extensions
included, and a fused store resumes and reports as an unfused one.

The runs train in float64 (as tests/executors/test_fuse_pipeline.py), where a fused member and its
single run differ only by float reordering: losses agree to ``FLOAT64_REL`` (measured ~1e-16) and
test accuracies exactly.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Iterator

import pytest
import torch

from nasrescale.jobs.grouping import JobGroup, plan_units
from nasrescale.kinds.landscape.plan import landscape_plan
from nasrescale.pipeline.runner import run_pipeline
from nasrescale.pipeline.spec import load_pipeline

from pipeline_helpers import TINY_BUDGET, one_thread, private_cache  # noqa: F401  (fixtures, used by name)

FLOAT64_REL = 1e-9
CELLS = ("3_31_013", "1_21_010")
SEEDS = (0, 1)
# grid 0.1, 0.141, 0.2 (3 points) and at most one extension round of 2 more: 6 members per cell
# first, 4 per extended cell after
LANDSCAPE = f"""
[pipeline]
name = "fuseland"
kind = "landscape"
seeds = [{", ".join(map(str, SEEDS))}]
reference = "nb201:cifar10"
[archs]
select = "list"
names = [{", ".join(f'"{a}"' for a in CELLS)}]
[protocols.flat]
protocol = "nb201"
init = "in_degree_source"
[landscape]
lr_min = 0.1
lr_max = 0.2
points_per_octave = 2
extend = 1
{TINY_BUDGET}"""


@pytest.fixture(scope="module", autouse=True)
def in_float64() -> Iterator[None]:
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


@pytest.fixture(scope="module")
def pipeline_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pipeline") / "fuseland.toml"
    path.write_text(LANDSCAPE)
    return path


def records(run_dir: Path) -> dict[str, tuple[str, dict]]:
    """key -> (status, record) of every stored job."""
    with sqlite3.connect(run_dir / "store.sqlite") as db:
        rows = db.execute("SELECT key, status, record_json FROM jobs").fetchall()
    return {k: (s, json.loads(r)) for k, s, r in rows}


def run(pipeline_file: Path, results: Path, *settings: str) -> dict[str, tuple[str, dict]]:
    torch.set_num_threads(1)
    summary = run_pipeline(load_pipeline(str(pipeline_file), list(settings)), results, progress=False)
    assert summary.failed == 0
    return records(results / "fuseland")


@pytest.fixture(scope="module")
def unfused(pipeline_file: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, dict]]:
    """Every job alone: fusion left at its CPU default (off)."""
    return run(pipeline_file, tmp_path_factory.mktemp("unfused"))


def test_a_cells_grid_and_seeds_plan_as_one_group_per_cell(pipeline_file: Path) -> None:
    pipeline = load_pipeline(str(pipeline_file), ["executor.fuse=true"])
    jobs, _ = landscape_plan(pipeline, pipeline.arch_list())
    units = plan_units(jobs, fuse=pipeline.executor.fuse, device="cpu", max_members=pipeline.executor.max_fused)
    assert all(isinstance(u, JobGroup) for u in units)
    assert [len(u.jobs) for u in units] == [6, 6]  # 3 grid LRs x 2 seeds, one group per cell
    for unit in units:
        assert len({j.arch for j in unit.jobs}) == 1
        assert sorted((j.protocol.lr, j.seed) for j in unit.jobs) == sorted(
            (lr, s) for lr in {j.protocol.lr for j in unit.jobs} for s in SEEDS)
    assert plan_units(jobs, fuse=None, device="cpu") == jobs  # unasked, the CPU trains each job alone


def test_fused_landscape_members_equal_their_independent_runs(pipeline_file: Path, unfused, tmp_path: Path) -> None:
    fused = run(pipeline_file, tmp_path, "executor.fuse=true")
    assert sorted(fused) == sorted(unfused)  # the same jobs under the same keys, extensions included
    assert len(fused) >= len(CELLS) * 3 * len(SEEDS)
    sizes = set()
    for key, (status, rec) in fused.items():
        status0, rec0 = unfused[key]
        assert status == status0 == "done", key
        assert set(rec) == set(rec0)
        assert (rec["key"], rec["lr"], rec["seed"], rec["epochs_run"]) == (key, rec0["lr"], rec0["seed"],
                                                                           rec0["epochs_run"])
        assert rec["test_accuracy"] == rec0["test_accuracy"]
        assert math.isclose(rec["test_loss"], rec0["test_loss"], rel_tol=FLOAT64_REL)
        for a, b in zip(rec["history"], rec0["history"], strict=True):
            assert math.isclose(a["train_loss"], b["train_loss"], rel_tol=FLOAT64_REL), (a, b)
        sizes.add(rec["provenance"]["fused_members"])
        assert "fused_members" not in rec0["provenance"]
    assert 6 in sizes and sizes <= {4, 6}  # a cell's first grid x seeds; an extension round's 2 LRs x seeds
    assert not list((tmp_path / "fuseland" / "checkpoints").glob("fused-*.pt"))  # deleted once stored


def test_a_fused_store_resumes_unfused_with_nothing_to_train(pipeline_file: Path, tmp_path: Path) -> None:
    first = run(pipeline_file, tmp_path, "executor.fuse=true")
    summary = run_pipeline(load_pipeline(str(pipeline_file)), tmp_path, progress=False)  # fusion off: CPU default
    assert summary.failed == 0
    assert records(tmp_path / "fuseland") == first  # every job already stored: nothing retrained
