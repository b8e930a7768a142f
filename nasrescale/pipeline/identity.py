"""When a stored pipeline is the same experiment as the one being run: the keys that only say
how stored runs are read (:func:`analysis_only`: the shared tables' and each kind's own), and a
pipeline grown by protocols or by a kind's table that may grow (:func:`identity_grows`), whose
stored jobs are then jobs of the grown one too."""

from __future__ import annotations

from typing import Any, Sequence

from .kind_registry import KINDS, kind_tables

__all__ = ["SHARED_ANALYSIS_ONLY", "analysis_only", "identity_grows", "strip_keys"]


def identity_grows(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether identity ``new`` is ``old`` grown: by protocols (every stored protocol unchanged,
    new ones added, and the tables only new protocols use, ``lr_search`` and ``tuning``, added
    with them) and/or by a kind's own table that may grow (:attr:`KindTable.grows
    <nasrescale.pipeline.kind_registry.KindTable.grows>`: a trend's budgets, ``trend.epochs`` a superset).
    The stored jobs are then jobs of the grown pipeline too (job keys are content hashes).

    >>> old = {"budget": {"epochs": 6}, "protocols": {"a": {"lr": 0.1}}, "trend": {"epochs": [6, 12]}}
    >>> identity_grows(old, {**old, "protocols": {"a": {"lr": 0.1}, "b": {"lr": 0.2}}, "tuning": {"cells": 12}})
    True
    >>> identity_grows(old, {**old, "protocols": {"a": {"lr": 0.2}, "b": {"lr": 0.1}}})
    False
    >>> identity_grows(old, {**old, "trend": {"epochs": [6, 12, 24]}}), identity_grows(old, {**old, "trend": {"epochs": [6]}})
    (True, False)
    """
    if set(old) - set(new) or set(new) - set(old) - {"lr_search", "tuning"}:
        return False
    growing = {name: table.grows for name, table in kind_tables().items() if table.grows is not None}
    if any(old[k] != new[k] for k in old if k != "protocols" and k not in growing):
        return False
    stored, grown = old.get("protocols", {}), new.get("protocols", {})
    if not (set(grown) >= set(stored) and all(grown[label] == table for label, table in stored.items())):
        return False
    changed = [name for name in growing if old.get(name) != new.get(name)]
    if not all(growing[name](old.get(name), new.get(name)) for name in changed):
        return False
    return set(grown) > set(stored) or bool(changed)


#: keys of the shared tables that do not determine stored results, so a store made under other
#: values (or before the key existed) is the same experiment: how stored runs are read (the
#: maximal-LR rule, its loss and tolerance, how often a grid may be extended),
#: ``archs.sample_degenerate`` and ``archs.unique`` (the identity holds the ``arch_list`` they
#: produced); a kind adds its own (``PipelineKind.analysis_only``)
SHARED_ANALYSIS_ONLY = ("lr_search.rule", "lr_search.loss", "lr_search.rel_tol", "lr_search.extend",
                        "archs.sample_degenerate", "archs.unique")


def analysis_only() -> tuple[str, ...]:
    """Every dotted key that only says how stored runs are read: the shared tables' and every
    registered kind's own.

    >>> keys = analysis_only()
    >>> keys[:2], "landscape.recipe" in keys
    (('lr_search.rule', 'lr_search.loss'), True)
    """
    return SHARED_ANALYSIS_ONLY + tuple(key for kind in KINDS.values() for key in kind.analysis_only)


def strip_keys(doc: dict[str, Any], paths: Sequence[str]) -> dict[str, Any]:
    """``doc`` without the dotted key ``paths`` (a copy of the tables touched).

    >>> strip_keys({"a": {"b": 1, "c": 2}, "d": 3}, ["a.b", "x.y"])
    {'a': {'c': 2}, 'd': 3}
    """
    out = dict(doc)
    for path in paths:
        table, key = path.split(".")
        if isinstance(out.get(table), dict) and key in out[table]:
            out[table] = {k: v for k, v in out[table].items() if k != key}
    return out
