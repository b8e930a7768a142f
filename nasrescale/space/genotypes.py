"""Published DARTS-style genotypes, by name, as their papers and the DARTS code print them.

``DARTS_V1``, ``DARTS_V2`` and ``PC_DARTS`` have 4 steps (family ``darts``); ``ENAS``,
``NASNet`` and ``AmoebaNet`` have 5 (family ``darts5``, whose ops add ``sep_conv_7x7`` and
``conv_7x1_1x7``). The last three take one input twice in some nodes (ENAS's normal node 2
reads input 1 with ``sep_conv_3x3`` and with ``skip_connect``). Wherever the encoding ``darts``
reads a genotype, one of these names may stand for it.

>>> sorted(GENOTYPES)
['AmoebaNet', 'DARTS_V1', 'DARTS_V2', 'ENAS', 'NASNet', 'PC_DARTS']
>>> genotype_steps("ENAS"), genotype_steps("DARTS_V2")
(5, 4)
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

__all__ = ["GENOTYPES", "genotype_steps", "genotype_family"]


def _genotype(normal: str, normal_concat: str, reduce: str, reduce_concat: str) -> str:
    return (f"Genotype(normal=[{normal}], normal_concat={normal_concat}, reduce=[{reduce}], "
            f"reduce_concat={reduce_concat})")


#: name -> genotype string, as published (Liu et al. 2019; Xu et al. 2020; Pham et al. 2018;
#: Zoph et al. 2018; Real et al. 2019, as the DARTS code lists the last three)
GENOTYPES: Mapping[str, str] = MappingProxyType({
    "DARTS_V1": _genotype(
        "('sep_conv_3x3', 1), ('sep_conv_3x3', 0), ('skip_connect', 0), ('sep_conv_3x3', 1), "
        "('skip_connect', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0), ('skip_connect', 2)", "[2, 3, 4, 5]",
        "('max_pool_3x3', 0), ('max_pool_3x3', 1), ('skip_connect', 2), ('max_pool_3x3', 0), "
        "('max_pool_3x3', 0), ('skip_connect', 2), ('skip_connect', 2), ('avg_pool_3x3', 0)", "[2, 3, 4, 5]"),
    "DARTS_V2": _genotype(
        "('sep_conv_3x3', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0), ('sep_conv_3x3', 1), "
        "('sep_conv_3x3', 1), ('skip_connect', 0), ('skip_connect', 0), ('dil_conv_3x3', 2)", "[2, 3, 4, 5]",
        "('max_pool_3x3', 0), ('max_pool_3x3', 1), ('skip_connect', 2), ('max_pool_3x3', 1), "
        "('max_pool_3x3', 0), ('skip_connect', 2), ('skip_connect', 2), ('max_pool_3x3', 1)", "[2, 3, 4, 5]"),
    "PC_DARTS": _genotype(
        "('sep_conv_3x3', 1), ('skip_connect', 0), ('sep_conv_3x3', 0), ('dil_conv_3x3', 1), "
        "('sep_conv_5x5', 0), ('sep_conv_3x3', 1), ('avg_pool_3x3', 0), ('dil_conv_3x3', 1)", "[2, 3, 4, 5]",
        "('sep_conv_5x5', 1), ('max_pool_3x3', 0), ('sep_conv_5x5', 1), ('sep_conv_5x5', 2), "
        "('sep_conv_3x3', 0), ('sep_conv_3x3', 3), ('sep_conv_3x3', 1), ('sep_conv_3x3', 2)", "[2, 3, 4, 5]"),
    "ENAS": _genotype(
        "('sep_conv_3x3', 1), ('skip_connect', 1), ('sep_conv_5x5', 1), ('skip_connect', 0), "
        "('avg_pool_3x3', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0), ('avg_pool_3x3', 1), "
        "('sep_conv_5x5', 1), ('avg_pool_3x3', 0)", "[2, 3, 4, 5, 6]",
        "('sep_conv_5x5', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 1), ('avg_pool_3x3', 1), "
        "('sep_conv_3x3', 1), ('avg_pool_3x3', 1), ('avg_pool_3x3', 1), ('sep_conv_5x5', 4), "
        "('sep_conv_3x3', 5), ('sep_conv_5x5', 0)", "[2, 3, 4, 5, 6]"),
    "NASNet": _genotype(
        "('sep_conv_5x5', 1), ('sep_conv_3x3', 0), ('sep_conv_5x5', 0), ('sep_conv_3x3', 0), "
        "('avg_pool_3x3', 1), ('skip_connect', 0), ('avg_pool_3x3', 0), ('avg_pool_3x3', 0), "
        "('sep_conv_3x3', 1), ('skip_connect', 1)", "[2, 3, 4, 5, 6]",
        "('sep_conv_5x5', 1), ('sep_conv_7x7', 0), ('max_pool_3x3', 1), ('sep_conv_7x7', 0), "
        "('avg_pool_3x3', 1), ('sep_conv_5x5', 0), ('skip_connect', 3), ('avg_pool_3x3', 2), "
        "('sep_conv_3x3', 2), ('max_pool_3x3', 1)", "[4, 5, 6]"),
    "AmoebaNet": _genotype(
        "('avg_pool_3x3', 0), ('max_pool_3x3', 1), ('sep_conv_3x3', 0), ('sep_conv_5x5', 2), "
        "('sep_conv_3x3', 0), ('avg_pool_3x3', 3), ('sep_conv_3x3', 1), ('skip_connect', 1), "
        "('skip_connect', 0), ('avg_pool_3x3', 1)", "[4, 5, 6]",
        "('avg_pool_3x3', 0), ('sep_conv_3x3', 1), ('max_pool_3x3', 0), ('sep_conv_7x7', 2), "
        "('sep_conv_7x7', 0), ('avg_pool_3x3', 1), ('max_pool_3x3', 0), ('max_pool_3x3', 1), "
        "('conv_7x1_1x7', 0), ('sep_conv_3x3', 5)", "[3, 4, 6]"),
})


def genotype_steps(name: str) -> int:
    """Intermediate nodes per cell of the named genotype."""
    return GENOTYPES[name].split("normal_concat")[0].count("(") // 2


def genotype_family(steps: int) -> str:
    """The shipped family whose cells have ``steps`` intermediate nodes (``darts`` or ``darts5``)."""
    return "darts" if steps == 4 else f"darts{steps}"
