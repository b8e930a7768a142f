"""The LR stages before a retrain pipeline's evaluation (``base_lr = "search"``, ``tune = true``),
in ``run`` and in slices, driven by an executor whose results are known functions of the LR:
a search's final training loss is smallest at LR 0.3 (or wherever a test puts it), a run's test
accuracy is best at a chosen LR per protocol. So every choice below is worked out by hand."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any, Callable

import pytest

from nasrescale.cli.main import main
from nasrescale.errors import ConfigError, DataError
from nasrescale.executors.base import Outcome
from nasrescale.jobs.job import TrainJob
from nasrescale.lrsearch.tuning import is_stage_label
from nasrescale.pipeline.runner import run_pipeline
from nasrescale.pipeline.slices import run_slice
from nasrescale.pipeline.spec import load_pipeline
from nasrescale.pipeline.stages import tuning_cells
from nasrescale.store.job_status import Status

from pipeline_helpers import TINY_BUDGET, one_thread, private_cache  # noqa: F401  (fixtures, used by name)

ARCHS = ("3_11_111", "3_33_333", "1_11_111", "3_13_310", "3_31_131")


class Known:
    """An executor whose runs end in known numbers: search loss ``(ln(lr / loss_at))^2 + 1``,
    test accuracy ``80 - 5 (log2(lr / best[arm]))^2`` (``lr``: the protocol's base LR; ``arm``: the
    protocol's label, or the tuned protocol's for a tuning job)."""

    def __init__(self, loss_at: float = 0.3, best: dict[str, float] | None = None,
                 fails: Callable[[TrainJob], bool] = lambda job: False) -> None:
        self.loss_at, self.best, self.fails = loss_at, best or {}, fails
        self.ran: list[TrainJob] = []

    def run(self, jobs: list[TrainJob], on_outcome: Callable[[Outcome], None],
            on_start: Callable[[str], None] | None = None) -> None:
        for job in jobs:
            self.ran.append(job)
            if self.fails(job):
                on_outcome(Outcome(job.key(), Status.FAILED, None, "ValueError: broken on purpose", 1))
                continue
            lr = job.protocol.lr
            loss = math.log(lr / self.loss_at) ** 2 + 1.0
            arm = job.label.removeprefix("tune:").split("@")[0]
            best = self.best.get(arm, 0.1)
            record = {"test_accuracy": 80.0 - 5.0 * math.log2(lr / best) ** 2, "train_loss_last": loss,
                      "lr": lr, "epochs": job.protocol.epochs, "diverged": False,
                      "history": [{"epoch": 1, "train_loss": loss, "train_loss_tail": loss}]}
            on_outcome(Outcome(job.key(), Status.DONE, record, None, 1))


def staged_pipeline(name: str = "staged", extra: str = "", search: str = "", tuning: str = "") -> str:
    """Two arms on five cells: ``principled`` (searched base LR, tuned) and ``flat`` (0.1, tuned)."""
    names = ", ".join(f'"{a}"' for a in ARCHS)
    return f"""
[pipeline]
name = "{name}"
seeds = [0]
reference = "none"

[archs]
select = "list"
names = [{names}]

[protocols.principled]
protocol = "rescaled"
init = "in_degree_source"
base_lr = "search"
tune = true

[protocols.flat]
protocol = "nb201"
init = "in_degree_source"
base_lr = 0.1
tune = true
{extra}
[lr_search]
lr_min = 0.1
lr_max = 1.6
points = 5
seeds = [0, 1]
protocol = "principled"
{search}
[tuning]
multipliers = [0.25, 0.5, 1.0, 2.0, 4.0]
cells = 2
offset = 3
seeds = [7]
{tuning}
{TINY_BUDGET}"""


def _load(tmp_path: Path, text: str):
    path = tmp_path / "p.toml"
    path.write_text(text)
    return load_pipeline(path)


def _meta(store: Path) -> dict[str, Any]:
    with sqlite3.connect(store) as db:
        return {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM meta")
                if k.startswith(("lr_search:", "base_lr:", "tuning:"))}


def _labels(store: Path) -> list[str]:
    with sqlite3.connect(store) as db:
        return [r[0] for r in db.execute("SELECT protocol FROM jobs")]


def test_a_slice_searches_and_tunes_once_and_reuses_both_on_resume(tmp_path):
    pipeline = _load(tmp_path, staged_pipeline())
    # both arms are best at LR 0.2: flat's anchor 0.1 x 2; principled's anchor is the searched 0.4
    # (grid 0.1, 0.2, 0.4, 0.8, 1.6; the loss is smallest at 0.3, nearer 0.4 in log) x 0.5
    known = Known(loss_at=0.3, best={"flat": 0.2, "principled": 0.2})
    first = run_slice(pipeline, tmp_path / "res", max_cells=1, deadline_s=3600, executor=known, log=lambda _: None)
    store = tmp_path / "res" / "staged" / "store.sqlite"
    meta = _meta(store)
    assert meta["lr_search:principled"]["chosen_lr"] == 0.4
    assert meta["tuning:principled"]["chosen"] == 0.5 and meta["base_lr:principled"] == 0.2
    assert meta["tuning:flat"]["chosen"] == 2.0 and meta["base_lr:flat"] == 0.2
    assert meta["tuning:flat"]["cells"] == tuning_cells(pipeline, pipeline.arch_list())
    searched = [j for j in known.ran if j.label == "lr-search:principled"]
    tuned = [j for j in known.ran if j.label.startswith("tune:")]
    assert len(searched) == 5 * 2 and len(tuned) == 2 * 5 * 2  # grid x seeds; arms x multipliers x cells
    assert {j.seed for j in tuned} == {7}
    assert first.cells_run == [pipeline.arch_list()[0]] and first.jobs_run == 2
    evaluated = [j for j in known.ran if not is_stage_label(j.label)]
    assert {(j.label, j.protocol.lr) for j in evaluated} == {("principled", 0.2), ("flat", 0.2)}

    known.ran.clear()
    second = run_slice(pipeline, tmp_path / "res", max_cells=10, deadline_s=3600, executor=known, log=lambda _: None)
    assert known.ran and not any(is_stage_label(j.label) for j in known.ran)  # nothing searched or tuned again
    assert _meta(store) == meta
    assert second.cells_done == len(ARCHS) and second.failed == 0


def test_the_report_shows_the_search_the_tuning_and_each_tuned_lr(tmp_path):
    from nasrescale.kinds.retrain.write import write_report

    pipeline = _load(tmp_path, staged_pipeline())
    summary = run_pipeline(pipeline, tmp_path / "res", progress=False,
                           executor=Known(loss_at=0.3, best={"flat": 0.2, "principled": 0.2}))
    md = write_report(summary.run_dir, n_boot=10).read_text()
    assert "LR 0.2 = 0.1 x 2, tuned (fixed)" in md and "base LR 0.2 = 0.4 x 0.5, tuned (path_depth)" in md
    assert "anchored its LR tuning at base LR **0.4**" in md
    assert "| x2 **(chosen)** | 0.2 | 80.00 | 2 | 0 |" in md  # flat: anchor 0.1 x 2, 2 tuning cells
    assert "tune:" not in md and (summary.run_dir / "tuning.png").is_file()
    numbers = json.loads((summary.run_dir / "report.json").read_text())
    assert sorted(numbers["protocols"]) == ["flat", "principled"] and numbers["tuning"]["flat"]["chosen"] == 2.0


def test_an_edge_choice_extends_the_search_grid_and_the_tuning_grid(tmp_path):
    pipeline = _load(tmp_path, staged_pipeline())
    # the loss is smallest at 2.5, past the grid's 1.6: 1.6 x 2^k, k = 1..4 (the grid's ratio 2) are
    # added once and 3.2 wins; flat is best at 0.02 = x0.2 of its anchor 0.1: x0.25 is the edge,
    # x0.125 is added and loses
    known = Known(loss_at=2.5, best={"flat": 0.02, "principled": 3.2})
    run_pipeline(pipeline, tmp_path / "res", progress=False, executor=known)
    meta = _meta(tmp_path / "res" / "staged" / "store.sqlite")
    search = meta["lr_search:principled"]
    assert search["chosen_lr"] == 3.2 and search["extensions"] == 1
    assert search["edge"] is None and search["grid"] == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6]
    assert meta["tuning:principled"]["chosen"] == 1.0 and meta["tuning:principled"]["edge"] is None
    assert meta["tuning:flat"]["chosen"] == 0.25 and meta["tuning:flat"]["edge"] is None
    assert sorted(map(float, meta["tuning:flat"]["means"])) == [0.125, 0.25, 0.5, 1, 2, 4]


def test_a_search_still_at_its_edge_exits_2_before_any_evaluation_job_is_stored(tmp_path, monkeypatch, capsys):
    text = staged_pipeline(search="extend = 1")
    pipeline = _load(tmp_path, text)
    with pytest.raises(ConfigError, match=r"lr_search: .*still at the grid's high edge after 1 extension"):
        run_pipeline(pipeline, tmp_path / "res", progress=False, executor=Known(loss_at=100.0))
    labels = _labels(tmp_path / "res" / "staged" / "store.sqlite")
    assert labels and all(is_stage_label(label) for label in labels)


def test_tuning_seeds_that_are_also_evaluation_seeds_exit_2_before_anything_is_stored(tmp_path, capsys):
    """A tuning run at the chosen multiplier on an evaluation seed would be the evaluation job of its
    (later evaluated) cell, stored under the tuning's label: the protocol would miss it."""
    path = tmp_path / "staged.toml"
    path.write_text(staged_pipeline().replace("seeds = [7]", "seeds = [7, 0]"))
    assert main(["run", str(path), "--results", str(tmp_path / "res")]) == 2
    err = capsys.readouterr().err
    assert "tuning.seeds: [0] is also an evaluation seed (pipeline.seeds = [0])" in err and "tuning.seeds = [100]" in err
    assert not (tmp_path / "res").exists()
    default = staged_pipeline().replace("seeds = [7]\n", "")  # the default tuning seeds are apart from 0
    assert _load(tmp_path, default).tuning.seeds == (100,)


def test_a_search_architecture_that_does_not_parse_exits_2_before_the_run_folder_is_made(tmp_path, capsys):
    path = tmp_path / "staged.toml"
    path.write_text(staged_pipeline(search='arch = "3_33_3x3"'))
    for dry in ([], ["--dry-run"]):
        assert main(["run", str(path), "--results", str(tmp_path / "res"), *dry]) == 2
        assert "lr_search.arch: " in capsys.readouterr().err
    assert not (tmp_path / "res" / "staged").exists()


def test_a_tuning_edge_that_persists_is_refused_naming_the_grid(tmp_path):
    pipeline = _load(tmp_path, staged_pipeline(tuning="extend = 1"))
    with pytest.raises(ConfigError, match=r"tuning: the best multiplier of protocols\.\w+ is still at the grid's"):
        run_pipeline(pipeline, tmp_path / "res", progress=False, executor=Known(best={"flat": 10.0, "principled": 10.0}))
    assert all(is_stage_label(label) for label in _labels(tmp_path / "res" / "staged" / "store.sqlite"))


def test_a_failed_tuning_run_stops_the_stage_before_a_multiplier_is_chosen_and_a_rerun_retries_it(tmp_path):
    pipeline = _load(tmp_path, staged_pipeline())
    broken = Known(best={"flat": 0.2, "principled": 0.2}, fails=lambda job: job.label == "tune:flat@x2")
    with pytest.raises(DataError, match=r"tuning: 2 run\(s\) of the grid failed \(the first: tune:flat@x2"):
        run_slice(pipeline, tmp_path / "res", max_cells=5, deadline_s=3600, executor=broken, log=lambda _: None)
    store = tmp_path / "res" / "staged" / "store.sqlite"
    assert "tuning:flat" not in _meta(store) and all(is_stage_label(label) for label in _labels(store))
    fixed = Known(best={"flat": 0.2, "principled": 0.2})
    second = run_slice(pipeline, tmp_path / "res", max_cells=5, deadline_s=3600, executor=fixed, log=lambda _: None)
    assert [j.label for j in fixed.ran if is_stage_label(j.label)] == ["tune:flat@x2"] * 2  # only the failed ones
    assert _meta(store)["tuning:flat"]["chosen"] == 2.0 and second.cells_done == len(ARCHS)


def test_a_deadline_stops_the_tuning_and_the_next_slice_finishes_it(tmp_path):
    pipeline = _load(tmp_path, staged_pipeline())
    known = Known(best={"flat": 0.2, "principled": 0.2})
    first = run_slice(pipeline, tmp_path / "res", max_cells=5, deadline_s=0, executor=known, log=lambda _: None)
    assert first.stopped.startswith("time:") and first.jobs_run == 0
    assert first.stage_jobs_run == 10 and first.jobs_total == 2 * len(ARCHS) and first.cells_done == 0  # the search ran
    assert "tuning:flat" not in _meta(tmp_path / "res" / "staged" / "store.sqlite")
    second = run_slice(pipeline, tmp_path / "res", max_cells=5, deadline_s=3600, executor=known, log=lambda _: None)
    assert second.cells_done == len(ARCHS)


def test_a_slice_stopped_in_a_new_arm_s_tuning_counts_the_jobs_of_the_arms_that_chose(tmp_path, capsys):
    """The store grew by a tuned arm after the first arms chose and ran (two tuned, one searched
    only): a slice stopped in the new arm's tuning counts the others' finished jobs (not 0), names
    the arm it waits for, and says so; a stored tuning around another anchor than the protocol's
    now (a search that moved) does not count as chosen."""
    searched = '\n[protocols.searched]\nprotocol = "rescaled"\nbase_lr = "search"\n'
    known = Known(best={"flat": 0.2, "principled": 0.2, "tuned": 0.1})
    run_slice(_load(tmp_path, staged_pipeline(extra=searched)), tmp_path / "res", max_cells=5, deadline_s=3600,
              executor=known, log=lambda _: None)
    grown = staged_pipeline(extra=searched + '\n[protocols.tuned]\nprotocol = "nb201"\nbase_lr = 0.1\ntune = true\n')
    stopped = run_slice(_load(tmp_path, grown), tmp_path / "res", max_cells=5, deadline_s=0, executor=known,
                        log=lambda _: None)
    assert stopped.stopped.startswith("time:") and stopped.waiting == ["tuned"]
    assert stopped.jobs_done == 3 * len(ARCHS) and stopped.jobs_total == 4 * len(ARCHS) and stopped.cells_done == 0
    path = tmp_path / "grown.toml"
    path.write_text(grown)
    store = tmp_path / "res" / "staged" / "store.sqlite"
    with sqlite3.connect(store) as db:  # as if each job took 1000 s: a 1-s slice starts none
        for key, text in db.execute("SELECT key, value FROM meta WHERE key LIKE 'visit:%'").fetchall():
            db.execute("UPDATE meta SET value = ? WHERE key = ?", (json.dumps({**json.loads(text), "job_s": 1000.0}), key))
    assert main(["run", str(path), "--results", str(tmp_path / "res"), "--time-limit", "1s", "--quiet"]) == 0
    assert ("15/20 jobs finished (the jobs of tuned wait for their LR search or tuning to choose"
            in capsys.readouterr().err)
    with sqlite3.connect(store) as db:  # principled's tuning as if around an anchor the search no longer gives
        (text,), = db.execute("SELECT value FROM meta WHERE key = 'tuning:principled'").fetchall()
        db.execute("UPDATE meta SET value = ? WHERE key = 'tuning:principled'",
                   (json.dumps({**json.loads(text), "anchor_lr": 0.123}),))
    again = run_slice(_load(tmp_path, grown), tmp_path / "res", max_cells=5, deadline_s=0, executor=known,
                      log=lambda _: None)
    assert again.waiting == ["principled", "tuned"] and again.jobs_done == 2 * len(ARCHS)


def test_a_tuning_cell_is_judged_by_the_last_slice_s_seconds_a_job_before_it_starts(tmp_path):
    """The tuning's first cell in a slice does not start when the last slice's pace says it would
    end past the limit (it ran whatever the time left before)."""
    pipeline = _load(tmp_path, staged_pipeline())
    known = Known(best={"flat": 0.2, "principled": 0.2})
    first = run_slice(pipeline, tmp_path / "res", max_cells=5, deadline_s=0, executor=known, log=lambda _: None)
    assert first.stage_jobs_run == 10 and "tuning:flat" not in _meta(tmp_path / "res" / "staged" / "store.sqlite")
    store = tmp_path / "res" / "staged" / "store.sqlite"
    with sqlite3.connect(store) as db:  # as if the last slice on this device had taken 1000 s a job
        (key, text), = db.execute("SELECT key, value FROM meta WHERE key LIKE 'visit:%'").fetchall()
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (json.dumps({**json.loads(text), "job_s": 1000.0}), key))
    known.ran.clear()
    logged: list[str] = []
    second = run_slice(pipeline, tmp_path / "res", max_cells=5, deadline_s=600, executor=known, log=logged.append)
    assert known.ran == [] and second.stopped.startswith("time: 2 tuning cell(s) left")
    assert "slice: 1000.0 s a job, as the last slice on this device took (until a chunk is timed)" in logged
    third = run_slice(pipeline, tmp_path / "res", max_cells=5, deadline_s=3600 * 100, executor=known, log=lambda _: None)
    assert third.cells_done == len(ARCHS) and 0 < third.job_s < 1000.0  # tuning and evaluation timed anew


def test_a_store_grows_by_protocols_and_keeps_its_results(tmp_path):
    base = staged_pipeline(name="grow").replace('base_lr = "search"\ntune = true', "base_lr = 0.3")
    base = base.replace("base_lr = 0.1\ntune = true", "base_lr = 0.1")
    known = Known()
    run_pipeline(_load(tmp_path, base), tmp_path / "res", progress=False, executor=known)
    store = tmp_path / "res" / "grow" / "store.sqlite"
    before = len(_labels(store))
    grown = base + '\n[protocols.wide]\nprotocol = "nb201"\nbase_lr = 0.2\n'
    known.ran.clear()
    run_pipeline(_load(tmp_path, grown), tmp_path / "res", progress=False, executor=known)
    assert {j.label for j in known.ran} == {"wide"} and len(_labels(store)) == before + len(ARCHS)
    changed = grown.replace("base_lr = 0.3", "base_lr = 0.35")
    with pytest.raises(ConfigError, match="different pipeline"):
        run_pipeline(_load(tmp_path, changed), tmp_path / "res", progress=False, executor=known)


def test_a_sliced_run_with_a_failed_job_exits_1(tmp_path, monkeypatch, capsys):
    from pipeline_helpers import tiny_pipeline

    path = tmp_path / "tiny.toml"
    path.write_text(tiny_pipeline("failing", archs=ARCHS[:2]))
    real = TrainJob.run

    def broken(self, options):
        if self.label == "rescaled":
            raise ValueError("broken on purpose")
        return real(self, options)

    monkeypatch.setattr(TrainJob, "run", broken)
    assert main(["run", str(path), "--results", str(tmp_path / "res"), "--max-cells", "1", "--quiet"]) == 1
    assert "1 job(s) failed" in capsys.readouterr().err


@pytest.mark.parametrize("key, value, message", [
    ("protocols.flat.tune", "1", "protocols.flat.tune: expected true or false"),
    ("protocols.principled.base_lr", '"serch"', 'protocols.principled.base_lr: expected a number or "search"'),
    ("lr_search.protocol", '"nope"', "lr_search.protocol: 'nope' is not a protocol"),
    ("tuning.multipliers", "[2.0, 1.0]", "tuning.multipliers: expected distinct positive numbers in ascending"),
    ("tuning.offset", "4", "tuning: offset 4 + cells 2 exceeds the pipeline's 5 cells"),
])
def test_bad_stage_settings_exit_2_naming_the_key_before_anything_is_stored(tmp_path, capsys, key, value, message):
    path = tmp_path / "p.toml"
    path.write_text(staged_pipeline())
    code = main(["run", str(path), "--results", str(tmp_path / "res"), "--max-cells", "1", "--set", f"{key}={value}"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "res").exists()


def test_a_tuning_still_running_shows_its_finished_runs_and_no_choice(tmp_path, capsys):
    from nasrescale.kinds.retrain.write import write_report

    pipeline = _load(tmp_path, staged_pipeline())
    summary = run_pipeline(pipeline, tmp_path / "res", progress=False,
                           executor=Known(loss_at=0.3, best={"flat": 0.2, "principled": 0.2}))
    with sqlite3.connect(summary.run_dir / "store.sqlite") as db:  # as a store stopped part-way through its tuning
        db.execute("DELETE FROM meta WHERE key LIKE 'tuning:%' OR key = 'base_lr:flat'")
        db.execute("DELETE FROM jobs WHERE protocol NOT LIKE 'tune:%' AND protocol NOT LIKE 'lr-search:%'")
        db.execute("UPDATE jobs SET status = 'pending', test_accuracy = NULL WHERE protocol = 'tune:flat@x4'")
    md = write_report(summary.run_dir, n_boot=10).read_text()
    assert "**flat**: anchor LR 0.1; tuning in progress: 8 of 10 runs finished, no multiplier chosen yet" in md
    assert "| x2 | 0.2 | 80.00 | 2 | 0 |" in md and "x4 |" not in md.split("**flat**")[1].split("**principled**")[0]
    assert "flat: the LR tuning has not finished" in md
    assert main(["status", str(tmp_path / "p.toml"), "--results", str(tmp_path / "res")]) == 0
    out = capsys.readouterr().out  # one line per tuning, its multipliers listed; then the stage's own line
    assert "  tuning runs of flat: 8/10 finished (x0.25, x0.5, x1, x2, x4)\n" in out and "tune:flat@" not in out
    assert "  tuning of flat: 8 of 10 runs finished on 2 of 2 tuning cells; no multiplier chosen yet" in out


def test_a_tuning_whose_finished_grid_peaks_at_its_edge_says_the_grid_extends(tmp_path):
    """A store stopped after the first grid, best at its high edge: the report says which
    multiplier comes next rather than "no multiplier chosen yet"."""
    from nasrescale.kinds.retrain.write import write_report

    pipeline = _load(tmp_path, staged_pipeline(tuning="extend = 2"))
    summary = run_pipeline(pipeline, tmp_path / "res", progress=False,
                           executor=Known(loss_at=0.3, best={"flat": 0.8, "principled": 0.2}))
    with sqlite3.connect(summary.run_dir / "store.sqlite") as db:  # stopped before flat's extension ran
        assert db.execute("SELECT COUNT(*) FROM jobs WHERE protocol = 'tune:flat@x8'").fetchone()[0] == 2
        db.execute("DELETE FROM meta WHERE key LIKE 'tuning:%' OR key = 'base_lr:flat'")
        db.execute("DELETE FROM jobs WHERE protocol NOT LIKE 'tune:%' AND protocol NOT LIKE 'lr-search:%'")
        db.execute("DELETE FROM jobs WHERE protocol IN ('tune:flat@x8', 'tune:flat@x16')")
    md = write_report(summary.run_dir, n_boot=10).read_text()
    assert ("**flat**: anchor LR 0.1; all 10 runs of the grid finished; its best, x4, is at the grid's high edge, "
            "so the grid extends to x8 (extension 1 of 2)") in md


def test_a_tuning_with_some_of_its_cells_finished_is_in_progress_even_at_an_edge(tmp_path):
    """One of the two tuning cells finished (tuning runs in chunks of a cell, every multiplier):
    the grid is not finished, whatever the finished cell's best says."""
    from nasrescale.kinds.retrain.write import write_report

    pipeline = _load(tmp_path, staged_pipeline(tuning="extend = 2"))
    summary = run_pipeline(pipeline, tmp_path / "res", progress=False,
                           executor=Known(loss_at=0.3, best={"flat": 0.8, "principled": 0.2}))
    second = tuning_cells(pipeline, pipeline.arch_list())[1]
    with sqlite3.connect(summary.run_dir / "store.sqlite") as db:  # stopped after the first tuning cell
        db.execute("DELETE FROM meta WHERE key LIKE 'tuning:%' OR key = 'base_lr:flat'")
        db.execute("DELETE FROM jobs WHERE protocol NOT LIKE 'tune:%' AND protocol NOT LIKE 'lr-search:%'")
        db.execute("DELETE FROM jobs WHERE protocol IN ('tune:flat@x8', 'tune:flat@x16')")
        db.execute("DELETE FROM jobs WHERE protocol LIKE 'tune:%' AND arch = ?", (second,))
    md = write_report(summary.run_dir, n_boot=10).read_text()
    assert "**flat**: anchor LR 0.1; tuning in progress: 5 of 10 runs finished, no multiplier chosen yet" in md
    assert "each multiplier on 2 tuning cells" in md  # the planned cells, not the 1 with runs so far
    from nasrescale.pipeline.progress import stage_lines

    lines = stage_lines(summary.run_dir)  # what `nasrescale status` adds: the stored jobs are not all the work
    assert "  tuning of flat: 5 of 10 runs finished on 1 of 2 tuning cells; no multiplier chosen yet" in lines
    assert any(line.startswith("  not stored yet: the evaluation jobs of ") and "flat" in line for line in lines)


def test_a_finished_tuning_says_in_words_which_multipliers_its_extensions_added(tmp_path):
    """flat's best (x8 of its anchor) lies past the first grid's high edge: the finished tuning's head
    names the multipliers the extensions added, and principled's, chosen inside the first grid, none."""
    from nasrescale.kinds.retrain.write import write_report

    pipeline = _load(tmp_path, staged_pipeline(tuning="extend = 2"))
    summary = run_pipeline(pipeline, tmp_path / "res", progress=False,
                           executor=Known(loss_at=0.3, best={"flat": 0.8, "principled": 0.2}))
    md = write_report(summary.run_dir, n_boot=10).read_text()
    flat = next(line for line in md.splitlines() if line.startswith("**flat**"))
    principled = next(line for line in md.splitlines() if line.startswith("**principled**"))
    assert flat.endswith("the first grid's best sat at its edge, so it was extended by x8, x16"), flat
    assert "extended" not in principled, principled
