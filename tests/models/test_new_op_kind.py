"""A new op kind from a family file's ``imports`` (examples/new_op): it builds in the process that
reads the family and in a fresh one that only unpickles it (an executor's worker). Both run in
subprocesses, so that the kind never joins this process's registries (other tests list them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "new_op"
ARCH = "|dil_conv_3x3~0|+|skip_connect~0|dil_conv_3x3~1|+|skip_connect~0|none~1|skip_connect~2|"
READ_BUILD_PICKLE = """
import pickle, sys, torch
from nasrescale.models import build_model
from nasrescale.space.family_file import read_family_file
family = read_family_file(sys.argv[2])
assert family.imports == ("dilated_ops",), family.imports
model = build_model(sys.argv[1], family, width=4, cells=1)
assert model(torch.zeros(2, 3, 8, 8)).shape == (2, 10)  # the dilated conv keeps each node's size
sys.stdout.buffer.write(pickle.dumps(family))
"""
UNPICKLE_BUILD = """
import pickle, sys
from nasrescale.models import build_model
family = pickle.loads(sys.stdin.buffer.read())
conv = build_model(sys.argv[1], family, width=4, cells=1).cells()[0].edges["0_1"][1]
print(type(conv).__name__, *conv.dilation)
"""


def _python(script: str, stdin: bytes = b"", *args: str) -> bytes:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLE), str(ROOT)]), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", script, ARCH, *args], input=stdin, env=env, capture_output=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return done.stdout


@pytest.mark.slow
def test_a_new_op_kind_builds_where_the_family_is_read_and_where_it_is_unpickled():
    pickled = _python(READ_BUILD_PICKLE, b"", str(EXAMPLE / "nb201_dilated.toml"))
    assert _python(UNPICKLE_BUILD, pickled).decode().split() == ["Conv2d", "2", "2"]
