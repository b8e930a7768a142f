"""A step's process: run in the checkout, its output logged and echoed, and ended at the end of its
share (SIGTERM to its process group, so a slice writes its record, then SIGKILL)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable

from . import ROOT

__all__ = ["POLL_S", "GRACE_S", "utc", "run_logged", "stop"]

POLL_S = 30.0  # how often a running step's output is echoed and the re-evaluation's store copied out
GRACE_S = 20.0  # after SIGTERM at the end of a share, before SIGKILL: a slice writes its record in it


def utc() -> str:
    """Now, as allocation.json and env.txt write it (``2026-11-26T12:36:22Z``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def run_logged(cmd: list[str], log: Path, end: float, tick: Callable[[], None] = lambda: None) -> str:
    """Run ``cmd`` in the checkout, its output appended to ``log`` and echoed, ``tick`` called every
    ``POLL_S``; at ``end`` (monotonic) its process group (workers included) gets SIGTERM (a slice
    then writes its record) and, ``GRACE_S`` later, SIGKILL. Its status."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a", encoding="utf-8") as out, open(log, encoding="utf-8", errors="replace") as echo:
        out.write(f"$ {shlex.join(cmd)}\n")
        out.flush()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
        status = ""
        while not status:
            try:
                code = proc.wait(timeout=max(0.1, min(POLL_S, end - time.monotonic())))
                status = "ok" if code == 0 else f"exit {code}"
            except subprocess.TimeoutExpired:
                if time.monotonic() >= end:
                    status = f"killed at the end of its share (exit {stop(proc)})"
            print(echo.read(), end="", flush=True)
            tick()
        out.write(f"# {status}\n")
    return status


def stop(proc: subprocess.Popen) -> int:
    """SIGTERM to ``proc``'s process group, then SIGKILL to what is left after ``GRACE_S``; its exit code."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group's workers too, had the leader already ended
    except ProcessLookupError:
        pass
    return proc.wait()
