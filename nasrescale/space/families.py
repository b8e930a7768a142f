"""Cell families: a search space described by a TOML file in ``cells/``
(:mod:`nasrescale.space.family_file` reads one).

A :class:`CellFamily` names the ops (each bound to a registered op kind, see
:mod:`nasrescale.space.ops`), the node count, the default string encoding, the path-depth offset,
the base architecture of the LR rule, the kernel rule, the cell structure and the macro skeleton
the model builder wraps the cell in. Discovery and the checks that need the parser (the base
architecture) live in :mod:`nasrescale.space.family_loader`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from ..errors import ArchError, ConfigError, FamilyError
from ..plugins import import_plugins
from .ops import CellOp
from .structure import DEFAULT_STRUCTURE, STRUCTURES, CellStructure

__all__ = ["CellFamily", "ENCODINGS", "import_family_plugins"]

#: every encoding a family may name, over all structures (each structure allows some of them)
ENCODINGS = tuple(dict.fromkeys(e for s in STRUCTURES.values() for e in s.encodings))


@dataclass(frozen=True, eq=False)
class CellFamily:
    """A cell search space. Immutable; hashed by identity (one object per loaded file).

    Attributes:
        name: family name used by ``--family``.
        ops: the ops, in digit-code order.
        depth_offset: added to the ReLU count of every path (NB201: 1; MLP/CNN DAGs: 3).
        base: base architecture string (LR scale 1 by definition).
        nodes: node count, or ``None`` when any count is allowed.
        encoding: default string encoding for output.
        kernel_rule: default kernel-factor rule (``none``/``network``/``per_layer``).
        kernel_base: ``q_base`` in the factor ``q_base / q``.
        macro: the ``[macro]`` table (skeleton kind and its settings), read-only.
        description: one line of prose.
        source: the file it was read from, if any.
        imports: what the file names under ``imports``: module names, and ``.py`` files as
            absolute paths (imported when it was read, and again wherever the family is
            unpickled: an executor's worker process).
        imports_folder: the folder a module name of ``imports`` is looked up in first (the family
            file's), if any.
        structure: how its cells are wired (:mod:`nasrescale.space.structure`; the ``[structure]``
            table's ``kind``, default ``edge_dag``).
        structure_settings: the ``[structure]`` table's other settings, defaults filled in.
    """

    name: str
    ops: tuple[CellOp, ...]
    depth_offset: int
    base: str
    nodes: int | None = None
    encoding: str = "edges"
    kernel_rule: str = "none"
    kernel_base: int = 3
    macro: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    description: str = ""
    source: Path | None = None
    imports: tuple[str, ...] = ()
    imports_folder: str | None = None
    structure: CellStructure = field(default_factory=lambda: STRUCTURES.get(DEFAULT_STRUCTURE))
    structure_settings: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def op_names(self) -> tuple[str, ...]:
        """Op names in digit-code order."""
        return tuple(op.name for op in self.ops)

    @property
    def zero_op(self) -> str | None:
        """Name of the family's zero op (used for absent edges), or ``None``."""
        return next((op.name for op in self.ops if op.zero), None)

    def __post_init__(self) -> None:
        # name -> op lookup table; object.__setattr__ because the dataclass is frozen
        object.__setattr__(self, "_by_name", {op.name: op for op in self.ops})

    def __deepcopy__(self, memo: dict) -> "CellFamily":
        return self  # immutable: copies of a model share their family

    def __reduce__(self) -> tuple:
        # pickling (torch.save of a model, Ray tasks): the read-only macro view travels as a dict
        fields = {f: getattr(self, f) for f in self.__dataclass_fields__}
        fields["macro"] = dict(self.macro)
        fields["structure"] = self.structure.name
        fields["structure_settings"] = dict(self.structure_settings)
        return (_rebuild_family, (fields,))

    def digest(self) -> str:
        """Content hash (16 hex digits) of everything in the family that can change a result.

        Covers the name, ops (name, kind, kernel), node count, depth offset, base architecture,
        kernel rule and base, the macro table and, for a structure other than ``edge_dag``, the
        structure and its settings (absent for ``edge_dag``, so the digests, and the run keys,
        of families that predate structures stay as they were); not the description or the
        file's location.
        Run keys and checkpoints use it to tell two versions of a family apart.

        >>> from nasrescale.space.family_loader import get_family
        >>> nb = get_family("nb201")
        >>> len(nb.digest()), nb.digest() == get_family("nb201").digest()
        (16, True)
        >>> import dataclasses
        >>> dataclasses.replace(nb, kernel_rule="per_layer").digest() != nb.digest()
        True
        """
        content = {
            "name": self.name, "ops": [[op.name, op.kind.name, op.kernel] for op in self.ops],
            "nodes": self.nodes, "depth_offset": self.depth_offset, "base": self.base,
            "kernel_rule": self.kernel_rule, "kernel_base": self.kernel_base,
            "macro": {k: self.macro[k] for k in sorted(self.macro)},
        }
        if self.structure.name != DEFAULT_STRUCTURE:
            content["structure"] = {"kind": self.structure.name, **dict(self.structure_settings)}
        return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def op(self, name: str) -> CellOp:
        """The op called ``name``.

        Raises:
            ArchError: naming the family's allowed ops, if ``name`` is not one of them.
        """
        op = self._by_name.get(name)  # type: ignore[attr-defined]
        if op is not None:
            return op
        raise ArchError(
            f"unknown op {name!r} for family {self.name!r}; allowed ops: {', '.join(self.op_names)}"
        )

    def op_index(self, name: str) -> int:
        """Digit code of op ``name`` (its position in :attr:`ops`)."""
        return self.op_names.index(self.op(name).name)


def import_family_plugins(imports: Any, folder: Path | str | None, where: str) -> tuple[str, ...]:
    """Import a family's ``imports`` through :mod:`nasrescale.plugins`: ``.py`` files relative to
    ``folder`` (the family file's; ``None``: the working folder), module names looked up in
    ``folder`` first, then on the Python path. Returns them as a family holds them: module names as
    given, ``.py`` files as absolute paths.

    Raises:
        FamilyError: naming ``where`` and the entry: not a list of names, a file or module that is
            missing, or one that raises when imported.
    """
    try:
        plugins = import_plugins(imports, None if folder is None else Path(folder), where)
    except ConfigError as err:
        raise FamilyError(str(err)) from None
    return tuple(plugin.name for plugin in plugins)


def _rebuild_family(fields: dict[str, Any]) -> CellFamily:
    """Unpickle a :class:`CellFamily` (see ``CellFamily.__reduce__``), importing its ``imports``
    first: a worker process gets the op kinds and model builders they register."""
    import_family_plugins(list(fields.get("imports", ())), fields.get("imports_folder"),
                          f"family {fields['name']!r}: imports")
    return CellFamily(**{**fields, "macro": MappingProxyType(fields["macro"]),
                         "structure": STRUCTURES.get(fields.get("structure", DEFAULT_STRUCTURE)),
                         "structure_settings": MappingProxyType(fields.get("structure_settings", {}))})
