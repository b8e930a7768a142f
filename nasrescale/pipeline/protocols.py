"""The ``[protocols.<label>]`` tables of a pipeline file, resolved to full :class:`Protocol` values.

Each protocol is resolved once: the named protocol's TOML table, then the label's table, then
the budget, merged as plain values and checked once (:func:`protocol_entry`).

Precedence of ``epochs`` and ``batch_size`` (the budget keys), highest first:

1. ``[budget]`` (``--set budget.epochs=2``): every protocol of the pipeline;
2. ``[protocols.<label>]`` (``--set protocols.<label>.epochs=2``): that protocol only;
3. the protocol file (``protocols/<name>.toml``).

>>> from nasrescale.pipeline.tables import Budget
>>> table = {"protocol": "nb201", "epochs": 5}
>>> protocol_entry("d", table, Budget(), None).protocol.epochs, protocol_entry("d", table, Budget(epochs=2), None).protocol.epochs
(5, 2)
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..config import from_table
from ..errors import ConfigError
from ..plugins import Plugin
from ..protocol import Protocol, protocol_file
from .tables import labelled_table

__all__ = ["ProtocolEntry", "protocol_entry", "protocol_keys", "BUDGET_KEYS", "KEY_ALIASES"]

#: the ``[budget]`` keys that override every protocol (see the precedence above)
BUDGET_KEYS = ("epochs", "batch_size")

#: a ``[protocols.<label>]`` key spelt another way -> the :class:`Protocol` field it sets (the one
#: alias table: a pipeline file's ``base_lr`` is the protocol's ``lr``); errors name the key as typed
KEY_ALIASES = {"base_lr": "lr"}


@dataclass(frozen=True)
class ProtocolEntry:
    """One ``[protocols.<label>]`` table, resolved: the label and the full protocol."""

    label: str
    source: str
    protocol: Protocol
    search: bool = False  # base_lr = "search": protocol.lr is set by the run's LR search
    tune: bool = False  # tune = true: the run's [tuning] multiplies protocol.lr by its best multiplier
    imports: tuple[Plugin, ...] = ()  # the plug-ins the protocol file imports (its ``imports`` key)


def protocol_entry(label: str, table: Any, budget: Any, base_dir: Path | None, needs_lr: bool = True) -> ProtocolEntry:
    """Resolve one ``[protocols.<label>]`` table: the named protocol, the table's overrides
    (``base_lr`` is an alias of ``lr``; ``base_lr = "search"`` leaves ``lr`` unset and marks the
    entry for the run's LR search), then the budget's ``epochs``/``batch_size``. A pipeline kind
    that measures LRs itself (``needs_lr`` false: ``lr_validation``) needs no base LR.

    >>> from nasrescale.pipeline.spec import Budget
    >>> e = protocol_entry("rescaled", {"protocol": "rescaled", "base_lr": 0.46}, Budget(epochs=3), None)
    >>> e.label, e.protocol.lr, e.protocol.epochs, e.protocol.init
    ('rescaled', 0.46, 3, 'in_degree')

    Raises:
        ConfigError: naming ``protocols.<label>.<key>``.
    """
    where = f"protocols.{label}"
    table = labelled_table(where, label, table, "with `protocol = \"nb201\"` (or a .toml file) and overrides")
    tune = table.pop("tune", False)
    if not isinstance(tune, bool):
        raise ConfigError(f"{where}.tune: expected true or false, got {tune!r}")
    source = table.pop("protocol", None)
    if not isinstance(source, str):
        raise ConfigError(f"{where}.protocol: missing or not a string; a shipped protocol name or a .toml file")
    table, typed = _canonical_keys(table, where)
    search = table.get("lr") == "search"
    if search:
        table.pop("lr")
    elif isinstance(table.get("lr"), str):
        raise ConfigError(f"{where}.{typed.get('lr', 'lr')}: expected a number or \"search\" (the run's LR search, "
                          f"[lr_search]), got {table['lr']!r}")
    path = Path(source)
    if path.suffix and not path.is_absolute() and base_dir is not None:
        source = str(base_dir / path)
    try:
        base, imports = protocol_file(source)
    except ConfigError as err:
        raise ConfigError(f"{where}.protocol: {err}") from None
    merged = {**base, **table, **{k: getattr(budget, k) for k in BUDGET_KEYS if getattr(budget, k) is not None}}
    try:
        protocol = from_table(Protocol, merged, where)
    except ConfigError as err:
        raise ConfigError(_user_key_message(str(err), where, typed, budget)) from None
    if protocol.lr is None and not search and needs_lr:
        raise ConfigError(f"{where}.base_lr: protocol {protocol.name!r} needs a base learning rate, e.g. base_lr = 0.46, "
                          "or base_lr = \"search\" (the LR search of [lr_search])")
    name = str(Path(source).name) if path.suffix else source
    return ProtocolEntry(label, name, protocol, search, tune, imports)


def _canonical_keys(table: dict[str, Any], where: str) -> tuple[dict[str, Any], dict[str, str]]:
    """``table`` with each :data:`KEY_ALIASES` spelling renamed to its field, and ``field -> the
    spelling typed`` (for errors).

    >>> _canonical_keys({"base_lr": 0.4, "epochs": 2}, "protocols.r")
    ({'epochs': 2, 'lr': 0.4}, {'lr': 'base_lr'})
    >>> _canonical_keys({"base_lr": 0.4, "lr": 0.3}, "protocols.r")
    Traceback (most recent call last):
    ...
    nasrescale.errors.ConfigError: protocols.r: give base_lr or lr, not both (base_lr is an alias of lr)
    """
    typed = {}
    for alias, name in KEY_ALIASES.items():
        if alias in table:
            if name in table:
                raise ConfigError(f"{where}: give {alias} or {name}, not both ({alias} is an alias of {name})")
            table = {k: v for k, v in table.items() if k != alias} | {name: table[alias]}
            typed[name] = alias
    return table, typed


def _user_key_message(message: str, where: str, typed: dict[str, str], budget: Any) -> str:
    """A :class:`Protocol` check's message (``protocol.<key>: ...``) renamed to the key the user
    typed: ``budget.<key>`` for a budget override, else ``<where>.<key>`` (``base_lr`` if spelt so).

    >>> _user_key_message("protocol.lr: value -1.0 is out of range", "protocols.r", {"lr": "base_lr"}, None)
    'protocols.r.base_lr: value -1.0 is out of range'
    """
    head, sep, rest = message.partition(":")
    if not head.startswith("protocol.") or not sep:
        return message
    key = head[len("protocol."):]
    if key in BUDGET_KEYS and getattr(budget, key, None) is not None:
        return f"budget.{key}:{rest}"
    return f"{where}.{typed.get(key, key)}:{rest}"


@contextlib.contextmanager
def protocol_keys(entry: ProtocolEntry | str) -> Iterator[None]:
    """Re-raise a :class:`ConfigError` about a protocol key (``protocol.<key>: ...``, from a job's
    check of its base LR, init rule or warm-up) as one about the pipeline's key
    ``protocols.<label>.<key>`` (``lr`` as a pipeline file spells it, ``base_lr``); a job of a
    ``base_lr = "search"`` protocol before the search says so.

    >>> with protocol_keys("w"):
    ...     raise ConfigError("protocol.warmup_rule: no layer to warm up")
    Traceback (most recent call last):
    ...
    nasrescale.errors.ConfigError: protocols.w.warmup_rule: no layer to warm up
    """
    label = entry if isinstance(entry, str) else entry.label
    try:
        yield
    except ConfigError as err:
        message = str(err)
        if not message.startswith("protocol."):
            raise
        key, _, rest = message[len("protocol."):].partition(":")
        if key == "lr" and not isinstance(entry, str) and entry.search:
            rest = " \"search\" is resolved by the run's LR search (nasrescale run); no jobs before it"
        typed = {name: alias for alias, name in KEY_ALIASES.items()}.get(key, key)
        raise ConfigError(f"protocols.{label}.{typed}:{rest}") from None
