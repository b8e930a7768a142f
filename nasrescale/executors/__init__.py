"""Executors: where a pipeline's jobs run (see :mod:`nasrescale.executors.base` for the contract)."""

from .base import STATUSES, Executor, ExecutorSettings, Outcome, RunnableJob, execute

__all__ = ["STATUSES", "Executor", "ExecutorSettings", "Outcome", "RunnableJob", "execute"]
