"""The trend pipeline kind end to end at toy size: each protocol at each budget on the same
cells, the runs of another store reused by job key instead of trained again, a sliced run that
resumes, bad ``[trend]`` input refused with exit 2, and a report whose per-budget numbers
recompute from the store."""

from __future__ import annotations

import json
import shutil
import sqlite3
import types
from pathlib import Path

import numpy as np
import pytest

from nasrescale.errors import ConfigError
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.report.common.claim_verdicts import PAPER_GAIN
from nasrescale.report.kind_reports import write_run_report
from nasrescale.report.kind_reports import write_run_report as write_report
from nasrescale.report.common.page import Computed
from nasrescale.kinds.trend.sections import Pairs
from nasrescale.store.read import read_store
from nasrescale.ranking.rank import kendall_tau, spearman
from nasrescale.space.benchmark import benchmark_accuracies

from pipeline_helpers import cli, one_thread, tiny_pipeline  # noqa: F401  (fixtures, used by name)

ARCHS = ("3_11_111", "3_33_333", "1_13_310")


def trend_file(tmp_path: Path, trend: str = 'epochs = [1, 2]\nreuse = "study"\nnoise = "study"') -> Path:
    """The study's pipeline (``tiny_pipeline``: 1 epoch, width 4, 100/100 images) as a trend over ``[trend]``."""
    text = tiny_pipeline("trend", (0,), ARCHS).replace('name = "trend"', 'name = "trend"\nkind = "trend"\n'
                                                       'reference = "nb201:cifar10"')
    path = tmp_path / "trend.toml"
    path.write_text(text + f"\n[trend]\n{trend}\n")
    return path


def rows(run_dir: Path) -> list[tuple]:
    conn = sqlite3.connect(run_dir / "store.sqlite")
    try:
        return conn.execute("SELECT arch, protocol, seed, status, test_accuracy FROM jobs").fetchall()
    finally:
        conn.close()


def test_a_trend_job_at_the_study_budget_is_the_study_job():
    trend = load_pipeline("quickstart", {"pipeline.kind": "trend", "trend.epochs": [1, 3]})
    study = load_pipeline("quickstart", {"budget.epochs": 3})
    archs = study.arch_list()[:2]
    at_three = {j.key(): j.label for j in trend.jobs(archs) if j.protocol.epochs == 3}
    assert set(at_three) == {j.key() for j in study.jobs(archs)}
    assert sorted(set(at_three.values())) == ["default@3ep", "rescaled@3ep"]


@pytest.mark.parametrize(("trend", "fragment"), [
    ("epochs = [2, 1]", "trend.epochs: expected distinct positive integers in ascending order"),
    ("epochs = []", "trend.epochs"),
    ("epochs = [1]\ntop_percent = 0", "trend.top_percent"),
    ("epochs = [1]\nreuse = \"no_such_run\"", "trend.reuse: no store at"),
    ("epoch = [1]", "trend.epoch: unknown key"),
])
def test_bad_trend_input_exits_2_naming_the_key(capsys, tmp_path, trend, fragment):
    for dry in ([], ["--dry-run"]):  # --dry-run finds it too
        code, _, err = cli(capsys, "run", str(trend_file(tmp_path, trend)), "--results", str(tmp_path / "res"), *dry)
        assert code == 2 and fragment in err
        assert not (tmp_path / "res" / "trend").exists()  # found before the run folder is made


def test_a_trend_table_needs_the_trend_kind(tmp_path):
    path = tmp_path / "retrain.toml"
    path.write_text(tiny_pipeline() + "\n[trend]\nepochs = [1, 2]\n")
    with pytest.raises(ConfigError, match=r"trend: this table belongs to kind = \"trend\""):
        load_pipeline(path)


def test_a_trend_reuses_the_study_resumes_in_slices_and_reports_what_the_store_holds(capsys, tmp_path):
    results = tmp_path / "res"
    study = tmp_path / "study.toml"
    study.write_text(tiny_pipeline("study", (0, 1), ARCHS))
    assert cli(capsys, "run", str(study), "--results", str(results))[0] == 0
    path = trend_file(tmp_path)
    code, _, err = cli(capsys, "run", str(path), "--results", str(results), "--max-cells", "1")
    assert code == 0, err
    run_dir = results / "trend"
    assert json.loads(sqlite3.connect(run_dir / "store.sqlite").execute(
        "SELECT value FROM meta WHERE key = 'reused'").fetchone()[0]) == {"source": "study", "runs": 2}
    code, out, err = cli(capsys, "run", str(path), "--results", str(results))
    assert code == 0, err
    assert "B against A = default" in out
    stored = rows(run_dir)
    assert len(stored) == len(ARCHS) * 2 * 2 and all(r[3] == "done" for r in stored)
    # every 1-epoch run is the study's seed-0 run, copied (same accuracy), not trained again
    study_acc = {(a, p, s): acc for a, p, s, _, acc in rows(results / "study")}
    for arch, label, seed, _, acc in stored:
        if label.endswith("@1ep"):
            assert acc == study_acc[(arch, label.split("@")[0], seed)]
    reused = json.loads(sqlite3.connect(run_dir / "store.sqlite").execute(
        "SELECT value FROM meta WHERE key = 'reused'").fetchone()[0])
    assert reused == {"source": "study", "runs": len(ARCHS) * 2}
    check_report(run_dir, stored)
    check_study_links_the_trend(results / "study", json.loads((run_dir / "report.json").read_text()))
    check_a_budget_is_added_to_the_same_store(capsys, tmp_path, results, stored)
    check_a_partial_trend_compares_the_same_cells(results / "trend")
    check_a_budget_without_a_finished_run_waits(results / "trend", tmp_path / "copy")


def check_a_budget_without_a_finished_run_waits(run_dir: Path, copy: Path) -> None:
    """A budget with only pending jobs (3 epochs) and one the store has no job of (4 epochs, as
    after trend.epochs grew): the report still writes, says they wait, and compares the others
    on every cell they finished instead of blanking them."""
    shutil.copytree(run_dir, copy)
    with sqlite3.connect(copy / "store.sqlite") as db:
        db.execute("UPDATE jobs SET status = 'pending' WHERE protocol LIKE '%@3ep'")
        (text,) = db.execute("SELECT value FROM meta WHERE key = 'pipeline'").fetchone()
        pipeline = json.loads(text)
        pipeline["trend"]["epochs"] = [1, 2, 3, 4]
        db.execute("UPDATE meta SET value = ? WHERE key = 'pipeline'", (json.dumps(pipeline),))
    write_run_report(copy, n_boot=50)
    report = json.loads((copy / "report.json").read_text())
    assert report["compared"] == len(ARCHS)
    assert {r["epochs"]: r["n"] for r in report["pairs"]} == {1: len(ARCHS), 2: len(ARCHS), 3: 0, 4: 0}
    assert [(c["from"], c["to"], c["n"]) for c in report["gain_changes"]] == [(1, 2, len(ARCHS))]
    text = (copy / "report.md").read_text()
    assert ("**Waiting:** no finished run yet for default at 3 epochs, default at 4 epochs, rescaled at 3 epochs, "
            "rescaled at 4 epochs") in text


def check_a_partial_trend_compares_the_same_cells(run_dir: Path) -> None:
    """With the 3-epoch budget trained on one cell of three, every figure is of that one cell: the
    pairs at 1 and 2 epochs too (not the three cells they have), and the report says it is interim."""
    write_run_report(run_dir, n_boot=50)
    report = json.loads((run_dir / "report.json").read_text())
    done_at_3 = {arch for arch, label, _, status, _ in rows(run_dir) if label == "default@3ep" and status == "done"}
    assert report["compared"] == len(done_at_3) == 1 and report["cells"] == len(ARCHS)
    assert {r["epochs"] for r in report["pairs"]} == {1, 2, 3} and all(r["n"] == 1 for r in report["pairs"])
    (arch,) = done_at_3
    acc = {label: a for a_, label, _, _, a in rows(run_dir) if a_ == arch}
    for row in report["vs_reference"]:
        assert row["mean_accuracy"] == pytest.approx(acc[f"{row['protocol']}@{row['epochs']}ep"])
    assert "**Interim:** 1 of 3 cells have a finished run under every protocol at every budget" in (
        run_dir / "report.md").read_text()


def check_a_budget_is_added_to_the_same_store(capsys, tmp_path: Path, results: Path, stored: list[tuple]) -> None:
    """trend.epochs grown by a budget: the same store, its finished runs kept, only the new budget's
    jobs trained; fewer budgets than stored is another experiment, refused before anything runs."""
    grown = trend_file(tmp_path, 'epochs = [1, 2, 3]\nreuse = "study"\nnoise = "study"')
    code, _, err = cli(capsys, "run", str(grown), "--results", str(results), "--max-cells", "1")
    assert code == 0, err
    now = rows(results / "trend")
    added = set(now) - set(stored)  # the new budget's jobs, stored as pending; one cell's trained
    assert set(stored) <= set(now) and {r[1] for r in added} == {"default@3ep", "rescaled@3ep"}
    assert len(added) == len(ARCHS) * 2 and sorted(r[1] for r in added if r[3] == "done") == ["default@3ep", "rescaled@3ep"]
    shrunk = trend_file(tmp_path, 'epochs = [1]\nreuse = "study"\nnoise = "study"')
    code, _, err = cli(capsys, "run", str(shrunk), "--results", str(results))
    assert code == 2 and "trend.epochs" in err and sorted(rows(results / "trend")) == sorted(now)


def check_study_links_the_trend(study: Path, trend: dict) -> None:
    """The study's claims end with the trend built on it: its link and the gain at its budgets."""
    write_report(study, n_boot=50)
    claims = (study / "report.md").read_text().split("## What this budget can say")[1].split("\n## ")[0]
    (line,) = [line for line in claims.splitlines() if line.startswith("- With the budget")]
    first, last = sorted((r for r in trend["pairs"] if r["b"] == "rescaled"), key=lambda r: r["epochs"])
    assert "[trend](../trend/report.md), 3 cells" in line
    assert f"{first['gain']:+.2f}" in line and f"{last['gain']:+.2f} " in line and "at 2 epochs" in line
    assert read_store(study / "store.sqlite").record.dataset not in PAPER_GAIN  # the shipped subset
    # 3 cells: the figures so far, with neither a CI nor a verdict (none on the paper's figure either)
    assert "so far went from" in line and "3 cells: fewer than 10, too few for a verdict" in line
    assert "consistent" not in line and "rose" not in line and "fell" not in line and " [" not in line
    assert trend["reuse"] == "study" and trend["noise"] == "study"


def check_report(run_dir: Path, stored: list[tuple]) -> None:
    """report.json's per-budget numbers recomputed from the store's rows."""
    report = json.loads((run_dir / "report.json").read_text())
    acc = {(label, arch): a for arch, label, _, _, a in stored}
    cells = sorted({arch for arch, *_ in stored})  # the canonical strings of ARCHS
    ref = benchmark_accuracies("cifar10")
    assert report["epochs"] == [1, 2] and report["protocols"] == ["default", "rescaled"]
    for row in report["vs_reference"]:
        label = f"{row['protocol']}@{row['epochs']}ep"
        mine = [acc[(label, a)] for a in cells]
        assert row["mean_accuracy"] == pytest.approx(np.mean(mine), abs=1e-9)
        assert row["kendall_tau"] == pytest.approx(kendall_tau([ref[a] for a in cells], mine), abs=1e-12)
        assert row["spearman"] == pytest.approx(spearman([ref[a] for a in cells], mine), abs=1e-12)
    for row in report["pairs"]:
        a = [acc[(f"default@{row['epochs']}ep", x)] for x in cells]
        b = [acc[(f"rescaled@{row['epochs']}ep", x)] for x in cells]
        assert row["n"] == len(ARCHS)
        assert row["gain"] == pytest.approx(np.mean(np.subtract(b, a)), abs=1e-9)
        assert row["kendall_tau"] == pytest.approx(kendall_tau(a, b), abs=1e-12)
        assert row["gain_ci"] is None or row["gain_ci"][0] <= row["gain_ci"][1]
    check_few_cells_give_no_ci(run_dir, report)
    (change,) = report["gain_changes"]  # the gain's change from 1 to 2 epochs, paired over the cells
    gain = {e: np.subtract([acc[(f"rescaled@{e}ep", x)] for x in cells], [acc[(f"default@{e}ep", x)] for x in cells])
            for e in (1, 2)}
    assert (change["b"], change["from"], change["to"], change["n"]) == ("rescaled", 1, 2, len(ARCHS))
    assert change["change"] == pytest.approx(np.mean(gain[2] - gain[1]), abs=1e-9)
    by_label = {(r["protocol"], r["epochs"]): r["mean_accuracy"] for r in report["vs_reference"]}
    for row in report["pairs"]:  # the protocols' means are the pairs' means: B's - A's is the gain
        assert by_label[("rescaled", row["epochs"])] - by_label[("default", row["epochs"])] == pytest.approx(row["gain"])
    assert set(report["noise_floor"]["protocols"]) == {"default", "rescaled"}
    text = (run_dir / "report.md").read_text()
    assert "## B against A, per budget" in text and "from 1 to 2 epochs the gain goes from" in text
    assert "- / -" not in text and "One seed a run: the trend measures no seed noise of its own" in text  # seeds = [0]
    for figure in ("trend_gain.png", "trend_tau.png"):
        assert figure in text and (run_dir / figure).stat().st_size > 0


def check_few_cells_give_no_ci(run_dir: Path, report: dict) -> None:
    """On 3 cells (fewer than 10) report.md gives every figure without its CI and the change of gain
    without a verdict, while report.json keeps the CIs it computed."""
    text = (run_dir / "report.md").read_text()
    pair_rows = [line for line in text.splitlines() if line.startswith("| 1 | rescaled vs default")
                 or line.startswith("| 2 | rescaled vs default")]
    assert len(pair_rows) == 2 and not any("[" in line for line in pair_rows)
    assert text.count("A row on fewer than 10 cells gives its figures without a CI") == 2  # both tables
    (change,) = [line for line in text.splitlines() if line.startswith("- Against the budget")]
    assert "so far" in change and "(paired over 3 cells: fewer than 10, too few for a verdict)" in change
    assert "CI tells" not in change and "holds no change" not in change
    protocol_rows = [line for line in text.split("## B against A")[0].splitlines() if line.startswith(("| 1 | ", "| 2 | "))]
    assert len(protocol_rows) == 4 and all("[" not in line and "| 3 |" in line for line in protocol_rows)  # n = 3
    assert any(r["kendall_tau_ci"] is not None for r in report["vs_reference"])


def test_the_own_seed_noise_column_shows_only_with_several_seeds():
    """A trend with several seeds gives each budget's own seed-vs-seed tau of A and B; with one
    seed the column would be empty, so a line points at the floor instead."""
    row = {"a": "default", "b": "principled", "epochs": 6, "n": 12, "gain": 0.1, "gain_ci": [-0.1, 0.3],
           "kendall_tau": 0.5, "kendall_tau_ci": [0.3, 0.7], "topk_kendall_tau": None, "topk_n": 0}
    run = types.SimpleNamespace(top_percent=50)
    seeds = "\n".join(Pairs().render(run, Computed([{**row, "seed_noise": {"a": 0.8, "b": 0.7}}])))
    one = "\n".join(Pairs().render(run, Computed([{**row, "seed_noise": {"a": None, "b": None}}])))
    assert "seed-noise tau A / B" in seeds and "| 0.800 / 0.700 |" in seeds and "One seed a run" not in seeds
    assert "seed-noise tau A / B" not in one and "/" not in one.split("One seed a run")[0].split("## B against A")[1]
    assert "One seed a run: the trend measures no seed noise of its own" in one
