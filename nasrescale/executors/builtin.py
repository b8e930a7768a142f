"""The built-in executors, registered by name (see :mod:`nasrescale.executors.executor_registry`).

``local`` runs jobs on this machine: in this process on the CPU
(:class:`~nasrescale.executors.local.LocalExecutor`), or, when the device is CUDA, in a pool of
worker processes, ``jobs_per_gpu`` per visible GPU (:mod:`nasrescale.executors.pool`).
``ray`` runs them as Ray core tasks (:mod:`nasrescale.executors.ray_exec`, the ``ray`` extra);
the ``ray`` package itself is imported only when that entry builds its executor.

>>> from nasrescale.executors.base import ExecutorSettings
>>> type(local_executor(ExecutorSettings(device="cpu"), progress=False)).__name__
'LocalExecutor'
"""

from __future__ import annotations

from pathlib import Path

from ..jobs.job import resolve_device
from .base import Executor, ExecutorSettings
from .local import LocalExecutor
from .pool import PoolExecutor
from .ray_exec import RayExecutor
from .executor_registry import register_executor

__all__ = ["local_executor", "ray_executor"]

_RAY_INSTALL = "pip install 'nasrescale[ray]'"


@register_executor("local", summary="this machine: in-process on the CPU, a process pool per GPU on CUDA")
def local_executor(settings: ExecutorSettings, *, checkpoint_dir: str | Path | None = None,
                   progress: bool = True) -> Executor:
    """In-process on the CPU; a pool of ``jobs_per_gpu`` worker processes per GPU on CUDA.

    Raises:
        ConfigError: CUDA is asked for on a machine without it.
    """
    if resolve_device(settings.device).startswith("cuda"):
        return PoolExecutor(settings, checkpoint_dir=checkpoint_dir, progress=progress)
    return LocalExecutor(settings, checkpoint_dir=checkpoint_dir, progress=progress)


@register_executor("ray", requires="ray", install=_RAY_INSTALL, summary="Ray core tasks (the ray extra)",
                   shares_cores=False)
def ray_executor(settings: ExecutorSettings, *, checkpoint_dir: str | Path | None = None,
                 progress: bool = True) -> Executor:
    """Ray core tasks on ``settings.address`` or a local Ray instance (imports ``ray`` here).

    Raises:
        ConfigError: Ray is not installed.
    """
    return RayExecutor(settings, checkpoint_dir=None if checkpoint_dir is None else Path(checkpoint_dir),
                       progress=progress)
