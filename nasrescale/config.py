"""Typed configuration: frozen dataclasses read from TOML tables.

:func:`from_table` builds a (possibly nested) frozen dataclass from a TOML table, checking
every key and value against the field's type; an unknown key, a missing required key or a
value of the wrong type raises :class:`~nasrescale.errors.ConfigError` naming the key path
(``protocol.epochs``). Overrides are a typed mapping, dotted key -> value
(``{"epochs": 12}``); :func:`parse_overrides` turns ``--set a.b=value`` strings into one, once,
at the command line's edge (values are TOML literals: ``12``, ``0.05``, ``true``, ``"cosine"``;
a bare word counts as a string). :func:`with_overrides` applies one to a config dataclass.

An optional field (``X | None``) reads the text ``"none"`` as ``None``, unless its field's
metadata is :data:`KEEP_NONE`: then ``"none"`` is a value of its own, distinct from leaving the
key out (``pipeline.reference = "none"``: no reference, where an absent key means the default one).

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Opt:
...     lr: float = 0.1
...     nesterov: bool = True
>>> from_table(Opt, {"lr": 1}, "opt")
Opt(lr=1.0, nesterov=True)
>>> with_overrides(Opt(), {"lr": 0.5}, "opt")
Opt(lr=0.5, nesterov=True)
>>> from_table(Opt, {"lr": 0.1, "momentum": 0.9}, "opt")
Traceback (most recent call last):
...
nasrescale.errors.ConfigError: opt.momentum: unknown key; allowed keys: lr, nesterov
"""

from __future__ import annotations

import dataclasses
import sys
import types
from pathlib import Path
import typing
from typing import Any, Literal, Mapping, Sequence, TypeVar, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .errors import ConfigError, NasRescaleError
from .fileio import read_utf8

__all__ = ["KEEP_NONE", "MAX_SEED", "check_seeds", "Overrides", "apply_overrides", "from_table", "to_table", "with_overrides", "parse_override",
           "parse_overrides", "typed_overrides", "set_in_table", "read_config_text", "read_toml_file",
           "parse_toml"]

#: field metadata of an optional field that keeps the text ``"none"`` as given (see the module docstring)
KEEP_NONE: Mapping[str, bool] = types.MappingProxyType({"keep_none": True})

#: the largest seed: every seed is an integer from 0 to this (what SQLite, torch and numpy all take)
MAX_SEED = 2**63 - 1

T = TypeVar("T")


#: overrides: a typed mapping (dotted key -> value), or ``KEY=VALUE`` strings (parsed once by
#: :func:`typed_overrides`; for code and tests: the command line parses its ``--set`` itself)
Overrides = Union[Mapping[str, Any], Sequence[str]]


def _describe(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(tp))
    if origin in (Union, types.UnionType):
        # a type marked ``in_files = False`` is set by the program only: not named to the user
        return " or ".join(_describe(a) for a in typing.get_args(tp) if getattr(a, "in_files", True))
    if tp is type(None):
        return "none"
    if origin in (tuple, list):
        return f"list of {_describe(typing.get_args(tp)[0])}"
    if origin is dict:
        return f"table of {_describe(typing.get_args(tp)[1])}"
    return getattr(tp, "__name__", str(tp))


def _coerce(value: Any, tp: Any, key: str) -> Any:
    """Check ``value`` against type ``tp``; return it converted (int -> float, list -> tuple,
    table -> dict)."""
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key}: expected a table, got {value!r}")
        return from_table(tp, value, key)
    if origin is Literal:
        if value in typing.get_args(tp) and type(value) is type(typing.get_args(tp)[0]):
            return value
    elif origin in (Union, types.UnionType):
        for option in typing.get_args(tp):
            if option is type(None):
                continue
            try:
                return _coerce(value, option, key)
            except ConfigError:
                pass
    elif origin in (tuple, list):
        if isinstance(value, (list, tuple)):
            inner = typing.get_args(tp)[0]
            return tuple(_coerce(v, inner, f"{key}[{i}]") for i, v in enumerate(value))
    elif origin is dict:  # a table of named values: keys as written, values checked one by one
        if isinstance(value, Mapping):
            inner = typing.get_args(tp)[1]
            return {str(k): _coerce(v, inner, f"{key}.{k}") for k, v in value.items()}
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(tp, type) and isinstance(value, tp):
        return value
    raise ConfigError(f"{key}: expected {_describe(tp)}, got {value!r}")


def from_table(cls: type[T], table: Mapping[str, Any], prefix: str) -> T:
    """Build dataclass ``cls`` from ``table``; errors name keys as ``prefix.key``."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for key in table:
        if key not in fields:
            raise ConfigError(f"{prefix}.{key}: unknown key; allowed keys: {', '.join(fields)}")
    kwargs = {}
    for name, field in fields.items():
        key = f"{prefix}.{name}"
        if name in table:
            value = table[name]
            tp = hints[name]
            allows_none = type(None) in typing.get_args(tp) and not field.metadata.get("keep_none")
            kwargs[name] = None if (allows_none and value == "none") else _coerce(value, tp, key)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise ConfigError(f"{key}: missing required key")
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as err:
        if isinstance(err, ConfigError):
            raise
        raise ConfigError(f"{prefix}: {err}") from None


def check_seeds(seeds: Sequence[int], key: str) -> None:
    """``seeds`` are distinct integers from 0 to :data:`MAX_SEED`; else a :class:`ConfigError` naming ``key``.

    >>> check_seeds([0, 1], "pipeline.seeds")
    >>> check_seeds([-1], "pipeline.seeds")
    Traceback (most recent call last):
    ...
    nasrescale.errors.ConfigError: pipeline.seeds: expected distinct integers from 0 to 2**63 - 1, got [-1]
    """
    if not seeds or len(set(seeds)) != len(seeds) or not all(0 <= s <= MAX_SEED for s in seeds):
        raise ConfigError(f"{key}: expected distinct integers from 0 to 2**63 - 1, got {list(seeds)}")


def to_table(obj: Any) -> dict[str, Any]:
    """The TOML-ready dict of a config dataclass (``None`` values are left out)."""
    out = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            value = to_table(value)
        elif isinstance(value, tuple):
            value = list(value)
        if value is not None:
            out[f.name] = value
    return out


def parse_override(text: str) -> tuple[list[str], Any]:
    """Split ``a.b=value`` into ``(["a", "b"], value)``; the value is a TOML literal.

    >>> parse_override("protocol.epochs=12")
    (['protocol', 'epochs'], 12)
    >>> parse_override("schedule=cosine")
    (['schedule'], 'cosine')
    """
    path, sep, raw = text.partition("=")
    if not sep or not path.strip():
        raise ConfigError(f"--set {text!r}: expected KEY=VALUE, e.g. epochs=12")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()  # a bare word: take it as a string
    return [p.strip() for p in path.split(".")], value


def parse_overrides(texts: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` strings (``--set``) as one typed mapping, dotted key -> value (later wins).

    >>> parse_overrides(["budget.epochs=2", "protocols.r.base_lr=0.3", "executor.kind=ray"])
    {'budget.epochs': 2, 'protocols.r.base_lr': 0.3, 'executor.kind': 'ray'}
    """
    out: dict[str, Any] = {}
    for text in texts:
        path, value = parse_override(text)
        out[".".join(path)] = value
    return out


def typed_overrides(overrides: Overrides) -> dict[str, Any]:
    """``overrides`` as a typed mapping: a mapping as given, strings parsed (:func:`parse_overrides`).

    >>> typed_overrides({"epochs": 3}), typed_overrides(["epochs=3"])
    ({'epochs': 3}, {'epochs': 3})
    """
    if isinstance(overrides, Mapping):
        return dict(overrides)
    return parse_overrides(list(overrides))


def apply_overrides(table: Mapping[str, Any], overrides: Overrides, prefix: str) -> dict[str, Any]:
    """A copy of the TOML table ``table`` with ``overrides`` (dotted key -> value) set in it,
    unchecked; keys may be given with or without the leading ``prefix.``.

    >>> apply_overrides({"lr": 0.1}, {"opt.lr": 0.5, "epochs": 3}, "opt")
    {'lr': 0.5, 'epochs': 3}
    """
    out = dict(table)
    for key, value in typed_overrides(overrides).items():
        path = key.split(".")
        if path[0] == prefix and len(path) > 1:
            path = path[1:]
        set_in_table(out, path, value, f"{key}={value!r}", f"{prefix}.")
    return out


def with_overrides(obj: T, overrides: Overrides, prefix: str) -> T:
    """A copy of config ``obj`` with typed ``overrides`` (dotted key -> value) applied and re-checked."""
    return from_table(type(obj), apply_overrides(to_table(obj), overrides, prefix), prefix)


def set_in_table(table: dict[str, Any], path: Sequence[str], value: Any, text: str, prefix: str = "") -> None:
    """Put ``value`` at key ``path`` of the nested dict ``table``, creating tables on the way.

    ``text`` (the ``--set`` argument) and ``prefix`` only word the error when a step of the path
    is a value rather than a table.

    >>> t = {"a": {"b": 1}}
    >>> set_in_table(t, ["a", "c", "d"], 2, "a.c.d=2"); t
    {'a': {'b': 1, 'c': {'d': 2}}}
    >>> set_in_table(t, ["a", "b", "x"], 3, "a.b.x=3")
    Traceback (most recent call last):
    ...
    nasrescale.errors.ConfigError: --set 'a.b.x=3': b is not a table
    """
    node = table
    for part in path[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"--set {text!r}: {prefix}{part} is not a table")
        node = child
    node[path[-1]] = value


def read_config_text(path: Path, what: str, error: type[NasRescaleError] = ConfigError) -> str:
    """The text of the configuration file ``path``; an ``error`` naming ``what`` ("protocol",
    "cell family") and the file when it cannot be read."""
    try:
        return read_utf8(path)
    except OSError as err:
        raise error(f"cannot read {what} file {str(path)!r}: {err.strerror or err}") from None


def read_toml_file(path: Path, what: str) -> dict[str, Any]:
    """Parse the TOML file ``path``; ``what`` names it in errors ("protocol", "pipeline").

    Raises:
        ConfigError: the file cannot be read (:func:`read_config_text`), or is not valid TOML.

    >>> read_toml_file(Path("no/such.toml"), "pipeline")
    Traceback (most recent call last):
    ...
    nasrescale.errors.ConfigError: cannot read pipeline file 'no/such.toml': No such file or directory
    """
    return parse_toml(read_config_text(path, what), str(path))


def parse_toml(text: str, source: str, error: type[NasRescaleError] = ConfigError) -> dict[str, Any]:
    """Parse TOML ``text`` (the project's one TOML reader); ``source`` names it in the error,
    an ``error`` (default :class:`ConfigError`; cell families raise ``FamilyError``).

    >>> parse_toml("a = 1", "x.toml")
    {'a': 1}
    >>> parse_toml("a = ", "x.toml")
    Traceback (most recent call last):
    ...
    nasrescale.errors.ConfigError: x.toml: not valid TOML: Invalid value (at end of document)
    """
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise error(f"{source}: not valid TOML: {err}") from None
