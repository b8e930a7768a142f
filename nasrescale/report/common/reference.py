"""The benchmark reference a run names and the order its protocols are reported in, for every
report kind: :func:`reference_spec` reads the run record's reference, :func:`load_reference` loads
it (saying why it cannot), :func:`protocol_order` and :func:`baseline_first` put the baseline
first; :class:`Comparison` is one comparison of two sources.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ...errors import NasRescaleError
from ...lrsearch.tuning import is_stage_label
from ...ranking.sources import Source, load_source
from ...space.benchmark import resolve_dataset
from ...store.read import StoreData
from ...store.record import RunRecord

__all__ = ["Comparison", "protocol_order", "baseline_first", "reference_spec", "load_reference"]

_BASELINES = ("default", "nb201", "baseline", "standard")  # labels drawn on the x axis when present


def protocol_order(store: StoreData) -> list[str]:
    """The store's protocol labels, the pipeline's order first, a baseline-like label first of all."""
    order = list(store.record.protocols)
    labels = [p for p in order if p in store.protocols] + [p for p in store.protocols if p not in order]
    return baseline_first([p for p in labels if not is_stage_label(p)])  # LR-search and tuning runs are no protocol


def baseline_first(labels: list[str]) -> list[str]:
    """``labels`` with a baseline-like one (``default``, ``nb201``, ``baseline``, ``standard``) first,
    the rest in their order: the protocol every other one is compared with (A).

    >>> baseline_first(["mup", "nb201", "rescaled"])
    ['nb201', 'mup', 'rescaled']
    """
    return sorted(labels, key=lambda p: (p.lower() not in _BASELINES, labels.index(p)))


def _table_spec(value: dict, dataset: str | None) -> tuple[str | None, str | None] | str | None:
    """A reference table ``{kind, dataset, path}``: its spec, or the dataset's NB201 spec to go on with."""
    kind = str(value.get("kind") or value.get("source") or "nb201").lower()
    dataset = value.get("dataset") or dataset
    path = value.get("path") or value.get("file")
    if kind == "csv":
        return (str(path) if path else None), None
    if kind in ("nats", "nats_bench", "nats-bench"):
        return (f"nats:{dataset}" if dataset else None), (str(path) if path else None)
    return f"nb201:{dataset}" if dataset else None


def reference_spec(record: RunRecord) -> tuple[str | None, str | None]:
    """``(source spec, NATS-Bench file)`` of the run's reference, defensively: a spec string
    (``nb201:cifar10``, a CSV path), a table ``{kind, dataset, path}``, or, when absent, the NB201
    column of the run's dataset. ``(None, None)`` when there is none.

    >>> from nasrescale.store.migration import parse_record, record_of
    >>> reference_spec(record_of({"pipeline": {"reference": "nb201:cifar100"}, "data": {"name": "cifar100"}}))
    ('nb201:cifar100', None)
    >>> reference_spec(record_of({"data": {"name": "cifar10-subset"}}))
    ('nb201:cifar10', None)
    >>> reference_spec(parse_record({"pipeline": {"reference": {"kind": "csv", "path": "my.csv"}}}))
    ('my.csv', None)
    """
    value, dataset = record.reference, record.dataset
    if isinstance(value, dict):
        value = _table_spec(value, dataset)
        if isinstance(value, tuple):
            return value
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in ("", "none", "false", "off"):
            return None, None
        if text.lower() in ("nb201", "benchmark") and dataset:
            return f"nb201:{dataset}", None
        try:
            return f"nb201:{resolve_dataset(text)}", None  # a bare dataset name
        except NasRescaleError:
            return text, None
    if value is None and dataset:
        family = record.family
        try:
            if family in (None, "nb201"):
                return f"nb201:{resolve_dataset(dataset)}", None
        except NasRescaleError:
            pass
    return None, None


@dataclass(frozen=True)
class Comparison:
    """One :func:`~nasrescale.ranking.compare.compare` of two sources: its JSON-ready ``result``
    and the ``merged`` frame of the architectures it ranked."""

    result: dict[str, Any]
    merged: pd.DataFrame


def load_reference(spec: str | None, nats_file: str | None) -> tuple[Source | None, str | None]:
    """The reference source of ``spec`` (:func:`reference_spec`): ``(source, None)``, or ``(None, why)``
    when it cannot be loaded (``(None, None)`` without a spec)."""
    if spec is None:
        return None, None
    try:
        return load_source(spec, nats_file=nats_file), None
    except NasRescaleError as err:
        return None, str(err)


