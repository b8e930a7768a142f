"""The lr_validation pipeline kind: plan, jobs, analysis, report; shipped validation pipelines."""

from __future__ import annotations

import json
import sqlite3
import math

import pytest

from nasrescale.cli.main import main
from nasrescale.space.encodings import parse_arch
from nasrescale.errors import ConfigError
from nasrescale.lrsearch.select import select_lr
from nasrescale.lrsearch.validation import analyze, correlations
from nasrescale.kinds.lr_validation.plan import plan_of
from nasrescale.pipeline.spec import load_pipeline, pipeline_names
from nasrescale.pipeline.runner import run_pipeline
from nasrescale.store.sqlite_store import Store
from nasrescale.space.topology import lr_scale

from pipeline_helpers import one_thread  # noqa: F401  (fixtures, used by name)


TINY = """
[pipeline]
name = "tiny-val"
kind = "lr_validation"
family = "mlp_dag"

[archs]
select = "list"
names = ["2_22_222_2222", "1_02_002_0002", "0_00_000_0000"]

[protocols.rescaled]
protocol = "rescaled"
augment = false

[lr_search]
lr_min = 0.001
lr_max = 1.0
points = 4
seeds = [0]
extend = 0

[budget]
batch_size = 20
width = 8
train_subset = 100
test_subset = 20

[executor]
device = "cpu"
"""


def test_shipped_validation_pipelines_plan(mlp_dag):
    assert {"lr_validation_mlp", "lr_validation_cnn", "lr_validation_nb201"} <= set(pipeline_names())
    cnn = load_pipeline("lr_validation_cnn")
    plan, jobs = plan_of(cnn, cnn.arch_list())
    groups = plan["groups"]
    assert list(groups) == ["source@k3", "source@k5", "source@k7"]
    assert all(g["base_group"] == "source@k3" for g in groups.values())
    # one q per network (eq. 9): q_base / q for every cell, the conv-free base too (its stem is a q x q conv)
    for label, q in (("source@k3", 3), ("source@k5", 5), ("source@k7", 7)):
        factors = {m["arch"]: m["kernel_factor"] for m in groups[label]["archs"]}
        assert factors[plan["base_arch"]] == pytest.approx(3 / q)
        for arch, factor in factors.items():
            assert factor == pytest.approx(3 / q), arch
    assert len({j.key() for j in jobs}) == len(jobs)  # kernels give distinct jobs
    for job in jobs:
        assert job.protocol.lr_rule == "fixed", job.key()
        assert job.protocol.epochs == 1, job.key()
    with pytest.raises(ConfigError, match="kernel_base"):
        plan_of(load_pipeline("lr_validation_cnn", ["validation.kernels=[5, 7]"]), cnn.arch_list())
    with pytest.raises(ConfigError, match="no conv op"):
        plan_of(load_pipeline("lr_validation_mlp", ["validation.kernels=[3, 5]"]), ["1_01_001_0001"])


def test_correlations_are_the_textbook_ones():
    pred, meas = [0.01, 0.02, 0.04, 0.08], [0.012, 0.018, 0.05, 0.06]
    c = correlations(pred, meas)
    lp, lm = [math.log(x) for x in pred], [math.log(x) for x in meas]
    mp, mm = sum(lp) / 4, sum(lm) / 4
    r = sum((a - mp) * (b - mm) for a, b in zip(lp, lm)) / math.sqrt(
        sum((a - mp) ** 2 for a in lp) * sum((b - mm) ** 2 for b in lm))
    assert c["pearson_log"] == pytest.approx(r)
    assert c["spearman"] == pytest.approx(1.0)
    assert correlations([0.1, 0.2], [0.1, 0.2])["pearson"] is None  # too few points


def test_analysis_predicts_from_the_measured_base():
    plan = {"base_arch": "B", "rel_tol": 0.01, "groups": {"g": {"protocol": "g", "kernel": None, "base_group": "g", "archs": [
        {"arch": "B", "degenerate": False, "lr_scale": 1.0, "kernel_factor": 1.0, "runs": [[0.1, "b1"], [0.2, "b2"]]},
        {"arch": "X", "degenerate": False, "lr_scale": 0.5, "kernel_factor": 1.0, "runs": [[0.1, "x1"], [0.2, "x2"]]},
        {"arch": "Z", "degenerate": True, "lr_scale": None, "kernel_factor": 1.0, "runs": []}]}}}
    rows = [{"key": "b1", "status": "done", "train_loss_last": 2.0}, {"key": "b2", "status": "done", "train_loss_last": 1.0},
            {"key": "x1", "status": "done", "train_loss_last": 1.0}, {"key": "x2", "status": "diverged", "train_loss_last": None}]
    res = analyze(plan, rows)
    pts = {p["arch"]: p for p in res["points"]}
    assert pts["B"]["measured_lr"] == 0.2
    assert pts["B"]["edge"] == "high"
    assert pts["X"]["measured_lr"] == 0.1
    assert pts["X"]["predicted_lr"] == pytest.approx(0.2 * 0.5)
    assert res["degenerate"] == 1
    assert res["skipped"] == 0
    assert analyze(plan, rows[:3])["skipped"] == 1  # X unfinished: left out of a partial report


def test_tiny_validation_run_resumes_and_reports(tmp_path, mlp_dag, capsys):
    path = tmp_path / "v.toml"
    path.write_text(TINY)
    p = load_pipeline(path)
    summary = run_pipeline(p, tmp_path / "results", progress=False)
    # the base is added; the degenerate cell is planned but not trained: 3 archs x 4 LRs x 1 seed
    assert summary.total == 12
    assert summary.counts["failed"] == 0
    store = Store(summary.run_dir / "store.sqlite", readonly=True)
    try:
        plan, rows = json.loads(store.get_meta("validation_plan")), store.rows_with_tail()
    finally:
        store.close()
    assert plan["base_arch"] == "1_01_001_0001"
    res = analyze(plan, rows)
    assert {pt["arch"] for pt in res["points"]} == {"1_01_001_0001", "2_22_222_2222", "1_02_002_0002"}
    base = next(pt for pt in res["points"] if pt["base"])
    for pt in res["points"]:  # measured: the rule on the stored losses; predicted: base x scale
        m = next(m for m in plan["groups"]["rescaled"]["archs"] if m["arch"] == pt["arch"])
        losses: dict[float, list] = {}
        for lr, key in m["runs"]:
            row = next(r for r in rows if r["key"] == key)
            losses.setdefault(lr, []).append(row["train_loss_last"] if row["status"] == "done" else None)
        assert pt["measured_lr"] == select_lr(losses).chosen_lr
        assert pt["predicted_lr"] == pytest.approx(base["measured_lr"] * lr_scale(parse_arch(pt["arch"], mlp_dag), mlp_dag))
    assert run_pipeline(load_pipeline(path), tmp_path / "results", progress=False).ran == 0
    assert main(["report", str(path), "--results", str(tmp_path / "results")]) == 0
    md = (summary.run_dir / "report.md").read_text()
    assert "Pearson r (log LR)" in md
    assert (summary.run_dir / "lr_validation.png").stat().st_size > 10_000
    assert json.loads((summary.run_dir / "report.json").read_text())["overall"]["n"] == 3
    assert "(interim)" not in md and "**Interim:**" not in md
    conn = sqlite3.connect(summary.run_dir / "store.sqlite")  # one run left to do: the report says so
    with conn:
        conn.execute("UPDATE jobs SET status = 'pending' WHERE key = (SELECT key FROM jobs LIMIT 1)")
    conn.close()
    assert main(["report", str(path), "--results", str(tmp_path / "results")]) == 0
    md = (summary.run_dir / "report.md").read_text()
    assert md.splitlines()[0].endswith(" (interim)")
    assert "11 of the 12 runs stored so far have finished; 1 still to run" in md


def _plan_and_rows(losses: dict[str, list[float]], scales: dict[str, float]) -> tuple[dict, list[dict]]:
    """A one-group plan on the grid 0.1, 0.2, 0.4 with each arch's final loss per grid LR."""
    archs, rows = [], []
    for arch, per_lr in losses.items():
        runs = [[lr, f"{arch}{i}"] for i, lr in enumerate((0.1, 0.2, 0.4))]
        archs.append({"arch": arch, "degenerate": False, "lr_scale": scales[arch], "kernel_factor": 1.0,
                      "sum_l3": 1, "runs": runs})
        rows += [{"key": key, "status": "done", "train_loss_last": loss} for (_, key), loss in zip(runs, per_lr)]
    return {"base_arch": "B", "rel_tol": 0.01, "rule": "argmin",
            "groups": {"g": {"protocol": "g", "kernel": None, "base_group": "g", "archs": archs}}}, rows


def test_points_still_at_an_edge_are_left_out_of_the_interior_statistics():
    interior = {"B": [2.0, 1.0, 1.5], "X": [1.0, 0.5, 2.0], "Y": [2.0, 1.0, 3.0], "W": [1.5, 1.0, 1.2]}
    scales = {"B": 1.0, "X": 0.5, "Y": 0.25, "W": 0.7, "E": 0.35}
    plan, rows = _plan_and_rows({**interior, "E": [1.0, 2.0, 3.0]}, scales)  # E: argmin at the low edge
    res = analyze(plan, rows)
    pts = {p["arch"]: p for p in res["points"]}
    assert pts["E"]["edge"] == "low" and res["at_edge"] == 1
    inner = res["overall"]["interior"]
    assert inner["n"] == 3  # without the base B and the edge point E
    kept = [pts[a] for a in ("X", "Y", "W")]
    assert inner == correlations([p["predicted_lr"] for p in kept], [p["measured_lr"] for p in kept], [1, 1, 1])
    assert res["overall"]["without_base"]["n"] == 4
    plan, rows = _plan_and_rows(interior, scales)
    assert "interior" not in analyze(plan, rows)["overall"]  # nothing at an edge: no third subset
