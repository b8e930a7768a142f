"""A study's claims quote the LR landscapes that reuse its runs, read from their report.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from nasrescale.kinds.landscape.link import landscape_claim, linked_landscapes
from nasrescale.report.kind_reports import write_run_report as write_report

ROOT = Path(__file__).resolve().parents[2]
NUMBERS = {"cells": 12, "epochs": 6, "pending": 0,
           "settings": {"points_per_octave": 2, "reuse": "study", "lr_min": 0.1},
           "slope": {"slope": 0.05, "slope_ci": [-0.1, 0.2], "rule_in_ci": False, "global_in_ci": True},
           "headroom": {"oracle-global": {"mean": 0.25, "ci": [0.1, 0.4]},
                        "rule-global": {"mean": -0.5, "ci": [-0.9, -0.1]}}}


def _write(folder: Path, numbers: dict) -> None:
    folder.mkdir(parents=True)
    (folder / "report.json").write_text(json.dumps(numbers))


def test_only_landscapes_reusing_the_run_are_linked(tmp_path):
    _write(tmp_path / "land", NUMBERS)
    _write(tmp_path / "other_land", {**NUMBERS, "settings": {**NUMBERS["settings"], "reuse": "another"}})
    _write(tmp_path / "trend", {"epochs": [6, 12], "pairs": [], "reuse": "study"})  # a trend, not a landscape
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "report.json").write_text("{not json")
    assert [name for name, _ in linked_landscapes(tmp_path / "study", "study")] == ["land"]


def test_a_landscape_naming_the_study_is_linked_without_reusing_its_runs(tmp_path):
    settings = {k: v for k, v in NUMBERS["settings"].items() if k != "reuse"}
    _write(tmp_path / "land_24ep", {**NUMBERS, "epochs": 24, "settings": {**settings, "study": "study"}})
    _write(tmp_path / "zz_land_6ep", NUMBERS)  # reuses the study's runs: linked, and its shorter budget first
    _write(tmp_path / "land_other", {**NUMBERS, "settings": {**NUMBERS["settings"], "study": "another"}})
    _write(tmp_path / "land_unlinked", {**NUMBERS, "settings": settings})
    # ``study`` wins over ``reuse``: land_other copies the study's runs but is quoted by "another"
    assert [name for name, _ in linked_landscapes(tmp_path / "study", "study")] == ["zz_land_6ep", "land_24ep"]
    assert [name for name, _ in linked_landscapes(tmp_path / "another", "another")] == ["land_other"]


def test_the_study_report_quotes_the_landscape(tmp_path):
    study = tmp_path / "nb201_cifar10_gpu_slices"
    shutil.copytree(ROOT / "results" / "nb201_cifar10_gpu_slices", study)
    _write(tmp_path / "land", {**NUMBERS, "settings": {**NUMBERS["settings"], "reuse": study.name}})
    text = write_report(study, n_boot=100).read_text()
    expected = landscape_claim("land", NUMBERS)
    assert f"- {expected}" in text
    assert "slope 0.05 [-0.10, +0.20] (the rule predicts 1: outside the CI; one global LR, 0: inside)" in expected
    assert "rule - global -0.50 [-0.90, -0.10]" in expected
