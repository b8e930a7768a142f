"""Error types.

Every error a user can cause (bad architecture string, bad config key, missing data) is a
:class:`NasRescaleError`; the CLI prints its message and exits with code 2. Messages name what
is wrong and how to fix it. What the program changes on its own (duplicates merged, a shipped
family replaced, vertices pruned) is not an error but is never silent: :func:`notice` says so
in one line on stderr.
"""

from __future__ import annotations

import sys

__all__ = ["NasRescaleError", "ArchError", "FamilyError", "ConfigError", "DataError", "notice"]


def notice(message: str) -> None:
    """One line on stderr, ``nasrescale: note: MESSAGE``: something changed without an error."""
    print(f"nasrescale: note: {message}", file=sys.stderr)


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
