"""The report's 2x2 section: each effect B - A on the cells both finished, recomputed from the
store by hand; rows only for arms the run has; the ELR of each arm from the runs' histories."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from nasrescale.kinds.retrain.write import write_report
from nasrescale.report.common.claim_verdicts import effect_claim
from nasrescale.kinds.retrain.two_by_two import _elr_medians

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
    assert "![the 2x2's effects: gain and tau(A, B) with 95% CIs](effects_2x2.png)" in md
    assert (run.parent / "effects_2x2.png").read_bytes().startswith(b"\x89PNG")
    row = next(line for line in md.splitlines() if line.startswith("| path-depth vs global LR, in-degree init |"))
    top = effects["flat", "principled"]  # 13 cells: CIs shown; a top 20% of 3 cells: its tau kept, not shown
    assert top["top20_n"] < 10 and top["top20_kendall_tau"] is not None and row.split("|")[9].strip() == "-"
    assert "[" in row.split("|")[4]


def test_a_2x2_row_on_fewer_than_ten_cells_gives_no_ci_in_the_table(tmp_path):
    """A bootstrap over a handful of cells gives bands such as [1.000, 1.000]: the table shows the
    figures alone below MIN_TOPK_ROWS cells, while report.json keeps the CIs."""
    run, _ = build_store(tmp_path / "few", n_archs=8, seeds=(0, 1), protocols=("default", "flat", "principled"))
    write_report(run.parent, n_boot=20)
    effects = json.loads((run.parent / "report.json").read_text())["two_by_two"]["effects"]
    assert all(r["n"] < 10 and r["gain_ci"] is not None for r in effects)
    md = (run.parent / "report.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| path-depth vs global LR, in-degree init |"))
    assert "[" not in row and f"| {effects[0]['n']} |" in row
    assert all(r["top20_n"] < 10 for r in effects) and row.split("|")[9].strip() == "-"  # no top-20% tau on 1-2 cells


def test_the_2x2_figure_draws_each_effect_s_gain_and_tau_at_its_row(monkeypatch, tmp_path):
    """One row per effect, top to bottom in the table's order: its gain at its CI, its tau(A, B),
    and the seed-noise taus as separate markers; an effect without a tau leaves the right panel blank."""
    from nasrescale.kinds.retrain import two_by_two_plots

    figures = []
    monkeypatch.setattr(two_by_two_plots, "save_png", lambda fig, path: figures.append(fig) or path)
    rows = [{"effect": "e1", "a": "flat", "b": "principled", "n": 12, "gain": -0.5, "gain_ci": [-1.0, 0.25],
             "kendall_tau": 0.8, "kendall_tau_ci": [0.7, 0.9], "seed_tau_a": 0.75, "seed_tau_b": 0.7},
            {"effect": "e2", "a": "default", "b": "tuned", "n": 9, "gain": 1.25, "gain_ci": [0.5, 2.0],
             "kendall_tau": None, "kendall_tau_ci": None, "seed_tau_a": None, "seed_tau_b": None}]
    two_by_two_plots.effects_plot(rows, tmp_path / "e.png")
    gain_ax, tau_ax = figures[0].axes
    gains = [line for line in gain_ax.lines if line.get_marker() == "o"][0]
    assert list(gains.get_xdata()) == [-0.5, 1.25] and list(gains.get_ydata()) == [1, 0]
    ticks = {round(float(y)): t.get_text() for y, t in zip(gain_ax.get_yticks(), gain_ax.get_yticklabels())}
    assert ticks == {1: "e1\nprincipled - flat (n = 12)", 0: "e2\ntuned - default (n = 9)"}
    bars = [c for c in gain_ax.collections if c.get_segments()][0].get_segments()  # e1 at its CI; e2 (9 cells) none
    assert [tuple(seg[:, 0]) for seg in bars] == [(-1.0, 0.25), (1.25, 1.25)]
    taus = [line for line in tau_ax.lines if line.get_marker() == "o"][0]
    assert list(taus.get_xdata()) == [0.8] and list(taus.get_ydata()) == [1]
    assert sorted(float(line.get_xdata()[0]) for line in tau_ax.lines if line.get_marker() in ("s", "D")) == [0.7, 0.75]


def test_no_2x2_section_without_two_arms_of_one_effect(tmp_path):
    run, _ = build_store(tmp_path / "plain", n_archs=8, seeds=(0,), protocols=("default", "rescaled"))
    write_report(run.parent, n_boot=10)
    assert "two_by_two" not in json.loads((run.parent / "report.json").read_text())
    assert "The 2x2" not in (run.parent / "report.md").read_text()


def test_a_runs_elr_is_the_median_over_layers_of_its_first_and_last_epoch():
    record = {"history": [{"epoch": 1, "elr": [1.0, 3.0, 2.0]}, {"epoch": 2}, {"epoch": 3, "elr": [0.5, 0.1, 0.2]}]}
    assert _elr_medians(json.dumps(record)) == (2.0, 0.2)
    assert all(np.isnan(v) for v in _elr_medians(json.dumps({"history": [{"epoch": 1}]})))


def test_the_claims_read_the_tuned_path_depth_arm_and_state_every_other_effect_as_tabulated(tmp_path):
    """With a tuned path-depth arm on enough cells the claims compare it (not the untuned
    ``rescaled``) with the baseline, and say each other effect of the 2x2 in the numbers of the
    2x2's table; ``rescaled`` appears as the base-LR sensitivity it is."""
    protocols = ("default", "rescaled", "flat", "principled")
    rules = {"default": {"lr_rule": "fixed"}, "rescaled": {"lr_rule": "path_depth"},
             "flat": {"lr_rule": "fixed", "tune": True}, "principled": {"lr_rule": "path_depth", "tune": True}}
    pipeline = {"pipeline": {"name": "arms", "family": "nb201", "seeds": [0, 1], "reference": "nb201:cifar10"},
                "protocols": {p: {"source": p, **rules[p]} for p in protocols}}
    run, _ = build_store(tmp_path / "arms", n_archs=14, seeds=(0, 1), protocols=protocols, pipeline=pipeline)
    write_report(run.parent, n_boot=50)
    numbers = json.loads((run.parent / "report.json").read_text())
    effects, names = numbers["two_by_two"]["effects"], {r["arch"]: r["short"] for r in numbers["archs"]}
    md = (run.parent / "report.md").read_text()
    claims = md.split("## What this budget can say about the paper's claims")[1].split("\n## ")[0]
    assert "A = default, B = principled" in claims
    stated = [row for row in effects if (row["a"], row["b"]) != ("default", "principled")]
    assert {(r["a"], r["b"]) for r in stated} == {("flat", "principled"), ("principled", "rescaled")}
    for row in stated:
        assert f"  - {effect_claim(row, names)}" in claims
    assert "the paper's 200-epoch base LR kept (rescaled - principled" in claims


def test_an_arm_still_catching_up_is_named_in_the_interim_line(tmp_path):
    """While a new arm has fewer finished cells than the others, the interim line gives each
    protocol's count instead of claiming every figure is of the common cells."""
    run, _ = build_store(tmp_path / "catching_up", n_archs=10, seeds=(0,), protocols=("default", "principled"))
    with sqlite3.connect(run) as db:
        archs = sorted({a for (a,) in db.execute("SELECT arch FROM jobs WHERE protocol = 'principled'")})
        db.executemany("DELETE FROM jobs WHERE protocol = 'principled' AND arch = ?", [(a,) for a in archs[:6]])
        done = dict(db.execute("SELECT protocol, COUNT(DISTINCT arch) FROM jobs WHERE status IN ('done', 'diverged') "
                               "GROUP BY protocol").fetchall())
    write_report(run.parent, n_boot=10)
    md = (run.parent / "report.md").read_text()
    assert done["default"] != done["principled"]
    assert (f"(cells finished per protocol: default {done['default']}, principled {done['principled']}); each "
            "comparison is of the cells both its protocols finished") in md
