"""Executors: where a pipeline's jobs run (see :mod:`nasrescale.executors.base` for the contract).

``executor.kind`` names an entry of the registry (:mod:`nasrescale.executors.executor_registry`);
:func:`get_executor` builds it. The built-in kinds, ``local`` and ``ray``, are registered by
:mod:`nasrescale.executors.builtin`, imported here so that every user of the package sees them.
"""

from __future__ import annotations

from . import builtin as _builtin_kinds  # noqa: F401 - registers the built-in executors
from .base import Executor, ExecutorSettings, Outcome, RunnableJob, execute
from .executor_registry import executor_entry, executor_kinds, get_executor, register_executor

__all__ = ["Executor", "ExecutorSettings", "Outcome", "RunnableJob", "execute", "get_executor",
           "executor_entry", "executor_kinds", "register_executor"]
