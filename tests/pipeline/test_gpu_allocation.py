"""tools/gpu_allocation.sh: the dry run end to end on the CPU (every step, the store it grows through
``nasrescale run --time-limit``, collect), and its options at tiny size (budget, output folder,
size cap, output limits, refusals)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from nasrescale.pipeline.slices import visit_records
from nasrescale.store.job_status import Status
from nasrescale.store.read import reading
from nasrescale.store.write import Store

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "gpu_allocation.sh"
EXPECTED = {"env/env.txt", "env/pytest_gpu.txt", "bench/bench.txt", "bench/bench.json", "reeval/reeval.log",
            "reeval/store.sqlite", "allocation.json"}


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_allocation", ROOT / "tools" / "gpu_allocation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tool(*args: str, out_env: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OUT"}
    env.update(OMP_NUM_THREADS="1", **({"OUT": str(out_env)} if out_env is not None else {}))
    return subprocess.run([str(TOOL), *args], capture_output=True, text=True, env=env, timeout=3600)


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("out")  # through $OUT, the fallback of --out
    return out, _tool("all", "--dry-run", "--cells", "1", "--budget", "3000", out_env=out)


def test_dry_run_writes_every_step_within_the_default_limits(dry_run) -> None:  # noqa: ANN001
    out, proc = dry_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} == EXPECTED
    summary = json.loads((out / "allocation.json").read_text())
    assert [(s["step"], s["status"]) for s in summary["steps"]] == [("env", "ok"), ("bench", "ok"), ("reeval", "ok")]
    assert summary["dry_run"] is True and summary["limit_problems"] == []
    env_txt = (out / "env" / "env.txt").read_text()
    assert "data: shipped CIFAR-10 subset (dry run)" in env_txt and "torch: " in env_txt
    assert "CUDA available: False" in env_txt
    assert "deselected" in (out / "env" / "pytest_gpu.txt").read_text()
    bench = (out / "bench" / "bench.txt").read_text()
    assert "ratio=" in bench and "(c) fused K=2 bf16" in bench
    assert "bf16_vs_fp32" in json.loads((out / "bench" / "bench.json").read_text())
    log = (out / "reeval" / "reeval.log").read_text()
    assert "-m nasrescale run pipelines/nb201_cifar10_gpu_slices.toml --time-limit" in log
    assert not (ROOT / "results" / "gpu_slices_dryrun").exists()  # the dry run's results root was thrown away


def test_the_store_grew_by_one_cell_and_records_its_slice(dry_run) -> None:  # noqa: ANN001
    out, _ = dry_run
    assert not (out / "reeval" / "store.sqlite-wal").exists()
    with reading(out / "reeval") as store:
        statuses = [r["status"] for r in store.rows()]
        assert store.get_meta("name") == "gpu_slices_dryrun"
    # --cells 1: one cell of 4 (archs.count=4) under both protocols and both seeds: 4 of 16 jobs
    assert sorted(statuses) == [Status.DONE] * 4 + [Status.PENDING] * 12
    (record,) = visit_records(out / "reeval" / "store.sqlite")
    assert (record["jobs_run"], record["jobs_done"], record["jobs_total"], record["cells_done"]) == (4, 4, 16, 1)
    assert json.loads((out / "allocation.json").read_text())["reeval"] == record


def test_collect_takes_the_store_gzipped_its_report_and_the_files(dry_run, tmp_path: Path,  # noqa: ANN001
                                                                  capsys: pytest.CaptureFixture) -> None:
    out, _ = dry_run
    tool = _module()
    assert tool.collect(out, tmp_path, n_boot=0) == 0
    run = tmp_path / "gpu_slices_dryrun"
    assert (run / "store.sqlite.gz").is_file()  # committed as every committed run ships
    assert "## Provenance" in (run / "report.md").read_text()
    assert "| [gpu_slices_dryrun](gpu_slices_dryrun/) | cifar10-subset |" in (tmp_path / "README.md").read_text()
    (copied,) = (tmp_path / "gpu_allocations").iterdir()
    assert copied.name == json.loads((out / "allocation.json").read_text())["started_at"].replace("-", "").replace(":", "")
    assert {p.name for p in copied.iterdir()} == {"env.txt", "pytest_gpu.txt", "bench.txt", "bench.json",
                                                  "reeval.log", "allocation.json"}
    assert tool.collect(out, tmp_path, n_boot=0) == 0  # the same store again: as many finished jobs
    store = Store(run / "store.sqlite")  # the committed store moves on: one more finished job
    store.add_jobs([{"key": "extra", "arch": "a", "protocol": "p", "seed": 0, "job_json": "{}"}])
    store.finish("extra", Status.DONE, {})
    store.close()
    capsys.readouterr()
    assert tool.collect(out, tmp_path, n_boot=0) == 2
    assert "holds 4 finished jobs, fewer than the 5 of" in capsys.readouterr().err


def test_size_counts_the_checkout_and_the_included_paths_against_max_mib(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.truncate(65 * 2**20)  # sparse: its apparent size counts, as a transfer copies it
    fits = _tool("size", "--include", str(big), "--max-mib", "100")
    assert fits.returncode == 0, fits.stderr
    assert "MiB of 100 MiB" in fits.stdout
    assert "in results/ folders no step reads (every run's but nb201_cifar10_gpu_slices's)" in fits.stdout
    over = _tool("size", "--include", str(big))
    assert over.returncode == 2
    assert "over the 64 MiB of --max-mib" in over.stderr
    assert "of results/ copy results/nb201_cifar10_gpu_slices/ alone" in over.stderr
    missing = _tool("size", "--include", str(tmp_path / "missing.npz"))
    assert missing.returncode == 2 and "missing.npz' does not exist" in missing.stderr


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
    tool = _module()
    args = tool.parse_args(["all"])
    assert (args.budget, args.max_mib, args.max_files, args.max_file_mib, args.max_depth) == (540, 64, 8, 16, 2)
    hour = time.monotonic() + 3300
    assert round(tool.share(args, hour, "env", ["bench", "reeval"])) == 150
    assert round(tool.share(args, hour, "bench", ["reeval"])) == 330
    assert 3280 < tool.share(args, hour, "reeval", []) <= 3290  # the rest, less 10 s to write the summary
    short = time.monotonic() + 540  # the default budget: env and bench leave the steps after them 240 s each
    assert round(tool.share(args, short, "env", ["bench", "reeval"])) == 60
    assert round(tool.share(args, short - 60, "bench", ["reeval"])) == 240


def test_bad_input_is_refused_before_anything_runs(tmp_path: Path) -> None:
    no_out = _tool("reeval", "--dry-run")
    assert no_out.returncode == 2
    assert "no output folder: pass --out DIR" in no_out.stderr
    negative = _tool("env", "--out", str(tmp_path), "--max-files", "-1")
    assert negative.returncode == 2
    assert "argument --max-files: -1 is negative" in negative.stderr
    unknown = _tool("benchmark", "--out", str(tmp_path))
    assert unknown.returncode == 2 and "unknown step 'benchmark'" in unknown.stderr
    no_pack = _tool("reeval", "--out", str(tmp_path), "--data", "no/such/pack.npz")
    assert no_pack.returncode == 2
    assert "no/such/pack.npz' is missing" in no_pack.stderr and "size --include no/such/pack.npz" in no_pack.stderr
    assert not (tmp_path / "allocation.json").exists()


def _bench_module(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """benchmarks/train_throughput.py as a module."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))  # the script imports machine_peak beside it
    spec = importlib.util.spec_from_file_location("train_throughput", ROOT / "benchmarks" / "train_throughput.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "train_throughput", module)  # its dataclasses look it up there
    spec.loader.exec_module(module)
    return module


def test_accuracy_parity_is_judged_by_the_standard_error_of_the_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Welch's band: two tight groups 5.5 points apart are not at parity (a spread pooled over both
    groups would have called them so); 2 seeds 4 points apart leave 3 points well inside the band
    (t(0.975, 2 df) = 4.303 standard errors); one point apart is parity under the 1-point floor."""
    parity = _bench_module(monkeypatch).parity
    assert parity([63.5, 64.0], [58.0, 58.5])[0] is False
    assert parity([60.0, 61.0], [60.2, 60.6])[0] is True
    ok, text = parity([61.0, 65.0], [58.0, 62.0])  # SE sqrt(8/2 + 8/2) = 2.83, df 2: band 4.303 x 2.83
    assert ok and "band 12.17" in text
    assert parity([62.0], [60.5])[0] is False  # one run each: the 1-point floor alone


def test_a_benchmark_whose_time_budget_skips_one_precisions_accuracy_still_ends_with_its_table(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget cut the fp32 engine's accuracy but not bf16's: the verdicts that ran stand, the
    bf16-vs-fp32 parity is left out (not computed from a missing side), and the table is written."""
    bench_module = _bench_module(monkeypatch)
    monkeypatch.setattr("sys.argv", ["train_throughput.py", "--device", "cpu", "--width", "4", "--cells", "1",
                                     "--train-images", "128", "--epochs", "1", "--ks", "", "--jobs-per-gpu", "",
                                     "--workers", "0", "--acc-images", "128", "--acc-epochs", "1", "--seeds", "1",
                                     "--precisions", "bf16,fp32"])
    bench = bench_module.Bench(bench_module.parse_args())
    bench.limits()
    bench.timing()

    class SkipsFp32Accuracy(bench_module.Clock):
        def run(self, label: str, fn):  # noqa: ANN001, ANN201
            if label.startswith("accuracy") and label.endswith("fp32"):
                self.skipped.append(label)
                return None
            return fn()

    bench.clock = SkipsFp32Accuracy(None)
    extra = bench.accuracy()
    assert "bf16_vs_fp32" not in extra
    assert bench.clock.skipped == ["accuracy (b) engine, 1 run fp32"]
    checked = {r.label: r.checked for r in bench.rows}
    assert checked == {"(a) reference loop": True, "(b) engine, 1 run bf16": True, "(b) engine, 1 run fp32": False}
    accuracy = {r.label: r.accuracy for r in bench.rows}
    assert accuracy["(a) reference loop"].endswith("(n=1, the baseline)")  # no verdict against itself
    assert "parity" in accuracy["(b) engine, 1 run bf16"]
    table = bench.table(extra)
    assert table["skipped"] == ["accuracy (b) engine, 1 run fp32"] and len(table["rows"]) == 3


def test_a_step_past_its_share_gets_sigterm_first_then_sigkill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At the end of its share a step's process group gets SIGTERM, so a slice writes its record
    (here: a child that writes a file on SIGTERM), then SIGKILL after the grace (a child that
    ignores SIGTERM still ends)."""
    tool = _module()
    monkeypatch.setattr(tool, "POLL_S", 0.2)
    monkeypatch.setattr(tool, "GRACE_S", 5.0)
    mark = tmp_path / "record"
    polite = ("import pathlib, signal, sys, time\n"
              "def stop(*_):\n    pathlib.Path(sys.argv[1]).write_text('recorded'); sys.exit(143)\n"
              "signal.signal(signal.SIGTERM, stop)\nprint('started', flush=True)\ntime.sleep(60)\n")
    status = tool.run_logged([sys.executable, "-c", polite, str(mark)], tmp_path / "a.log", time.monotonic() + 1.5)
    assert status == "killed at the end of its share (exit 143)" and mark.read_text() == "recorded"
    stubborn = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)\n"
    began = time.monotonic()
    status = tool.run_logged([sys.executable, "-c", stubborn], tmp_path / "b.log", time.monotonic() + 1.5)
    assert status == f"killed at the end of its share (exit {-signal.SIGKILL})" and time.monotonic() - began < 30
