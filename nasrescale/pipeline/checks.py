"""Checks of a pipeline's protocols across tables, run once when a pipeline file is loaded
(:func:`nasrescale.pipeline.spec.load_pipeline`): each raises a :class:`ConfigError` naming the
key and the fix, before anything is stored."""

from __future__ import annotations

from typing import Sequence

from ..config import to_table
from ..errors import ConfigError
from ..lrsearch.search import LrSearchSettings
from .kind_registry import PipelineKind
from .protocols import ProtocolEntry

__all__ = ["check_distinct", "check_stages", "check_tuning_seeds"]


def check_distinct(entries: Sequence[ProtocolEntry]) -> None:
    """No two labels with the same protocol (their jobs would be the same jobs); where one of them
    is tuned, the error says how to keep its jobs its own."""
    seen: dict[str, ProtocolEntry] = {}
    for e in entries:
        text = repr(sorted(to_table(e.protocol).items()))
        if text in seen:
            tuned = next((x for x in (e, seen[text]) if x.tune), None)
            hint = "" if tuned is None else (
                f"; protocols.{tuned.label} is tuned from the other's protocol: give it a name of its own "
                f"(name = \"{tuned.protocol.name}_{tuned.label}\"), so its jobs stay its own at any multiplier")
            raise ConfigError(f"protocols.{e.label}: resolves to the same protocol as protocols.{seen[text].label}; "
                              f"their jobs would be the same jobs{hint}")
        seen[text] = e


def check_stages(entries: Sequence[ProtocolEntry], search: LrSearchSettings, kind: PipelineKind) -> None:
    """``tune = true`` and ``lr_search.protocol`` only where the kind runs these stages, naming a protocol."""
    labels = [e.label for e in entries]
    tuned = [e.label for e in entries if e.tune]
    if tuned and not kind.searches:
        raise ConfigError(f"protocols.{tuned[0]}.tune: a {kind.name} pipeline does not tune; drop the key")
    if search.protocol is not None and search.protocol not in labels:
        raise ConfigError(f"lr_search.protocol: {search.protocol!r} is not a protocol of this pipeline; "
                          f"protocols: {', '.join(labels)}")


def check_tuning_seeds(entries: Sequence[ProtocolEntry], tuning: Sequence[int], seeds: Sequence[int]) -> None:
    """A tuned pipeline's tuning seeds apart from its evaluation seeds: a tuning run on a cell the
    evaluation reaches later, at the chosen multiplier and an evaluation seed, would be that
    cell's evaluation job itself, stored under the tuning's label and missing from the protocol."""
    shared = sorted(set(tuning) & set(seeds))
    tuned = [e.label for e in entries if e.tune]
    if tuned and shared:
        raise ConfigError(f"tuning.seeds: {shared} {'is also an evaluation seed' if len(shared) == 1 else 'are also evaluation seeds'} "
                          f"(pipeline.seeds = {list(seeds)}); protocols.{tuned[0]}'s tuning runs would then be "
                          f"evaluation runs of the tuning cells, stored under the tuning's label and missing "
                          f"from the protocol's results: give the tuning seeds of its own "
                          f"(e.g. tuning.seeds = [{max(seeds) + 100}])")
