"""Error types.

Every error a user can cause (bad architecture string, bad config key, missing data) is a
:class:`NasRescaleError`; the CLI prints its message and exits with code 2. Messages name what
is wrong and how to fix it.
"""

from __future__ import annotations

__all__ = ["NasRescaleError", "ArchError", "FamilyError", "ConfigError", "DataError"]


class NasRescaleError(Exception):
    """Base class of all user-facing errors."""


class ArchError(NasRescaleError, ValueError):
    """An architecture string or graph is malformed for its cell family."""


class FamilyError(NasRescaleError, ValueError):
    """A cell-family file is malformed, or a family name is unknown."""


class ConfigError(NasRescaleError, ValueError):
    """A protocol or pipeline configuration has a bad key or value."""


class DataError(NasRescaleError, OSError):
    """A dataset is missing or unreadable."""
