"""The ``[protocols.<label>]`` tables of a pipeline file, resolved to full :class:`Protocol` values."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import from_table, to_table
from .errors import ConfigError
from .protocol import Protocol, load_protocol

__all__ = ["ProtocolEntry", "protocol_entry"]


@dataclass(frozen=True)
class ProtocolEntry:
    """One ``[protocols.<label>]`` table, resolved: the label and the full protocol."""

    label: str
    source: str
    protocol: Protocol



def protocol_entry(label: str, table: Any, budget: Any, base_dir: Path | None) -> ProtocolEntry:
    """Resolve one ``[protocols.<label>]`` table: the named protocol, the table's overrides
    (``base_lr`` is an alias of ``lr``), then the budget's ``epochs``/``batch_size``.

    >>> from nasrescale.pipeline import Budget
    >>> e = protocol_entry("rescaled", {"protocol": "rescaled", "base_lr": 0.46}, Budget(epochs=3), None)
    >>> e.label, e.protocol.lr, e.protocol.epochs, e.protocol.init
    ('rescaled', 0.46, 3, 'in_degree')

    Raises:
        ConfigError: naming ``protocols.<label>.<key>``.
    """
    where = f"protocols.{label}"
    if not label or not all(c.isalnum() or c in "_-" for c in label):
        raise ConfigError(f"{where}: a protocol label must be letters, digits, _ or -")
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table with `protocol = \"nb201\"` (or a .toml file) and overrides")
    table = dict(table)
    source = table.pop("protocol", None)
    if not isinstance(source, str):
        raise ConfigError(f"{where}.protocol: missing or not a string; a shipped protocol name or a .toml file")
    if "base_lr" in table:
        if "lr" in table:
            raise ConfigError(f"{where}: give base_lr or lr, not both (base_lr is an alias of lr)")
        table["lr"] = table.pop("base_lr")
    path = Path(source)
    if path.suffix and not path.is_absolute() and base_dir is not None:
        source = str(base_dir / path)
    try:
        base = load_protocol(source)
    except ConfigError as err:
        raise ConfigError(f"{where}.protocol: {err}") from None
    merged = {**to_table(base), **table}
    for key in ("epochs", "batch_size"):
        if getattr(budget, key) is not None:
            merged[key] = getattr(budget, key)
    protocol = from_table(Protocol, merged, where)
    if protocol.lr is None:
        raise ConfigError(f"{where}.base_lr: protocol {protocol.name!r} needs a base learning rate, e.g. base_lr = 0.46")
    return ProtocolEntry(label, str(Path(source).name) if path.suffix else source, protocol)
