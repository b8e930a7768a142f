"""The cell family a pipeline names: ``pipeline.family`` (a shipped or registered family), or
the one its ``pipeline.family_file`` defines (relative to the pipeline file)."""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError, NasRescaleError
from ..space.families import CellFamily
from ..space.family_loader import family_names_in, resolve_family
from .tables import PipelineSettings

__all__ = ["named_family"]


def named_family(settings: PipelineSettings, source: str | None) -> CellFamily:
    """The family of ``[pipeline]`` ``settings`` read from the file ``source`` (``None``: paths
    relative to the working folder).

    Raises:
        ConfigError: an unreadable family file, or a name the file does not define (naming both keys).
    """
    if not settings.family_file:
        return resolve_family(settings.family or "nb201")
    path = Path(settings.family_file).expanduser()
    if not path.is_absolute() and source is not None:
        path = Path(source).parent / path
    try:
        defined = family_names_in(path)
    except NasRescaleError as err:
        raise ConfigError(f"pipeline.family_file: {err}") from None
    named = settings.family
    if named is not None and named not in defined:
        raise ConfigError(
            f"pipeline.family = {named!r} but pipeline.family_file = {settings.family_file!r} defines "
            f"{', '.join(map(repr, defined)) or 'no family'}; drop pipeline.family (the file then defines the "
            "family) or make the two agree")
    if named is None and len(defined) != 1:
        raise ConfigError(f"pipeline.family_file = {settings.family_file!r} defines {len(defined)} families "
                          f"({', '.join(defined)}); choose one with pipeline.family")
    return resolve_family(named or defined[0], [path])
