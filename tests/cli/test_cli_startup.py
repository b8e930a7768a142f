"""The command line starts fast: help and the analysis commands import no heavy library.

Each case runs the CLI in a fresh interpreter (a subprocess, so that nothing this test session
has imported counts) and reads ``sys.modules`` after the command returned.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: libraries that take seconds to import and that help and topology analysis never need
HEAVY = ("torch", "pandas", "matplotlib", "ray", "scipy")

#: runs the CLI's main with the given arguments, then prints which of HEAVY were imported
SCRIPT = """
import contextlib, io, json, sys
from nasrescale.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


def imported_heavy(*argv: str) -> list[str]:
    """The heavy libraries in ``sys.modules`` after ``nasrescale ARGV`` ran in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(heavy=HEAVY), *argv], capture_output=True,
                          text=True, env=env, cwd=ROOT, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.parametrize("argv", [("--help",), ("cells",), ("analyze", "3_33_333")], ids=" ".join)
def test_help_and_analysis_import_no_heavy_library(argv):
    assert imported_heavy(*argv) == []


def test_the_probe_sees_a_heavy_import():
    # `summary` builds networks: torch must show up, or the probe above could never fail
    assert "torch" in imported_heavy("summary", "3_33_333")
