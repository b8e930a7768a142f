"""The run record typed all the way down: every committed store builds its record with every
typed field populated, each stored table, stage entry and plan reads into its schema type and
back to the JSON stored (a round trip), and each schema type of a pipeline table and the settings
the pipeline reads from its file derive from one fields class (:mod:`nasrescale.store.table_fields`)."""

from __future__ import annotations

import dataclasses
import gzip
import inspect
import json
import shutil
import sqlite3
import typing
from pathlib import Path
from typing import Any

import pytest

from nasrescale.config import to_table
from nasrescale.executors.base import ExecutorSettings
from nasrescale.jobs.grouping import DEFAULT_MAX_MEMBERS
from nasrescale.kinds.landscape.settings import LandscapeSettings
from nasrescale.lrsearch.search import LrSearchSettings
from nasrescale.lrsearch.select import DEFAULT_REL_TOL
from nasrescale.pipeline.tables import Budget, TuningSettings
from nasrescale.store.migration import migrate, parse_record
from nasrescale.store.plans import LandscapePlanRecord, LandscapeSettingsRecord, ValidationPlanRecord
from nasrescale.store.record import (LANDSCAPE_PLAN_KEY, REUSED_KEY, VALIDATION_PLAN_KEY, RunRecord, keyed,
                                     lr_search_key, tuning_key, visit_entries)
from nasrescale.store.schema import (BudgetRecord, CandidateBudget, ExecutorRecord, LrSearchRecord, StoredTable,
                                     TuningRecord)
from nasrescale.store.stage_records import Reused, SearchSelection, TuningResult, Visit
from nasrescale.store.table_fields import (BudgetFields, ExecutorFields, LandscapeFields, LrSearchFields,
                                           TuningFields)

RESULTS = Path(__file__).resolve().parents[2] / "results"
STORES = sorted(RESULTS.glob("*/store.sqlite.gz"))

#: each pipeline table's fields class, its schema type and the settings the pipeline reads the table into
SETTINGS = [(BudgetFields, BudgetRecord, Budget), (ExecutorFields, ExecutorRecord, ExecutorSettings),
            (LrSearchFields, LrSearchRecord, LrSearchSettings), (TuningFields, TuningRecord, TuningSettings),
            (LandscapeFields, LandscapeSettingsRecord, LandscapeSettings)]


def _meta(packed: Path, tmp_path: Path) -> dict[str, str]:
    """The meta table of a committed store, read from a copy."""
    path = tmp_path / "store.sqlite"
    with gzip.open(packed, "rb") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return dict(db.execute("SELECT key, value FROM meta"))


def _typed(record: RunRecord) -> None:
    """Every field a report reads holds its schema type."""
    assert isinstance(record.budget, BudgetRecord) and isinstance(record.executor, ExecutorRecord)
    assert all(isinstance(b, CandidateBudget) for b in record.budgets.values())
    assert record.lr_search is None or isinstance(record.lr_search, LrSearchRecord)
    assert record.tuning is None or isinstance(record.tuning, TuningRecord)
    assert all(isinstance(t, TuningResult) and t.chosen is not None for t in record.tunings.values())
    assert all(isinstance(s, SearchSelection) and s.chosen_lr is not None for s in record.searches.values())
    assert all(isinstance(v, Visit) and v.finished_at for v in record.visits)
    assert record.reused is None or (isinstance(record.reused, Reused) and record.reused.source)
    assert all(lr is None or isinstance(lr, (int, float)) for lr in record.base_lrs.values())


@pytest.mark.parametrize("packed", STORES, ids=[p.parent.name for p in STORES])
def test_every_committed_store_builds_its_typed_record(packed: Path, tmp_path: Path) -> None:
    meta = _meta(packed, tmp_path)
    record = parse_record(meta, str(packed))
    _typed(record)
    assert record.executor.kind in ("local", "ray")
    if record.kind == "lr_validation":
        plan = record.validation_plan
        assert plan is not None and plan.base_arch and plan.groups and plan.runs > 0 and record.lr_search is not None
        assert all(m.arch and m.runs for g in plan.groups.values() for m in g.archs)
    if record.kind == "landscape":
        plan = record.landscape_plan
        assert plan is not None and plan.label and plan.seeds and plan.cells and plan.settings.lr_min > 0
    if record.kind == "calibration":
        assert record.budgets and all(b.seeds and b.epochs for b in record.budgets.values())


def _stored(meta: dict[str, str]) -> list[tuple[type[StoredTable], Any]]:
    """Every table, stage entry and plan of a store's meta, decoded as stored, with its schema type."""
    pipeline = migrate(meta)["pipeline"]
    found: list[tuple[type[StoredTable], Any]] = [
        (kind, pipeline[name]) for kind, name in ((BudgetRecord, "budget"), (ExecutorRecord, "executor"),
                                                  (LrSearchRecord, "lr_search"), (TuningRecord, "tuning"))
        if name in pipeline]
    found += [(CandidateBudget, t) for t in (pipeline.get("budgets") or {}).values()]
    found += [(TuningResult, json.loads(v)) for v in keyed(meta, tuning_key).values()]
    found += [(SearchSelection, json.loads(v)) for v in keyed(meta, lr_search_key).values()]
    found += [(Visit, json.loads(v)) for v in visit_entries(meta)]
    for kind, key in ((Reused, REUSED_KEY), (ValidationPlanRecord, VALIDATION_PLAN_KEY),
                      (LandscapePlanRecord, LANDSCAPE_PLAN_KEY)):
        if key in meta:
            found.append((kind, json.loads(meta[key])))
    return found


@pytest.mark.parametrize("packed", STORES, ids=[p.parent.name for p in STORES])
def test_every_stored_table_round_trips_through_its_schema_type(packed: Path, tmp_path: Path) -> None:
    for kind, stored in _stored(_meta(packed, tmp_path)):
        back = kind.of(stored).to_json()
        assert back == stored and list(back) == list(stored), kind.__name__  # the keys in their stored order


def _own_fields(kind: type) -> set[str]:
    """The fields ``kind`` defines itself (annotated in its own body), not inherited."""
    return set(inspect.get_annotations(kind)) & {f.name for f in dataclasses.fields(kind)}


@pytest.mark.parametrize(("fields", "record", "settings"), SETTINGS, ids=[f.__name__ for f, _, _ in SETTINGS])
def test_a_schema_type_and_its_settings_share_one_fields_class(fields: type, record: type, settings: type) -> None:
    assert issubclass(record, fields) and issubclass(record, StoredTable) and issubclass(settings, fields)
    assert not issubclass(settings, StoredTable) and "keys" not in {f.name for f in dataclasses.fields(settings)}
    assert _own_fields(record) == _own_fields(settings) == set()  # neither redefines a field
    names = tuple(f.name for f in dataclasses.fields(fields))
    assert record.fields() == names and tuple(f.name for f in dataclasses.fields(settings)) == names
    for name in names:  # the very field objects of the fields class: one name, type, default and metadata
        assert record.__dataclass_fields__[name] is fields.__dataclass_fields__[name]
        assert settings.__dataclass_fields__[name] is fields.__dataclass_fields__[name]
    assert typing.get_type_hints(settings) == typing.get_type_hints(fields)  # config reads the settings by these


def test_a_candidate_budget_is_a_budget_and_its_seeds() -> None:
    assert issubclass(CandidateBudget, BudgetRecord) and CandidateBudget.fields() == (*BudgetRecord.fields(), "seeds")
    assert _own_fields(CandidateBudget) == {"seeds"}


def test_a_default_defined_beside_its_fields_class_is_the_same() -> None:
    """Two defaults the store layer cannot import (a sibling's, an upper layer's) are held equal here."""
    assert ExecutorFields().max_fused == DEFAULT_MAX_MEMBERS
    assert LrSearchFields().rel_tol == DEFAULT_REL_TOL


@pytest.mark.parametrize(("record", "settings", "values"), [
    (BudgetRecord, Budget, {"epochs": 6, "width": 16, "resolution": 16, "norm": "none"}),
    (ExecutorRecord, ExecutorSettings, {"kind": "local", "cpus_per_job": 2.0, "threads": 2, "fuse": True}),
    (LrSearchRecord, LrSearchSettings, {"lr_min": 0.1, "lr_max": 1.6, "points": 17, "seeds": (0, 1), "protocol": "p"}),
    (TuningRecord, TuningSettings, {"multipliers": (0.5, 1.0, 2.0), "cells": 4, "seeds": (7,)}),
    (LandscapeSettingsRecord, LandscapeSettings, {"strata": (0.5,), "criterion": ("a",), "centers": {"x": 0.2}}),
], ids=["budget", "executor", "lr_search", "tuning", "landscape"])
def test_a_table_the_pipeline_writes_round_trips(record: type, settings: type, values: dict[str, Any]) -> None:
    written = settings(**values)
    stored = json.loads(json.dumps(to_table(written), sort_keys=True))  # as a store holds it
    read = record.of(stored)
    assert read.to_json() == stored and list(read.to_json()) == list(stored)
    assert all(getattr(read, name) == getattr(written, name) for name in record.fields())


def test_an_older_table_reads_the_defaults_it_ran_with():
    search = LrSearchRecord.of({"lr_min": 0.1})
    assert (search.lr_min, search.points, search.extend, search.seeds) == (0.1, 13, 6, (0, 1, 2))
    assert search.to_json() == {"lr_min": 0.1}  # only what was stored goes back
    assert ExecutorRecord.of("damaged") == ExecutorRecord()


def test_a_record_without_stages_or_plans_reads_none():
    record = parse_record({"pipeline": json.dumps({"pipeline": {"family": "nb201"}})})
    assert (record.lr_search, record.tuning, record.reused, record.validation_plan, record.landscape_plan) == \
        (None, None, None, None, None)
    assert record.budget == BudgetRecord() and record.executor == ExecutorRecord() and record.visits == ()
    assert record.search_of("x") is None


def test_a_shared_search_is_every_searched_protocols():
    record = parse_record({"pipeline": json.dumps({"lr_search": {"protocol": "a"}}),
                           lr_search_key("a"): json.dumps({"chosen_lr": 0.3, "grid": [0.1, 0.3]})})
    found = record.search_of("b")
    assert found is not None and (found.chosen_lr, found.grid) == (0.3, (0.1, 0.3))


def test_a_validation_plan_read_under_another_rule_keeps_its_runs():
    stored = {"base_arch": "a", "rel_tol": 0.01, "step": 1.2,
              "groups": {"g": {"protocol": "p", "kernel": None, "base_group": "g",
                               "archs": [{"arch": "a", "degenerate": False, "lr_scale": 1.0, "kernel_factor": 1.0,
                                          "sum_l3": 8, "runs": [[0.1, "k1"], [0.2, "k2"]]}]}}}
    plan = ValidationPlanRecord.of(stored)
    assert (plan.rule, plan.loss, plan.runs) == ("within_tol", "epoch", 2) and plan.to_json() == stored
    other = plan.under("argmin", "tail").to_json()
    assert other == {**stored, "rule": "argmin", "loss": "tail"}
