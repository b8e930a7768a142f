"""Typed figures that write back the JSON they were read from, key for key.

A report's summary holds its figures as frozen dataclasses (:class:`Plain` subclasses): its
sections read attributes, never string keys. :meth:`Plain.from_plain` reads one from the
mapping a computation returns (refusing a key it does not declare), :meth:`Plain.to_plain`
writes the same mapping back, in the fields' order, so ``report.json`` keeps its layout. A key
a mapping may lack defaults to :data:`ABSENT` (left out of the JSON, unlike ``None``, which is
written as ``null``); :func:`jfield` names a JSON key that is not an identifier and the class of
a nested figure (one, ``each`` of a list, or the ``values`` of a mapping).

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Gap(Plain):
...     mean: float
...     ci: list[float] | None | Absent = ABSENT
>>> @dataclass(frozen=True)
... class Head(Plain):
...     n: int
...     oracle_global: Gap = jfield(key="oracle-global", of=Gap)
>>> head = Head.from_plain({"n": 3, "oracle-global": {"mean": 0.5}})
>>> head.oracle_global.mean, head.oracle_global.ci is ABSENT
(0.5, True)
>>> head.to_plain()
{'n': 3, 'oracle-global': {'mean': 0.5}}
>>> Head.from_plain({"n": 3, "oracle-global": {"mean": 0.5}, "extra": 1})
Traceback (most recent call last):
...
ValueError: Head: keys it does not declare: ['extra']
"""

from __future__ import annotations

from dataclasses import MISSING, Field, field, fields
from typing import Any, Mapping, TypeVar

__all__ = ["ABSENT", "Absent", "Plain", "jfield", "present"]

P = TypeVar("P", bound="Plain")


class Absent:
    """The type of :data:`ABSENT`: a key the figures do not hold."""

    _one: "Absent | None" = None

    def __new__(cls) -> "Absent":
        if cls._one is None:
            cls._one = super().__new__(cls)
        return cls._one

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


#: a key the figures do not hold (left out of the JSON)
ABSENT = Absent()


def present(value: Any) -> bool:
    """Whether ``value`` is held (not :data:`ABSENT`; ``None`` is held, as ``null``)."""
    return value is not ABSENT


def jfield(*, key: str | None = None, of: type[Plain] | None = None, each: type[Plain] | None = None,
           values: type[Plain] | None = None, default: Any = MISSING) -> Any:
    """A field whose JSON key is ``key`` (default: its name), holding one ``of``, a list of
    ``each`` or a mapping whose ``values`` are that :class:`Plain` class."""
    return field(default=default, metadata={"key": key, "of": of, "each": each, "values": values})


def _key(f: Field[Any]) -> str:
    return f.metadata.get("key") or f.name


def _read(f: Field[Any], value: Any) -> Any:
    if value is None:
        return None
    of, each, values = (f.metadata.get(k) for k in ("of", "each", "values"))
    if of is not None:
        return of.from_plain(value)
    if each is not None:
        return tuple(each.from_plain(v) for v in value)
    if values is not None:
        return {k: values.from_plain(v) for k, v in value.items()}
    return value


def _write(value: Any) -> Any:
    if isinstance(value, Plain):
        return value.to_plain()
    if isinstance(value, tuple) and value and all(isinstance(v, Plain) for v in value):
        return [v.to_plain() for v in value]
    if isinstance(value, dict) and value and all(isinstance(v, Plain) for v in value.values()):
        return {k: v.to_plain() for k, v in value.items()}
    return value


class Plain:
    """A frozen dataclass of figures read from, and written back as, one JSON mapping."""

    @classmethod
    def from_plain(cls: type[P], data: Mapping[str, Any]) -> P:
        """Read ``data``; refuses a key the class does not declare."""
        declared = {_key(f): f for f in fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(data) - set(declared))
        if unknown:
            raise ValueError(f"{cls.__name__}: keys it does not declare: {unknown}")
        return cls(**{f.name: _read(f, data[k]) for k, f in declared.items() if k in data})

    def to_plain(self) -> dict[str, Any]:
        """The mapping it was read from (its held fields, in order)."""
        return {_key(f): _write(getattr(self, f.name)) for f in fields(self)  # type: ignore[arg-type]
                if getattr(self, f.name) is not ABSENT}
