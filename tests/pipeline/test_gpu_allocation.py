"""tools/gpu_allocation.sh: the dry run end to end on the CPU (every step, the store it grows through
``nasrescale run --time-limit``, collect), and its options at tiny size (budget, output folder,
size cap, output limits, refusals)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nasrescale.pipeline.slices import visit_records
from nasrescale.store.job_status import Status
from nasrescale.store.read import reading
from nasrescale.store.sqlite_store import Store

from tool_helpers import TOOLS

if str(TOOLS) not in sys.path:  # the package as tools/gpu_allocation.sh imports it: by name, from tools/
    sys.path.insert(0, str(TOOLS))
from gpu_allocation import cli, collect, process, runner  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "gpu_allocation.sh"
EXPECTED = {"env/env.txt", "env/pytest_gpu.txt", "bench/bench.txt", "bench/bench.json", "parity/parity.txt",
            "modes/modes.txt", "reeval/reeval.log", "reeval/store.sqlite", "allocation.json"}
STEPS = ["env", "bench", "parity", "modes", "reeval"]


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
    assert [(s["step"], s["status"]) for s in summary["steps"]] == [(step, "ok") for step in STEPS]
    assert summary["dry_run"] is True and summary["limit_problems"] == []
    env_txt = (out / "env" / "env.txt").read_text()
    assert "data: shipped CIFAR-10 subset (dry run)" in env_txt and "torch: " in env_txt
    assert "CUDA available: False" in env_txt
    assert "deselected" in (out / "env" / "pytest_gpu.txt").read_text()
    bench = (out / "bench" / "bench.txt").read_text()
    assert "ratio_fp32=" in bench and "(c) fused K=2 fp32" in bench and "peak fp32 (exact, TF32 off)" in bench
    assert "fp32" in json.loads((out / "bench" / "bench.json").read_text())["ratios"]
    parity = (out / "parity" / "parity.txt").read_text()
    assert "parity engine fp32 vs reference fp32:" in parity and "undetermined (n too small)" in parity
    assert "ratio_fp32=" in (out / "modes" / "modes.txt").read_text()
    log = (out / "reeval" / "reeval.log").read_text()
    assert "-m nasrescale run pipelines/landscape_nb201_full_gpu.toml --time-limit" in log
    assert "landscape.reuse=none" in log  # a landscape slice trains every job it reaches
    assert not (ROOT / "results" / "gpu_slices_dryrun").exists()  # the dry run's results root was thrown away


def test_the_store_grew_by_one_cell_and_records_its_slice(dry_run) -> None:  # noqa: ANN001
    out, _ = dry_run
    assert not (out / "reeval" / "store.sqlite-wal").exists()
    with reading(out / "reeval") as store:
        rows = store.rows()
        assert store.get_meta("name") == "gpu_slices_dryrun"
    # --cells 1: one cell of the full-size landscape's 16 at its 6 LRs x 2 seeds (and any extension of its grid)
    done = [r for r in rows if r["status"] == Status.DONE]
    assert len({r["arch"] for r in done}) == 1 and len(done) >= 12
    assert sum(r["status"] == Status.PENDING for r in rows) == 15 * 12
    (record,) = visit_records(out / "reeval" / "store.sqlite")
    assert (record["jobs_run"], record["jobs_done"], record["cells_done"]) == (len(done), len(done), 1)
    assert json.loads((out / "allocation.json").read_text())["reeval"] == record


def test_collect_takes_the_store_gzipped_its_report_and_the_files(dry_run, tmp_path: Path,  # noqa: ANN001
                                                                  capsys: pytest.CaptureFixture) -> None:
    out, _ = dry_run
    assert collect.collect(out, tmp_path, n_boot=0) == 0
    run = tmp_path / "gpu_slices_dryrun"
    assert (run / "store.sqlite.gz").is_file()  # committed as every committed run ships
    assert "## Provenance" in (run / "report.md").read_text()
    assert "| [gpu_slices_dryrun](gpu_slices_dryrun/) | cifar10-subset |" in (tmp_path / "README.md").read_text()
    (copied,) = (tmp_path / "gpu_allocations").iterdir()
    assert copied.name == json.loads((out / "allocation.json").read_text())["started_at"].replace("-", "").replace(":", "")
    assert {p.name for p in copied.iterdir()} == {"env.txt", "pytest_gpu.txt", "bench.txt", "bench.json",
                                                  "parity.txt", "modes.txt", "reeval.log", "allocation.json",
                                                  "collect.json"}
    with reading(run) as store:
        rows = store.rows()
    capsys.readouterr()
    assert collect.collect(out, tmp_path, n_boot=0) == 0  # the same store again: nothing changes
    assert "0 job(s) added, 0 finished that were not" in capsys.readouterr().out
    store = Store(run / "store.sqlite")  # the committed store moves on: one more finished job
    store.add_jobs([{"key": "extra", "arch": "a", "protocol": "p", "seed": 0, "job_json": "{}"}])
    store.finish("extra", Status.DONE, {})
    store.close()
    assert collect.collect(out, tmp_path, n_boot=0) == 0  # merged again: the stored job stays
    with reading(run) as store:
        assert store.rows() == [*rows, *[r for r in store.rows() if r["key"] == "extra"]]
        assert [r["status"] for r in store.rows() if r["key"] == "extra"] == [Status.DONE]


def test_size_counts_the_checkout_and_the_included_paths_against_max_mib(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.truncate(65 * 2**20)  # sparse: its apparent size counts, as a transfer copies it
    fits = _tool("size", "--include", str(big), "--max-mib", "100")
    assert fits.returncode == 0, fits.stderr
    assert "MiB of 100 MiB" in fits.stdout
    assert "in results/ folders no step reads (every run's but landscape_nb201_full_gpu's)" in fits.stdout
    over = _tool("size", "--include", str(big))
    assert over.returncode == 2
    assert "over the 64 MiB of --max-mib" in over.stderr
    assert "of results/ copy results/landscape_nb201_full_gpu/ and results/gpu_allocations/ alone" in over.stderr
    missing = _tool("size", "--include", str(tmp_path / "missing.npz"))
    assert missing.returncode == 2 and "missing.npz' does not exist" in missing.stderr


def test_budget_zero_skips_every_step_and_out_wins_over_the_environment(tmp_path: Path) -> None:
    out, env_out = tmp_path / "out", tmp_path / "env_out"
    env_out.mkdir()
    proc = _tool("all", "--dry-run", "--budget", "0", "--out", str(out), out_env=env_out)
    assert proc.returncode == 1  # nothing ran: not ok
    summary = json.loads((out / "allocation.json").read_text())
    assert [(s["step"], s["status"]) for s in summary["steps"]] == [(step, "skipped: no time left") for step in STEPS]
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
    args = cli.parse_args(["all"])
    assert (args.budget, args.max_mib, args.max_files, args.max_file_mib, args.max_depth) == (540, 64, 10, 16, 2)
    hour = time.monotonic() + 3300
    assert round(runner.share(args, hour, "env", ["bench", "reeval"])) == 150
    assert round(runner.share(args, hour, "bench", ["reeval"])) == 330
    assert 3280 < runner.share(args, hour, "reeval", []) <= 3290  # the rest, less 10 s to write the summary
    short = time.monotonic() + 540  # the default budget: env and bench leave the steps after them 240 s each
    assert round(runner.share(args, short, "env", ["bench", "reeval"])) == 60
    assert round(runner.share(args, short - 60, "bench", ["reeval"])) == 240


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


def test_a_step_past_its_share_gets_sigterm_first_then_sigkill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At the end of its share a step's process group gets SIGTERM, so a slice writes its record
    (here: a child that writes a file on SIGTERM), then SIGKILL after the grace (a child that
    ignores SIGTERM still ends)."""
    monkeypatch.setattr(process, "POLL_S", 0.2)
    monkeypatch.setattr(process, "GRACE_S", 5.0)
    mark = tmp_path / "record"
    polite = ("import pathlib, signal, sys, time\n"
              "def stop(*_):\n    pathlib.Path(sys.argv[1]).write_text('recorded'); sys.exit(143)\n"
              "signal.signal(signal.SIGTERM, stop)\nprint('started', flush=True)\ntime.sleep(60)\n")
    status = process.run_logged([sys.executable, "-c", polite, str(mark)], tmp_path / "a.log", time.monotonic() + 1.5)
    assert status == "killed at the end of its share (exit 143)" and mark.read_text() == "recorded"
    stubborn = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)\n"
    began = time.monotonic()
    status = process.run_logged([sys.executable, "-c", stubborn], tmp_path / "b.log", time.monotonic() + 1.5)
    assert status == f"killed at the end of its share (exit {-signal.SIGKILL})" and time.monotonic() - began < 30
