"""Finding pipeline files: the shipped pipelines by name, or a path.

Kept apart from :mod:`nasrescale.pipeline.spec` (which loads the training stack) so that the
command line can list the shipped pipelines in its help without importing torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..config import read_toml_file
from ..errors import ConfigError
from ..fileio import shipped_toml_dir
from ..store.layout import run_dir_for

__all__ = ["pipeline_names", "resolve_pipeline_path", "early_run_dir"]


def pipeline_names() -> list[str]:
    """Names of the shipped pipelines."""
    folder = shipped_toml_dir("pipelines")
    return sorted(p.stem for p in folder.glob("*.toml")) if folder else []


def resolve_pipeline_path(name_or_path: str | Path) -> Path:
    """A pipeline file: an existing path, else a shipped pipeline's name.

    Raises:
        ConfigError: neither (naming the shipped pipelines).
    """
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    folder = shipped_toml_dir("pipelines")
    if folder is not None and not path.suffix and (folder / f"{path.name}.toml").is_file() and len(path.parts) == 1:
        return folder / f"{path.name}.toml"
    raise ConfigError(f"no pipeline file {str(name_or_path)!r}; pass a .toml path or one of the shipped "
                      f"pipelines: {', '.join(pipeline_names()) or 'none'}")


def early_run_dir(name_or_path: str | Path, overrides: Mapping[str, Any], results: str | Path | None) -> Path | None:
    """The run folder of a pipeline, read from its ``[pipeline] name`` (or a ``pipeline.name``
    override) without loading the pipeline: enough to take the driver lock before anything heavy
    is imported. ``None`` where the file or its name cannot be read so: loading the pipeline then
    says what is wrong.

    >>> early_run_dir("quickstart", {}, "/tmp/r").as_posix(), early_run_dir("quickstart", {"pipeline.name": "q2"}, None)
    ('/tmp/r/quickstart', PosixPath('results/q2'))
    >>> early_run_dir("no_such_pipeline", {}, None) is None
    True
    """
    name = overrides.get("pipeline.name")
    if name is None:
        try:
            table = read_toml_file(resolve_pipeline_path(name_or_path), "pipeline").get("pipeline")
        except ConfigError:
            return None
        name = table.get("name") if isinstance(table, dict) else None
    folder = isinstance(name, str) and name and not name.startswith(".") and all(c.isalnum() or c in "_-." for c in name)
    return run_dir_for(name, results) if folder else None  # a name the pipeline's own check would refuse: None
