"""The executor registry: ``executor.kind`` names an entry, the entry builds the executor.

An entry is a factory ``(settings, *, checkpoint_dir, progress) -> Executor`` registered under
a name with :func:`register_executor`. The pipeline file's ``executor.kind`` is checked against
:func:`executor_kinds` (:class:`~nasrescale.executors.base.ExecutorSettings`), and
:func:`get_executor` builds the entry it names. An entry whose executor needs an optional
package names it (``requires``), so a preflight can say what to install before anything runs.

The built-in entries live in :mod:`nasrescale.executors.builtin`: ``local`` (in-process on the
CPU, a process pool on CUDA) and ``ray`` (Ray core tasks).

This module imports nothing of the executors (their settings check the kind against it);
the entries import what they build.

>>> from nasrescale.executors.base import ExecutorSettings
>>> executor_kinds()
('local', 'ray')
>>> type(get_executor(ExecutorSettings(device="cpu"))).__name__
'LocalExecutor'
>>> executor_entry("slurm")
Traceback (most recent call last):
...
nasrescale.errors.ConfigError: executor.kind: expected one of 'local', 'ray' (the registered executors), got 'slurm'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..registry import Registry

__all__ = ["EXECUTORS", "ExecutorFactory", "ExecutorEntry", "register_executor", "executor_kinds", "executor_entry",
           "get_executor"]

#: ``factory(settings: ExecutorSettings, *, checkpoint_dir, progress) -> Executor`` (typed loosely:
#: :mod:`~nasrescale.executors.base` imports this module to check ``executor.kind``)
ExecutorFactory = Callable[..., Any]


@dataclass(frozen=True)
class ExecutorEntry:
    """One registered kind of executor.

    Attributes:
        name: the ``executor.kind`` value.
        factory: builds the executor: ``factory(settings, checkpoint_dir=, progress=)``.
        requires: the optional package the executor imports (``None``: none).
        install: how to install it, for error messages.
        summary: one line for help texts.
        shares_cores: its CPU jobs share this machine's cores, so a run picks their intra-op
            threads once (:func:`~nasrescale.executors.threads.cpu_threads`); ``False``: the
            executor gives each job its own (Ray: ``cpus_per_job``).
    """

    name: str
    factory: ExecutorFactory
    requires: str | None = None
    install: str = ""
    summary: str = ""
    shares_cores: bool = True


#: the registered executors, by ``executor.kind``
EXECUTORS: Registry[ExecutorEntry] = Registry("executor.kind", "executors")


def register_executor(name: str, *, requires: str | None = None, install: str = "", summary: str = "",
                      shares_cores: bool = True) -> Callable[[ExecutorFactory], ExecutorFactory]:
    """Decorator: register ``factory`` as the executor ``executor.kind = name`` builds.

    Registering a name twice replaces the first entry (a plug-in may override a built-in).

    >>> @register_executor("inline_demo", summary="doctest only")
    ... def _inline(settings, *, checkpoint_dir=None, progress=True):
    ...     raise NotImplementedError
    >>> "inline_demo" in executor_kinds()
    True
    >>> _ = EXECUTORS.remove("inline_demo")
    """
    return EXECUTORS.decorator(name, lambda factory: ExecutorEntry(
        name, factory, requires, install, summary or (factory.__doc__ or "").strip(), shares_cores))


#: the registered ``executor.kind`` values, in registration order
executor_kinds = EXECUTORS.names
#: the entry registered as a kind; an unknown kind is a ConfigError listing the registered ones
executor_entry = EXECUTORS.get


def get_executor(settings: Any, *, checkpoint_dir: str | Path | None = None, progress: bool = True) -> Any:
    """The executor (an :class:`~nasrescale.executors.base.Executor`) that ``settings.kind``
    (of an :class:`~nasrescale.executors.base.ExecutorSettings`) names, built by its factory.

    Raises:
        ConfigError: an unknown kind, a kind whose package is not installed, or CUDA asked
            for on a machine without it.
    """
    entry = executor_entry(settings.kind)
    return entry.factory(settings, checkpoint_dir=checkpoint_dir, progress=progress)
