"""The calibration pipeline kind: candidate budgets parsed and checked before anything is
stored, one job per candidate x cell x seed, growth by seeds, and a report whose figures are
recomputed from the store by the ranking code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nasrescale.cli.main import main
from nasrescale.errors import ConfigError
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.ranking.text import JSON_DIGITS
from nasrescale.ranking.compare import compare
from nasrescale.ranking.rank import kendall_tau
from nasrescale.ranking.sources import load_source

from pipeline_helpers import one_thread, private_cache  # noqa: F401  (fixtures, used by name)

ARCHS = ("3_11_111", "3_33_333", "1_11_111", "3_13_310")


def calibration_file(tmp_path: Path, seeds: str = "[0, 1]", extra: str = "", name: str = "cal") -> Path:
    names = ", ".join(f'"{a}"' for a in ARCHS)
    text = f"""
[pipeline]
name = "{name}"
kind = "calibration"
seeds = {seeds}
reference = "nb201:cifar10"
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
[budgets.small]
epochs = 1
[budgets.low_res]
epochs = 2
resolution = 16
seeds = [0]
[executor]
device = "cpu"
{extra}"""
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def test_candidates_merge_the_common_budget_and_plan_one_job_per_candidate_cell_and_seed(tmp_path):
    pipeline = load_pipeline(calibration_file(tmp_path))
    small, low = pipeline.table("budgets")
    assert (small.budget.epochs, small.budget.width, small.budget.train_subset, small.seeds) == (1, 4, 100, (0, 1))
    assert (low.budget.resolution, low.seeds) == (16, (0,))
    jobs = pipeline.jobs()
    assert len(jobs) == len(ARCHS) * (2 + 1)
    by_label = {j.label for j in jobs}
    assert by_label == {"small", "low_res"}
    low_jobs = [j for j in jobs if j.label == "low_res"]
    assert {j.protocol.epochs for j in low_jobs} == {2} and {j.data.resolution for j in low_jobs} == {16}
    # every candidate's first seed comes before any second seed
    assert [j.seed for j in jobs].index(1) == len(ARCHS) * 2


@pytest.mark.parametrize("override, fragment", [
    ({"budgets.small.epochs": 0}, "budgets.small.epochs: must be a positive integer"),
    ({"budgets.small.colour": 3}, "budgets.small.colour: unknown key"),
    ({"budgets.small.seeds": [0, 0]}, "budgets.small.seeds: expected distinct integers"),
    ({"pipeline.kind": "retrain"}, r"budgets: this table belongs to kind = \"calibration\""),
])
def test_bad_candidates_name_their_key(tmp_path, override, fragment):
    with pytest.raises(ConfigError, match=fragment.replace(".", r"\.")):
        load_pipeline(calibration_file(tmp_path), override)


def test_a_calibration_needs_candidates_and_one_protocol(tmp_path):
    path = calibration_file(tmp_path, extra="[protocols.other]\nprotocol = \"rescaled\"\nbase_lr = 0.3\n")
    with pytest.raises(ConfigError, match="a calibration trains one protocol"):
        load_pipeline(path).jobs()
    text = calibration_file(tmp_path).read_text().split("[budgets.small]")[0] + "[executor]\ndevice = \"cpu\"\n"
    bare = tmp_path / "bare.toml"
    bare.write_text(text)
    with pytest.raises(ConfigError, match=r"budgets: a calibration needs at least one \[budgets.<label>\]"):
        load_pipeline(bare)


@pytest.mark.parametrize("setting, fragment", [
    ("budgets.small.train_subset=999999", "budgets.small.train_subset = 999999: cannot take"),
    ("budgets.small.epochs=0", "budgets.small.epochs: must be a positive integer"),
    ("budgets.low_res.resolution=64", "budget.resolution = 64: must be between 4"),
])
def test_bad_budgets_exit_2_before_anything_is_stored(capsys, tmp_path, setting, fragment):
    path = calibration_file(tmp_path)
    code = main(["run", str(path), "--results", str(tmp_path / "res"), "--set", setting])
    err = capsys.readouterr().err
    assert code == 2 and fragment in err
    assert not (tmp_path / "res" / "cal" / "store.sqlite").exists()


def test_run_reports_every_candidate_as_the_ranking_code_computes_it(capsys, tmp_path):
    path, results = calibration_file(tmp_path), tmp_path / "res"
    assert main(["run", str(path), "--results", str(results)]) == 0
    capsys.readouterr()
    run_dir = results / "cal"
    report = json.loads((run_dir / "report.json").read_text())
    rows = {r["label"]: r for r in report["candidates"]}
    assert set(rows) == {"small", "low_res"} and rows["small"]["runs_done"] == len(ARCHS) * 2
    reference = load_source("nb201:cifar10")
    for label, row in rows.items():
        result, merged = compare(load_source(f"{run_dir}:{label}"), reference)
        assert row["kendall_tau"] == float(f"{result['kendall_tau']:.{JSON_DIGITS}g}")  # as report.json writes it
        assert row["n"] == len(ARCHS)
        # the same tau straight from scipy's definition on the matched accuracies
        assert row["kendall_tau"] == pytest.approx(kendall_tau(merged["a"], merged["b"]), abs=1e-11)
    assert rows["small"]["seed_vs_seed_tau"] is not None and rows["low_res"]["seed_vs_seed_tau"] is None
    text = (run_dir / "report.md").read_text()
    assert "tau_vs_cost.png" in text and (run_dir / "tau_vs_cost.png").stat().st_size > 0
    assert (run_dir / "accuracy_vs_reference.png").stat().st_size > 0
    # it says what it validated, and no bound its own rows can break
    assert "cannot agree with the reference much more" not in text
    assert "trains the `nb201` protocol only" in text
    assert f"best of 2 budgets on the {len(ARCHS)} cells it is measured on" in text and "in-sample" in text
    assert "## Method" in text


def test_a_calibration_grows_by_seeds_without_retraining(capsys, tmp_path):
    results = tmp_path / "res"
    assert main(["run", str(calibration_file(tmp_path, seeds="[0]")), "--results", str(results)]) == 0
    assert main(["run", str(calibration_file(tmp_path, seeds="[0, 1]")), "--results", str(results)]) == 0
    captured = capsys.readouterr()
    grown = [line for line in (captured.out + captured.err).splitlines() if line.startswith("cal:") and " jobs (" in line]
    assert len(grown) == 2, captured
    # the second run added only the second seed of `small` (low_res keeps its own seeds = [0])
    assert f"({len(ARCHS)} new, {len(ARCHS)} run now)" in grown[-1]
    other = calibration_file(tmp_path, seeds="[0, 1]").read_text().replace("epochs = 2", "epochs = 3")
    (tmp_path / "changed.toml").write_text(other)
    assert main(["run", str(tmp_path / "changed.toml"), "--results", str(results)]) == 2
    assert "different pipeline" in capsys.readouterr().err
