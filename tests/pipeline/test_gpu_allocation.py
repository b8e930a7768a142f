"""tools/gpu_allocation.sh: the dry run end to end on the CPU, its options at tiny size (budget, output
folder, size cap, output limits), slices and the results index."""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nasrescale.pipeline.spec import load_pipeline
from nasrescale.report.results_index import index_text
from nasrescale.pipeline.slices import copy_store, run_slice, spread_order, visit_cells, visit_records

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "gpu_allocation.sh"
EXPECTED = {"env/env.txt", "env/pytest_gpu.txt", "bench/bench.txt", "bench/bench.json", "reeval/reeval.log",
            "reeval/store.sqlite", "allocation.json"}
TINY = ["pipeline.name=tiny_slices", "data.name=cifar10-subset", "data.path=", "archs.count=2", "budget.width=4",
        "budget.cells=1", "budget.epochs=1", "budget.train_subset=128", "budget.test_subset=100",
        "executor.device=cpu", "executor.jobs_per_gpu=1"]


def _module(name: str):  # noqa: ANN202 - a tools/ script as a module
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "tools"))


def _tool(*args: str, out_env: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OUT"}
    env.update(OMP_NUM_THREADS="1", **({"OUT": str(out_env)} if out_env is not None else {}))
    return subprocess.run([str(TOOL), *args], capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("out")  # through $OUT, the fallback of --out
    return out, _tool("all", "--dry-run", "--budget", "300", out_env=out)


def test_dry_run_writes_every_step_within_the_default_limits(dry_run) -> None:  # noqa: ANN001
    out, proc = dry_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert files == EXPECTED
    assert len(files) <= 8
    for f in files:
        assert (out / f).stat().st_size <= 16 * 2**20, f
    summary = json.loads((out / "allocation.json").read_text())
    assert [s["step"] for s in summary["steps"]] == ["env", "bench", "reeval"]
    assert {s["step"]: s["status"] for s in summary["steps"]} == {"env": "ok", "bench": "ok", "reeval": "ok"}
    assert summary["limit_problems"] == []
    env_txt = (out / "env" / "env.txt").read_text()
    assert "torch:" in env_txt
    assert "CUDA available: False" in env_txt
    assert "deselected" in (out / "env" / "pytest_gpu.txt").read_text()
    bench = (out / "bench" / "bench.txt").read_text()
    assert "ratio=" in bench
    assert "(c) fused K=2 bf16" in bench
    assert "(c) fused K=2 fp32" in bench
    assert "bf16_vs_fp32" in json.loads((out / "bench" / "bench.json").read_text())


def test_dry_run_store_comes_back_whole_with_its_slice(dry_run) -> None:  # noqa: ANN001
    out, _ = dry_run
    store = out / "reeval" / "store.sqlite"
    assert not Path(str(store) + "-wal").exists()
    db = sqlite3.connect(store)
    statuses = [r[0] for r in db.execute("SELECT status FROM jobs")]
    db.close()
    assert statuses
    assert set(statuses) == {"done"}
    (record,) = visit_records(store)
    assert record["dry_run"] is True
    assert record["jobs_done"] == len(statuses)
    assert record["data_copy"] == "shipped CIFAR-10 subset (dry run)"


def test_collect_takes_the_store_report_and_files_into_results(dry_run, tmp_path: Path,  # noqa: ANN001
                                                                capsys: pytest.CaptureFixture) -> None:
    out, _ = dry_run
    local = _module("gpu_allocation_local")
    assert local.collect(out, tmp_path, n_boot=0) == 0
    run = tmp_path / "gpu_slices_dryrun"
    assert (run / "store.sqlite").is_file()
    assert "## Provenance" in (run / "report.md").read_text()
    (copied,) = (tmp_path / "gpu_allocations").iterdir()
    assert {p.name for p in copied.iterdir()} == {"env.txt", "pytest_gpu.txt", "bench.txt", "bench.json",
                                                  "reeval.log", "allocation.json"}
    index = (tmp_path / "README.md").read_text()
    assert "## GPU runs" in index
    assert f"| [{copied.name}](gpu_allocations/{copied.name}/) (dry run) | CPU |" in index
    # the index lists versioned runs only: the dry run's store is not the versioned GPU-sliced one
    assert "| [gpu_slices_dryrun](gpu_slices_dryrun/) |" not in index
    db = sqlite3.connect(run / "store.sqlite")  # a store with fewer finished jobs is refused
    db.execute("INSERT INTO jobs(key, status) VALUES ('extra', 'done')")
    db.commit()
    db.close()
    capsys.readouterr()
    assert local.collect(out, tmp_path, n_boot=0) == 2
    assert "fewer than the" in capsys.readouterr().err


def test_spread_order_prefixes_cover_the_range() -> None:
    order = spread_order(100)
    assert sorted(order) == list(range(100))
    for m in range(1, 101):  # any first m of 100 strata: gaps as narrow as for the power of two p <= m
        p = 1 << (m.bit_length() - 1)
        edges = [0, *sorted(order[:m]), 100]
        widest = max(b - a for a, b in zip(edges, edges[1:]))
        assert widest <= -(-100 // p), (m, widest)
    assert visit_cells(["a", "b", "c", "d"]) == ["a", "c", "b", "d"]


def test_slices_resume_one_store_and_stop_at_the_deadline(tmp_path: Path) -> None:
    pipeline = load_pipeline(ROOT / "pipelines" / "nb201_cifar10_gpu_slices.toml", TINY)
    lines: list[str] = []
    first = run_slice(pipeline, tmp_path, max_cells=1, deadline_s=300, visit={"device": "cpu"}, log=lines.append)
    assert (first.cells_done, first.jobs_done, first.jobs_total) == (1, 4, 8)
    assert first.cells_run == visit_cells(pipeline.arch_list())[:1]
    stopped = run_slice(pipeline, tmp_path, max_cells=2, deadline_s=0, log=lines.append)
    assert stopped.jobs_run == 0
    assert stopped.stopped.startswith("time")
    second = run_slice(pipeline, tmp_path, max_cells=2, deadline_s=300, log=lines.append)
    assert second.jobs_run == 4
    assert second.cells_done == 2
    assert [v["jobs_done"] for v in visit_records(tmp_path / "tiny_slices" / "store.sqlite")] == [4, 4, 8]
    # the index lists the GPU-sliced run, whose plain store is versioned, and no local run
    copy = copy_store(tmp_path / "tiny_slices" / "store.sqlite", tmp_path / "nb201_cifar10_gpu_slices" / "store.sqlite")
    text = index_text(copy.parent.parent)
    assert "| [nb201_cifar10_gpu_slices](nb201_cifar10_gpu_slices/) | cifar10-subset |" in text
    assert "[tiny_slices](tiny_slices/)" not in text  # the local run the copy came from
    assert "Jobs done 8/8" in text
    assert "| precision | fp32 (CPU) |" in text
    assert "| rescaled | default | 2 |" in text


def test_size_check_fails_clearly_over_64_mib(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    local = _module("gpu_allocation_local")
    small, big = tmp_path / "small.bin", tmp_path / "big.bin"
    small.write_bytes(b"x" * 1000)
    with open(big, "wb") as f:
        f.truncate(65 * 2**20)  # sparse: du -b counts its apparent size, as the transfer would
    assert local.check_size(ROOT, [small]) == 0
    assert local.check_size(ROOT, [big]) == 2
    assert "over the 64 MiB of --max-mib" in capsys.readouterr().err
    assert local.check_size(ROOT, [tmp_path / "missing.npz"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_max_mib_sets_the_size_cap(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.truncate(65 * 2**20)
    raised = _tool("size", "--include", str(big), "--max-mib", "100")
    assert raised.returncode == 0, raised.stderr
    assert "of 100 MiB" in raised.stdout
    lowered = _tool("size", "--include", str(big), "--max-mib", "1")  # the checkout alone is over 1 MiB
    assert lowered.returncode == 2
    assert "over the 1 MiB of --max-mib" in lowered.stderr


def test_budget_zero_skips_every_step_and_out_wins_over_the_environment(tmp_path: Path) -> None:
    out, env_out = tmp_path / "out", tmp_path / "env_out"
    env_out.mkdir()
    proc = _tool("all", "--dry-run", "--budget", "0", "--out", str(out), out_env=env_out)
    assert proc.returncode == 1  # nothing ran: not ok
    summary = json.loads((out / "allocation.json").read_text())
    assert [(s["step"], s["status"]) for s in summary["steps"]] == [
        ("env", "skipped: no time left"), ("bench", "skipped: no time left"), ("reeval", "skipped: no time left")]
    assert list(env_out.iterdir()) == []


def test_output_limits_are_options(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "a" / "b" / "c").mkdir(parents=True)
    (out / "a" / "b" / "c" / "deep.txt").write_text("x")
    (out / "big.bin").write_bytes(b"x" * (2 * 2**20))
    (out / "odd name.txt").write_text("x")
    tight = _tool("env", "--dry-run", "--budget", "0", "--out", str(out),
                  "--max-files", "3", "--max-file-mib", "1", "--max-depth", "2")
    assert tight.returncode == 1
    assert json.loads((out / "allocation.json").read_text())["limit_problems"] == [
        "4 files (at most 3 come back)", "a/b/c/deep.txt: more than 2 folders down",
        "big.bin: 2.0 MiB (at most 1 MiB)",
        "odd name.txt: a name with characters other than letters, digits, '.', '_', '-'"]
    assert "over the output limits: 4 files" in tight.stderr
    (out / "odd name.txt").unlink()
    loose = _tool("env", "--dry-run", "--budget", "0", "--out", str(out),
                  "--max-files", "3", "--max-file-mib", "2", "--max-depth", "3")
    assert json.loads((out / "allocation.json").read_text())["limit_problems"] == []
    assert "over the output limits" not in loose.stderr


def test_defaults_of_the_limits_and_the_budget_shares() -> None:
    steps = _module("gpu_allocation_steps")
    limits = _module("gpu_allocation_limits")
    assert limits.OutputLimits() == limits.OutputLimits(max_files=8, max_file_mib=16.0, max_depth=2)
    assert limits.DEFAULT_MAX_MIB == 64.0
    hour = steps.Allocation(root=ROOT, out=Path("unused"), dry_run=False, data=Path("x"), pipeline="p",
                            results=None, cells=1, deadline=time.monotonic() + 3300)
    assert round(hour.share("env", ["bench", "reeval"])) == 150
    assert round(hour.share("bench", ["reeval"])) == 330
    assert 3280 < hour.share("reeval", []) <= 3290  # the rest, less 10 s to write the summary


def test_bad_options_and_no_output_folder_are_refused(tmp_path: Path) -> None:
    no_out = _tool("reeval", "--dry-run")
    assert no_out.returncode == 2
    assert "no output folder: pass --out DIR" in no_out.stderr
    negative = _tool("env", "--out", str(tmp_path), "--max-files", "-1")
    assert negative.returncode == 2
    assert "argument --max-files: '-1' is negative" in negative.stderr
    assert not (tmp_path / "allocation.json").exists()


def test_real_run_refuses_to_start_without_the_data_pack(tmp_path: Path) -> None:
    proc = _tool("reeval", "--out", str(tmp_path), "--data", "no/such/pack.npz")
    assert proc.returncode == 2
    assert "no/such/pack.npz' is missing" in proc.stderr
    assert "size --include no/such/pack.npz" in proc.stderr


def test_the_index_still_lists_output_folders_under_their_former_name(tmp_path: Path) -> None:
    old = tmp_path / "gpu_visits" / "20250101T000000Z"
    new = tmp_path / "gpu_allocations" / "20250102T000000Z"
    for folder, summary in ((old, "visit.json"), (new, "allocation.json")):
        folder.mkdir(parents=True)
        (folder / summary).write_text(json.dumps({"dry_run": True, "steps": [{"step": "env", "status": "ok"}]}))
        (folder / "env.txt").write_text("torch: 2.0\nCUDA available: False\n")
    text = index_text(tmp_path)
    assert "| [20250101T000000Z](gpu_visits/20250101T000000Z/) (dry run) | CPU | torch 2.0, CUDA ? | env ok |" in text
    assert "| [20250102T000000Z](gpu_allocations/20250102T000000Z/) (dry run) | CPU |" in text
