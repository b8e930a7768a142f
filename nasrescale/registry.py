"""The project's one registry type: named entries a configuration key chooses between.

>>> shapes = Registry("plot.shape", "shapes")
>>> shapes.add("dot", ".")
'.'
>>> shapes.get("dot"), "star" in shapes
('.', False)
"""

from __future__ import annotations

import importlib
from typing import Callable, Generic, Iterator, TypeVar

from .errors import ConfigError, NasRescaleError

__all__ = ["Registry"]

E = TypeVar("E")
F = TypeVar("F", bound=Callable[..., object])


class Registry(Generic[E]):
    """Named entries that a configuration key chooses between: the project's one registry type
    (executors, selection methods, pipeline kinds, init, LR and kernel rules, schedules, warm-up
    rules, op kinds, model builders, macro skeletons, datasets, cell families).

    Entries keep their registration order. Adding a name twice replaces the first entry (a
    plug-in may override a built-in), unless the registry is ``unique``: then a different entry
    under a taken name is an ``error`` (adding the same entry again is harmless). :meth:`get` of
    an unknown name raises ``error`` naming ``key``, listing the registered names and, where
    given, ``hint`` (how to add one).

    A registry whose entries are registered by a package above it (the pipeline kinds, each
    in its own package over the pipeline) names that package in ``load``: it is imported, by
    name, before the registry is first read or written, as a plug-in's entry point would be.

    >>> colours = Registry("paint.colour", "colours")
    >>> red, blue = colours.add("red", 0xFF0000), colours.add("blue", 0x0000FF)
    >>> colours.names(), colours.get("blue") == 0x0000FF, len(colours)
    (('red', 'blue'), True, 2)
    >>> colours.get("green")
    Traceback (most recent call last):
    ...
    nasrescale.errors.ConfigError: paint.colour: expected one of 'red', 'blue' (the registered colours), got 'green'
    """

    def __init__(self, key: str, what: str, *, error: type[NasRescaleError] = ConfigError, hint: str = "",
                 unique: bool = False, load: str | None = None) -> None:
        self.key, self.what, self.error, self.hint, self.unique = key, what, error, hint, unique
        self._entries: dict[str, E] = {}
        self._load = load

    def _loaded(self) -> dict[str, E]:
        """The entries, once the ``load`` package (if any) has registered its own."""
        if self._load is not None:
            module, self._load = self._load, None
            try:
                importlib.import_module(module)
            except BaseException:
                self._load = module
                raise
        return self._entries

    def add(self, name: str, entry: E) -> E:
        """Register ``entry`` as ``name`` (a non-empty string without spaces); returns ``entry``."""
        if not isinstance(name, str) or not name or any(c.isspace() for c in name):
            raise ValueError(f"{self.key}: a registered name must be a non-empty word, got {name!r}")
        old = self._loaded().get(name, entry)
        if self.unique and old is not entry and old != entry:
            raise self.error(f"{self.key}: {name!r} is registered already, as another entry of the {self.what}; "
                             "register the new one under another name")
        self._entries[name] = entry
        return entry

    def decorator(self, name: str, make_entry: Callable[[F], E] | None = None) -> Callable[[F], F]:
        """A decorator that registers ``make_entry(fn)`` (default: ``fn``) as ``name`` and
        returns ``fn`` itself."""
        def decorate(fn: F) -> F:
            self.add(name, fn if make_entry is None else make_entry(fn))  # type: ignore[arg-type]
            return fn

        return decorate

    def remove(self, name: str) -> E:
        """Unregister ``name`` and return its entry (tests, plug-in reloads)."""
        return self._loaded().pop(name)

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._loaded())

    def items(self) -> list[tuple[str, E]]:
        """``(name, entry)`` pairs, in registration order."""
        return list(self._loaded().items())

    def values(self) -> list[E]:
        """The entries, in registration order."""
        return list(self._loaded().values())

    def get(self, name: str, key: str | None = None) -> E:
        """The entry registered as ``name``; else ``error`` naming ``key`` (default: the
        registry's), listing the names and ending with the hint."""
        if not isinstance(name, str) or name not in self._loaded():
            names = ", ".join(repr(n) for n in self._entries)
            hint = f"; {self.hint}" if self.hint else ""
            raise self.error(f"{key or self.key}: expected one of {names} (the registered {self.what}), "
                             f"got {name!r}{hint}")
        return self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._loaded()

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())
