"""`nasrescale run --time-limit/--max-cells`: cells in spread order, whole cells at a time, a
rerun continues, and pipelines that cannot be sliced are refused before anything is stored."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from unittest import mock

import pytest

from nasrescale.cli.main import main
from nasrescale.pipeline.slices import INTERRUPTED, TERMINATED, run_slice, spread_order, visit_cells, visit_records
from nasrescale.pipeline.signals import Terminated
from nasrescale.pipeline.spec import load_pipeline

from pipeline_helpers import one_thread, private_cache, tiny_pipeline  # noqa: F401  (fixtures, used by name)

ARCHS = ("3_11_111", "3_33_333", "1_11_111", "3_13_310")


def _finished(store) -> dict[str, int]:
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT arch, COUNT(*) FROM jobs WHERE status = 'done' GROUP BY arch").fetchall()
    return dict(rows)


def test_max_cells_runs_whole_cells_in_spread_order_and_a_rerun_continues(capsys, tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_pipeline("sliced", archs=ARCHS))
    results = tmp_path / "res"
    assert main(["run", str(path), "--results", str(results), "--max-cells", "1", "--quiet"]) == 0
    store = results / "sliced" / "store.sqlite"
    order = visit_cells(load_pipeline(path).arch_list())  # canonical strings, selection order
    first = _finished(store)
    assert list(first) == [order[0]] and first[order[0]] == 2  # both protocols of the cell, one seed
    assert main(["run", str(path), "--results", str(results), "--time-limit", "1h", "--max-cells", "2",
                 "--quiet"]) == 0
    assert set(_finished(store)) == set(order[:3])
    err = capsys.readouterr().err
    assert "3/4 cells" in err
    slices = visit_records(store)  # one record per slice, each naming the device it ran on
    assert [v["jobs_done"] for v in slices] == [2, 6] and all(v["device"].startswith("cpu (") for v in slices)


def test_an_interrupted_slice_is_still_recorded_and_the_next_one_continues(tmp_path):
    """Ctrl-C (here: at the end of the first chunk) ends the slice with KeyboardInterrupt, but its
    record is written first: what it ran, and that it was interrupted; a rerun finishes the rest."""
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_pipeline("sliced", archs=ARCHS))
    pipeline, results = load_pipeline(path), tmp_path / "res"

    def interrupt():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_slice(pipeline, results, max_cells=2, deadline_s=3600, progress=False, log=lambda _: None,
                  after_chunk=interrupt)
    store = results / "sliced" / "store.sqlite"
    order = visit_cells(pipeline.arch_list())
    (record,) = visit_records(store)
    assert record["stopped"] == INTERRUPTED and record["cells_run"] == [order[0]] and record["jobs_run"] == 2
    assert record["jobs_done"] == 2 and record["device"].startswith("cpu (")
    summary = run_slice(pipeline, results, max_cells=3, deadline_s=3600, progress=False, log=lambda _: None)
    assert summary.cells_run == order[1:] and summary.cells_done == 4 and len(visit_records(store)) == 2


def test_sigterm_ends_a_slice_as_ctrl_c_does_with_its_record_and_exit_143(tmp_path, capsys):
    """SIGTERM (kill, scancel, a SLURM time limit; here sent at the end of the first chunk) ends
    the slice as Ctrl-C does: its record is written, saying SIGTERM stopped it, the command exits
    143, and the handler the process had before is back afterwards, after an ordinary slice too."""
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_pipeline("sliced", archs=ARCHS))
    pipeline, results = load_pipeline(path), tmp_path / "res"
    mine = []  # a handler of the caller's, so a SIGTERM that misses the slice's does not end pytest
    before = signal.signal(signal.SIGTERM, lambda signum, frame: mine.append(signum))

    def terminate():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises within this sleep

    try:
        with pytest.raises(Terminated):
            run_slice(pipeline, results, max_cells=2, deadline_s=3600, progress=False, log=lambda _: None,
                      after_chunk=terminate)
        assert signal.getsignal(signal.SIGTERM) is not None and not mine
        (record,) = visit_records(results / "sliced" / "store.sqlite")
        assert record["stopped"] == TERMINATED != INTERRUPTED and record["jobs_run"] == 2
        os.kill(os.getpid(), signal.SIGTERM)  # the caller's handler is back: it sees this one
        time.sleep(0.1)
        assert mine == [signal.SIGTERM]
        run_slice(pipeline, results, max_cells=1, deadline_s=3600, progress=False, log=lambda _: None)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.1)
        assert mine == [signal.SIGTERM] * 2 and len(visit_records(results / "sliced" / "store.sqlite")) == 2
    finally:
        signal.signal(signal.SIGTERM, before)

    def killed(*_, **__):
        raise Terminated("signal 15 (SIGTERM)")

    with mock.patch("nasrescale.pipeline.slices.run_slice", killed):
        code = main(["run", str(path), "--results", str(results), "--time-limit", "1h", "--quiet"])
    assert code == 143 and "terminated (SIGTERM)" in capsys.readouterr().err


def test_a_slice_judges_its_first_chunk_by_the_last_slice_on_the_same_device(tmp_path):
    """Before any chunk is timed, a slice that the last one's seconds a job say would end past the
    time limit is not started (a GPU allocation's limit would otherwise be overrun by one chunk)."""
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_pipeline("sliced", archs=ARCHS))
    pipeline, results, logged = load_pipeline(path), tmp_path / "res", []
    run_slice(pipeline, results, max_cells=1, deadline_s=3600, progress=False, log=lambda _: None)
    store = results / "sliced" / "store.sqlite"
    with sqlite3.connect(store) as db:  # the first slice, as if each of its jobs had taken 1000 s
        (key, text), = db.execute("SELECT key, value FROM meta WHERE key LIKE 'visit:%'").fetchall()
        record = json.loads(text)
        assert record["jobs_run"] == 2 and 0 < record["job_s"] <= record["wall_s"]  # a timed chunk, recorded
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (json.dumps({**record, "job_s": 1000.0}), key))
    summary = run_slice(pipeline, results, max_cells=1, deadline_s=600, progress=False, log=logged.append)
    assert summary.jobs_run == 0 and summary.job_s is None
    assert summary.stopped.startswith("time: 1 chunk(s) left") and summary.stopped.endswith("the next needs ~2000 s)")
    assert "slice: 1000.0 s a job, as the last slice on this device took (until a chunk is timed)" in logged
    summary = run_slice(pipeline, results, max_cells=1, deadline_s=3 * 3600, progress=False, log=logged.append)
    assert summary.jobs_run == 2 and _finished(store) == {c: 2 for c in visit_cells(pipeline.arch_list())[:2]}
    assert visit_records(store)[-1]["job_s"] < 1000.0  # the chunk timed now is the next slice's estimate


@pytest.mark.parametrize("argv, fragment", [
    (["--time-limit", "soon"], "'soon' is no duration"),
    (["--max-cells", "0"], "'0': expected a positive integer"),
])
def test_bad_limits_exit_2(capsys, tmp_path, argv, fragment):
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_pipeline("sliced", archs=ARCHS))
    with pytest.raises(SystemExit) as exc:
        main(["run", str(path), "--results", str(tmp_path / "res"), *argv])
    assert exc.value.code == 2 and fragment in capsys.readouterr().err
    assert not (tmp_path / "res").exists()


def test_a_pipeline_that_cannot_be_sliced_is_refused_before_anything_is_stored(capsys, tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_pipeline("validated", archs=ARCHS).replace('name = "validated"',
                                                                     'name = "validated"\nkind = "lr_validation"'))
    assert main(["run", str(path), "--results", str(tmp_path / "res"), "--max-cells", "1"]) == 2
    assert "lr_validation pipeline" in capsys.readouterr().err
    assert not (tmp_path / "res").exists()


def test_spread_order_prefixes_cover_the_range() -> None:
    order = spread_order(100)
    assert sorted(order) == list(range(100))
    for m in range(1, 101):  # any first m of 100 strata: gaps as narrow as for the power of two p <= m
        p = 1 << (m.bit_length() - 1)
        edges = [0, *sorted(order[:m]), 100]
        widest = max(b - a for a, b in zip(edges, edges[1:]))
        assert widest <= -(-100 // p), (m, widest)
    assert visit_cells(["a", "b", "c", "d"]) == ["a", "c", "b", "d"]


def test_a_chunk_that_does_not_fit_runs_the_whole_cells_of_it_that_do(monkeypatch) -> None:
    """The time a full chunk would overrun is not wasted: its whole cells that fit run, then its
    rest is judged again by the pace just measured (a fake clock: every job takes 10 s)."""
    from types import SimpleNamespace

    from nasrescale.pipeline import execute
    from nasrescale.pipeline.execute import Pace, run_chunks

    clock = [0.0]
    monkeypatch.setattr(execute.time, "monotonic", lambda: clock[0])
    chunks = [[SimpleNamespace(arch=a, seed=s) for a in cells for s in (0, 1)] for cells in ("abc", "de")]
    ran: list[list[str]] = []

    def run(jobs, seconds=10.0):
        ran.append([f"{j.arch}{j.seed}" for j in jobs])
        clock[0] += seconds * len(jobs)
        return len(jobs), 0, len(jobs)

    logged: list[str] = []
    # the first chunk (6 jobs) needs 60 s of the 45 s left; its first two cells (40 s) fit, its last does not
    done, stopped = run_chunks(run, chunks, 45.0, logged.append, pace=Pace(10.0))
    assert ran == [["a0", "a1", "b0", "b1"]] and done == 4
    assert stopped == "time: 2 chunk(s) left for the next slice (5 s left, the next needs ~20 s)"
    assert "slice: chunk 1/2 cut to the 4 of its 6 jobs (whole cells) that fit the 45 s left" in logged
    ran.clear()  # faster than the estimate (2 s a job): the cut chunk's rest and the next chunk fit after all
    clock[0] = 0.0
    done, stopped = run_chunks(lambda jobs: run(jobs, 2.0), chunks, 45.0, logged.append, pace=Pace(10.0))
    assert ran == [["a0", "a1", "b0", "b1"], ["c0", "c1"], ["d0", "d1", "e0", "e1"]] and stopped == ""
    ran.clear()  # not even one cell (20 s) fits in 15 s: nothing runs
    clock[0] = 0.0
    done, stopped = run_chunks(run, chunks, 15.0, logged.append, pace=Pace(10.0))
    assert ran == [] and done == 0 and stopped.startswith("time: 2 chunk(s) left") and "needs ~60 s" in stopped
