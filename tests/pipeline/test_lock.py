"""The driver lock of a run folder: one holder at a time, its pid in the refusal, a probe that
tells a live driver from none, and a folder that cannot be written named in one message."""

from __future__ import annotations

import pytest

from nasrescale.errors import ConfigError
from nasrescale.pipeline.lock import PID_FILE, driver_active, driver_lock


def test_one_driver_at_a_time_and_the_probe_sees_it(tmp_path):
    run_dir = tmp_path / "run"
    assert driver_active(run_dir) is False  # no driver ever ran here
    with driver_lock(run_dir):
        assert driver_active(run_dir) is True
        pid = (run_dir / PID_FILE).read_text()
        with pytest.raises(ConfigError, match=f"another `nasrescale run` \\(pid {pid}\\) is driving"):
            with driver_lock(run_dir):
                pass
    assert driver_active(run_dir) is False
    assert not (run_dir / PID_FILE).exists()
    with driver_lock(run_dir):  # free again
        pass


def test_a_run_folder_that_cannot_be_created(tmp_path):
    (tmp_path / "afile").write_text("")
    with pytest.raises(ConfigError, match="cannot write the run folder .*afile/run.* choose another results folder"):
        with driver_lock(tmp_path / "afile" / "run"):
            pass
