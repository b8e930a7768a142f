"""Shared fixtures: the built-in families and a small test family with every topology case."""

from __future__ import annotations

import pytest

from nasrescale.space.families import parse_family
from nasrescale.space.registry import get_family

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


@pytest.fixture(scope="session")
def nb201():
    return get_family("nb201")


@pytest.fixture(scope="session")
def mlp_dag():
    return get_family("mlp_dag")


@pytest.fixture(scope="session")
def anydag():
    return parse_family(TEST_FAMILY_TOML, source="anydag.toml")
