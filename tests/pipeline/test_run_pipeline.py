"""`nasrescale run/status/export` end to end on tiny pipelines: resume after kill -9, torn
checkpoints, failing and diverging jobs, and bad input that leaves stored results untouched."""

from __future__ import annotations

import csv
import gzip
import json
import os
import random
import signal
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from filelock import FileLock

from nasrescale.cli.main import main
from nasrescale.jobs.job import TrainJob
from nasrescale.pipeline.lock import LOCK_FILE, PID_FILE
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.train.options import RunOptions

from pipeline_helpers import DEGENERATE, TINY, one_thread, private_cache  # noqa: F401  (fixtures, used by name)


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def dump(store: Path) -> list:
    """Every row of every table (what "untouched" means)."""
    with sqlite3.connect(store) as db:
        return [db.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in ("meta", "jobs", "curves")]


def tiny_imagefolder(root: Path, train: int = 10, test: int = 5) -> Path:
    """A CIFAR-10-named image folder of random 32x32 PNGs (decoded once, then cached)."""
    from PIL import Image
    from nasrescale.data import CIFAR10_CLASSES

    gen = np.random.default_rng(0)
    for split, n in (("train", train), ("test", test)):
        for name in CIFAR10_CLASSES:
            (root / split / name).mkdir(parents=True)
            for i in range(n):
                Image.fromarray(gen.integers(0, 256, (32, 32, 3), dtype=np.uint8)).save(root / split / name / f"{i}.png")
    return root


@pytest.fixture()
def tiny(tmp_path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def test_run_status_export_and_a_rerun_that_does_nothing(capsys, tiny, tmp_path):
    results = str(tmp_path / "res")
    code, out, err = cli(capsys, "run", str(tiny), "--results", results, "--quiet")
    assert code == 0, err
    assert "default" in out
    assert "rescaled" in out  # the final table
    report = (tmp_path / "res" / "tiny" / "report.md").read_text()
    assert "| epochs | 1 |" in report
    assert "| precision (as trained) | fp32 |" in report
    assert "| device | cpu (" in report
    assert "1 epochs, not the benchmark's 200" in report  # and what that budget cannot show
    store = tmp_path / "res" / "tiny" / "store.sqlite"
    before = dump(store)
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT status, degenerate, test_accuracy, attempts FROM jobs").fetchall()
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert json.loads(db.execute("SELECT value FROM meta WHERE key='pipeline'").fetchone()[0])["budget"]["epochs"] == 1
        assert db.execute("SELECT value FROM meta WHERE key='base_lr:rescaled'").fetchone()[0] == "0.3"
        picked = int(db.execute("SELECT value FROM meta WHERE key='cpu_threads'").fetchone()[0])  # once per run
        ran = {json.loads(r)["provenance"]["threads"] for (r,) in db.execute(
            "SELECT record_json FROM jobs WHERE degenerate = 0").fetchall()}
        assert ran == {picked}  # every trained job ran with the count the run picked and stored
    assert sorted(r[0] for r in rows) == ["done"] * 4
    assert sum(r[1] for r in rows) == 2
    for row in rows:
        if row[1]:  # degenerate: chance accuracy
            assert row[2] == pytest.approx(10.0), row
        assert row[3] == 1, row
    assert not list((tmp_path / "res" / "tiny" / "checkpoints").glob("*.pt"))  # deleted once stored
    code, out, err = cli(capsys, "run", str(tiny), "--results", results, "--quiet")
    assert code == 0
    assert "0 new, 0 run now" in err
    assert dump(store) == before
    code, out, _ = cli(capsys, "status", str(tiny), "--results", results)
    assert code == 0
    assert "4/4 jobs finished" in out
    assert "done 4" in out
    code, _, _ = cli(capsys, "export", "tiny", "--results", results, "--out", str(tmp_path / "t.csv"))
    with open(tmp_path / "t.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert code == 0
    assert len(table) == 4
    assert {"arch", "protocol", "seed", "status", "test_accuracy", "lr", "lr_scale", "epochs", "wall_time_s"} <= set(table[0])
    trained = [r for r in table if r["degenerate"] == "False"]
    assert {r["base_lr"] for r in table if r["protocol"] == "default"} == {""}  # nb201 has no base LR
    assert {r["base_lr"] for r in table if r["protocol"] == "rescaled"} == {"0.3"}
    assert {r["protocol"] for r in trained} == {"default", "rescaled"}
    assert all(float(r["wall_time_s"]) > 0 for r in trained)
    for target in (store, tmp_path / "t_copy.db"):  # an export aimed at the store (or any SQLite file) is refused
        if target != store:
            shutil.copy(store, target)
        with pytest.raises(SystemExit) as exc:
            cli(capsys, "export", "tiny", "--results", results, "--out", str(target))
        assert exc.value.code == 2 and "is a SQLite database" in capsys.readouterr().err
    assert dump(store) == before


@pytest.mark.parametrize(("argv", "fragment"), [
    (["--set", "budget.epochz=3"], "budget.epochz: unknown key"),
    (["--set", "executor.kind=slurm"], "executor.kind: expected one of 'local', 'ray'"),
    (["--set", "budget.epochs=2"], "different pipeline (differs in: budget.epochs"),
    (["--set", "archs.names=['3_11_111']"], "differs in: arch_list"),
    (["--set", "nonsense"], "expected KEY=VALUE"),
    (["--set", "data.name=cifar11"], "data.name: 'cifar11' is not a registered dataset; expected one of 'cifar10'"),
])
def test_bad_input_exits_2_and_leaves_the_store_alone(capsys, tiny, tmp_path, argv, fragment):
    results = str(tmp_path / "res")
    assert cli(capsys, "run", str(tiny), "--results", results, "--quiet")[0] == 0
    store = tmp_path / "res" / "tiny" / "store.sqlite"
    before = dump(store)
    for dry in ([], ["--dry-run"]):  # --dry-run refuses what the run would
        code, out, err = cli(capsys, "run", str(tiny), "--results", results, "--quiet", *argv, *dry)
        assert code == 2, err
        assert fragment in err, err
        assert "Traceback" not in err, err
        assert dump(store) == before
    broken = tmp_path / "broken.toml"
    broken.write_text(TINY.replace("[budget]", "[budget]\nwidht = 3"))
    code, _, err = cli(capsys, "run", str(broken), "--results", results)
    assert code == 2
    assert "budget.widht: unknown key" in err
    assert dump(store) == before


def test_a_store_shipped_packed_alone_is_checked_by_dry_run_without_unpacking_it(capsys, tiny, tmp_path):
    """Committed results ship ``store.sqlite.gz`` alone: ``--dry-run`` of a different pipeline under
    its name is refused as the run would refuse it, and leaves the folder as it was (no store beside it)."""
    results = str(tmp_path / "res")
    assert cli(capsys, "run", str(tiny), "--results", results, "--quiet")[0] == 0
    run_dir = tmp_path / "res" / "tiny"
    with open(run_dir / "store.sqlite", "rb") as src, gzip.open(run_dir / "store.sqlite.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    for extra in run_dir.glob("store.sqlite*"):
        if extra.name != "store.sqlite.gz":
            extra.unlink()
    before = sorted(p.name for p in run_dir.iterdir())
    code, _, err = cli(capsys, "run", str(tiny), "--results", results, "--dry-run", "--set", "budget.epochs=2")
    assert code == 2 and "different pipeline (differs in: budget.epochs" in err, err
    assert sorted(p.name for p in run_dir.iterdir()) == before
    assert cli(capsys, "run", str(tiny), "--results", results, "--dry-run")[0] == 0  # the same pipeline passes
    (run_dir / "store.sqlite.gz").write_bytes(b"not gzip")  # a damaged pack: said, and nothing left behind
    code, _, err = cli(capsys, "run", str(tiny), "--results", results, "--dry-run")
    assert code == 2 and "store.sqlite.gz' does not unpack to a store" in err, err
    assert sorted(p.name for p in run_dir.iterdir()) == before


def test_a_second_driver_is_refused(capsys, tiny, tmp_path):
    run_dir = tmp_path / "res" / "tiny"
    run_dir.mkdir(parents=True)
    (run_dir / PID_FILE).write_text("12345")
    with FileLock(str(run_dir / LOCK_FILE)):  # as a running driver holds it
        code, _, err = cli(capsys, "run", str(tiny), "--results", str(tmp_path / "res"), "--quiet")
    assert code == 2
    assert "another `nasrescale run` (pid 12345)" in err
    assert not (run_dir / "store.sqlite").exists()


def test_missing_pipeline_and_missing_results_exit_2(capsys, tmp_path):
    code, _, err = cli(capsys, "run", "no_such_pipeline")
    assert code == 2
    assert "quickstart" in err
    code, _, err = cli(capsys, "status", "quickstart", "--results", str(tmp_path))
    assert code == 2
    assert "run the pipeline first" in err


def test_failed_job_is_recorded_the_run_continues_and_a_rerun_retries_it(capsys, tiny, tmp_path, monkeypatch):
    real_run = TrainJob.run

    def flaky(self, options=None):
        if self.label == "rescaled" and not self.degenerate:
            raise RuntimeError("boom: simulated fault")
        return real_run(self, options)

    monkeypatch.setattr(TrainJob, "run", flaky)
    results = str(tmp_path / "res")
    code, _, err = cli(capsys, "run", str(tiny), "--results", results, "--quiet")
    assert code == 1
    assert "1 job(s) failed" in err
    assert f"see `nasrescale status {tiny} --results {results}`" in err  # the hint keeps --results
    store = tmp_path / "res" / "tiny" / "store.sqlite"
    with sqlite3.connect(store) as db:
        statuses = dict(db.execute("SELECT status, count(*) FROM jobs GROUP BY status").fetchall())
        error = db.execute("SELECT error FROM jobs WHERE status='failed'").fetchone()[0]
    assert statuses == {"done": 3, "failed": 1}
    assert "RuntimeError: boom: simulated fault" in error
    code, out, _ = cli(capsys, "status", str(tiny), "--results", results)
    assert "failed 1" in out
    assert "boom" in out
    monkeypatch.setattr(TrainJob, "run", real_run)
    code, _, err = cli(capsys, "run", str(tiny), "--results", results, "--quiet")
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT status, attempts, error FROM jobs WHERE protocol='rescaled' AND degenerate=0").fetchall()
    assert code == 0
    assert rows == [("done", 2, None)]


def test_nan_run_is_diverged_and_not_rerun(capsys, tmp_path):
    path = tmp_path / "div.toml"
    path.write_text("""
[pipeline]
name = "div"
family = "mlp_dag"
[archs]
select = "list"
names = ["2_22_222_2222"]
[protocols.hot]
protocol = "nb201"
lr = 50.0
[budget]
epochs = 3
width = 32
train_subset = 500
test_subset = 100
[executor]
device = "cpu"
""")
    results = str(tmp_path / "res")
    code, _, err = cli(capsys, "run", str(path), "--results", results, "--quiet")
    store = tmp_path / "res" / "div" / "store.sqlite"
    with sqlite3.connect(store) as db:
        row = db.execute("SELECT status, test_accuracy, record_json FROM jobs").fetchone()
    assert code == 0
    assert row[0] == "diverged"
    assert row[1] is None
    assert json.loads(row[2])["diverged_epoch"] in (1, 2, 3)
    code, _, err = cli(capsys, "run", str(path), "--results", results, "--quiet")
    assert code == 0
    assert "0 run now" in err


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_torn_checkpoint_is_reported_and_the_job_restarts(capsys, tiny, tmp_path, damage):
    pipeline = load_pipeline(tiny, ["budget.epochs=2"])
    job = next(j for j in pipeline.jobs() if not j.degenerate and j.label == "default")
    ckpt_dir = tmp_path / "res" / "tiny" / "checkpoints"
    ckpt_dir.mkdir(parents=True)
    ckpt = job.checkpoint_path(ckpt_dir)
    if damage == "garbage":
        ckpt.write_bytes(b"\x00not a checkpoint" * 50)
    else:  # a real checkpoint cut in half
        job.run(RunOptions(checkpoint_dir=ckpt_dir))
        data = ckpt.read_bytes()
        ckpt.write_bytes(data[: len(data) // 2])
    code, _, err = cli(capsys, "run", str(tiny), "--set", "budget.epochs=2", "--results", str(tmp_path / "res"), "--quiet")
    assert code == 0
    assert "moved aside, restarting the job from epoch 0" in err
    with sqlite3.connect(tmp_path / "res" / "tiny" / "store.sqlite") as db:
        status, record = db.execute("SELECT status, record_json FROM jobs WHERE key = ?", (job.key(),)).fetchone()
    record = json.loads(record)
    assert status == "done"
    assert "unreadable" in record["checkpoint_discarded"]
    assert record["resumed_from"] is None
    assert record["epochs_run"] == 2
    assert (ckpt_dir / f"{job.key()}.pt.corrupt").is_file()


def _count(store: Path, sql: str) -> int:
    """One count from the store (0 before it exists, or while the driver creates it)."""
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store) as db:
            return db.execute(sql).fetchone()[0]
    except sqlite3.Error:
        return 0


def _done(store: Path) -> int:
    """Jobs stored as done so far."""
    return _count(store, "SELECT count(*) FROM jobs WHERE status = 'done'")


def _attempts(store: Path) -> int:
    """Job starts recorded so far."""
    return _count(store, "SELECT coalesce(sum(attempts), 0) FROM jobs")


def test_kill_9_at_random_moments_then_resume(tmp_path):
    """SIGKILL a real `nasrescale run` at random moments; rerun until done. Every job ends done
    exactly once, a job finished before a kill is never retrained, and the file is sound."""
    data = tiny_imagefolder(tmp_path / "images")
    path = tmp_path / "crash.toml"
    path.write_text(TINY.replace('name = "tiny"', 'name = "crash"').replace("seeds = [0]", "seeds = [0, 1]")
                    .replace('select = "list"', 'select = "uniform"\ncount = 4\nseed = 3\ninclude = ["' + DEGENERATE + '"]')
                    .replace("epochs = 1", "epochs = 3").replace("train_subset = 100\ntest_subset = 100\n", "")
                    .replace("[budget]", f'[data]\nname = "imagefolder"\npath = "{data}"\n\n[budget]'))
    env = {**os.environ, "NASRESCALE_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "nasrescale", "run", str(path), "--results", str(tmp_path / "res"), "--quiet"]
    store = tmp_path / "res" / "crash" / "store.sqlite"
    rng = random.Random(7)
    finished: dict[str, str] = {}  # key -> record_json of jobs done before some kill
    kills, mid_run = 0, 0
    for _ in range(10):  # >= 3 kills, at least one of them with some jobs done and some not
        if kills >= 3 and mid_run:
            break
        started = _attempts(store)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while proc.poll() is None and time.time() < deadline and _attempts(store) == started:
            time.sleep(0.05)  # until this process starts its first job
        done_before = _done(store)
        while proc.poll() is None and time.time() < deadline and _done(store) == done_before:
            time.sleep(0.05)  # until this process has finished a job (the first also loads the data)
        time.sleep(rng.uniform(0.0, 1.0))  # then at a random moment of the next job(s)
        if proc.poll() is not None:  # it finished first: nothing was killed
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        with sqlite3.connect(store) as db:
            for key, record in db.execute("SELECT key, record_json FROM jobs WHERE status = 'done'"):
                assert finished.setdefault(key, record) == record  # never rewritten
            n_done = db.execute("SELECT count(*) FROM jobs WHERE status = 'done'").fetchone()[0]
        mid_run += 0 < n_done < 16
    assert kills >= 1, (kills, mid_run)
    assert mid_run >= 1, (kills, mid_run)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = db.execute("SELECT key, status, degenerate, record_json FROM jobs").fetchall()
        curves = dict(db.execute("SELECT key, count(*) FROM curves GROUP BY key").fetchall())
    assert len(rows) == 4 * 2 * 2
    assert {r[1] for r in rows} == {"done"}
    for key, _, degenerate, record in rows:
        if key in finished:
            assert finished[key] == record  # done before a kill: not retrained
        assert curves.get(key, 0) == (0 if degenerate else 3)  # each epoch stored once
    assert not list((tmp_path / "res" / "crash" / "checkpoints").glob("*.pt"))
