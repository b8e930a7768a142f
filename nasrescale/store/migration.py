"""Reading a store's meta into its :class:`~nasrescale.store.record.RunRecord`: one migration
(:func:`migrate`) brings the meta of any older layout to the current one
(:data:`~nasrescale.store.record.RECORD_VERSION`), then :func:`parse_record` reads the fields.

Layouts:

* version 1 (stores without meta ``record_version``): the resolved pipeline as this version
  writes it, except that a store may spell a key as a former version did (:data:`ALIASES`), may
  list its protocols rather than key them by label (or give a protocol's LR as a number in
  ``base_lr``), and an LR validation from before kinds stores no ``pipeline.kind`` (its
  ``validation_plan`` says what it is);
* version 2: meta ``record_version`` = 2; a pipeline without ``pipeline.kind`` is a retrain run
  (a retrain's resolved pipeline keeps the identity it had before kinds).

A store of a newer version than this one reads is refused, naming the fix.

>>> record = parse_record({"name": "old", "pipeline": {"family": {"name": "nb201"}, "dataset": "cifar10",
...                                                    "protocols": [{"label": "default", "lr": 0.1}]}})
>>> record.version, record.kind, record.family, record.dataset, list(record.protocols)
(2, 'retrain', 'nb201', 'cifar10', ['default'])
"""

from __future__ import annotations

import copy
import json
from typing import Any, Mapping, TypeVar

from ..errors import DataError
from .plans import LandscapePlanRecord, ValidationPlanRecord
from .record import (CREATED_KEY, DEFAULT_KIND, LANDSCAPE_PLAN_KEY, NAME_KEY, PIPELINE_KEY, RECORD_VERSION,
                     REUSED_KEY, THREADS_KEY, VALIDATION_PLAN_KEY, VERSION_KEY, ProtocolRecord, RunRecord,
                     TrendRecord, base_lr_key, keyed, lr_search_key, tuning_key, visit_entries)
from .schema import BudgetRecord, CandidateBudget, ExecutorRecord, LrSearchRecord, StoredTable, TuningRecord
from .stage_records import Reused, SearchSelection, TuningResult, Visit

__all__ = ["ALIASES", "stored_version", "migrate", "parse_record", "record_of"]

S = TypeVar("S", bound=StoredTable)

#: former spellings in the resolved pipeline (dotted paths) -> the current one, applied in this
#: order by :func:`migrate` where the current key is not set (a former key is then dropped)
ALIASES: dict[str, str] = {
    "family.name": "pipeline.family",  # a [family] table
    "family": "pipeline.family",  # a top-level family name
    "reference": "pipeline.reference",
    "dataset.name": "data.name",  # a [dataset] table
    "data.dataset": "data.name",
    "dataset": "data.name",  # a top-level dataset name
}


def stored_version(meta: Mapping[str, Any], where: str = "the store") -> int:
    """The meta layout version ``meta`` was written in (1: none stored).

    Raises:
        DataError: ``record_version`` is not a whole number, or is newer than this version reads.

    >>> stored_version({}), stored_version({"record_version": "2"})
    (1, 2)
    >>> stored_version({"record_version": "9"}, "results/x/store.sqlite")
    Traceback (most recent call last):
    ...
    nasrescale.errors.DataError: results/x/store.sqlite: meta record_version 9 is newer than this nasrescale reads (up to 2); upgrade nasrescale (pip install -U nasrescale) to read it
    """
    value = meta.get(VERSION_KEY)
    if value is None:
        return 1
    try:
        version = int(str(value))
    except ValueError:
        raise DataError(f"{where}: meta {VERSION_KEY} {value!r} is not a whole number; the store is damaged: "
                        "rerun the pipeline into a new results folder") from None
    if version > RECORD_VERSION:
        raise DataError(f"{where}: meta {VERSION_KEY} {version} is newer than this nasrescale reads (up to "
                        f"{RECORD_VERSION}); upgrade nasrescale (pip install -U nasrescale) to read it")
    return version


def _get(doc: Mapping[str, Any], dotted: str) -> Any:
    node: Any = doc
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def _move(doc: dict[str, Any], old: str, new: str) -> None:
    """Move the value at ``old`` to ``new`` where ``new`` is unset (and ``old`` is no table that
    another alias reads from, as ``family`` of ``family.name``)."""
    value, *parents = old.split(".")[::-1]
    table = any(other.startswith(old + ".") for other in ALIASES)
    if _get(doc, new) is not None or _get(doc, old) is None or (table and isinstance(_get(doc, old), Mapping)):
        return
    holder = _get(doc, ".".join(parents[::-1])) if parents else doc
    node = doc
    for part in new.split(".")[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[new.split(".")[-1]] = holder.pop(value)


def _protocols_by_label(table: Any) -> dict[str, Any]:
    """Protocols keyed by label (a former list of tables names each by ``label`` or ``name``)."""
    if isinstance(table, Mapping):
        return {str(k): v for k, v in table.items()}
    if isinstance(table, list):
        return {str(t.get("label", t.get("name", ""))): t for t in table if isinstance(t, Mapping)}
    return {}


def migrate(meta: Mapping[str, Any], where: str = "the store") -> dict[str, Any]:
    """``meta`` (its ``pipeline`` JSON text or decoded) in the current layout: a new dict, its
    ``pipeline`` decoded (``{}`` where it does not parse) and ``record_version`` current.

    >>> migrate({"pipeline": '{"family": "mlp_dag"}', "validation_plan": "{}"})["pipeline"]
    {'pipeline': {'family': 'mlp_dag', 'kind': 'lr_validation'}, 'protocols': {}}

    Raises:
        DataError: a newer version's store (:func:`stored_version`).
    """
    version = stored_version(meta, where)
    out = dict(meta)
    pipeline = out.get(PIPELINE_KEY)
    if isinstance(pipeline, str):
        try:
            pipeline = json.loads(pipeline)
        except json.JSONDecodeError:
            pipeline = None
    pipeline = copy.deepcopy(pipeline) if isinstance(pipeline, dict) else {}
    if version < 2:
        _from_v1(pipeline, VALIDATION_PLAN_KEY in meta)
    out[PIPELINE_KEY], out[VERSION_KEY] = pipeline, RECORD_VERSION
    return out


def _from_v1(pipeline: dict[str, Any], validation: bool) -> None:
    """Version 1 -> 2, in place: :data:`ALIASES`; protocols keyed by label, a number given as
    ``base_lr`` as their ``lr``; the kind of an LR validation from before kinds (``validation``:
    the store has a ``validation_plan``)."""
    for old, new in ALIASES.items():
        _move(pipeline, old, new)
    for table in ("family", "dataset"):
        if pipeline.get(table) in ({}, None):
            pipeline.pop(table, None)
    pipeline["protocols"] = _protocols_by_label(pipeline.get("protocols"))
    for table in pipeline["protocols"].values():
        if isinstance(table, dict) and "lr" not in table and isinstance(table.get("base_lr"), (int, float)):
            table["lr"] = table.pop("base_lr")
    if validation and not _get(pipeline, "pipeline.kind"):
        pipeline.setdefault("pipeline", {})["kind"] = "lr_validation"


def _json(value: Any) -> Any:
    try:
        return json.loads(value) if isinstance(value, str) else value
    except json.JSONDecodeError:
        return None


def _tables(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values that decode to JSON tables (the rest, damaged, are left out)."""
    decoded = {label: _json(value) for label, value in values.items()}
    return {label: doc for label, doc in decoded.items() if isinstance(doc, dict)}


def _section(pipeline: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = pipeline.get(name)
    return dict(value) if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _lr(value: Any) -> float | None:
    """A stored LR as stored (an int stays an int), else ``None``."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _whole(value: Any) -> int | None:
    """A stored whole number (meta holds text: ``"2"``), else ``None``."""
    text = str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    return int(text) if text.isdigit() else None


def _table_of(kind: type[S], value: Any) -> S | None:
    """The record of a stored table, ``None`` where nothing (or no table) is stored."""
    return kind.of(value) if isinstance(value, Mapping) else None


def parse_record(meta: Mapping[str, Any], where: str = "the store") -> RunRecord:
    """The :class:`~nasrescale.store.record.RunRecord` of a store's meta, of any version this one reads.

    Raises:
        DataError: a newer version's store (:func:`stored_version`).
    """
    current = migrate(meta, where)
    pipeline: dict[str, Any] = current[PIPELINE_KEY]
    head = _section(pipeline, "pipeline")
    data = _section(pipeline, "data")
    seeds, archs = head.get("seeds"), pipeline.get("arch_list")
    return RunRecord(
        version=RECORD_VERSION, name=_text(current.get(NAME_KEY)) or _text(head.get("name")),
        kind=str(head.get("kind") or DEFAULT_KIND), family=_text(head.get("family")),
        family_file=_text(head.get("family_file")), dataset=_text(data.get("name")), data_path=_text(data.get("path")),
        description=str(head.get("description") or ""), reference=head.get("reference"),
        calibration=_text(head.get("calibration")),
        seeds=tuple(int(s) for s in seeds) if isinstance(seeds, list) else (),
        archs=tuple(str(a) for a in archs) if isinstance(archs, list) else (),
        protocols={label: ProtocolRecord.of(label, table) for label, table in _protocols_by_label(pipeline.get("protocols")).items()
                   if isinstance(table, Mapping)},
        budget=BudgetRecord.of(pipeline.get("budget")),
        budgets={str(name): CandidateBudget.of(t) for name, t in _section(pipeline, "budgets").items()
                 if isinstance(t, Mapping)},
        executor=ExecutorRecord.of(pipeline.get("executor")),
        lr_search=_table_of(LrSearchRecord, pipeline.get("lr_search")),
        tuning=_table_of(TuningRecord, pipeline.get("tuning")),
        trend=TrendRecord.of(pipeline["trend"]) if isinstance(pipeline.get("trend"), Mapping) else None,
        base_lrs={label: _lr(_json(value)) for label, value in keyed(current, base_lr_key).items()},
        tunings={label: TuningResult.of(doc) for label, doc in _tables(keyed(current, tuning_key)).items()},
        searches={label: SearchSelection.of(doc) for label, doc in _tables(keyed(current, lr_search_key)).items()},
        visits=tuple(Visit.of(v) for v in map(_json, visit_entries(current)) if isinstance(v, dict)),
        reused=_table_of(Reused, _json(current.get(REUSED_KEY))),
        validation_plan=_table_of(ValidationPlanRecord, _json(current.get(VALIDATION_PLAN_KEY))),
        landscape_plan=_table_of(LandscapePlanRecord, _json(current.get(LANDSCAPE_PLAN_KEY))),
        cpu_threads=_whole(current.get(THREADS_KEY)), created_at=_text(current.get(CREATED_KEY)),
        pipeline=pipeline, meta=current)


def record_of(pipeline: Mapping[str, Any]) -> RunRecord:
    """The record of a resolved pipeline as this version writes it (before anything is stored).

    >>> record_of({"pipeline": {"family": "nb201", "kind": "trend"}, "trend": {"epochs": [6, 12]}}).trend.epochs
    (6, 12)
    """
    return parse_record({PIPELINE_KEY: dict(pipeline), VERSION_KEY: RECORD_VERSION})
