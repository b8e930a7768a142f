"""The short names report legends and tables give architectures.

An NB201 cell string runs to 90 characters, too long for a legend or a table column.
:func:`short_names` writes each architecture in its family's digit encoding (``3_34_131``: one
group per node, one digit per incoming edge, the digit an op's position in the family's op
list) where the family allows it, else as ``a1``, ``a2``, ... in the order given (a report's
per-architecture table then gives the full strings as the key).

>>> names, key = short_names(["|nor_conv_3x3~0|+|none~0|skip_connect~1|+|none~0|none~1|avg_pool_3x3~2|"], "nb201")
>>> list(names.values()), key.split(":")[0]
(['3_01_004'], 'Architectures are written in the digit encoding')
"""

from __future__ import annotations

from typing import Any, Sequence

from ...errors import NasRescaleError
from ...space.encodings import format_arch, parse_arch
from ...space.families import CellFamily
from ...space.family_loader import get_family

__all__ = ["short_names"]


def _family(name: Any, paths: Sequence[str] = ()) -> CellFamily | None:
    try:
        return get_family(str(name or "nb201"), [p for p in paths if p])
    except NasRescaleError:
        return None


def short_names(archs: Sequence[str], family: Any, family_files: Sequence[str] = ()) -> tuple[dict[str, str], str]:
    """``({arch: short name}, a sentence saying how to read them)`` for ``archs`` of ``family``
    (a name, looked up with ``family_files``): the digit encoding where the family has one for
    every architecture (at most 10 ops, absent edges written as its zero op), else ``a1``,
    ``a2``, ... in the order of ``archs``."""
    fam = _family(family, family_files)
    if fam is not None:
        try:
            names = {a: format_arch(parse_arch(a, fam), fam, "digits") for a in archs}
        except NasRescaleError:
            names = {}
        if names and len(set(names.values())) == len(names):
            ops = ", ".join(f"{i} {op}" for i, op in enumerate(fam.op_names))
            return names, ("Architectures are written in the digit encoding: one group per node after the input, "
                           "one digit per edge from each earlier node, the digit naming the op "
                           f"({ops}); every nasrescale command accepts this form as an architecture.")
    names = {a: f"a{i + 1}" for i, a in enumerate(archs)}
    return names, "Architectures are numbered a1, a2, ...; the per-architecture table gives each one's full string."
