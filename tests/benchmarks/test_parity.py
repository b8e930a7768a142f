"""benchmarks/parity.py: the verdict can come out each way, and a real shifted-LR arm is "different"."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from nasrescale.data.types import ImageData
from nasrescale.protocol import load_protocol
from nasrescale.space.family_loader import get_family
from nasrescale.train import RunOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # the scripts import each other

import parity  # noqa: E402
from arms import engine_arm  # noqa: E402


def test_equal_tight_arms_are_equivalent_and_far_ones_different() -> None:
    same = parity.verdict([70.0 + 0.1 * (i % 3) for i in range(10)], [70.05 + 0.1 * (i % 3) for i in range(10)])
    assert same.verdict == "equivalent" and same.low > -0.5 and same.high < 0.5
    apart = parity.verdict([71.0 + 0.1 * (i % 3) for i in range(10)], [70.0 + 0.1 * (i % 3) for i in range(10)])
    assert apart.verdict == "different" and apart.p < 0.05 and apart.low > 0.5


def test_few_seeds_or_a_wide_spread_leave_it_undetermined() -> None:
    """Nine seeds a side are too few whatever the gap; ten noisy seeds whose 90 % interval
    crosses the margin without a significant gap cannot tell either."""
    few = parity.verdict([80.0] * 9, [60.0] * 9)
    assert few.verdict == "undetermined (n too small)" and few.diff == pytest.approx(20.0)
    noisy = parity.verdict([60.0 + 4 * (i % 2) for i in range(10)], [60.5 + 4 * (i % 2) for i in range(10)])
    assert noisy.verdict == "undetermined (n too small)" and noisy.low < -0.5 and noisy.p > 0.05


def test_the_margin_decides_between_equivalent_and_different() -> None:
    """A real 0.3-point gap measured tightly: inside a 0.5-point margin, outside a 0.2-point one."""
    a, b = [70.3 + 0.02 * (i % 3) for i in range(10)], [70.0 + 0.02 * (i % 3) for i in range(10)]
    assert parity.verdict(a, b, margin=0.5).verdict == "equivalent"
    assert parity.verdict(a, b, margin=0.2).verdict == "different"


def _toy_data(n_train: int = 96, n_test: int = 96, size: int = 8) -> ImageData:
    """Images whose label (0..2) is the channel made brightest: learnt in a few epochs at a usable LR."""
    g = torch.Generator().manual_seed(0)

    def split(n: int) -> tuple[torch.Tensor, torch.Tensor]:
        images = torch.randint(0, 120, (n, 3, size, size), generator=g, dtype=torch.uint8)
        labels = torch.randint(0, 3, (n,), generator=g)
        images[torch.arange(n), labels] += 120
        return images, labels

    (xtr, ytr), (xte, yte) = split(n_train), split(n_test)
    return ImageData("toy", xtr, ytr, xte, yte, 3, (0.5, 0.5, 0.5), (0.3, 0.3, 0.3), crop_padding=1)


def test_an_arm_at_a_shifted_lr_comes_out_different_from_the_engine() -> None:
    """Ten seeds of the engine at the protocol's LR against ten at 1/1000 of it (NB201's network,
    C = 4, N = 1, 96 toy images, 4 epochs past the cosine anneal): the parity check says "different"."""
    family, data = get_family("nb201"), _toy_data()
    protocol = load_protocol("nb201", ["epochs=4", "precision=fp32", "batch_size=32"])
    arms = {"engine": engine_arm(family, data, protocol, 4, 1, RunOptions()),
            "shifted LR": engine_arm(family, data, protocol, 4, 1, RunOptions(), lr_factor=1e-3)}
    accs = parity.run_arms(arms, 10, log=lambda line: None)
    result = parity.verdict(accs["shifted LR"], accs["engine"])
    assert result.verdict == "different", result.text()
    assert result.diff < -0.5


def test_the_parity_script_refuses_a_recipe_that_ends_before_the_anneal(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        parity.parse_args(["--epochs", "2"])
    assert "past the schedule's anneal" in capsys.readouterr().err
    assert parity.anneal_factor(load_protocol("nb201", ["epochs=4"])) < 0.15
