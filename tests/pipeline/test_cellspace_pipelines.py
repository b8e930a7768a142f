"""The DARTS and NAS-Bench-101 toy pipelines, end to end at a tinier size than they ship with:
parse, plan, train both protocols of one cell, store, report."""

from __future__ import annotations

import json

import pytest

from nasrescale.pipeline.spec import load_pipeline
from nasrescale.space.analysis import analyze

from pipeline_helpers import cli, one_thread  # noqa: F401  (fixture, used by name)

TINIER = ["--set", "budget.epochs=1", "--set", "budget.train_subset=100", "--set", "budget.test_subset=50",
          "--set", "budget.width=4", "--set", "budget.resolution=8"]


@pytest.mark.parametrize("name,family", [("darts_toy", "darts"), ("nb101_toy", "nb101")])
def test_toy_pipelines_plan_default_and_rescaled_without_a_reference(name, family):
    pipeline = load_pipeline(name)
    archs = pipeline.arch_list()
    jobs = pipeline.jobs(archs)
    assert pipeline.family().name == family and len(archs) == 4
    assert sorted({job.label for job in jobs}) == ["default", "rescaled"]
    assert all(job.fusion_key() is None for job in jobs)  # concatenating cells train one by one
    scales = {analyze(arch, pipeline.family()).lr_scale for arch in archs}
    assert 1.0 in scales and len(scales) > 1  # the base, and cells the rule rescales


@pytest.mark.parametrize("name,cells", [("darts_toy", "3"), ("nb101_toy", "1")])
def test_toy_pipeline_trains_stores_and_reports(name, cells, tmp_path, capsys, one_thread):
    code, out, err = cli(capsys, "run", name, "--results", str(tmp_path), "--quiet", "--max-cells", "1",
                         *TINIER, "--set", f"budget.cells={cells}")
    assert code == 0, err
    report = json.loads((tmp_path / name / "report.json").read_text())
    assert (tmp_path / name / "report.md").exists()
    code, out, _ = cli(capsys, "status", name, "--results", str(tmp_path))
    assert code == 0 and "2/8 jobs finished" in out, out
    assert report["name"] == name
    trained = [row for row in report["archs"] if all(p["seeds"].get("0") is not None for p in row["protocols"].values())]
    assert len(trained) == 1 and set(trained[0]["protocols"]) == {"default", "rescaled"}
