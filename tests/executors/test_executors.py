"""The process-pool and Ray executors, on CPU, with the picklable fake jobs of ``_fake_jobs``.

Ray tests share ONE local Ray instance per module (startup takes seconds) and skip when ray is
not installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from _fake_jobs import FakeJob

from nasrescale.cli.main import main
from nasrescale.errors import ConfigError
from nasrescale.executors.base import ExecutorSettings
from nasrescale.executors.dispatch import KILL_HOOK_ENV
from nasrescale.executors.pool import PoolExecutor
from nasrescale.executors.executor_registry import executor_kinds
from nasrescale.pipeline.runner import run_pipeline
from nasrescale.pipeline.spec import load_pipeline


def _run(executor, jobs):
    """Run ``jobs``; return (outcomes by key, every outcome in delivery order, start order)."""
    delivered, started = [], []
    executor.run(jobs, on_outcome=delivered.append, on_start=started.append)
    return {o.key: o for o in delivered}, delivered, started


def _assert_once(delivered, jobs):
    counts = Counter(o.key for o in delivered)
    assert counts == Counter(j.key() for j in jobs), counts


# ---------------------------------------------------------------------------- every worker executor


@dataclass(frozen=True)
class WorkerExecutor:
    """An executor that runs jobs in worker processes, and how it words what it reports."""

    kind: str  #: its ``executor.kind``
    make: Callable[[int], Any]  #: a fresh executor with ``max_retries`` on this machine's CPU
    died: str  #: regex of the error of a job whose worker died on each of 2 attempts
    faulted: str  #: regex of the error of a job with a worker fault (OOM) on each of 2 attempts
    starts_per_attempt: bool  #: ``on_start`` marks every attempt (else only the submission)
    process_per_job: bool  #: every job runs in a fresh process (else workers are reused)
    needs: str | None = None  #: a module fixture that starts what it runs on (slow to start)


def _pool_executor(max_retries: int) -> PoolExecutor:
    return PoolExecutor(ExecutorSettings(max_retries=max_retries), devices=["cpu", "cpu"], progress=False)


def _ray_executor(max_retries: int = 2, **kw):
    from nasrescale.executors.ray_exec import RayExecutor

    return RayExecutor(ExecutorSettings(kind="ray", device="cpu", max_retries=max_retries, **kw), progress=False)


#: the worker executors by name: the pool is what ``kind = "local"`` runs on GPUs
WORKER_EXECUTORS = {
    "pool": WorkerExecutor("local", _pool_executor,
                           died=r"^WorkerDied: the worker process killed by signal SIGKILL on each of 2 attempt",
                           faulted=r"OutOfMemoryError", starts_per_attempt=True, process_per_job=True),
    "ray": WorkerExecutor("ray", _ray_executor, died=r"^WorkerDied: Ray reported \w+ after 2 attempt",
                          faulted=r"^WorkerFault on each of 2 attempt.*OutOfMemoryError",
                          starts_per_attempt=False, process_per_job=False, needs="ray_cluster"),
}


@pytest.fixture(params=[pytest.param(name, marks=[pytest.mark.slow] if w.needs else [])
                        for name, w in WORKER_EXECUTORS.items()])
def worker_executor(request) -> WorkerExecutor:
    """Each worker executor in turn; Ray's on the module's one local Ray instance."""
    executor = WORKER_EXECUTORS[request.param]
    if executor.needs:
        request.getfixturevalue(executor.needs)
    return executor


def test_every_executor_kind_has_a_worker_executor_under_test():
    assert {w.kind for w in WORKER_EXECUTORS.values()} == set(executor_kinds())


def _longest_first(jobs) -> list[str]:
    return [j.key() for j in sorted(jobs, key=lambda j: -j.weight)]


def test_runs_every_job_once_longest_first_in_worker_processes(worker_executor):
    jobs = [FakeJob("a", weight=1, seconds=0.2), FakeJob("b", weight=5, seconds=0.2),
            FakeJob("c", weight=3), FakeJob("d", weight=2)]
    by_key, delivered, started = _run(worker_executor.make(0), jobs)
    _assert_once(delivered, jobs)
    assert started == _longest_first(jobs)
    for o in delivered:
        assert (o.status, o.attempts) == ("done", 1), o
    pids = {o.record["pid"] for o in delivered}
    assert os.getpid() not in pids, "a job ran in the driver"
    if worker_executor.process_per_job:
        assert len(pids) == len(jobs), f"not one fresh process per job: {pids}"
    assert {o.record["device"] for o in delivered} == {"cpu"}


def test_failures_retries_and_worker_deaths(worker_executor, tmp_path):
    ok = [FakeJob("small", weight=1), FakeJob("big", weight=9, seconds=0.3), FakeJob("mid", weight=5, seconds=0.3)]
    jobs = [*ok, FakeJob("raises", weight=2, mode="raise"),
            FakeJob("killed-once", weight=3, mode="kill_first", marker=str(tmp_path / "k1")),
            FakeJob("oom-once", weight=4, mode="oom_first", marker=str(tmp_path / "o1")),
            FakeJob("always-dies", weight=0.5, mode="kill_always"),
            FakeJob("always-oom", weight=0.4, mode="oom_always")]
    by_key, delivered, started = _run(worker_executor.make(1), jobs)
    _assert_once(delivered, jobs)
    assert list(dict.fromkeys(started)) == _longest_first(jobs), started  # first attempts
    if worker_executor.starts_per_attempt:
        assert started.count("fake-always-dies") == 2, started
        assert started.count("fake-raises") == 1, started  # a job error is not retried
    else:
        assert len(started) == len(jobs), started
    for job in ok:
        outcome = by_key[job.key()]
        assert (outcome.status, outcome.attempts) == ("done", 1), outcome
        assert outcome.record["pid"] != os.getpid(), "a job ran in the driver"
    raised = by_key["fake-raises"]
    assert (raised.status, raised.attempts) == ("failed", 1), raised  # a job error is not retried
    assert "ValueError: job raises is broken" in raised.error
    for key in ("fake-killed-once", "fake-oom-once"):  # worker faults: retried, then done
        assert (by_key[key].status, by_key[key].attempts) == ("done", 2), by_key[key]
    for key, words in (("fake-always-dies", worker_executor.died), ("fake-always-oom", worker_executor.faulted)):
        outcome = by_key[key]  # retried, then failed with what went wrong each time
        assert (outcome.status, outcome.attempts) == ("failed", 2), outcome
        assert re.search(words, outcome.error), outcome.error


def test_kill_hook_kills_first_attempt_mid_job(worker_executor, monkeypatch):
    monkeypatch.setenv(KILL_HOOK_ENV, "fake-hooked")
    jobs = [FakeJob("hooked", mode="epochs"), FakeJob("spared", mode="epochs")]
    by_key, delivered, started = _run(worker_executor.make(2), jobs)
    _assert_once(delivered, jobs)
    for o in delivered:
        assert o.status == "done", o
    assert by_key["fake-hooked"].attempts == 2, "the hook did not kill the first attempt"
    assert by_key["fake-spared"].attempts == 1, "the hook killed a job it did not name"


# ---------------------------------------------------------------------------- process pool


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_pool_worker_exits_when_its_driver_is_killed(tmp_path):
    marker = tmp_path / "pid"
    script = (f"import sys; sys.path.insert(0, {str(Path(__file__).parents[1])!r})\n"
              "from _fake_jobs import FakeJob\n"
              "from nasrescale.executors.base import ExecutorSettings\n"
              "from nasrescale.executors.pool import PoolExecutor\n"
              "PoolExecutor(ExecutorSettings(), devices=['cpu'], progress=False).run(\n"
              f"    [FakeJob('long', seconds=120, marker={str(marker)!r})], print)\n")
    root = str(Path(__file__).parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    driver = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        deadline = time.monotonic() + 60
        while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        worker = int(marker.read_text())
        assert _alive(worker)
    finally:
        driver.kill()  # SIGKILL: the driver gets no chance to end its workers
        driver.wait()
    deadline = time.monotonic() + 10  # the worker checks on its parent every second
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(worker), "the worker outlived its killed driver"


def test_pool_rejects_no_devices_and_cuda_without_gpu():
    with pytest.raises(ConfigError, match="devices"):
        PoolExecutor(ExecutorSettings(), devices=[])
    import torch

    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="executor.device = 'cuda'"):
            PoolExecutor(ExecutorSettings(device="cuda"))
        assert PoolExecutor(ExecutorSettings(device="auto")).devices == ["cpu"]


# ---------------------------------------------------------------------------- Ray


def test_missing_ray_names_the_extra(monkeypatch):
    from nasrescale.executors.ray_exec import import_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail
    with pytest.raises(ConfigError, match=r"pip install 'nasrescale\[ray\]'"):
        import_ray()


def test_starting_ray_keeps_the_callers_sigterm_handler(monkeypatch):
    """ray.init sets a SIGTERM handler that calls sys.exit; the caller's (a slice's, which writes
    its record first) is put back. A fake ray whose init does what Ray's does."""
    import signal
    import types

    from nasrescale.executors.ray_exec import _restore_env, start_local_ray

    def rays_handler(signum, frame):
        raise SystemExit(signum)

    fake = types.SimpleNamespace(init=lambda **_: signal.signal(signal.SIGTERM, rays_handler))
    monkeypatch.setitem(sys.modules, "ray", fake)
    mine = lambda signum, frame: None  # noqa: E731
    before = signal.signal(signal.SIGTERM, mine)
    temp = Path(tempfile.mkdtemp(prefix="nrsig"))  # short: Ray's socket paths go under it
    try:
        saved = start_local_ray(temp, num_cpus=1)
        assert signal.getsignal(signal.SIGTERM) is mine
        _restore_env(saved)
    finally:
        signal.signal(signal.SIGTERM, before)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    """One local Ray instance (2 CPUs) for the module, started by nasrescale's own helper,
    with HOME pointed at an empty folder to check that nothing is written under it."""
    ray = pytest.importorskip("ray")
    import _fake_jobs

    from nasrescale.executors.ray_exec import _restore_env, start_local_ray

    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        temp = Path("/tmp") / f"nr-test-{os.getpid()}"  # short: Unix socket path limit
        saved = start_local_ray(temp, num_cpus=2)
        ray.cloudpickle.register_pickle_by_value(_fake_jobs)  # workers need not import it
        try:
            yield {"ray": ray, "home": home, "temp": temp}
        finally:
            ray.shutdown()
            _restore_env(saved)
            shutil.rmtree(temp, ignore_errors=True)


def test_ray_gpu_request_on_cpu_cluster_fails_fast(ray_cluster):
    from nasrescale.executors.ray_exec import RayExecutor

    never = [FakeJob("never")]
    with pytest.raises(ConfigError, match="has no GPUs.*executor.device = 'cpu'"):
        RayExecutor(ExecutorSettings(kind="ray", device="cuda"), progress=False).run(never, print)
    with pytest.raises(ConfigError, match="cpus_per_job = 64"):
        RayExecutor(ExecutorSettings(kind="ray", cpus_per_job=64), progress=False).run(never, print)


def test_ray_local_instance_writes_nothing_under_home(ray_cluster):
    assert not (ray_cluster["home"] / ".ray").exists()  # Ray would put its auth token there
    assert (ray_cluster["temp"] / "auth_token").exists()


# ---------------------------------------------------------------------------- a real pipeline on Ray

TINY = ["archs.count=3", "pipeline.seeds=[0]", "budget.epochs=2", "budget.width=4", "budget.cells=1",
        "budget.train_subset=64", "budget.test_subset=32", "executor.kind=ray", "executor.device=cpu",
        "executor.max_retries=1"]


def _run_on_ray(pipeline_name: str, settings: list[str], results: Path, capsys) -> None:
    """``nasrescale run`` with ``settings`` (which ask for Ray)."""
    args = ["run", pipeline_name, "--results", str(results), "--quiet"]
    for item in settings:
        args += ["--set", item]
    assert main(args) == 0, capsys.readouterr().err


def _run_on_pool(pipeline_name: str, settings: list[str], results: Path, capsys) -> None:
    """The GPU pool's code path on two CPU slots, driven by the real pipeline runner."""
    pipeline = load_pipeline(pipeline_name, settings)
    pool = PoolExecutor(pipeline.executor, devices=["cpu", "cpu"],
                        checkpoint_dir=results / pipeline_name / "checkpoints", progress=False)
    summary = run_pipeline(pipeline, results, progress=False, executor=pool)
    assert summary.failed == 0, summary.counts
    assert summary.counts["done"] == len(pipeline.jobs(pipeline.arch_list())), summary.counts


def _run_killing_the_longest_job(settings: list[str], run: Callable[..., None], results: Path, monkeypatch,
                                 capsys) -> tuple[list[Any], Any, sqlite3.Connection, list[tuple]]:
    """Run ``quickstart`` with ``settings`` by ``run``, the worker of its longest job (trained, not a
    degenerate cell) SIGKILLed by the test-only hook when epoch 2 of 2 ends, after epoch 1's
    checkpoint. Checks that every job is stored once and done; returns the jobs, the killed one,
    the store and its rows (key, status, attempts, record_json)."""
    pipeline = load_pipeline("quickstart", settings)
    jobs = pipeline.jobs(pipeline.arch_list())
    victim = max(jobs, key=lambda j: j.cost())
    monkeypatch.setenv(KILL_HOOK_ENV, f"{victim.key()}@2")
    run("quickstart", settings, results, capsys)
    db = sqlite3.connect(results / "quickstart" / "store.sqlite")
    rows = db.execute("SELECT key, status, attempts, record_json FROM jobs").fetchall()
    assert sorted(k for k, *_ in rows) == sorted(j.key() for j in jobs)  # one row per job
    assert {s for _, s, _, _ in rows} == {"done"}
    return jobs, victim, db, rows


#: how a pipeline runs on each worker executor (one entry per WORKER_EXECUTORS): its settings and its driver
PIPELINE_ON = {"pool": (TINY[:-3], _run_on_pool), "ray": (TINY, _run_on_ray)}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(WORKER_EXECUTORS))
def test_pipeline_worker_killed_mid_job_is_retried_and_stored_once(name, request, tmp_path, monkeypatch, capsys):
    if WORKER_EXECUTORS[name].needs:
        request.getfixturevalue(WORKER_EXECUTORS[name].needs)
    jobs, victim, db, rows = _run_killing_the_longest_job(*PIPELINE_ON[name], tmp_path, monkeypatch, capsys)
    attempts = {k: a for k, _, a, _ in rows}
    records = {k: json.loads(r) for k, _, _, r in rows}
    assert attempts[victim.key()] == 2, "the killed job was not retried once"
    assert records[victim.key()]["resumed_from"] == 1, "the retry did not resume the killed attempt"
    for job in jobs:
        if job is not victim:
            assert records[job.key()]["resumed_from"] is None, job.key()
    epochs = db.execute("SELECT epoch FROM curves WHERE key = ? ORDER BY epoch", (victim.key(),)).fetchall()
    assert [e for (e,) in epochs] == [1, 2]  # curves stored once, not once per attempt
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.slow
def test_ray_fused_group_killed_mid_job_is_retried_as_a_group_and_resumes(ray_cluster, tmp_path, monkeypatch,
                                                                          capsys):
    """``executor.fuse = true`` on Ray: one task per fused group; a member's worker SIGKILLed
    mid-group retries the whole group, which resumes from its fused checkpoint; one row per job,
    and the store's attempts come from Ray's attempt count (the driver saw one start)."""
    jobs, victim, _, rows = _run_killing_the_longest_job(TINY + ["executor.fuse=true"], _run_on_ray,
                                                          tmp_path, monkeypatch, capsys)
    mates = {j.key() for j in jobs if j.arch == victim.arch}  # its fused group: seed 0 x both protocols
    assert len(mates) == 2
    for key, _, attempts, record in rows:
        rec = json.loads(record)
        if key in mates:  # the killed group: retried once, resumed from epoch 1's fused checkpoint
            assert (attempts, rec["resumed_from"], rec["provenance"]["fused_members"]) == (2, 1, 2)
        else:
            assert (attempts, rec["resumed_from"]) == (1, None), key
            assert rec["degenerate"] or rec["provenance"]["fused_members"] == 2, rec
    assert not list((tmp_path / "quickstart" / "checkpoints").glob("fused-*.pt"))
