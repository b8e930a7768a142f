"""The run record: every committed store opens through it; an older meta layout migrates to the
current one (its former spellings by the alias table); the version is written and a newer one
is refused, naming the fix."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from nasrescale.errors import DataError
from nasrescale.store.migration import ALIASES, migrate, parse_record, stored_version
from nasrescale.store.read import read_store
from nasrescale.store.record import (RECORD_VERSION, VERSION_KEY, ProtocolRecord, base_lr_key, lr_search_key,
                                     trend_label, tuning_key, visit_key)
from nasrescale.store.sqlite_store import Store

RESULTS = Path(__file__).resolve().parents[2] / "results"
STORES = sorted(RESULTS.glob("*/store.sqlite.gz"))
KINDS = {"retrain", "lr_validation", "calibration", "trend", "landscape"}


def test_there_are_committed_stores():
    assert STORES


@pytest.mark.parametrize("packed", STORES, ids=[p.parent.name for p in STORES])
def test_every_committed_store_opens_through_its_record(packed, tmp_path):
    shutil.copy(packed, tmp_path / "store.sqlite.gz")  # read a copy: reading unpacks beside it
    record = read_store(tmp_path / "store.sqlite").record
    assert record.version == RECORD_VERSION
    assert record.kind in KINDS and record.family and record.dataset and record.name == packed.parent.name
    assert record.protocols and all(p.label == label for label, p in record.protocols.items())
    assert record.archs and record.seeds and record.created_at
    if record.kind == "trend":
        assert record.trend is not None and record.trend.epochs
        first = trend_label(next(iter(record.protocols)), record.trend.epochs[0])
        assert first in set(read_store(tmp_path / "store.sqlite").jobs["protocol"])  # the label rule the trend wrote


def _old_meta() -> dict[str, str]:
    """A version-1 meta in former spellings: a [family] table, a top-level dataset and reference,
    the protocols as a list, an LR given as ``base_lr``."""
    pipeline = {"pipeline": {"name": "old", "seeds": [0, 1]}, "family": {"name": "nb201"}, "dataset": "cifar100",
                "reference": "nb201:cifar100", "arch_list": ["a", "b"],
                "protocols": [{"label": "default", "base_lr": 0.1, "lr_rule": "fixed", "epochs": 4},
                              {"name": "rescaled", "lr_rule": "path_depth", "base_lr": "search", "tune": True}]}
    return {"name": "old", "created_at": "2025-01-01T00:00:00Z", "pipeline": json.dumps(pipeline),
            base_lr_key("default"): "0.1", base_lr_key("rescaled"): "0.4",
            tuning_key("rescaled"): json.dumps({"chosen": 2.0, "lr": 0.8}),
            lr_search_key("rescaled"): json.dumps({"chosen_lr": 0.4}), visit_key(1): json.dumps({"jobs_run": 3})}


def test_an_old_layout_migrates_to_the_current_record():
    record = parse_record(_old_meta())
    assert (record.version, record.kind, record.family, record.dataset) == (RECORD_VERSION, "retrain", "nb201", "cifar100")
    assert record.reference == "nb201:cifar100" and record.seeds == (0, 1) and record.archs == ("a", "b")
    assert list(record.protocols) == ["default", "rescaled"]
    default, rescaled = record.protocols["default"], record.protocols["rescaled"]
    assert (default.lr, default.lr_rule, default.epochs, default.searched) == (0.1, "fixed", 4, False)
    assert (rescaled.lr, rescaled.searched, rescaled.tuned) == (None, True, True)
    assert record.base_lr("rescaled") == 0.4 and record.tuned("rescaled") and not record.tuned("default")
    assert record.tunings["rescaled"].chosen == 2.0 and record.search_of("rescaled").chosen_lr == 0.4
    assert [v.jobs_run for v in record.visits] == [3] and record.created_at == "2025-01-01T00:00:00Z"


def test_the_migrated_pipeline_is_in_the_current_layout():
    pipeline = migrate(_old_meta())["pipeline"]
    assert pipeline["pipeline"]["family"] == "nb201" and pipeline["pipeline"]["reference"] == "nb201:cifar100"
    assert pipeline["data"] == {"name": "cifar100"}
    assert "family" not in pipeline and "dataset" not in pipeline and "reference" not in pipeline
    assert pipeline["protocols"]["default"]["lr"] == 0.1 and "base_lr" not in pipeline["protocols"]["default"]


@pytest.mark.parametrize("old", sorted(ALIASES))
def test_each_alias_maps_to_its_current_key(old):
    new = ALIASES[old]
    doc: dict = {}
    node = doc
    *parents, leaf = old.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = "value"
    record = parse_record({"pipeline": json.dumps(doc)})
    field = {"pipeline.family": "family", "pipeline.reference": "reference", "data.name": "dataset"}[new]
    assert getattr(record, field) == "value"


def test_the_current_spelling_wins_over_a_former_one():
    record = parse_record({"pipeline": {"pipeline": {"family": "mlp_dag"}, "family": "nb201"}})
    assert record.family == "mlp_dag"


def test_an_lr_validation_from_before_kinds_reads_as_one():
    assert parse_record({"pipeline": "{}", "validation_plan": "{}"}).kind == "lr_validation"
    assert parse_record({"pipeline": "{}"}).kind == "retrain"  # a retrain stores no kind, then and now
    current = {"pipeline": "{}", "validation_plan": "{}", VERSION_KEY: str(RECORD_VERSION)}
    assert parse_record(current).kind == "retrain"  # the current layout stores the kind: no guess


def test_a_pipeline_that_does_not_parse_reads_as_an_empty_record():
    record = parse_record({"pipeline": "{not json", "name": "x"})
    assert record.name == "x" and record.family is None and not record.protocols and record.kind == "retrain"


def test_a_protocol_record_keeps_every_stored_setting():
    p = ProtocolRecord.of("mup", {"init": "mup", "lr": 1, "mup_base_width": 8, "precision": "bf16"})
    assert p.lr == 1 and isinstance(p.lr, int) and p.settings["mup_base_width"] == 8 and p.precision == "bf16"


def _bound_store(path: Path) -> Store:
    store = Store(path)
    store.bind_pipeline("fresh", {"pipeline": {"name": "fresh", "family": "nb201"}, "data": {"name": "cifar10"},
                                  "protocols": {"default": {"lr": 0.1}}}, {"x": 1}, extra={base_lr_key("default"): "0.1"})
    return store


def test_a_new_store_records_the_current_version(tmp_path):
    store = _bound_store(tmp_path / "store.sqlite")
    try:
        assert store.get_meta(VERSION_KEY) == str(RECORD_VERSION)
    finally:
        store.close()
    record = read_store(tmp_path / "store.sqlite").record
    assert (record.version, record.name, record.family, record.base_lr("default")) == (RECORD_VERSION, "fresh", "nb201", 0.1)


def test_a_store_of_a_newer_version_is_refused_naming_the_fix(tmp_path):
    _bound_store(tmp_path / "store.sqlite").close()
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (str(RECORD_VERSION + 1), VERSION_KEY))
    with pytest.raises(DataError, match=rf"meta record_version {RECORD_VERSION + 1} is newer than this nasrescale "
                                        rf"reads \(up to {RECORD_VERSION}\); upgrade nasrescale \(pip install -U"):
        read_store(tmp_path / "store.sqlite")


def test_a_damaged_version_is_refused_naming_the_key():
    with pytest.raises(DataError, match="meta record_version 'two' is not a whole number"):
        stored_version({VERSION_KEY: "two"})
