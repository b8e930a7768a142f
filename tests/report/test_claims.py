"""The report's claims section: each verdict follows from the numbers, and a retrain report
carries the calibrated proxy validity of the calibration candidate its pipeline names."""

from __future__ import annotations

import json

import pytest

from nasrescale.cli.main import main
from nasrescale.kinds.retrain.claims import proxy_claim, split_claim, top_claim
from nasrescale.report.common.claim_verdicts import gain_claim, ranking_claim

from pipeline_helpers import one_thread, private_cache, tiny_pipeline  # noqa: F401  (fixtures, used by name)


def _pair(diff=0.3, ci=(-0.2, 0.8), tau=0.5, tau_ci=(0.3, 0.6), noise=(0.8, 0.7), top=0.1, top_ci=(-0.2, 0.3),
          top_n=11):
    return {"a": "default", "b": "rescaled", "n": 55, "mean_diff": diff, "kendall_tau": tau,
            "ci": {"mean_diff": list(ci), "kendall_tau": list(tau_ci)},
            "seed_noise": {"a": {"kendall_tau": noise[0], "topk": [{"k_percent": 20, "kendall_tau": 0.6},
                                                                   {"k_percent": 10, "kendall_tau": 0.9}]},
                           "b": {"kendall_tau": noise[1]}},
            "topk": [{"k_percent": 100, "n": 55, "kendall_tau": tau}, {"k_percent": 20, "n": top_n,
                                                                        "kendall_tau": top, "ci": list(top_ci)},
                     {"k_percent": 10, "n": 6, "kendall_tau": 0.95}]}


@pytest.mark.parametrize("ci, fragment", [
    ((0.1, 0.5), "B trains these cells better"),
    ((-0.5, -0.1), "B trains these cells worse"),
    ((-0.2, 0.8), "cannot tell the paper's gain from none"),
    ((-0.2, 0.3), "cannot tell a gain from none"),
])
def test_the_gain_verdict_follows_the_ci(ci, fragment):
    assert fragment in gain_claim(_pair(ci=ci), "cifar10")


def test_fewer_than_ten_cells_give_the_figures_without_a_verdict():
    few = {**_pair(diff=1.5, ci=(0.5, 2.5), tau=0.2, tau_ci=(0.1, 0.3)), "n": 6}
    assert gain_claim(few, "cifar10") == "Mean gain of B over A: +1.50 points so far, on 6 cells: fewer than 10, too few for a verdict."
    assert ranking_claim(few) == "Kendall tau between A and B: 0.200 so far, on 6 cells: fewer than 10, too few for a verdict."
    assert "B trains these cells better" in gain_claim({**few, "n": 10}, "cifar10")  # 10 cells: a verdict
    assert "more than seed noise" in ranking_claim({**few, "n": 10})


def test_the_gain_is_set_beside_the_paper_as_the_ci_allows():
    """The study's CI [-1.94, -0.96] excludes both 0 and +0.44: the report may not say it cannot
    tell them apart; the paper's +0.44 is quoted as what it is."""
    text = gain_claim(_pair(diff=-1.39, ci=(-1.94, -0.96)), "cifar10")
    assert "cannot tell" not in text
    assert "excludes both 0 and the paper's +0.44" in text
    assert 'against NAS-Bench-201\'s published accuracies, with networks trained "till converge" (§4.3)' in text
    assert "at 200 epochs" not in text
    assert "cannot tell the paper's gain from none" in gain_claim(_pair(ci=(-0.1, 1.5)), "cifar10")
    assert "consistent with the paper's +0.44" in gain_claim(_pair(ci=(0.1, 0.5)), "cifar10")


@pytest.mark.parametrize("tau, tau_ci, fragment", [
    (0.4, (0.3, 0.6), "more than seed noise"),
    (0.65, (0.5, 0.75), "not clearly beyond seed noise"),
    (0.75, (0.6, 0.85), "about as well as two seeds"),
])
def test_the_ranking_verdict_compares_with_the_seed_noise_floor(tau, tau_ci, fragment):
    assert fragment in ranking_claim(_pair(tau=tau, tau_ci=tau_ci))


def test_the_ranking_claim_is_about_its_lr_setting():
    text = ranking_claim(_pair(tau=0.4, tau_ci=(0.3, 0.6)), "B: base LR 0.46, scaled per cell to 0.049-0.46")
    assert "at this LR setting (B: base LR 0.46, scaled per cell to 0.049-0.46)" in text


def test_the_split_claim_places_the_change():
    group = lambda n, tau, ci, noise: {"n": n, "kendall_tau": tau, "ci": {"kendall_tau": list(ci)},  # noqa: E731
                                       "seed_noise": {"a": {"kendall_tau": noise}, "b": {"kendall_tau": noise}}}
    split = {"reference_lr": 0.1, "groups": {"at or above": group(30, 0.807, (0.63, 0.91), 0.8),
                                             "below": group(21, 0.19, (-0.09, 0.46), 0.78)}}
    text = split_claim(split)
    assert "on the 30 cells where B's LR is at or above 0.1, tau 0.807" in text
    assert "its CI reaches the seed level" in text and "below seed noise" in text
    assert split_claim(None) == ""


def test_top_and_proxy_claims():
    text = top_claim(_pair(tau=0.5, top=0.1, top_ci=(-0.2, 0.3)))
    assert "top 20% (11 cells" in text and "seed-vs-seed on the same cells 0.600" in text
    assert "more among the best cells" in text
    assert "not clearly more movement" in top_claim(_pair(tau=0.5, top=0.1, top_ci=(-0.3, 0.7)))
    assert "no sign" in top_claim(_pair(tau=0.5, top=0.7, top_ci=(0.5, 0.9)))
    assert "too few cells" in top_claim(_pair(top_n=8))  # never read from the top 10%'s 6 cells
    text = proxy_claim({"cells": 24, "kendall_tau": 0.783, "seed_vs_seed_tau": 0.795, "source": "cal:x"},
                       {"default": {"kendall_tau": 0.731, "n": 55}, "rescaled": {"kendall_tau": 0.286, "n": 55}},
                       "default")
    assert "tau 0.783 against the benchmark there (in-sample" in text
    assert "out of sample, on this study's 55 cells, default has tau 0.731" in text
    assert "validated the default protocol only" in text
    assert "names no calibration" in proxy_claim(None, {"default": 0.5})
    assert "Against the benchmark here: default 0.731, rescaled 0.286." in text  # same cells: no counts
    uneven = proxy_claim(None, {"default": {"kendall_tau": 0.731, "n": 51}, "tuned": {"kendall_tau": 0.486, "n": 15}})
    assert "default 0.731 (51 cells), tuned 0.486 (15 cells)" in uneven


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
