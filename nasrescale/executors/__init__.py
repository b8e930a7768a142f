"""Executors: where a pipeline's jobs run (see :mod:`nasrescale.executors.base` for the contract).

:func:`get_executor` picks one from the ``[executor]`` settings: ``kind = "local"`` runs jobs
in this process on the CPU (:class:`~.local.LocalExecutor`) or, when the device is CUDA, in a
pool of worker processes, ``jobs_per_gpu`` per visible GPU (``executors.pool``);
``kind = "ray"`` runs them as Ray tasks (``executors.ray_exec``, needs the ``ray`` extra).
The pool and Ray modules are imported only when chosen.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from .base import STATUSES, Executor, ExecutorSettings, Outcome, RunnableJob, execute

__all__ = ["STATUSES", "Executor", "ExecutorSettings", "Outcome", "RunnableJob", "execute", "get_executor"]


def get_executor(settings: ExecutorSettings, *, checkpoint_dir: str | Path | None = None,
                 progress: bool = True) -> Executor:
    """The executor ``settings`` ask for; every kind takes ``(settings, checkpoint_dir=, progress=)``.

    >>> type(get_executor(ExecutorSettings(device="cpu"))).__name__
    'LocalExecutor'

    Raises:
        ConfigError: the kind needs a module or package that is not installed, or CUDA is asked
            for on a machine without it.
    """
    from ..jobs.job import resolve_device

    if settings.kind == "ray":
        try:
            from .ray_exec import RayExecutor
        except ImportError as err:
            raise ConfigError(f"executor.kind = \"ray\" is not available ({err}); install the extra: "
                              "pip install 'nasrescale[ray]'") from None
        return RayExecutor(settings, checkpoint_dir=checkpoint_dir, progress=progress)
    if resolve_device(settings.device).startswith("cuda"):
        try:
            from .pool import PoolExecutor
        except ImportError as err:
            raise ConfigError(f"the GPU pool executor is not available in this build ({err}); "
                              "use --set executor.device=cpu") from None
        return PoolExecutor(settings, checkpoint_dir=checkpoint_dir, progress=progress)
    from .local import LocalExecutor

    return LocalExecutor(settings, checkpoint_dir=checkpoint_dir, progress=progress)
