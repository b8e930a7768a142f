"""``tools/gpu_allocation.sh collect`` into a store a CPU run started: the GPU slice's store (a copy of
the home store, resumed on the GPU machine while the CPU run went on) is merged, not copied over:
nothing stored is lost or overwritten, the slice's new results arrive, a job both finished keeps
the stored result (the slice's is listed in collect.json), every row keeps its device and precision;
a slice of another precision or another run is refused, nothing merged."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import nasrescale.cli.main
from nasrescale.pipeline.slice_record import copy_store, visit_records
from nasrescale.store.job_status import Status
from nasrescale.store.read import reading
from nasrescale.store.record import visit_key
from nasrescale.store.sqlite_store import Store

from tool_helpers import TOOLS

if str(TOOLS) not in sys.path:  # the package as tools/gpu_allocation.sh imports it: by name, from tools/
    sys.path.insert(0, str(TOOLS))
from gpu_allocation import collect  # noqa: E402

CPU, GPU = {"device": "cpu", "device_name": "x86_64"}, {"device": "cuda:0", "device_name": "NVIDIA H100 80GB HBM3"}
START = "2027-01-02T03:04:05Z"


def _finish(store: Store, key: str, where: dict, precision: str, acc: float) -> None:
    record = {"key": key, "test_accuracy": acc, "precision": precision, "precision_setting": "fp32",
              "provenance": where, "history": [{"epoch": 1, "train_loss": 1.5, "train_acc": 0.4, "lr": 0.1}]}
    store.mark_running(key)
    assert store.finish(key, Status.DONE, record)


def _jobs(keys: list[str]) -> list[dict]:
    return [{"key": k, "arch": f"cell_{k}", "protocol": "flat", "seed": 0,
             "job_json": json.dumps({"protocol": {"precision": "fp32"}})} for k in keys]


@pytest.fixture()
def home_and_slice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, list]:
    """results/land/ started on the CPU (c1 done, c2..c4 pending, c5 failed), its copy resumed on a
    GPU (c2, c3, c5 and a new job c6 done there), while the CPU went on (c2 done there too)."""
    reports: list = []
    monkeypatch.setattr(nasrescale.cli.main, "main", lambda argv: reports.append(argv) or 0)  # the report: elsewhere
    results, out = tmp_path / "results", tmp_path / "out"
    home = Store(results / "land" / "store.sqlite")
    home.set_meta("name", "land")
    home.set_meta("identity", '{"protocol": "flat"}')
    home.add_jobs(_jobs(["c1", "c2", "c3", "c4", "c5"]))
    _finish(home, "c1", CPU, "fp32", 60.0)
    home.finish("c5", Status.FAILED, None, error="out of memory")
    home.set_meta(visit_key(1), json.dumps({"device": "cpu (x86_64)", "jobs_run": 2}))
    home.close()
    copy_store(results / "land" / "store.sqlite", out / "reeval" / "store.sqlite")  # what travels to the GPU
    gpu = Store(out / "reeval" / "store.sqlite")
    gpu.add_jobs(_jobs(["c6"]))  # a job the CPU run has not planned yet (a landscape's extension)
    for key, acc in (("c2", 70.0), ("c3", 71.0), ("c5", 72.0), ("c6", 73.0)):
        _finish(gpu, key, GPU, "fp32", acc)
    gpu.set_meta(visit_key(2), json.dumps({"device": "cuda (NVIDIA H100 80GB HBM3)", "jobs_run": 4}))
    gpu.close()
    home = Store(results / "land" / "store.sqlite")  # the CPU run goes on meanwhile
    _finish(home, "c2", CPU, "fp32", 61.0)
    home.set_meta(visit_key(2), json.dumps({"device": "cpu (x86_64)", "jobs_run": 1}))
    home.close()
    (out / "allocation.json").write_text(json.dumps({"started_at": START, "steps": []}))
    return results, out, reports


def _rows(run: Path) -> dict[str, dict]:
    with reading(run) as store:
        return {r["key"]: {**r, "record": store.record(r["key"])} for r in store.rows()}


def test_collect_merges_a_gpu_slice_into_a_store_a_cpu_run_started(home_and_slice, capsys) -> None:  # noqa: ANN001
    results, out, reports = home_and_slice
    before = _rows(results / "land")
    assert collect.collect(out, results, n_boot=0) == 0
    after = _rows(results / "land")
    assert all(after[k] == before[k] for k in ("c1", "c2"))  # nothing stored lost or overwritten
    assert after["c4"]["status"] == Status.PENDING  # pending on both: still to run
    assert {k: after[k]["test_accuracy"] for k in ("c3", "c5", "c6")} == {"c3": 71.0, "c5": 72.0, "c6": 73.0}
    where = {k: (r["record"]["provenance"]["device_name"], r["record"]["precision"])
             for k, r in after.items() if r["record"]}
    assert where == {"c1": ("x86_64", "fp32"), "c2": ("x86_64", "fp32"), "c3": ("NVIDIA H100 80GB HBM3", "fp32"),
                     "c5": ("NVIDIA H100 80GB HBM3", "fp32"), "c6": ("NVIDIA H100 80GB HBM3", "fp32")}
    visits = visit_records(results / "land" / "store.sqlite")
    assert [(v["device"], v["jobs_run"]) for v in visits] == [  # the slice's record after both of home's
        ("cpu (x86_64)", 2), ("cpu (x86_64)", 1), ("cuda (NVIDIA H100 80GB HBM3)", 4)]
    assert (results / "land" / "store.sqlite.gz").is_file() and reports == [
        ["report", "land", "--results", str(results), "--bootstrap", "0"]]
    done = json.loads((results / "gpu_allocations" / "20270102T030405Z" / "collect.json").read_text())
    assert (done["run"], done["added"], sorted(done["filled"])) == ("land", ["c6"], ["c3", "c5"])
    (dup,) = done["duplicates"]  # c2: finished on both; the stored CPU result kept, the GPU's listed whole
    assert (dup["key"], dup["status"], dup["test_accuracy"], dup["kept_test_accuracy"]) == ("c2", "done", 70.0, 61.0)
    assert dup["record"]["provenance"] == GPU and dup["record"]["precision"] == "fp32"
    printed = capsys.readouterr().out
    assert "1 job(s) added, 2 finished that were not" in printed and "1 duplicate(s)" in printed
    assert "duplicate c2 (cell_c2): kept the stored done (61.0)" in printed


def test_collect_refuses_a_slice_of_another_precision_or_run(home_and_slice, capsys) -> None:  # noqa: ANN001
    results, out, _ = home_and_slice
    gpu = Store(out / "reeval" / "store.sqlite")
    gpu.add_jobs(_jobs(["b1"]))
    _finish(gpu, "b1", GPU, "bf16", 74.0)  # a bf16 result into a study whose results trained in fp32
    gpu.close()
    before = _rows(results / "land")
    assert collect.collect(out, results, n_boot=0) == 2
    assert "the slice's new results trained in bf16, fp32, the store's in fp32: one study never mixes" in \
        capsys.readouterr().err
    gpu = Store(out / "reeval" / "store.sqlite")
    gpu.db.execute("DELETE FROM jobs WHERE key = 'b1'")
    gpu.set_meta("identity", '{"protocol": "another"}')
    gpu.close()
    assert collect.collect(out, results, n_boot=0) == 2
    assert "holds another run than the store it would be merged into" in capsys.readouterr().err
    assert _rows(results / "land") == before and not (results / "gpu_allocations").exists()
