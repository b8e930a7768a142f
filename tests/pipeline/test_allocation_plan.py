"""The plan of a GPU loan (tools/gpu_allocation/plan.py, committed.py) and its dry run,
``tools/gpu_allocation.sh plan``, on the CPU: measuring capped, steps committed for the same GPU kind
and code skipped, the science slice sized from the committed speed; and the default science's
pipeline file. The science's precision by the parity verdict: test_allocation_precision.py."""

from __future__ import annotations

import doctest
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nasrescale.pipeline.spec import load_pipeline

from tool_helpers import TOOLS

ROOT = Path(__file__).resolve().parents[2]
if str(TOOLS) not in sys.path:  # the package as tools/gpu_allocation.sh imports it: by name, from tools/
    sys.path.insert(0, str(TOOLS))
from gpu_allocation import cli, committed as committed_tool, plan as plan_tool, runner  # noqa: E402
CODE = "c0de" * 4
BENCH_ROWS = [{"label": "(a) reference loop", "model_ips": 50_000.0},  # not the engine: never the science's speed
              {"label": "(b) engine, 1 run fp32", "model_ips": 9_000.0},
              {"label": "(c) fused K=12 fp32", "model_ips": 12_000.0},
              {"label": "(c) fused K=12 bf16", "model_ips": 40_000.0},
              {"label": "(c) fused K=24 fp32", "model_ips": 30_000.0}]  # more members than a cell has


def committed(alloc: Path, name: str, *, kind: str = "H200", code: str = CODE, steps: dict[str, str],
              dry_run: bool = False, reeval: dict | None = None, pipeline: str = "land") -> Path:
    """A folder as ``collect`` leaves it: allocation.json (with its plan) and the steps' files."""
    folder = alloc / name
    folder.mkdir(parents=True)
    record = {"dry_run": dry_run, "steps": [{"step": s, "status": st} for s, st in steps.items()],
              "plan": {"gpu_kind": kind, "code": code, "pipeline": pipeline}, "reeval": reeval}
    (folder / "allocation.json").write_text(json.dumps(record))
    for step in steps:
        if step in committed_tool.OUTPUT:
            (folder / committed_tool.OUTPUT[step]).write_text("{}")
    if "bench" in steps:
        (folder / "bench.json").write_text(json.dumps({"device": f"NVIDIA {kind}", "rows": BENCH_ROWS}))
    return folder


def plan_for(alloc: Path, kind: str = "H200", code: str = CODE, budget: float = 540.0):  # noqa: ANN201
    return plan_tool.make_plan(kind=kind, code=code, alloc_dir=alloc, budget_s=budget, pipeline="land",
                               precision="fp32", job_images=150_000.0, jobs_per_cell=12, cells_left=16)


def test_the_module_examples_hold() -> None:
    assert doctest.testmod(committed_tool).failed == 0


def test_committed_steps_match_the_gpu_kind_and_the_code(tmp_path: Path) -> None:
    committed(tmp_path, "20270101T000000Z", steps={"env": "ok", "bench": "ok", "modes": "ok", "parity": "exit 1"})
    committed(tmp_path, "20270102T000000Z", steps={"parity": "ok"}, dry_run=True)  # a rehearsal never counts
    committed(tmp_path, "20270103T000000Z", steps={"parity": "ok"}, kind="H100")
    assert committed_tool.committed_steps(tmp_path, "H200", CODE) == {"bench": "20270101T000000Z",
                                                                 "modes": "20270101T000000Z"}
    assert committed_tool.committed_steps(tmp_path, "H200", "another code") == {}
    assert committed_tool.committed_steps(tmp_path, "H100", CODE) == {"parity": "20270103T000000Z"}


def test_nothing_committed_measures_bench_and_modes_within_the_cap_and_leaves_parity(tmp_path: Path) -> None:
    plan = plan_for(tmp_path)
    assert [s for s, _ in plan.steps] == ["env", "bench", "modes", "reeval"]
    assert plan.deferred == ["parity"] and plan.skipped == {}
    measuring = sum(sec for s, sec in plan.steps if s in ("bench", "parity", "modes"))
    assert measuring <= plan_tool.OVERHEAD_CAP_S
    assert sum(sec for _, sec in plan.steps) == 540.0
    assert plan.speed is None and plan.cells_per_loan is None  # no speed committed: nothing to size by
    assert "no committed speed" in plan_tool.format_plan(plan)


def test_committed_bench_and_modes_are_skipped_and_the_science_sized_from_the_bench(tmp_path: Path) -> None:
    committed(tmp_path, "20270101T000000Z", steps={"env": "ok", "bench": "ok", "modes": "ok"})
    plan = plan_for(tmp_path)
    assert plan.steps == [("env", 45.0), ("parity", 180.0), ("reeval", 315.0)]
    assert set(plan.skipped) == {"bench", "modes"}
    job_s = 150_000 / 12_000 * committed_tool.EVAL_OVERHEAD  # the best fused fp32 row with at most 12 members
    assert plan.speed.job_s == pytest.approx(job_s, rel=1e-12)
    assert plan.cells_per_loan == int((315.0 - plan_tool.SCIENCE_MARGIN_S) // (12 * job_s)) == 1
    assert plan.loans_left == 16
    assert plan.cells_per_bare_loan == int((540.0 - 45.0 - plan_tool.SCIENCE_MARGIN_S) // (12 * job_s)) == 2
    text = plan_tool.format_plan(plan)
    assert "parity    3.0 min" in text and "bench   skipped: committed in 20270101T000000Z" in text
    assert "1 cell(s) this loan; 16 cell(s) left: 16 loan(s) like this one" in text
    everything = committed(tmp_path, "20270104T000000Z", steps={"parity": "ok"})
    assert [s for s, _ in plan_for(tmp_path).steps] == ["env", "reeval"]
    assert everything.name in plan_tool.format_plan(plan_for(tmp_path))


def test_a_committed_slice_of_the_pipeline_wins_and_another_kinds_bench_is_named(tmp_path: Path) -> None:
    committed(tmp_path, "20270101T000000Z", steps={"bench": "ok"})
    assert "measured on an H200, not an H100" in plan_for(tmp_path, kind="H100").speed.source
    committed(tmp_path, "20270105T000000Z", steps={"reeval": "ok"}, reeval={"device": "cuda (NVIDIA H200)", "job_s": 20.0})
    assert plan_for(tmp_path).speed.job_s == 20.0
    assert plan_for(tmp_path, kind="H100").speed.job_s != 20.0  # a slice on another kind does not size this one


def test_a_planned_run_shares_the_budget_as_planned(tmp_path: Path) -> None:
    plan = plan_for(tmp_path, budget=540.0)
    want, args = plan.wants(), cli.parse_args(["all"])
    start = time.monotonic() + 540.0
    assert round(runner.share(args, start, "env", ["bench", "modes", "reeval"], want)) == 45
    assert round(runner.share(args, start - 45.0, "bench", ["modes", "reeval"], want)) == 90
    assert round(runner.share(args, start - 135.0, "modes", ["reeval"], want)) == 90


def test_the_dry_run_prints_the_plan_on_the_cpu(tmp_path: Path) -> None:
    alloc = tmp_path / "gpu_allocations"
    committed(alloc, "20270101T000000Z", steps={"bench": "ok"}, code=committed_tool.code_digest(ROOT))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run([str(ROOT / "tools" / "gpu_allocation.sh"), "plan", "--results", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "plan of a 9.0-minute loan on an H200" in out  # the newest committed kind, without a GPU here
    assert "bench   skipped: committed in 20270101T000000Z" in out
    assert "parity    3.0 min" in out and "modes   next loan" in out  # the verdict first, modes wait
    assert "science: landscape_nb201_full_gpu:" in out and "16 cell(s) left" in out


def test_the_default_science_is_the_stage_3_landscape_at_full_size() -> None:
    full, cpu = load_pipeline("landscape_nb201_full_gpu"), load_pipeline("landscape_nb201_24ep_cpu")
    assert full.arch_list() == cpu.arch_list() and len(full.arch_list()) == 16
    assert full.table("landscape").centers == cpu.table("landscape").centers
    assert (full.budget.width, full.budget.cells, full.budget.resolution) == (16, 5, None)  # 32 px, CIFAR-10's own
    assert full.data.name == "cifar10" and full.data.test_split == "full"
    jobs = full.jobs(full.arch_list())
    assert len(jobs) == 16 * 6 * 2 and jobs[0].protocol.precision == "fp32"
    assert cli.parse_args(["all"]).pipeline == "pipelines/landscape_nb201_full_gpu.toml"


def test_all_on_a_gpu_follows_the_plan_and_records_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``all`` without --dry-run (here with no time: every step skipped, nothing trains) runs the
    plan's steps, and allocation.json holds the plan a later loan reads."""
    monkeypatch.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))  # main sets it: restored after
    out, results = tmp_path / "out", tmp_path / "results"
    committed(results / "gpu_allocations", "20270101T000000Z", steps={"parity": "ok"}, kind="H100",
              code=committed_tool.code_digest(ROOT))
    argv = ["all", "--out", str(out), "--budget", "0", "--data", "pyproject.toml", "--results", str(results),
            "--gpu", "NVIDIA H100 80GB HBM3"]
    assert cli.main(argv) == 1  # no step ran ok: no time
    summary = json.loads((out / "allocation.json").read_text())
    assert [s["step"] for s in summary["steps"]] == ["env", "bench", "modes", "reeval"]  # parity: committed
    assert all(s["status"] == "skipped: no time left" for s in summary["steps"])
    plan = summary["plan"]
    assert (plan["gpu_kind"], plan["code"], plan["pipeline"]) == ("H100", committed_tool.code_digest(ROOT),
                                                                  "landscape_nb201_full_gpu")
    assert plan["skipped"] == {"parity": "committed in 20270101T000000Z"}
