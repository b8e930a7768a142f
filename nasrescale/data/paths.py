"""Where datasets and decoded-image caches live by default.

* cache folder: the ``cache_dir`` argument, else ``$NASRESCALE_CACHE``, else
  ``~/.cache/nasrescale``;
* data root (where ``cifar10``/``cifar100`` are looked for and downloaded to, and
  ``imagenet16-120`` is looked for, when no root is given): ``$NASRESCALE_DATA``, else
  ``<cache folder>/datasets``.

>>> resolve_cache_dir("/tmp/x")
PosixPath('/tmp/x')
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_ENV", "DATA_ENV", "resolve_cache_dir", "default_data_root"]

CACHE_ENV = "NASRESCALE_CACHE"
DATA_ENV = "NASRESCALE_DATA"


def resolve_cache_dir(cache_dir: str | Path | None = None) -> Path:
    """The cache folder: ``cache_dir`` if given, else ``$NASRESCALE_CACHE``, else ``~/.cache/nasrescale``.

    The folder is not created here; writers create it when they first write.
    """
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "nasrescale"


def default_data_root(cache_dir: str | Path | None = None) -> Path:
    """The data root used when a dataset is loaded without ``root``: ``$NASRESCALE_DATA``,
    else ``<cache folder>/datasets``."""
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env).expanduser()
    return resolve_cache_dir(cache_dir) / "datasets"
