"""Finding pipeline files: the shipped pipelines by name, or a path.

Kept apart from :mod:`nasrescale.pipeline.spec` (which loads the training stack) so that the
command line can list the shipped pipelines in its help without importing torch.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from ..fileio import shipped_toml_dir

__all__ = ["pipeline_names", "resolve_pipeline_path"]


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
