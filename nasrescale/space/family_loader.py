"""Finding and loading cell families.

Families are read, in this order (a later file replaces an earlier family of the same name):

1. the built-in ``cells/`` folder shipped with the package;
2. ``./cells/`` in the current directory, if it exists (so a checkout's new files count);
3. the folders or files listed in the ``NASRESCALE_CELLS`` environment variable
   (separated by ``os.pathsep``);
4. the paths passed explicitly (``--family-file PATH``), files or folders.

Each family's base architecture is parsed and must not be degenerate.

>>> {"nb201", "darts"} <= set(load_families())  # two of the shipped families (one file each in cells/)
True
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence

from ..registry import Registry
from ..errors import ArchError, FamilyError, notice
from ..fileio import shipped_toml_dir
from .encodings import FAMILY_RESOLVER, parse_arch
from .families import CellFamily
from .family_file import read_family_file
from .topology import is_degenerate

__all__ = ["builtin_cells_dir", "family_files", "load_families", "get_family", "as_family", "resolve_family",
           "family_names_in"]


def builtin_cells_dir() -> Path:
    """The folder of built-in family files (wheel: ``nasrescale/cells``; checkout: ``cells/``)."""
    folder = shipped_toml_dir("cells")
    if folder is None:
        raise FamilyError("built-in cell families not found in the nasrescale package; reinstall nasrescale")
    return folder


def _expand(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(path.glob("*.toml"))
    if path.is_file():
        return [path]
    raise FamilyError(f"cell family path {str(path)!r} does not exist; pass a .toml file or a folder of them")


def family_files(paths: Iterable[str | Path] = ()) -> list[Path]:
    """All family files in search order, without duplicates (see module docstring)."""
    sources: list[Path] = [builtin_cells_dir()]
    local = Path.cwd() / "cells"
    if local.is_dir():
        sources.append(local)
    sources += [Path(p) for p in os.environ.get("NASRESCALE_CELLS", "").split(os.pathsep) if p]
    sources += [Path(p) for p in paths]
    files: list[Path] = []
    seen: set[Path] = set()
    for source in sources:
        for file in _expand(source):
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                files.append(file)
    return files


def _check_base(family: CellFamily) -> None:
    where = f"{family.source or family.name}: family.base"
    try:
        graph = parse_arch(family.base, family)
    except ArchError as err:
        raise FamilyError(f"{where}: {err}") from None
    if is_degenerate(graph, family):
        raise FamilyError(f"{where}: the base architecture has no input->output path")


def load_families(paths: Sequence[str | Path] = ()) -> Registry[CellFamily]:
    """Load every family on the search path, registered by name (a later file's family replaces
    an earlier one of the same name).

    Raises:
        FamilyError: if a file is malformed, or two files of one folder read as a folder share a
            name (files passed one by one replace in the order given).
    """
    families: Registry[CellFamily] = Registry("cell family", "cell families", error=FamilyError,
                                              hint="add one as cells/<name>.toml or pass --family-file PATH")
    named = {Path(p).resolve() for p in paths if Path(p).is_file()}  # files passed one by one: their order counts
    for file in family_files(paths):
        family = read_family_file(file)
        old = families.get(family.name) if family.name in families else None
        if (old is not None and old.source is not None and file.resolve() not in named
                and old.source.parent.resolve() == file.parent.resolve()):
            raise FamilyError(f"family {family.name!r} is defined twice in one folder, in {old.source} and {file}; "
                              "rename one (or pass the one you want with --family-file FILE)")
        _check_base(family)
        if old is not None and _is_shipped(old) and old.digest() != family.digest():
            _announce_replacement(old, file)
        families.add(family.name, family)
    return families


_ANNOUNCED: set[tuple[str, Path]] = set()


def _is_shipped(family: CellFamily) -> bool:
    return family.source is not None and family.source.parent.resolve() == builtin_cells_dir().resolve()


def _announce_replacement(shipped: CellFamily, file: Path) -> None:
    """One notice per process when a user's file replaces a shipped family of the same name."""
    key = (shipped.name, file.resolve())
    if key not in _ANNOUNCED:
        _ANNOUNCED.add(key)
        notice(f"family {shipped.name!r} of {file} replaces the shipped one of that name; its results are not "
               f"comparable with the shipped {shipped.name}'s (name the family differently to keep both)")


def get_family(name: str, paths: Sequence[str | Path] = ()) -> CellFamily:
    """The family called ``name``.

    Raises:
        FamilyError: naming the known families, if there is none called ``name``.
    """
    return load_families(paths).get(name)


def as_family(family: CellFamily | str) -> CellFamily:
    """``family`` itself, or the family on the search path called ``family`` (:func:`get_family`).

    >>> nb201 = as_family("nb201")
    >>> nb201.name, as_family(nb201) is nb201
    ('nb201', True)

    Raises:
        FamilyError: an unknown name, or neither a family nor a name.
    """
    if isinstance(family, CellFamily):
        return family
    if isinstance(family, str):
        return get_family(family)
    raise FamilyError(f"expected a cell family or a family name such as 'nb201', got {type(family).__name__}")


def family_names_in(path: str | Path) -> list[str]:
    """The names of the families a family file (or a folder of them) defines, in file order.

    Raises:
        FamilyError: the path does not exist or a file is malformed.
    """
    return [read_family_file(f).name for f in _expand(Path(path))]


def resolve_family(name: str | None, paths: Sequence[str | Path] = ()) -> CellFamily:
    """The family a command should use: ``name`` if given; else the single family in the
    explicitly passed files, if exactly one; else ``nb201``."""
    if name is not None:
        return get_family(name, paths)
    explicit = [read_family_file(f) for p in paths for f in _expand(Path(p))]
    if len(explicit) == 1:
        return get_family(explicit[0].name, paths)
    if len(explicit) > 1:
        raise FamilyError(
            f"the family files name {len(explicit)} families ({', '.join(f.name for f in explicit)}); choose one with --family"
        )
    return get_family("nb201", paths)


FAMILY_RESOLVER[:] = [as_family]  # parse_arch takes a family's name too
# the structured spaces register their encodings when imported
from . import darts_codec as _darts_codec, nb101_codec as _nb101_codec  # noqa: F401,E402
