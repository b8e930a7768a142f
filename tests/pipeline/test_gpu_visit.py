"""tools/gpu_visit.sh: the dry run end to end on the CPU, the size check, slices and the results index."""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from nasrescale.pipeline.spec import load_pipeline
from nasrescale.report.results_index import index_text
from nasrescale.pipeline.slices import copy_store, run_slice, spread_order, visit_cells, visit_records

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = {"env/env.txt", "env/pytest_gpu.txt", "bench/bench.txt", "bench/bench.json", "reeval/reeval.log",
            "reeval/store.sqlite", "visit.json"}
TINY = ["pipeline.name=tiny_slices", "data.name=cifar10-subset", "data.path=", "archs.count=2", "budget.width=4",
        "budget.cells=1", "budget.epochs=1", "budget.train_subset=128", "budget.test_subset=100",
        "executor.device=cpu", "executor.jobs_per_gpu=1"]


def _module(name: str):  # noqa: ANN202 - a tools/ script as a module
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "tools"))


@pytest.fixture(scope="module")
def dry_visit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("out")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OUT": str(out)}
    proc = subprocess.run([str(ROOT / "tools" / "gpu_visit.sh"), "all", "--dry-run", "--budget", "300"],
                          capture_output=True, text=True, env=env, timeout=600)
    return out, proc


def test_dry_run_writes_every_step_within_the_device_limits(dry_visit) -> None:  # noqa: ANN001
    out, proc = dry_visit
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert files == EXPECTED
    assert len(files) <= 8
    for f in files:
        assert (out / f).stat().st_size <= 16 * 2**20, f
    visit = json.loads((out / "visit.json").read_text())
    assert [s["step"] for s in visit["steps"]] == ["env", "bench", "reeval"]
    assert {s["step"]: s["status"] for s in visit["steps"]} == {"env": "ok", "bench": "ok", "reeval": "ok"}
    assert visit["limit_problems"] == []
    env_txt = (out / "env" / "env.txt").read_text()
    assert "torch:" in env_txt
    assert "CUDA available: False" in env_txt
    assert "deselected" in (out / "env" / "pytest_gpu.txt").read_text()
    bench = (out / "bench" / "bench.txt").read_text()
    assert "ratio=" in bench
    assert "(c) fused K=2 bf16" in bench
    assert "(c) fused K=2 fp32" in bench
    assert "bf16_vs_fp32" in json.loads((out / "bench" / "bench.json").read_text())


def test_dry_run_store_comes_back_whole_with_its_visit(dry_visit) -> None:  # noqa: ANN001
    out, _ = dry_visit
    store = out / "reeval" / "store.sqlite"
    assert not Path(str(store) + "-wal").exists()
    db = sqlite3.connect(store)
    statuses = [r[0] for r in db.execute("SELECT status FROM jobs")]
    db.close()
    assert statuses
    assert set(statuses) == {"done"}
    (visit,) = visit_records(store)
    assert visit["dry_run"] is True
    assert visit["jobs_done"] == len(statuses)
    assert visit["data_copy"] == "shipped CIFAR-10 subset (dry run)"


def test_collect_takes_the_store_report_and_files_into_results(dry_visit, tmp_path: Path,  # noqa: ANN001
                                                                capsys: pytest.CaptureFixture) -> None:
    out, _ = dry_visit
    local = _module("gpu_visit_local")
    assert local.collect(out, tmp_path, n_boot=0) == 0
    run = tmp_path / "gpu_slices_dryrun"
    assert (run / "store.sqlite").is_file()
    assert "## Provenance" in (run / "report.md").read_text()
    (visit_dir,) = (tmp_path / "gpu_visits").iterdir()
    assert {p.name for p in visit_dir.iterdir()} == {"env.txt", "pytest_gpu.txt", "bench.txt", "bench.json",
                                                     "reeval.log", "visit.json"}
    index = (tmp_path / "README.md").read_text()
    assert "## GPU visits" in index
    assert "(dry run)" in index
    assert "| [gpu_slices_dryrun](gpu_slices_dryrun/) |" in index
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
    copy = copy_store(tmp_path / "tiny_slices" / "store.sqlite", tmp_path / "copy" / "store.sqlite")
    text = index_text(copy.parent.parent)
    assert "| [copy](copy/) | cifar10-subset |" in text
    assert "Jobs done 8/8" in text
    assert "| precision | fp32 (CPU) |" in text
    assert "| rescaled | default | 2 |" in text


def test_size_check_fails_clearly_over_64_mib(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    local = _module("gpu_visit_local")
    small, big = tmp_path / "small.bin", tmp_path / "big.bin"
    small.write_bytes(b"x" * 1000)
    with open(big, "wb") as f:
        f.truncate(65 * 2**20)  # sparse: du -b counts its apparent size, as the transfer would
    assert local.check_size(ROOT, [small]) == 0
    assert local.check_size(ROOT, [big]) == 2
    assert "over the device tool's 64 MiB" in capsys.readouterr().err
    assert local.check_size(ROOT, [tmp_path / "missing.npz"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_real_visit_refuses_to_start_without_the_data_pack(tmp_path: Path) -> None:
    proc = subprocess.run([str(ROOT / "tools" / "gpu_visit.sh"), "reeval", "--out", str(tmp_path),
                           "--data", "no/such/pack.npz"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "no/such/pack.npz' is missing" in proc.stderr
    assert "carry" in proc.stderr
