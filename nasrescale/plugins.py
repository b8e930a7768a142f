"""Plug-in modules: the user's own code that a pipeline or protocol file names under ``imports``.

A plug-in registers entries in the project's registries (an LR rule, an init rule, a schedule,
a selection method...) when it is imported, so that a configuration key can then name them.
An ``imports`` entry is a module name (``my_rules``: looked up in the TOML file's folder first,
then on the Python path) or a ``.py`` file (``my_rules.py``: relative to the TOML file's folder)::

    [pipeline]
    name = "mine"
    imports = ["my_rules.py"]

:func:`import_plugins` checks and imports such a list; a missing module or file, or one that
raises on import, is a :class:`~nasrescale.errors.ConfigError` naming the key and the file. Every
plug-in imported in this process is remembered (:func:`loaded_plugins`), so that an executor can
import them again in its worker processes (:func:`load_plugins`, idempotent) before a job runs.

>>> resolve_plugins(["json"], None, "pipeline.imports")
(Plugin(name='json', folder=None),)
>>> resolve_plugins("json", None, "pipeline.imports")
Traceback (most recent call last):
...
nasrescale.errors.ConfigError: pipeline.imports: expected a list of module names or .py files, got 'json'
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from .errors import ConfigError

__all__ = ["Plugin", "import_plugins", "resolve_plugins", "load_plugins", "loaded_plugins"]

#: every plug-in imported in this process, in import order (what the executors send their workers)
_LOADED: dict["Plugin", None] = {}


@dataclass(frozen=True)
class Plugin:
    """One ``imports`` entry, resolved.

    Attributes:
        name: a module name, or the absolute path of a ``.py`` file.
        folder: the folder searched first for a module name (the TOML file's), if any.
    """

    name: str
    folder: str | None = None

    @property
    def is_file(self) -> bool:
        """Whether the entry is a ``.py`` file (else a module name)."""
        return self.name.endswith(".py")

    def module_name(self) -> str:
        """The name the plug-in is imported under: a file's stem plus a hash of its path (two files
        of one name in different folders are two modules), else the module name itself."""
        if not self.is_file:
            return self.name
        digest = hashlib.sha256(self.name.encode()).hexdigest()[:8]
        return f"nasrescale_plugin_{Path(self.name).stem}_{digest}"


def resolve_plugins(value: Any, folder: Path | None, key: str) -> tuple[Plugin, ...]:
    """The plug-ins of an ``imports`` value (a list of strings), files made absolute against
    ``folder`` (the TOML file's folder; ``None``: the working folder).

    Raises:
        ConfigError: naming ``key``: not a list of non-empty strings, or a ``.py`` file that is missing.
    """
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{key}: expected a list of module names or .py files, got {value!r}")
    base = (folder or Path.cwd()).resolve()
    plugins = []
    for entry in value:
        if entry.endswith(".py"):
            path = Path(entry).expanduser()
            path = (path if path.is_absolute() else base / path).resolve()
            if not path.is_file():
                hint = "" if Path(entry).is_absolute() else f" ({path}); give a .py file relative to {base} or a module"
                raise ConfigError(f"{key}: no file {entry!r}{hint}")
            plugins.append(Plugin(str(path)))
        else:
            plugins.append(Plugin(entry.strip(), None if folder is None else str(base)))
    return tuple(dict.fromkeys(plugins))


def load_plugins(plugins: Iterable[Plugin], key: str) -> None:
    """Import each plug-in not imported yet in this process (a worker process calls it with the
    driver's :func:`loaded_plugins`).

    Raises:
        ConfigError: naming ``key`` and the module or file: it cannot be found, or raised on import.
    """
    for plugin in plugins:
        if plugin in _LOADED:
            continue
        _import(plugin, key)
        _LOADED[plugin] = None


def import_plugins(value: Any, folder: Path | None, key: str) -> tuple[Plugin, ...]:
    """:func:`resolve_plugins` then :func:`load_plugins`: the plug-ins of an ``imports`` value, imported."""
    plugins = resolve_plugins(value, folder, key)
    load_plugins(plugins, key)
    return plugins


def loaded_plugins() -> tuple[Plugin, ...]:
    """Every plug-in imported in this process so far, in import order."""
    return tuple(_LOADED)


@contextlib.contextmanager
def _searched_first(folder: str | None) -> Iterator[None]:
    """``folder`` first on the module search path while a plug-in is imported."""
    if folder is None:
        yield
        return
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)


def _import(plugin: Plugin, key: str) -> None:
    where = f"{key}: {plugin.name!r}" + (f" (searched in {plugin.folder} and on the Python path)"
                                         if not plugin.is_file and plugin.folder else "")
    name = plugin.module_name()
    try:
        with _searched_first(str(Path(plugin.name).parent) if plugin.is_file else plugin.folder):
            if plugin.is_file:
                _exec_file(name, Path(plugin.name))
            else:
                importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name == name:
            raise ConfigError(f"{where}: no such module; give a module name on the Python path or a .py file") from None
        raise ConfigError(f"{where}: importing it failed: {_one_line(err)}") from None
    except Exception as err:  # noqa: BLE001 - a plug-in's own error, named with its file
        raise ConfigError(f"{where}: importing it failed: {_one_line(err)}") from None


def _exec_file(name: str, path: Path) -> None:
    """Import the file ``path`` as the module ``name`` (once per process)."""
    if name in sys.modules:
        return
    if not path.is_file():
        raise FileNotFoundError(f"no file {path}")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]  # a fixed file imports afresh
        raise


def _one_line(err: BaseException) -> str:
    """``Type: message``, its first line only."""
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__
