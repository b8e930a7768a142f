"""Where a run lives: the one function that builds a run folder's path.

Kept apart from :mod:`nasrescale.store.read` (which loads pandas) so that the command line can
find a run folder, and take its driver lock, before any heavy library is imported.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["run_dir_for"]


def run_dir_for(name: str | Path, results: str | Path | None = None) -> Path:
    """The run folder of pipeline ``name``: ``<results or ./results>/<name>`` (the one place that
    builds it; the store is ``store.sqlite`` in it).

    >>> run_dir_for("quickstart", "/tmp/res").as_posix()
    '/tmp/res/quickstart'
    """
    return Path(results if results is not None else "results") / name
