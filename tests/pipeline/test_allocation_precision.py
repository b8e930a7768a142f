"""The science's precision by the parity verdict (tools/gpu_allocation/precision.py), on the CPU with
fabricated committed parity records: bf16 only after "equivalent" for the same GPU kind and code
(its control arm "different"), fp32 otherwise; a store's results bind the study to their precision
(no bf16 slice into an fp32 store, no fp32 slice into a bf16 one); the plan prints why, and a
refused science step runs nothing."""

from __future__ import annotations

import doctest
import json
import sys
from pathlib import Path

import pytest

from nasrescale.store.job_status import Status
from nasrescale.store.sqlite_store import Store

from tool_helpers import TOOLS

if str(TOOLS) not in sys.path:  # the package as tools/gpu_allocation.sh imports it: by name, from tools/
    sys.path.insert(0, str(TOOLS))
from gpu_allocation import cli, committed, plan as plan_tool, precision, runner, steps  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CODE = committed.code_digest(ROOT)
RUN = "landscape_nb201_full_gpu"  # the default science's run (fp32 in its pipeline file)
SLICES = ("pipelines/nb201_cifar10_gpu_slices.toml", "nb201_cifar10_gpu_slices")  # bf16 in its pipeline file


def parity_line(a: str, verdict: str) -> str:
    return f"parity {a} vs engine fp32: +0.05 points, 90 % CI [-0.20, +0.30], Welch p = 0.700, n = 10 / 10, " \
           f"margin +-0.5: {verdict}"


def committed_parity(alloc: Path, name: str, bf16: str, control: str | None = "different", *, kind: str = "H100",
                     code: str = CODE, status: str = "ok") -> None:
    """A loan's folder as collect leaves it, its parity step's verdicts in parity.txt."""
    folder = alloc / name
    folder.mkdir(parents=True)
    record = {"dry_run": False, "steps": [{"step": "parity", "status": status}],
              "plan": {"gpu_kind": kind, "code": code, "pipeline": RUN}}
    (folder / "allocation.json").write_text(json.dumps(record))
    lines = ["parity on NVIDIA H100 80GB HBM3; torch 2.14; C=16, N=5", parity_line("engine bf16", verdict=bf16)]
    if control is not None:
        lines.append(parity_line("control: engine fp32, LR x 0.5", control))
    (folder / "parity.txt").write_text("\n".join(lines) + "\n")


def stored(results: Path, trained: list[str], run: str = RUN) -> None:
    """The run's store with one finished job per entry of ``trained`` (its record's precision)."""
    store = Store(results / run / "store.sqlite")
    store.add_jobs([{"key": f"k{i}", "arch": "a", "protocol": "flat", "seed": 0, "job_json": "{}"}
                    for i in range(len(trained))])
    for i, p in enumerate(trained):
        store.finish(f"k{i}", Status.DONE, {"test_accuracy": 50.0, "precision": p})
    store.close()


def plan_of(results: Path, *extra: str) -> plan_tool.Plan:
    return plan_tool.loan_plan(cli.parse_args(["plan", "--gpu", "NVIDIA H100 80GB HBM3", "--results", str(results),
                                               *extra]), ROOT)


def test_the_module_examples_hold() -> None:
    assert doctest.testmod(precision).failed == 0


def test_the_verdict_is_read_from_the_parity_committed_for_the_kind_and_code(tmp_path: Path) -> None:
    alloc = tmp_path / "gpu_allocations"
    assert precision.committed_verdict(alloc, "H100", CODE) is None
    committed_parity(alloc, "20270101T000000Z", "equivalent")
    committed_parity(alloc, "20270102T000000Z", "different", kind="H200")  # another kind
    committed_parity(alloc, "20270103T000000Z", "different", code="0" * 16)  # other code
    committed_parity(alloc, "20270104T000000Z", "different", status="killed at the end of its share (exit 143)")
    verdict = precision.committed_verdict(alloc, "H100", CODE)
    assert verdict == precision.ParityVerdict("20270101T000000Z", "equivalent", "different") and verdict.allows_bf16
    assert not precision.committed_verdict(alloc, "H200", CODE).allows_bf16
    assert precision.committed_verdict(alloc, "A100", CODE) is None
    committed_parity(alloc, "20270105T000000Z", "undetermined (n too small)")
    assert precision.committed_verdict(alloc, "H100", CODE).bf16 == "undetermined (n too small)"  # the newest


@pytest.mark.parametrize("bf16, control, allowed", [
    ("equivalent", "different", True), ("equivalent", None, True),
    ("equivalent", "undetermined (n too small)", False),  # a check that could not fail proves nothing
    ("different", "different", False), ("undetermined (n too small)", "different", False)])
def test_bf16_only_after_an_equivalent_verdict(tmp_path: Path, bf16: str, control: str | None, allowed: bool) -> None:
    committed_parity(tmp_path / "gpu_allocations", "20270101T000000Z", bf16, control)
    plan = plan_of(tmp_path)
    assert plan.precision.precision == ("bf16" if allowed else "fp32") and plan.refused is None
    assert plan.precision.settings == (["protocols.flat.precision=bf16"] if allowed else [])  # the pipeline: fp32
    text = plan_tool.format_plan(plan)
    assert f"precision: {plan.precision.precision} (parity committed in 20270101T000000Z for an H100 at this " \
           f"code: bf16 vs fp32 {bf16}" in text


def test_no_verdict_trains_fp32_and_says_why(tmp_path: Path) -> None:
    plan = plan_of(tmp_path)
    assert (plan.precision.precision, plan.precision.settings) == ("fp32", [])
    assert "precision: fp32 (no parity verdict committed for an H100 at this code)" in plan_tool.format_plan(plan)
    assert plan_of(tmp_path, "--precision", "bf16").refused == \
        "--precision bf16, but bf16 is not allowed (no parity verdict committed for an H100 at this code)"


def test_a_store_of_fp32_results_gets_no_bf16_slice(tmp_path: Path) -> None:
    committed_parity(tmp_path / "gpu_allocations", "20270101T000000Z", "equivalent")
    stored(tmp_path, ["fp32", "fp32"])
    plan = plan_of(tmp_path)
    assert (plan.precision.precision, plan.precision.settings, plan.refused) == ("fp32", [], None)
    assert "the store's 2 finished job(s) trained in fp32 (bf16 is allowed, but one study never mixes precisions)" \
        in plan_tool.format_plan(plan)
    assert "the store holds 2 finished job(s) trained in fp32" in plan_of(tmp_path, "--precision", "bf16").refused


def test_a_store_of_bf16_results_gets_no_fp32_slice(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pipeline, run = SLICES  # a study that trained in bf16 before verdicts were asked for
    stored(tmp_path, ["bf16"], run)  # and no verdict committed: bf16 is not allowed either
    plan = plan_of(tmp_path, "--pipeline", pipeline)
    assert plan.refused.startswith("the store holds 1 finished job(s) trained in bf16, and bf16 is not allowed")
    assert plan.science_s == 0.0 and plan.speed is None
    assert [s for s, _ in plan.steps] == ["env", "bench", "parity", "modes", "reeval"]  # the loan measures instead
    assert cli.main(["plan", "--gpu", "H100", "--results", str(tmp_path), "--pipeline", pipeline]) == 2
    printed = capsys.readouterr()
    assert "  reeval  refused (precision, below)" in printed.out
    assert "precision: refused: the store holds" in printed.out
    assert "plan: no science slice: the store holds 1 finished job(s) trained in bf16" in printed.err
    committed_parity(tmp_path / "gpu_allocations", "20270101T000000Z", "equivalent")  # once bf16 is allowed
    plan = plan_of(tmp_path, "--pipeline", pipeline)
    assert (plan.precision.precision, plan.precision.settings, plan.refused) == ("bf16", [], None)
    stored(tmp_path, ["bf16"])  # bf16 results under the default science's fp32 setting: another pipeline
    assert plan_of(tmp_path).refused.startswith("the pipeline sets fp32 but the science must train in bf16")
    stored(tmp_path / "mixed", ["bf16", "fp32"])
    assert "already mixes precisions (1 in bf16, 1 in fp32)" in plan_of(tmp_path / "mixed").refused


def test_another_setting_than_the_stores_is_refused_not_mixed(tmp_path: Path) -> None:
    """A store a CPU run started under a bf16 setting holds fp32 results (the CPU trains bf16 as
    fp32): a GPU slice would train bf16 (mixed) and an fp32 setting is another pipeline: refused."""
    choice = precision.choose_precision(None, "H100", stored=["fp32"], ran=True, setting={"flat": "bf16"})
    assert choice.refused.startswith("the pipeline sets bf16 but the science must train in fp32")
    fresh = precision.choose_precision(None, "H100", stored=[], ran=False, setting={"flat": "bf16"})
    assert (fresh.precision, fresh.settings, fresh.refused) == ("fp32", ["protocols.flat.precision=fp32"], None)


def test_the_science_step_trains_in_the_plans_precision_or_is_refused(tmp_path: Path) -> None:
    committed_parity(tmp_path / "gpu_allocations", "20270101T000000Z", "equivalent")
    args = cli.parse_args(["reeval", "--results", str(tmp_path), "--out", str(tmp_path / "out")])
    options = steps.science_settings(args, {"plan": plan_of(tmp_path).to_json()})
    assert options == [f"data.path={args.data}", "protocols.flat.precision=bf16", "landscape.reuse=none"]
    assert "no plan" in steps.science_settings(args, {})
    stored(tmp_path / "bf16", ["bf16", "fp32"])
    refused = plan_of(tmp_path / "bf16")
    (tmp_path / "out").mkdir()
    args.budget = 60.0
    assert runner.run_steps(args, ["reeval"], tmp_path / "out", refused) == 1  # runs nothing
    summary = json.loads((tmp_path / "out" / "allocation.json").read_text())
    assert summary["steps"][0]["status"] == f"refused: {refused.refused}"
    assert summary["plan"]["precision"]["refused"] == refused.refused
