"""A report reads the run record's typed fields only: the record's untyped mappings (the whole
resolved pipeline, ``RunRecord.pipeline``; every meta entry, ``RunRecord.meta``; a protocol's
stored table, ``ProtocolRecord.settings``) are kept to reproduce a run, and no module of
:mod:`nasrescale.report` or :mod:`nasrescale.kinds` reads them. Each kind's report is written
from a copy of a committed store with those fields sealed against reads from those packages.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from nasrescale.report.kind_reports import write_run_report
from nasrescale.store.record import ProtocolRecord, RunRecord

ROOT = Path(__file__).resolve().parents[2]

#: one small committed run of each kind
RUNS = {"retrain": "nb201_protocols_cpu", "trend": "nb201_trend_cpu", "calibration": "nb201_cifar10_calibration_cpu",
        "lr_validation": "lr_validation_cnn_cpu", "landscape": "landscape_nb201_24ep_cpu"}

#: the untyped fields of each record type, which only the store's own modules read
UNTYPED = {RunRecord: frozenset({"pipeline", "meta"}), ProtocolRecord: frozenset({"settings"})}

READERS = ("nasrescale.report", "nasrescale.kinds")


def _sealed(cls: type, names: frozenset[str], reads: list[str]) -> Any:
    """``cls.__getattribute__`` that records a read of one of ``names`` from a report or kind module."""
    plain = object.__getattribute__

    def get(self: Any, name: str) -> Any:
        if name in names:
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller.startswith(READERS):
                reads.append(f"{caller} read {cls.__name__}.{name}")
        return plain(self, name)

    return get


@pytest.fixture
def untyped_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    for cls, names in UNTYPED.items():
        monkeypatch.setattr(cls, "__getattribute__", _sealed(cls, names, reads))
    return reads


def test_the_seal_sees_a_read_from_a_report_module(untyped_reads):
    record = ProtocolRecord(label="a", settings={"lr": 0.1})
    namespace = {"__name__": "nasrescale.report.planted"}
    exec("def read(p):\n    return p.settings", namespace)  # a read as a report module would make it
    assert namespace["read"](record) == {"lr": 0.1}
    assert untyped_reads == ["nasrescale.report.planted read ProtocolRecord.settings"]
    assert record.settings == {"lr": 0.1} and len(untyped_reads) == 1  # a read from here (a test) is not one


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(RUNS))
def test_a_report_reads_no_untyped_field_of_the_record(kind, tmp_path, untyped_reads):
    run_dir = tmp_path / RUNS[kind]
    run_dir.mkdir()
    shutil.copy(ROOT / "results" / RUNS[kind] / "store.sqlite.gz", run_dir / "store.sqlite.gz")
    report = write_run_report(run_dir, n_boot=50)
    assert report.is_file() and report.stat().st_size > 0
    assert not untyped_reads, f"{kind}: " + "; ".join(sorted(set(untyped_reads)))
