"""The driver lock comes first (issue 63): a second ``nasrescale run`` of a folder a driver holds is
refused before torch, the data or the reference are loaded; a run stopped by SIGTERM or Ctrl-C
(SIGINT) leaves no ``.driver.pid`` behind and frees the lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

from nasrescale.errors import ConfigError
from nasrescale.pipeline import runner
from nasrescale.pipeline.lock import LOCK_FILE, PID_FILE, driver_active
from nasrescale.pipeline.spec import load_pipeline

from pipeline_helpers import private_cache, tiny_pipeline  # noqa: F401  (fixture, used by name)

ROOT = Path(__file__).resolve().parents[2]

#: ``nasrescale run ARGV`` in a fresh interpreter; prints its exit code and which of the modules
#: that load torch (the torch/torchvision install check included), pipelines and data were imported
REFUSED = """
import json, sys
from nasrescale.cli import main as cli
code = cli.main(sys.argv[1:])
loaded = ["torch", "nasrescale.pipeline.spec", "nasrescale.data.datasets"]
print(json.dumps({"code": code, "loaded": [m for m in loaded if m in sys.modules]}))
"""

#: ``nasrescale run ARGV[1:]`` whose driver, once it holds the store (lock taken, pid written),
#: touches the file ARGV[0] and waits there for a signal
# a shell that starts a command in the background without job control hands it SIGINT ignored;
# a run in a terminal has Python's own handler (Ctrl-C is KeyboardInterrupt), which the child restores
STOPPED = """
import signal, sys, time
from pathlib import Path
signal.signal(signal.SIGINT, signal.default_int_handler)
from nasrescale.cli.main import main
from nasrescale.pipeline import runner

def waiting(*args, **kwargs):
    Path(sys.argv[1]).touch()
    time.sleep(600)

runner._drive = waiting
sys.exit(main(sys.argv[2:]))
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "OMP_NUM_THREADS": "1"}


def _pipeline(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_pipeline("tiny"))
    return path


def test_a_second_run_is_refused_before_torch_is_imported(tmp_path):
    """While another process holds the folder's lock, `run` exits 2 naming that driver's pid, and
    the interpreter never imported torch, the pipeline loader or the datasets: the lock was
    checked before anything heavy, the data and the reference included, was loaded."""
    path, results = _pipeline(tmp_path), tmp_path / "res"
    run_dir = results / "tiny"
    run_dir.mkdir(parents=True)
    (run_dir / PID_FILE).write_text("4242")
    with FileLock(str(run_dir / LOCK_FILE)):
        proc = subprocess.run([sys.executable, "-c", REFUSED, "run", str(path), "--results", str(results),
                               "--quiet"], capture_output=True, text=True, env=_env(), timeout=600)
    assert json.loads(proc.stdout.splitlines()[-1]) == {"code": 2, "loaded": []}, proc.stderr
    assert "another `nasrescale run` (pid 4242) is driving" in proc.stderr
    assert sorted(p.name for p in run_dir.iterdir()) == [LOCK_FILE, PID_FILE]  # no store, nothing else


def test_run_pipeline_is_refused_before_its_plan(tmp_path, monkeypatch):
    """The library's driver too: a held folder is refused before the plan (data, reference) is made."""
    pipeline = load_pipeline(_pipeline(tmp_path))
    run_dir = tmp_path / "res" / "tiny"
    run_dir.mkdir(parents=True)

    def no_plan(*args, **kwargs):
        raise AssertionError("the plan was made (data loaded) before the lock was checked")

    monkeypatch.setattr(runner, "plan_pipeline", no_plan)
    with FileLock(str(run_dir / LOCK_FILE)):
        with pytest.raises(ConfigError, match="another `nasrescale run`"):
            runner.run_pipeline(pipeline, tmp_path / "res", progress=False)


@pytest.mark.parametrize("signum, code, folder_exists", [
    (signal.SIGTERM, 143, True),   # the command's early lock
    (signal.SIGTERM, 143, False),  # a new folder: the lock the driver takes when it creates it
    (signal.SIGINT, 130, True),
], ids=["sigterm", "sigterm-new-folder", "sigint"])
def test_a_stopped_run_leaves_no_pid_file(tmp_path, signum, code, folder_exists):
    path, results = _pipeline(tmp_path), tmp_path / "res"
    run_dir, held = results / "tiny", tmp_path / "held"
    if folder_exists:
        run_dir.mkdir(parents=True)
    proc = subprocess.Popen([sys.executable, "-c", STOPPED, str(held), "run", str(path), "--results", str(results),
                             "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    try:
        deadline = time.monotonic() + 600  # a loaded machine imports torch slowly; no timing is asserted
        while not held.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert held.exists(), proc.communicate()[1]
        assert (run_dir / PID_FILE).read_text() == str(proc.pid) and driver_active(run_dir) is True
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert not (run_dir / PID_FILE).exists()
    assert driver_active(run_dir) is False
