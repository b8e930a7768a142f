"""The report's 2x2 section: each effect B - A on the cells both finished, recomputed from the
store by hand; rows only for arms the run has; the ELR of each arm from the runs' histories."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from nasrescale.report.report import write_report
from nasrescale.report.two_by_two import _elr_medians

from rank_store_builder import DEGENERATE, build_store


def test_the_2x2_rows_are_the_effects_of_the_arms_present_recomputed_from_the_store(tmp_path):
    run, truth = build_store(tmp_path / "arms", n_archs=14, seeds=(0, 1), protocols=("default", "flat", "principled"))
    write_report(run.parent, n_boot=50)
    numbers = json.loads((run.parent / "report.json").read_text())["two_by_two"]
    effects = {(r["a"], r["b"]): r for r in numbers["effects"]}
    assert set(effects) == {("flat", "principled"), ("default", "principled")}  # no tuned/scaled arm, no rescaled
    with sqlite3.connect(run) as db:  # per cell and protocol, the mean of its finished runs (diverged: chance)
        rows = db.execute("SELECT arch, protocol, status, test_accuracy FROM jobs WHERE status IN ('done', 'diverged')")
        runs: dict = {}
        for arch, protocol, status, acc in rows:
            runs.setdefault((arch, protocol), []).append(10.0 if status == "diverged" else acc)
    for (a, b), row in effects.items():
        both = [x for x in truth[a] if (x, b) in runs and x != DEGENERATE]
        gain = np.mean([np.mean(runs[x, b]) - np.mean(runs[x, a]) for x in both])
        assert row["n"] == len(both) and row["gain"] == pytest.approx(gain, abs=1e-9)
        assert row["gain_ci"][0] <= row["gain"] <= row["gain_ci"][1]
    md = (run.parent / "report.md").read_text()
    assert "## The 2x2: per-architecture scaling apart from global LR and init" in md
    assert "| path-depth vs global LR, in-degree init | principled - flat |" in md


def test_no_2x2_section_without_two_arms_of_one_effect(tmp_path):
    run, _ = build_store(tmp_path / "plain", n_archs=8, seeds=(0,), protocols=("default", "rescaled"))
    write_report(run.parent, n_boot=10)
    assert "two_by_two" not in json.loads((run.parent / "report.json").read_text())
    assert "The 2x2" not in (run.parent / "report.md").read_text()


def test_a_runs_elr_is_the_median_over_layers_of_its_first_and_last_epoch():
    record = {"history": [{"epoch": 1, "elr": [1.0, 3.0, 2.0]}, {"epoch": 2}, {"epoch": 3, "elr": [0.5, 0.1, 0.2]}]}
    assert _elr_medians(json.dumps(record)) == (2.0, 0.2)
    assert all(np.isnan(v) for v in _elr_medians(json.dumps({"history": [{"epoch": 1}]})))
