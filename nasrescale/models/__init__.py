"""Model building: a cell graph becomes an ``nn.Module`` in its family's macro skeleton.

* :func:`build_model` -- the network of an architecture (NB201, MLP-DAG, CNN-DAG, DARTS, NAS-Bench-101);
* :class:`Cell` -- one cell, run by a static (optionally pruned) plan;
* :func:`register_builder` / :func:`build_op` -- edge modules by op kind;
* :func:`register_macro` -- network skeletons by ``[macro] kind``;
* :func:`count_params`, :func:`count_flops`, :func:`model_cost` -- NB201-convention costs;
* :mod:`~nasrescale.models.elr` -- scale-invariant layers and their effective learning rates.
"""

from .builders import build_op, builders, register_builder
from .cell import Cell, edge_key
from .network import CellNetwork, build_model, macro_kinds, macro_settings, register_macro
from .nb201 import NB201Network, ResNetBasicBlock  # registers macro "nb201"
from .dag_nets import CNNNetwork, MLPNetwork, stem_kernel  # registers macros "mlp", "cnn"
from . import cellspace_ops  # noqa: F401 - registers the DARTS and NB101 op builders
from .darts import DartsNetwork  # registers macro "darts"
from .nb101 import NB101Network  # registers macro "nb101"
from .cost import count_flops, count_params, count_run_params, model_cost

__all__ = [
    "build_op", "builders", "register_builder",
    "Cell", "edge_key",
    "CellNetwork", "build_model", "macro_kinds", "macro_settings", "register_macro",
    "NB201Network", "ResNetBasicBlock", "CNNNetwork", "MLPNetwork", "stem_kernel", "DartsNetwork", "NB101Network",
    "count_flops", "count_params", "count_run_params", "model_cost",
]
