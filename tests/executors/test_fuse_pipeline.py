"""Executors group fusable jobs (``executor.fuse``): the same results as unfused runs, one store
row per job, one outcome per member, a failing group fails each member and the run goes on."""

from __future__ import annotations

import json
import math
import pickle
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
import torch

import nasrescale.jobs.fusion
from nasrescale.cli.main import main
from nasrescale.executors.base import ExecutorSettings
from nasrescale.jobs.grouping import JobGroup, plan_units
from nasrescale.executors.pool import PoolExecutor
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.pipeline.runner import run_pipeline
from nasrescale.store.sqlite_store import Store

from pipeline_helpers import DEGENERATE, one_thread, private_cache, tiny_pipeline  # noqa: F401  (fixtures, used by name)


# The runs compared here train in float64 (``in_float64``), where fused and unfused losses agree
# to float64 rounding on any CPU; the tolerance FLOAT64_REL is then tight and still far above
# what was measured (~1e-16). The pool executor's spawned workers build in float32 (the default
# dtype is per process), so its test compares with float32 single runs; one epoch of 2 steps
# keeps that comparison non-chaotic (~1e-7 measured, 1e-4 allowed).
FLOAT64_REL = 1e-9

TINY = tiny_pipeline("fusetiny", seeds=[0, 1], archs=[DEGENERATE, "3_11_111", "3_31_013"])


@contextmanager
def default_dtype(dtype: torch.dtype) -> Iterator[None]:
    """Models built inside are ``dtype`` (an init draws other numbers in another dtype)."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


@pytest.fixture(scope="module", autouse=True)
def in_float64() -> Iterator[None]:
    """Every model this module builds in-process is float64 (see above)."""
    with default_dtype(torch.float64):
        yield


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pipeline") / "fusetiny.toml"
    path.write_text(TINY)
    return path


def records(run_dir: Path) -> dict[str, tuple[str, int, dict]]:
    """key -> (status, attempts, record) for every stored job."""
    with sqlite3.connect(run_dir / "store.sqlite") as db:
        rows = db.execute("SELECT key, status, attempts, record_json FROM jobs").fetchall()
    return {k: (s, a, json.loads(r) if r else None) for k, s, a, r in rows}


@pytest.fixture(scope="module")
def unfused(tiny, tmp_path_factory) -> dict[str, tuple[str, int, dict]]:
    """The tiny pipeline on the local executor, fusion left at its CPU default (off)."""
    results = tmp_path_factory.mktemp("unfused")
    torch.set_num_threads(1)
    summary = run_pipeline(load_pipeline(str(tiny)), results, progress=False)
    assert summary.counts["done"] == 12
    assert summary.failed == 0
    return records(results / "fusetiny")


def assert_same_results(fused: dict, unfused: dict) -> None:
    """Every fused job's record equals its unfused run's (float64: losses to FLOAT64_REL)."""
    for key, (status, attempts, rec) in fused.items():
        status0, _, rec0 = unfused[key]
        assert (status, attempts) == (status0, 1), key
        assert set(rec) == set(rec0)  # exactly TrainJob.run's record
        assert (rec["key"], rec["lr"], rec["params"], rec["epochs_run"]) == (key, rec0["lr"], rec0["params"],
                                                                            rec0["epochs_run"])
        assert rec["test_accuracy"] == rec0["test_accuracy"]
        if rec["degenerate"]:
            assert "fused_members" not in rec["provenance"]
            continue
        assert rec["provenance"]["fused_members"] == 4  # 2 seeds x 2 protocols of one cell
        assert math.isclose(rec["test_loss"], rec0["test_loss"], rel_tol=FLOAT64_REL)
        for a, b in zip(rec["history"], rec0["history"], strict=True):
            assert math.isclose(a["train_loss"], b["train_loss"], rel_tol=FLOAT64_REL), (a, b)
            assert a["lr"] == pytest.approx(b["lr"], rel=1e-12)
        assert "fused_members" not in rec0["provenance"]  # the CPU default did not fuse


def test_local_executor_fuses_with_the_same_results_one_row_per_job(tiny, unfused, tmp_path, capsys):
    code = main(["run", str(tiny), "--set", "executor.fuse=true", "--results", str(tmp_path), "--quiet"])
    assert code == 0, capsys.readouterr().err
    fused = records(tmp_path / "fusetiny")
    assert sorted(fused) == sorted(unfused)
    assert len(fused) == 12  # one row per job
    assert_same_results(fused, unfused)
    assert not list((tmp_path / "fusetiny" / "checkpoints").glob("*.pt"))  # groups' checkpoints deleted


def test_pool_executor_fuses_on_two_cpu_slots(tiny, tmp_path):
    settings = ["pipeline.seeds=[0]", f"archs.names=['{DEGENERATE}', '3_31_013']", "pipeline.name=pooltiny"]
    with default_dtype(torch.float32):  # as the spawned workers build
        run_pipeline(load_pipeline(str(tiny), settings), tmp_path / "single", progress=False)
    unfused = records(tmp_path / "single" / "pooltiny")
    pipeline = load_pipeline(str(tiny), ["executor.fuse=true", *settings])
    # kept tiny (each unit is a spawned process): seed 0 x {default, rescaled} of one cell = one
    # group of 2, plus the degenerate cell's 2 jobs alone
    pool = PoolExecutor(pipeline.executor, devices=["cpu", "cpu"], checkpoint_dir=tmp_path / "pooltiny" / "checkpoints",
                        progress=False)
    summary = run_pipeline(pipeline, tmp_path, progress=False, executor=pool)
    assert summary.counts["done"] == 4
    assert summary.failed == 0
    fused = records(tmp_path / "pooltiny")
    for key, (status, attempts, rec) in fused.items():
        status0, _, rec0 = unfused[key]
        assert (status, attempts, set(rec)) == (status0, 1, set(rec0))
        assert abs(rec["test_accuracy"] - rec0["test_accuracy"]) <= 1.0
        if not rec["degenerate"]:
            assert rec["provenance"]["fused_members"] == 2
            assert math.isclose(rec["test_loss"], rec0["test_loss"], rel_tol=1e-4)  # float32 workers
            for a, b in zip(rec["history"], rec0["history"], strict=True):
                assert math.isclose(a["train_loss"], b["train_loss"], rel_tol=1e-4)


def test_a_failing_group_fails_each_member_and_the_run_goes_on(tiny, unfused, tmp_path, capsys, monkeypatch):
    real = nasrescale.jobs.fusion.train_jobs_fused

    def flaky(jobs, options):
        if jobs[0].arch.count("nor_conv_3x3") == 3:  # the group of 3_31_013
            raise RuntimeError("boom: simulated group fault")
        return real(jobs, options)

    monkeypatch.setattr(nasrescale.jobs.fusion, "train_jobs_fused", flaky)
    argv = ["run", str(tiny), "--set", "executor.fuse=true", "--results", str(tmp_path), "--quiet"]
    code = main(argv)
    assert code == 1
    assert "4 job(s) failed" in capsys.readouterr().err
    stored = records(tmp_path / "fusetiny")
    failed = {k for k, (s, _, _) in stored.items() if s == "failed"}
    assert len(stored) == 12
    assert len(failed) == 4
    assert all(unfused[k][2]["arch"].count("nor_conv_3x3") == 3 for k in failed)  # exactly that group's members
    with sqlite3.connect(tmp_path / "fusetiny" / "store.sqlite") as db:
        errors = [e for (e,) in db.execute("SELECT error FROM jobs WHERE status = 'failed'")]
    assert all("RuntimeError: boom: simulated group fault" in e for e in errors)
    monkeypatch.setattr(nasrescale.jobs.fusion, "train_jobs_fused", real)
    assert main(argv) == 0  # the rerun trains only the failed group
    stored = records(tmp_path / "fusetiny")
    assert all(s == "done" for s, _, _ in stored.values())
    assert sorted(a for k, (_, a, _) in stored.items() if k in failed) == [2] * 4
    assert_same_results({k: (s, 1, r) for k, (s, _, r) in stored.items()}, unfused)


def test_plan_units_groups_only_fusable_jobs(tiny):
    pipeline = load_pipeline(str(tiny))
    jobs = pipeline.jobs(pipeline.arch_list())
    assert plan_units(jobs, fuse=None, device="cpu") == jobs  # CPU default: no fusion
    units = plan_units(jobs + jobs[:2], fuse=None, device="cuda:0", max_members=3)  # duplicates dropped
    groups = [u for u in units if isinstance(u, JobGroup)]
    singles = [u for u in units if not isinstance(u, JobGroup)]
    assert [len(g.jobs) for g in groups] == [2, 2, 2, 2]  # 4 per cell, at most 3: 2 + 2
    assert len(singles) == 4
    assert all(j.degenerate for j in singles)  # degenerate jobs never grouped
    assert sorted(k for u in units for k in (u.member_keys() if isinstance(u, JobGroup) else [u.key()])) == \
        sorted(j.key() for j in jobs)
    group = groups[0]
    assert group.cost() == pytest.approx(sum(j.cost() for j in group.jobs))
    assert pickle.loads(pickle.dumps(group)).member_keys() == group.member_keys()
    assert group.key() not in {j.key() for j in jobs}


def test_store_keeps_the_executors_attempt_count(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    store.add_jobs([{"key": k, "arch": "a", "protocol": "default", "seed": 0, "job_json": "{}"} for k in "ab"])
    store.mark_running("a")
    store.mark_running("b")
    store.mark_running("b")
    store.finish("a", "done", {"history": []}, attempts=3)  # Ray retried twice unseen by the driver
    store.finish("b", "done", {"history": []}, attempts=1)
    assert {r["key"]: r["attempts"] for r in store.rows()} == {"a": 3, "b": 2}
    store.close()


def test_executor_settings_max_fused_is_checked():
    from nasrescale.errors import ConfigError

    with pytest.raises(ConfigError, match="executor.max_fused"):
        ExecutorSettings(max_fused=0)
