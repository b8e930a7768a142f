"""A new op kind from a family file's ``imports`` (examples/new_op): it builds in the process that
read the family and in a fresh one that only unpickles it (an executor's worker)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from nasrescale.models import build_model
from nasrescale.space.families import read_family_file

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "new_op"
ARCH = "|dil_conv_3x3~0|+|skip_connect~0|dil_conv_3x3~1|+|skip_connect~0|none~1|skip_connect~2|"
UNPICKLE_AND_BUILD = """
import pickle, sys
from nasrescale.models import build_model
family = pickle.loads(sys.stdin.buffer.read())
model = build_model(sys.argv[1], family, width=4, cells=1)
print(type(model.cells()[0].edges["0_1"][1]).__name__, model.cells()[0].edges["0_1"][1].dilation)
"""


@pytest.fixture()
def dilated(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    return read_family_file(EXAMPLE / "nb201_dilated.toml")


def test_the_imported_kind_builds_and_keeps_the_node_size(dilated):
    assert dilated.imports == ("dilated_ops",)
    model = build_model(ARCH, dilated, width=4, cells=1)
    assert model(torch.zeros(2, 3, 8, 8)).shape == (2, 10)


def test_a_process_that_unpickles_the_family_imports_its_modules(dilated):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLE), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", UNPICKLE_AND_BUILD, ARCH], input=pickle.dumps(dilated), env=env,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stdout.decode().split() == ["Conv2d", "(2,", "2)"]
