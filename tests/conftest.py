"""Shared fixtures: the built-in families, a small test family with every topology case, and
``float64`` for the tests that compare two runs.

The tests sit in one folder per package (``tests/space/``, ``tests/pipeline/``, ...) and are
imported with ``--import-mode=importlib``, which puts no test folder on ``sys.path``. This file,
loaded before any test module below it, puts ``tests/`` there, so that every test module imports
the shared helpers (``pipeline_helpers``, ``rank_store_builder``, ``_fake_jobs``) by name, and so
do the worker processes the executors spawn (they inherit ``sys.path``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest
import torch

from nasrescale.space.family_file import parse_family
from nasrescale.space.family_loader import get_family

#: the folder of the shared test helpers
TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

# A family with no fixed node count, used by the random-DAG property tests: a zero op, a
# ReLU-free op and a parametric op of relu_depth 1, with kernels for the kernel-rule tests.
TEST_FAMILY_TOML = """
[family]
name = "anydag"
encoding = "edges"
depth_offset = 2
base = '[[0, 1, "skip"]]'
kernel_base = 3

[[ops]]
name = "zero"
kind = "zero"

[[ops]]
name = "skip"
kind = "identity"

[[ops]]
name = "conv1"
kind = "conv_relu"
kernel = 1

[[ops]]
name = "conv3"
kind = "conv_relu"
kernel = 3

[[ops]]
name = "conv5"
kind = "conv_relu"
kernel = 5
"""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the long fuzz runs (marker ``long_fuzz``, thousands of examples each) unless
    ``-m`` selects ``slow``: ``pytest -m slow -k fuzz`` runs them, the plain suite does not."""
    if "slow" in (config.option.markexpr or ""):
        return
    dropped = [item for item in items if item.get_closest_marker("long_fuzz")]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not item.get_closest_marker("long_fuzz")]


@pytest.fixture(scope="session")
def nb201():
    return get_family("nb201")


@pytest.fixture(scope="session")
def mlp_dag():
    return get_family("mlp_dag")


@pytest.fixture(scope="session")
def anydag():
    return parse_family(TEST_FAMILY_TOML, source="anydag.toml")


#: relative tolerance of float64 cross-run comparisons: float64 rounding (~1e-16) amplified by a
#: few chaotic SGD steps stays far below it; a real difference (a mean for a sum, a wrong LR) is
#: orders of magnitude above it
FLOAT64_REL = 1e-9


@pytest.fixture()
def float64() -> Iterator[float]:
    """Build (and so train) models in float64 for the test: a run compared with another run
    (fused vs single, μP vs default) then agrees to :data:`FLOAT64_REL` on any CPU, whatever
    order its kernels sum in. In float32 a second epoch at lr 0.1 amplifies that order to ~1e-3.
    Yields the relative tolerance to compare with."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield FLOAT64_REL
    finally:
        torch.set_default_dtype(old)
