"""``nasrescale cells`` and ``nasrescale analyze``."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from tqdm import tqdm

from ..errors import NasRescaleError
from ..fileio import atomic_writer
from ..space.analysis import ArchAnalysis, analyze_graph, enumerate_space, space_size
from ..space.encodings import parse_arch
from ..space.families import CellFamily
from ..space.ops import op_kinds
from ..space.family_loader import load_families
from ..space.topology import op_paths
from .shared_options import (add_family_file_option, add_family_options, family_from_args, parse_archs, read_archs,
                             retire_cells_path)
from .path_args import output_file

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``cells`` and ``analyze`` commands."""
    p = sub.add_parser("cells", help="list cell families, their ops and properties",
                       description="List the cell families on the search path with their ops and properties.")
    add_family_file_option(p)
    retire_cells_path(p)
    p.add_argument("--json", action="store_true", help="one JSON object per family")
    p.set_defaults(func=run_cells)

    p = sub.add_parser(
        "analyze", help="path depths, LR scale and in-degrees of architectures",
        description="Topology analysis (definitions: docs/design.md §2): effective graph, paths, path depths, "
                    "sum of cubed depths (by DP), LR scale against the family's base, in-degrees.",
    )
    p.add_argument("archs", nargs="*", metavar="ARCH",
                   help="architecture in any of the family's encodings (NB201-style families: NB201 string, digit "
                        "string, JSON edge list; darts, darts5, darts_large: a genotype or a published one's name, "
                        "any case; nb101: matrix-and-ops JSON); - reads stdin")
    add_family_options(p)
    retire_cells_path(p)
    p.add_argument("--json", action="store_true", help="one JSON object per line per architecture")
    p.add_argument("--paths", action="store_true",
                   help="also list every path (with --json: a \"paths\" list of {\"nodes\", \"ops\"})")
    p.add_argument("--all", action="store_true", help="analyze every cell of the family (enumerable families)")
    p.add_argument("--out", metavar="FILE.csv", type=output_file, help="with --all: CSV file to write (default: stdout)")
    p.set_defaults(func=run_analyze)


def run_cells(args: argparse.Namespace) -> int:
    """List families, then (as text) the op kinds a family file's ops may name."""
    for family in load_families(args.family_files).values():
        if args.json:
            print(json.dumps(_family_json(family)))
        else:
            print(_family_text(family))
    if not args.json:
        print(_op_kinds_text())
    return 0


def _op_kinds_text() -> str:
    lines = ["op kinds (the `kind` of an [[ops]] table; a new kind: docs/cells.md):",
             f"  {'kind':<16} {'zero':<5} {'relu_depth':>10} {'kernel':<7} {'parametric':<10}  description"]
    for kind in op_kinds().values():
        lines.append(f"  {kind.name:<16} {str(kind.zero).lower():<5} {kind.relu_depth:>10} "
                     f"{'needed' if kind.needs_kernel else '-':<7} {str(kind.parametric).lower():<10}  {kind.description}")
    return "\n".join(lines) + "\n"


def _family_json(family: CellFamily) -> dict:
    return {
        "name": family.name,
        "description": family.description,
        "source": str(family.source) if family.source else None,
        "nodes": family.nodes,
        "encoding": family.encoding,
        "depth_offset": family.depth_offset,
        "base": family.base,
        "kernel_rule": family.kernel_rule,
        "kernel_base": family.kernel_base,
        "macro": dict(family.macro),
        "structure": {"kind": family.structure.name, "inputs": family.structure.inputs,
                      "output": family.structure.output, "ops_on": family.structure.ops_on,
                      "cell_types": list(family.structure.cell_types), **dict(family.structure_settings)},
        "ops": [
            {"name": op.name, "kind": op.kind.name, "zero": op.zero, "relu_depth": op.relu_depth,
             "kernel": op.kernel, "parametric": op.parametric}
            for op in family.ops
        ],
    }


def _structure_text(family: CellFamily) -> str:
    s = family.structure
    settings = "".join(f", {k} {v}" for k, v in family.structure_settings.items())
    return (f"{s.name} ({s.inputs} input{'s' if s.inputs > 1 else ''}, output {s.output}, ops on {s.ops_on}, "
            f"cells {'/'.join(s.cell_types)}{settings})")


def _family_text(family: CellFamily) -> str:
    info = _family_json(family)
    size = f", {space_size(family):,} cells" if family.nodes and family.zero_op else ""
    lines = [
        f"{family.name}: {family.description}",
        f"  file {info['source']}",
        f"  nodes {family.nodes or 'any'}{size}; encoding {family.encoding}; depth offset {family.depth_offset}; "
        f"kernel rule {family.kernel_rule} (q_base {family.kernel_base})",
        f"  base {family.base}",
        f"  structure {_structure_text(family)}",
        f"  macro {json.dumps(info['macro'])}",
        f"  {'code':>4}  {'op':<16} {'kind':<14} {'zero':<5} {'relu_depth':>10} {'kernel':>6}  parametric",
    ]
    for i, op in enumerate(info["ops"]):
        lines.append(
            f"  {i:>4}  {op['name']:<16} {op['kind']:<14} {str(op['zero']).lower():<5} "
            f"{op['relu_depth']:>10} {op['kernel'] or '-':>6}  {str(op['parametric']).lower()}"
        )
    return "\n".join(lines) + "\n"


def run_analyze(args: argparse.Namespace) -> int:
    """Analyze the given architectures, or the whole space with ``--all``."""
    family = family_from_args(args)
    if args.all:
        if args.archs:
            raise NasRescaleError("give either ARCH arguments or --all, not both")
        return _analyze_all(family, args.out)
    if args.out:
        raise NasRescaleError("--out goes with --all; for single architectures use --json and redirect")
    archs = read_archs(args.archs)
    if not archs:
        raise NasRescaleError("no architecture given; pass ARCH arguments, - for stdin, or --all")
    graphs = parse_archs(archs, family, args)  # all parsed before anything is printed
    for graph in graphs:
        record = analyze_graph(graph, family)
        if args.json:
            doc = record.to_json()
            if args.paths:
                doc["paths"] = [{"nodes": [start, *(v for _, v in hops)], "ops": [op for op, _ in hops]}
                                for start, hops in op_paths(graph, family)]
            print(json.dumps(doc))
        else:
            print(_record_text(record, family, args.paths))
    return 0


def _record_text(rec: ArchAnalysis, family: CellFamily, with_paths: bool) -> str:
    depths = "(too many to list)" if rec.path_depths is None else " ".join(map(str, rec.path_depths)) or "-"
    scale = "n/a (degenerate: no input->output path)" if rec.lr_scale is None else f"{rec.lr_scale:.6g}"
    lines = [
        rec.arch,
        f"  paths {rec.num_paths:,}   depths {depths}",
        f"  sum L^3 {rec.sum_depth_cubed:,}   lr scale {scale}",
        "  effective in-degree " + " ".join(f"{v}:{d}" for v, d in rec.in_degree.items()),
    ]
    if with_paths:
        graph = parse_arch(rec.arch, family)
        for start, hops in op_paths(graph, family):
            lines.append(f"    {start}" + "".join(f" -{op}-> {v}" for op, v in hops))
    return "\n".join(lines)


def _analyze_all(family: CellFamily, out: str | None) -> int:
    total = space_size(family)
    records = (analyze_graph(g, family) for g in enumerate_space(family))
    progress = tqdm(records, total=total, desc=f"analyze {family.name}", unit="cell", disable=None, file=sys.stderr)
    if out is None:
        _write_csv(progress, sys.stdout)
        return 0
    with atomic_writer(Path(out), newline="") as f:
        _write_csv(progress, f)
    print(f"wrote {total:,} cells to {out}", file=sys.stderr)
    return 0


def _write_csv(records, stream) -> None:  # noqa: ANN001 - iterable of ArchAnalysis, text stream
    writer = None
    for rec in records:
        row = rec.to_row()
        if writer is None:
            writer = csv.DictWriter(stream, fieldnames=list(row))
            writer.writeheader()
        writer.writerow(row)
