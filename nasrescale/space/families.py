"""Cell families: a search space described by a TOML file in ``cells/``.

A family file names the ops (each bound to a registered op kind, see :mod:`nasrescale.space.ops`),
the node count, the default string encoding, the path-depth offset, the base architecture
of the LR rule, the kernel rule, and the macro skeleton the model builder wraps the cell in::

    [family]
    name = "nb201"
    nodes = 4                 # node 0 = cell input, node nodes-1 = cell output
    encoding = "nb201"        # default string form: nb201 | digits | edges
    depth_offset = 1          # L_p = depth_offset + sum of relu_depth along p
    base = "|skip_connect~0|+|none~0|skip_connect~1|+|none~0|none~1|skip_connect~2|"
    kernel_rule = "none"      # none | network (paper eq. 9) | per_layer (our extension)
    kernel_base = 3           # q_base of the kernel factor q_base / q

    [[ops]]                   # order matters: it is the digit code of the paper's strings
    name = "none"
    kind = "zero"

    [macro]
    kind = "nb201"            # the network skeleton; its keys are checked by the builder

:func:`parse_family` turns the TOML text into a :class:`CellFamily`; discovery and the
checks that need the parser (the base architecture) live in :mod:`nasrescale.space.registry`.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from ..config import parse_toml
from ..errors import ArchError, FamilyError
from .ops import CellOp, get_op_kind
from .structure import DEFAULT_STRUCTURE, STRUCTURES, CellStructure

__all__ = ["CellFamily", "parse_family", "read_family_file", "ENCODINGS", "KERNEL_RULES", "MAX_CELL_SIZE"]

#: every encoding a family may name, over all structures (each structure allows some of them)
ENCODINGS = tuple(dict.fromkeys(e for s in STRUCTURES.values() for e in s.encodings))
KERNEL_RULES = ("none", "network", "per_layer")

_FAMILY_KEYS = {
    "name": "required: the family's name (letters, digits, _ and -)",
    "description": "one line shown by `nasrescale cells`",
    "nodes": "number of cell nodes, input and output included (omit: any count)",
    "encoding": f"default string encoding, one of {', '.join(ENCODINGS)}",
    "depth_offset": "required: integer added to every path's ReLU count",
    "base": "required: the base architecture of the LR rule",
    "kernel_rule": f"one of {', '.join(KERNEL_RULES)}",
    "kernel_base": "q_base of the kernel factor (default 3)",
    "imports": "modules to import first (they register new op kinds)",
}
_OP_KEYS = ("name", "kind", "kernel")
_TOP_KEYS = ("family", "ops", "macro", "structure")


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
        imports: the modules the file names under ``imports`` (imported when it was read, and
            again wherever the family is unpickled: an executor's worker process).
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

        >>> from nasrescale.space.registry import get_family
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


def _where(source: str, key: str) -> str:
    return f"{source}: {key}"


def _check_keys(table: Mapping[str, Any], allowed: Any, source: str, prefix: str) -> None:
    where = f"[{prefix.rstrip('.')}]" if prefix else "at the top level"
    for key in table:
        if key not in allowed:
            raise FamilyError(f"{_where(source, prefix + key)}: unknown key; allowed keys {where}: {', '.join(allowed)}")


#: the largest node count or structure setting a family file may give: a cell beyond it has more
#: architectures than any count or table here can hold (an int of 2**31 nodes would exhaust memory)
MAX_CELL_SIZE = 64


def _typed(table: Mapping[str, Any], key: str, typ: type, source: str, prefix: str,
           default: Any = ..., positive: bool = False, maximum: int | None = None) -> Any:
    if key not in table:
        if default is ...:
            raise FamilyError(f"{_where(source, prefix + key)}: missing required key")
        return default
    value = table[key]
    if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
        raise FamilyError(
            f"{_where(source, prefix + key)}: expected {typ.__name__}, got {value!r}"
        )
    if positive and value <= 0:
        raise FamilyError(f"{_where(source, prefix + key)}: must be positive, got {value!r}")
    if maximum is not None and value > maximum:
        raise FamilyError(f"{_where(source, prefix + key)}: {value!r} is more than {maximum}, the largest cell "
                          f"size a family may declare; give a value from 1 to {maximum}")
    return value


def _parse_ops(raw: Any, source: str) -> tuple[CellOp, ...]:
    if not isinstance(raw, list) or not raw:
        raise FamilyError(f"{source}: ops: expected one or more [[ops]] tables")
    ops: list[CellOp] = []
    for i, table in enumerate(raw):
        prefix = f"ops[{i}]."
        if not isinstance(table, dict):
            raise FamilyError(f"{_where(source, prefix[:-1])}: expected a table")
        _check_keys(table, _OP_KEYS, source, prefix)
        name = _typed(table, "name", str, source, prefix)
        if not name or any(c in name for c in "|~+[]{},\"' \t"):
            raise FamilyError(
                f"{_where(source, prefix + 'name')}: {name!r} is empty or has a character "
                "reserved by the encodings (| ~ + brackets quotes commas spaces)"
            )
        if name in (op.name for op in ops):
            raise FamilyError(f"{_where(source, prefix + 'name')}: op {name!r} defined twice")
        kind_name = _typed(table, "kind", str, source, prefix)
        kind = get_op_kind(kind_name, _where(source, prefix + "kind"))
        kernel = _typed(table, "kernel", int, source, prefix, default=None, positive=True)
        if kind.needs_kernel and kernel is None:
            raise FamilyError(f"{_where(source, prefix + 'kernel')}: op kind {kind.name!r} needs a kernel size")
        if not kind.needs_kernel and kernel is not None:
            raise FamilyError(f"{_where(source, prefix + 'kernel')}: op kind {kind.name!r} takes no kernel")
        ops.append(CellOp(name, kind, kernel))
    return tuple(ops)


def parse_family(text: str, source: str = "<string>", path: Path | None = None) -> CellFamily:
    """Parse a family from TOML text. Checks keys and types, not the base architecture.

    Raises:
        FamilyError: naming the file and key path of the first problem.
    """
    doc = parse_toml(text, source, FamilyError)
    _check_keys(doc, _TOP_KEYS, source, "")
    fam = doc.get("family")
    if not isinstance(fam, dict):
        raise FamilyError(f"{source}: missing [family] table")
    _check_keys(fam, _FAMILY_KEYS, source, "family.")
    imports = tuple(str(m) for m in _typed(fam, "imports", list, source, "family.", default=[]))
    _import_all(imports, _where(source, "family.imports"))
    name = _typed(fam, "name", str, source, "family.")
    if not name or not all(c.isalnum() or c in "_-" for c in name):
        raise FamilyError(f"{_where(source, 'family.name')}: {name!r} must be letters, digits, _ or -")
    structure, settings = _parse_structure(doc.get("structure", {}), source)
    default_encoding = "edges" if structure.name == DEFAULT_STRUCTURE else structure.encodings[0]
    encoding = _typed(fam, "encoding", str, source, "family.", default=default_encoding)
    if encoding not in structure.encodings:
        raise FamilyError(f"{_where(source, 'family.encoding')}: {encoding!r} is not an encoding of structure "
                          f"{structure.name!r}; allowed: {', '.join(structure.encodings)}")
    kernel_rule = _typed(fam, "kernel_rule", str, source, "family.", default="none")
    if kernel_rule not in KERNEL_RULES:
        raise FamilyError(f"{_where(source, 'family.kernel_rule')}: {kernel_rule!r} is not one of {', '.join(KERNEL_RULES)}")
    nodes = _typed(fam, "nodes", int, source, "family.", default=None, maximum=MAX_CELL_SIZE)
    if nodes is not None and nodes < 2:
        raise FamilyError(f"{_where(source, 'family.nodes')}: a cell needs at least 2 nodes, got {nodes}")
    depth_offset = _typed(fam, "depth_offset", int, source, "family.")
    if depth_offset < 0:
        raise FamilyError(f"{_where(source, 'family.depth_offset')}: must be >= 0, got {depth_offset}")
    macro = doc.get("macro", {})
    if not isinstance(macro, dict):
        raise FamilyError(f"{source}: macro: expected a [macro] table")
    ops = _parse_ops(doc.get("ops"), source)
    _check_reserved(structure, ops, source)
    return CellFamily(
        name=name,
        ops=ops,
        depth_offset=depth_offset,
        base=_typed(fam, "base", str, source, "family."),
        nodes=nodes,
        encoding=encoding,
        kernel_rule=kernel_rule,
        kernel_base=_typed(fam, "kernel_base", int, source, "family.", default=3, positive=True),
        macro=MappingProxyType(dict(macro)),
        description=_typed(fam, "description", str, source, "family.", default=""),
        source=path,
        imports=imports,
        structure=structure,
        structure_settings=MappingProxyType(settings),
    )


def _parse_structure(table: Any, source: str) -> tuple[CellStructure, dict[str, int]]:
    """The ``[structure]`` table: its kind's :class:`CellStructure` and its settings (defaults filled)."""
    if not isinstance(table, dict):
        raise FamilyError(f"{source}: structure: expected a [structure] table")
    kind = _typed(table, "kind", str, source, "structure.", default=DEFAULT_STRUCTURE)
    structure = STRUCTURES.get(kind, _where(source, "structure.kind"))
    _check_keys(table, ("kind", *structure.settings), source, "structure.")
    settings = {key: _typed(table, key, int, source, "structure.", default=default, positive=True,
                            maximum=MAX_CELL_SIZE)
                for key, (_, default) in structure.settings.items()}
    return structure, settings


def _check_reserved(structure: CellStructure, ops: tuple[CellOp, ...], source: str) -> None:
    """A structure's own ops (``reserved_ops``) must be defined, with the kinds it needs."""
    by_name = {op.name: op for op in ops}
    for name, kind in structure.reserved_ops.items():
        op = by_name.get(name)
        if op is None or op.kind.name != kind:
            got = "missing" if op is None else f"of kind {op.kind.name!r}"
            raise FamilyError(f"{source}: ops: structure {structure.name!r} needs an op {name!r} of kind {kind!r} "
                              f"(the edges it places itself); it is {got}: add [[ops]] name = \"{name}\" kind = \"{kind}\"")


def _import_all(modules: tuple[str, ...], where: str) -> None:
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise FamilyError(f"{where}: cannot import {module!r}: {err}; the module must be on the Python path "
                              "(PYTHONPATH) of every process that reads the family") from None


def read_family_file(path: str | Path) -> CellFamily:
    """Read and parse one family file.

    Raises:
        FamilyError: if the file is missing, unreadable or malformed.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise FamilyError(f"cannot read cell family file {str(path)!r}: {err.strerror or err}") from None
    return parse_family(text, source=str(path), path=path)


def _rebuild_family(fields: dict[str, Any]) -> CellFamily:
    """Unpickle a :class:`CellFamily` (see ``CellFamily.__reduce__``), importing its ``imports``
    first: a worker process gets the op kinds and model builders they register."""
    _import_all(tuple(fields.get("imports", ())), f"family {fields['name']!r}: imports")
    return CellFamily(**{**fields, "macro": MappingProxyType(fields["macro"]),
                         "structure": STRUCTURES.get(fields.get("structure", DEFAULT_STRUCTURE)),
                         "structure_settings": MappingProxyType(fields.get("structure_settings", {}))})
