"""Reading a cell family file (``cells/*.toml``) into a :class:`~nasrescale.space.families.CellFamily`.

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
checks that need the parser (the base architecture) live in :mod:`nasrescale.space.family_loader`.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from ..config import parse_toml, read_config_text
from ..errors import FamilyError
from .edge_factors import KERNEL_RULES
from .families import ENCODINGS, CellFamily, import_family_plugins
from .ops import CellOp, get_op_kind
from .structure import DEFAULT_STRUCTURE, STRUCTURES, CellStructure

__all__ = ["parse_family", "read_family_file", "MAX_CELL_SIZE"]

_FAMILY_KEYS = {
    "name": "required: the family's name (letters, digits, _ and -)",
    "description": "one line shown by `nasrescale cells`",
    "nodes": "number of cell nodes, input and output included (omit: any count)",
    "encoding": f"default string encoding, one of {', '.join(ENCODINGS)}",
    "depth_offset": "required: integer added to every path's ReLU count",
    "base": "required: the base architecture of the LR rule",
    "kernel_rule": f"one of {', '.join(KERNEL_RULES)}",
    "kernel_base": "q_base of the kernel factor (default 3)",
    "imports": "modules or .py files (relative to the file's folder) to import first (they register new op kinds)",
}
_OP_KEYS = ("name", "kind", "kernel")
_TOP_KEYS = ("family", "ops", "macro", "structure")


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
    folder = None if path is None else str(Path(path).parent.resolve())
    imports = import_family_plugins(_typed(fam, "imports", list, source, "family.", default=[]), folder,
                                    _where(source, "family.imports"))
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
        imports_folder=folder if imports else None,
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


def read_family_file(path: str | Path) -> CellFamily:
    """Read and parse one family file.

    Raises:
        FamilyError: if the file is missing, unreadable or malformed.
    """
    path = Path(path)
    return parse_family(read_config_text(path, "cell family", FamilyError), source=str(path), path=path)
