"""The driver lock of a run folder: one holder at a time, its pid in the refusal, a probe that
tells a live driver from none, and a folder that cannot be written named in one message."""

from __future__ import annotations

import os

import pytest
from filelock import FileLock

from nasrescale.errors import ConfigError
from nasrescale.pipeline.lock import LOCK_FILE, PID_FILE, driver_active, driver_lock, lock_if_present


def test_one_driver_at_a_time_and_the_probe_sees_it(tmp_path):
    run_dir = tmp_path / "run"
    assert driver_active(run_dir) is False  # no driver ever ran here
    with driver_lock(run_dir):
        assert driver_active(run_dir) is True
        pid = (run_dir / PID_FILE).read_text()
        assert pid == str(os.getpid())
    assert driver_active(run_dir) is False
    assert not (run_dir / PID_FILE).exists()
    (run_dir / PID_FILE).write_text("12345")  # as another driver records itself
    with FileLock(str(run_dir / LOCK_FILE)):  # ... and holds the lock (another open of it: another process's)
        with pytest.raises(ConfigError, match="another `nasrescale run` \\(pid 12345\\) is driving"):
            with driver_lock(run_dir):
                pass
    with driver_lock(run_dir):  # free again
        pass


def test_the_holder_may_enter_its_own_lock_again(tmp_path):
    """The command takes the lock before loading anything; the library's driver, under it, enters
    it again rather than refusing its own process; the pid file stays until the outer block ends."""
    run_dir = tmp_path / "run"
    with driver_lock(run_dir):
        with driver_lock(run_dir):
            assert (run_dir / PID_FILE).exists()
        assert (run_dir / PID_FILE).exists() and driver_active(run_dir) is True
    assert not (run_dir / PID_FILE).exists() and driver_active(run_dir) is False


def test_lock_if_present_creates_no_folder_and_holds_an_existing_one(tmp_path):
    run_dir = tmp_path / "run"
    with lock_if_present(run_dir):  # a new run folder: nothing to guard yet, nothing created
        assert not run_dir.exists()
    with lock_if_present(None):
        pass
    run_dir.mkdir()
    with lock_if_present(run_dir):
        assert driver_active(run_dir) is True
    assert driver_active(run_dir) is False


def test_a_run_folder_that_cannot_be_created(tmp_path):
    (tmp_path / "afile").write_text("")
    with pytest.raises(ConfigError, match="cannot write the run folder .*afile/run.* choose another results folder"):
        with driver_lock(tmp_path / "afile" / "run"):
            pass
