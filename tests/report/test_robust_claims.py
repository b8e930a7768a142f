"""Every paired comparison gives its robust companions, and a verdict only where it survives
(issue 52, points 1-3): the median, the Wilcoxon p, the share of cells that gain, the cells that
move the mean most; a verdict word only where the CI at 9,999 resamples excludes 0 and survives
dropping them; the LR tuning's cells (and their isomorphs) out of every statistic by default."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nasrescale.ranking.paired import VERDICT_BOOT, paired_robust
from nasrescale.kinds.retrain.claims import split_claim
from nasrescale.kinds.retrain.write import write_report
from nasrescale.report.common.claim_verdicts import effect_claim, gain_claim, ranking_claim

from rank_store_builder import build_store


def _diffs(outliers: list[float], n: int = 40, spread: float = 0.15, seed: int = 1) -> pd.Series:
    rng = np.random.default_rng(seed)
    values = list(rng.normal(0.0, spread, n - len(outliers))) + outliers
    return pd.Series(values, index=[f"c{i:02d}" for i in range(n)])


def _row(robust: dict, n: int) -> dict:
    return {"effect": "path-depth vs global LR, in-degree init", "a": "flat", "b": "principled", "n": n,
            "gain": robust["mean"], "gain_ci": [-9.0, -0.5],  # a 1,000-resample CI that excludes 0
            "kendall_tau": None, "robust": robust}


def test_a_mean_carried_by_three_cells_gets_no_verdict_word_and_names_them():
    d = _diffs([-6.5, -5.0, -3.4])
    robust = paired_robust(d)
    text = effect_claim(_row(robust, len(d)), {"c37": "0_12_440", "c38": "1_21_010", "c39": "4_03_440"})
    assert "principled worse" not in text
    assert robust["verdict"] in ("driven", "edge")
    if robust["verdict"] == "driven":
        assert set(robust["driven_by"]) <= {"c37", "c38", "c39"}
        assert f"driven by {len(robust['driven_by'])} cell" in text and "0_12_440" in text
    else:
        assert "at the edge" in text
    assert robust["influence"]["cells"] == ["c37", "c38", "c39"]  # the farthest from the mean
    assert f"median {np.median(d):+.2f}" in text
    assert robust["wilcoxon_p"] == pytest.approx(stats.wilcoxon(d.to_numpy()).pvalue, rel=1e-6)
    assert f"{int((d > 0).sum())} of 40 cells gain" in text
    assert f"({VERDICT_BOOT:,} resamples)" in text


def test_a_gain_shared_by_most_cells_keeps_its_verdict_word():
    d = _diffs([], spread=0.3) + 0.6
    robust = paired_robust(d)
    assert robust["verdict"] == "better" and robust["influence"]["survives"] is True
    assert "principled better" in effect_claim({**_row(robust, len(d)), "gain_ci": robust["ci"]})


def test_a_ci_that_touches_zero_is_at_the_edge_not_a_verdict():
    pair = {"mean_diff": -0.29, "n": 54, "ci": {"mean_diff": [-0.85, -0.01]}, "kendall_tau": 0.8,
            "paired": {**paired_robust(_diffs([-4.0])), "ci": [-0.82, 0.0], "verdict": "edge"}}
    text = gain_claim(pair, "cifar10")
    assert "at the edge" in text and "worse" not in text and "[-0.82, +0.00]" in text


def _add_tuning_jobs(store, cells: list[str], lrs: tuple[float, ...] = (0.1,)) -> None:
    with sqlite3.connect(store) as db:
        for i, arch in enumerate(cells):
            for j, lr in enumerate(lrs):
                db.execute("INSERT INTO jobs (key, arch, protocol, seed, status, attempts, degenerate, test_accuracy, "
                           "lr, epochs, job_json, record_json, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           (f"tune{i:06d}{j:06d}", arch, "tune:rescaled@x1", 0, "done", 1, 0, 60.0, lr, 4, "{}",
                            "{}", "2026-01-01T00:00:00Z"))


def test_tuning_cells_are_out_of_every_statistic_unless_asked_for(tmp_path):
    run, truth = build_store(tmp_path / "tuned", n_archs=16, seeds=(0, 1))
    cells = sorted(a for a in truth["default"] if a in truth["rescaled"])[-2:]
    _add_tuning_jobs(run, cells)
    write_report(run.parent, n_boot=50)
    left = json.loads((run.parent / "report.json").read_text())
    text = (run.parent / "report.md").read_text()
    write_report(run.parent, n_boot=50, include_tuning=True)
    counted = json.loads((run.parent / "report.json").read_text())
    assert set(left["held_out"]) == set(cells)
    assert left["pairs"]["rescaled vs default"]["n"] == counted["pairs"]["rescaled vs default"]["n"] - 2
    assert text.count("Tuning cells are out of every statistic") == 1 and "--include-tuning-cells" in text
    assert {row["arch"] for row in left["archs"]} >= set(cells)  # still listed per architecture
    assert "sensitivity check" in (run.parent / "report.md").read_text()


def test_the_seed_floor_is_read_like_for_like_single_runs_against_single_runs():
    """tau of two-seed means (0.85) sits above single-run seed taus by construction; the verdict
    reads the single-run tau across the protocols (0.70) against them."""
    pair = {"n": 50, "kendall_tau": 0.85, "ci": {"kendall_tau": [0.8, 0.9]},
            "seed_noise": {"a": {"kendall_tau": 0.8}, "b": {"kendall_tau": 0.73}},
            "per_run_kendall_tau": {"kendall_tau": 0.70, "min": 0.66, "max": 0.75, "pairs": 4}}
    text = ranking_claim(pair)
    assert "about as well as two seeds" not in text
    assert "single runs across the protocols 0.700 (mean of 4 seed pairings" in text
    assert "not clearly beyond seed noise" in text
    row = {"effect": "tuning alone", "a": "default", "b": "tuned", "n": 50, "gain": 0.1, "gain_ci": [-0.2, 0.4],
           "kendall_tau": 0.85, "kendall_tau_ci": [0.8, 0.9], "seed_tau_a": 0.8, "seed_tau_b": 0.73,
           "per_run_tau": {"kendall_tau": 0.79, "min": 0.76, "max": 0.81, "pairs": 4}}
    assert effect_claim(row).endswith("like for like, single runs across the protocols 0.790 (mean of 4 seed "
                                      "pairings, 0.760 to 0.810) against single runs between one protocol's seeds "
                                      "0.800, 0.730: about as well as two seeds agree.")


def test_cells_trained_outside_the_tuning_s_lr_range_are_named_with_the_gain_without_them(tmp_path):
    run, truth = build_store(tmp_path / "extra", n_archs=20, seeds=(0, 1))
    _add_tuning_jobs(run, sorted(truth["default"])[:1], lrs=(0.03, 0.07))
    write_report(run.parent, n_boot=20)
    numbers = json.loads((run.parent / "report.json").read_text())
    (row,) = numbers["extrapolated_lrs"]
    assert row["arm"] == "rescaled" and row["tried"] == [0.03, 0.07]
    assert row["outside"] and all(not 0.03 <= lr <= 0.07 for lr in row["outside"].values())
    assert row["gain_without"]["n"] == row["gain"]["n"] - len(row["outside"])
    text = (run.parent / "report.md").read_text()
    assert f"`rescaled` (tuning tried LR 0.03 to 0.07): {len(row['outside'])} cells outside it" in text


def test_single_runs_all_below_the_seed_tau_are_not_beyond_noise_while_the_ci_reaches_it():
    """The GPU slice's case: every single-run pairing (0.829-0.844) below both seed taus (0.890,
    0.917), but the CI of tau between the means reaches them: no verdict "beyond seed noise"."""
    pair = {"n": 58, "kendall_tau": 0.856, "ci": {"kendall_tau": [0.767, 0.898]},
            "seed_noise": {"a": {"kendall_tau": 0.890}, "b": {"kendall_tau": 0.917}},
            "per_run_kendall_tau": {"kendall_tau": 0.834, "min": 0.829, "max": 0.844, "pairs": 4}}
    text = ranking_claim(pair)
    assert "every single-run pairing across the protocols agrees less than the seeds do" in text
    assert "not clearly beyond seed noise" in text and "a ranking change beyond" not in text


def test_the_lr_split_reads_its_seed_floor_like_for_like_too():
    side = {"n": 30, "kendall_tau": 0.85, "ci": {"kendall_tau": [0.8, 0.9]},
            "seed_noise": {"a": {"kendall_tau": 0.8}, "b": {"kendall_tau": 0.73}},
            "per_run_kendall_tau": {"kendall_tau": 0.70, "min": 0.66, "max": 0.75, "pairs": 4}}
    text = split_claim({"reference_lr": 0.1, "groups": {"at or above": side}})
    assert "tau of the means 0.850 [0.800, 0.900]; single runs across the protocols 0.700" in text
    assert "its CI reaches the seed level" not in text


def test_a_trend_leaves_out_the_tuning_cells_of_the_study_it_reuses(tmp_path):
    from nasrescale.kinds.trend.summary import trend_held_out
    from nasrescale.store.read import read_store

    study, truth = build_store(tmp_path / "study", n_archs=12, seeds=(0,))
    tuned = sorted(truth["default"])[:2]
    _add_tuning_jobs(study, tuned)
    trend, _ = build_store(tmp_path / "trend", n_archs=12, seeds=(0,))
    cells = sorted(truth["default"])
    assert set(trend_held_out(read_store(trend), "study", tmp_path, cells)) == set(tuned)
    assert trend_held_out(read_store(trend), None, tmp_path, cells) == {}
