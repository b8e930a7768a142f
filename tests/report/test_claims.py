"""The report's claims section: each verdict follows from the numbers, and a retrain report
carries the calibrated proxy validity of the calibration candidate its pipeline names."""

from __future__ import annotations

import json

import pytest

from nasrescale.cli.main import main
from nasrescale.report.claims import gain_claim, proxy_claim, ranking_claim, top_claim

from pipeline_helpers import one_thread, private_cache, tiny_pipeline  # noqa: F401  (fixtures, used by name)


def _pair(diff=0.3, ci=(-0.2, 0.8), tau=0.5, tau_ci=(0.3, 0.6), noise=(0.8, 0.7), top=0.1):
    return {"a": "default", "b": "rescaled", "n": 40, "mean_diff": diff, "kendall_tau": tau,
            "ci": {"mean_diff": list(ci), "kendall_tau": list(tau_ci)},
            "seed_noise": {"a": {"kendall_tau": noise[0], "topk": [{"k_percent": 10, "kendall_tau": 0.6}]},
                           "b": {"kendall_tau": noise[1]}},
            "topk": [{"k_percent": 100, "kendall_tau": tau}, {"k_percent": 10, "kendall_tau": top}]}


@pytest.mark.parametrize("ci, fragment", [
    ((0.1, 0.5), "B trains these cells better"),
    ((-0.5, -0.1), "B trains these cells worse"),
    ((-0.2, 0.8), "cannot tell a gain from none"),
])
def test_the_gain_verdict_follows_the_ci(ci, fragment):
    assert fragment in gain_claim(_pair(ci=ci), "cifar10")


def test_a_ci_wider_than_the_papers_effect_says_so():
    assert "cannot tell +0.44 from 0" in gain_claim(_pair(ci=(0.1, 1.5)), "cifar10")
    assert "cannot tell +0.44" not in gain_claim(_pair(ci=(0.1, 0.5)), "cifar10")


@pytest.mark.parametrize("tau, tau_ci, fragment", [
    (0.4, (0.3, 0.6), "more than seed noise"),
    (0.65, (0.5, 0.75), "not clearly beyond seed noise"),
    (0.75, (0.6, 0.85), "about as well as two seeds"),
])
def test_the_ranking_verdict_compares_with_the_seed_noise_floor(tau, tau_ci, fragment):
    assert fragment in ranking_claim(_pair(tau=tau, tau_ci=tau_ci))


def test_top_and_proxy_claims():
    assert "more among the best cells" in top_claim(_pair(tau=0.5, top=0.1))
    assert "no sign" in top_claim(_pair(tau=0.5, top=0.7))
    text = proxy_claim({"cells": 24, "kendall_tau": 0.61, "seed_vs_seed_tau": 0.8, "source": "cal:x"},
                       {"default": 0.5, "rescaled": 0.4})
    assert "tau 0.610" in text and "default 0.500" in text
    assert "names no calibration" in proxy_claim(None, {"default": 0.5})


def test_a_retrain_report_carries_its_calibrated_proxy_validity(capsys, tmp_path):
    archs = ("3_11_111", "3_33_333", "1_11_111", "3_13_310")
    names = ", ".join(f'"{a}"' for a in archs)
    cal = tmp_path / "cal.toml"
    cal.write_text(f"""
[pipeline]
name = "cal"
kind = "calibration"
[archs]
select = "list"
names = [{names}]
[protocols.default]
protocol = "nb201"
[budget]
batch_size = 50
width = 4
cells = 1
train_subset = 100
test_subset = 100
[budgets.tiny]
epochs = 1
[executor]
device = "cpu"
""")
    retrain = tmp_path / "re.toml"
    retrain.write_text(tiny_pipeline("re", seeds=(0, 1), archs=archs).replace(
        'seeds = [0, 1]', 'seeds = [0, 1]\nreference = "nb201:cifar10"\ncalibration = "cal:tiny"'))
    results = tmp_path / "res"
    assert main(["run", str(cal), "--results", str(results), "--quiet"]) == 0
    assert main(["run", str(retrain), "--results", str(results), "--quiet"]) == 0
    report = (results / "re" / "report.md").read_text()
    assert "## What this budget can say about the paper's claims" in report
    numbers = json.loads((results / "re" / "report.json").read_text())
    cal_numbers = json.loads((results / "cal" / "report.json").read_text())
    assert numbers["proxy"]["kendall_tau"] == cal_numbers["candidates"][0]["kendall_tau"]
    assert numbers["proxy"]["source"] == "cal:tiny"
