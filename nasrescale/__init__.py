"""nasrescale: architecture-aware initialization and learning rates for NAS benchmarks.

The public API, re-exported from the modules that define it:

* cell families: :func:`get_family`, :func:`load_families`, :class:`CellFamily`
* the canonical graph: :func:`parse_arch`, :func:`format_arch`, :func:`make_graph`
* topology analysis: :mod:`nasrescale.space.topology`, :mod:`nasrescale.space.edge_factors` and
  :func:`analyze`
"""

__version__ = "0.1.0"

from .errors import ArchError, ConfigError, DataError, FamilyError, NasRescaleError
from .space.analysis import ArchAnalysis, analyze, enumerate_space
from .space.encodings import format_arch, make_graph, parse_arch
from .space.families import CellFamily
from .space.ops import CellOp, OpKind, register_op_kind
from .space.family_loader import get_family, load_families
from .space.edge_factors import edge_kernel_factors, init_divisors, kernel_factor
from .space.topology import (
    depth_histogram,
    effective_graph,
    effective_in_degrees,
    enumerate_paths,
    is_degenerate,
    lr_scale,
    path_depths,
    path_moments,
    sum_depth_cubed,
)

__all__ = [
    "__version__",
    "ArchAnalysis", "analyze", "enumerate_space",
    "format_arch", "make_graph", "parse_arch",
    "ArchError", "ConfigError", "DataError", "FamilyError", "NasRescaleError",
    "CellFamily", "CellOp", "OpKind", "register_op_kind",
    "get_family", "load_families",
    "depth_histogram", "edge_kernel_factors", "effective_graph", "effective_in_degrees",
    "enumerate_paths", "init_divisors", "is_degenerate", "kernel_factor", "lr_scale",
    "path_depths", "path_moments", "sum_depth_cubed",
]
