"""Published DARTS-style genotypes, by name, as their papers and their authors' code print them.

Family ``darts`` (4 steps, DARTS's primitives): ``DARTS_V1``, ``DARTS_V2`` [Liu et al. 2019],
``PC_DARTS`` (CIFAR-10) and ``PC_DARTS_image`` (ImageNet) [Xu et al. 2020], ``PDARTS`` [Chen
et al. 2019], ``GDAS_V1`` [Dong & Yang 2019], ``DrNAS_cifar10`` and ``DrNAS_imagenet`` [Chen et
al. 2021]. Family ``darts5`` (5 steps, adding ``sep_conv_7x7`` and ``conv_7x1_1x7``): ``ENAS``,
``NASNet``, ``AmoebaNet`` (as DARTS's code lists them) and ``PNASNet`` [Liu et al. 2018, as
xautodl lists it]. Family ``darts_large`` (4 steps, xautodl's ``PRIMITIVES_large``: DARTS's ops
and ``conv_3x1_1x3``): ``SETN`` [Dong & Yang 2019]. Some nodes read one input twice (ENAS's normal
node 2 reads input 1 with ``sep_conv_3x3`` and with ``skip_connect``). Wherever the encoding
``darts`` reads a genotype, one of these names may stand for it, in any case and with or without
its separators (``darts_v2``, ``pc-darts``, ``P-DARTS``), as may the aliases the published code defines (:data:`ALIASES`:
``DARTS`` is ``DARTS_V2`` in DARTS's and xautodl's code, ``PCDARTS`` and ``PC_DARTS_cifar`` are
``PC_DARTS`` in PC-DARTS's).

>>> sorted(GENOTYPES)[:4]
['AmoebaNet', 'DARTS_V1', 'DARTS_V2', 'DrNAS_cifar10']
>>> genotype_steps("ENAS"), genotype_steps("DARTS_V2")
(5, 4)
>>> find_genotype("darts"), find_genotype("pc-darts"), find_genotype("Genotype(...)")
('DARTS_V2', 'PC_DARTS', None)
>>> closest_genotype("DARTS_V3"), closest_genotype("gdas"), closest_genotype("vgg16")
('DARTS_V2', 'GDAS_V1', None)
>>> genotype_family_of("SETN"), genotype_family_of("PNASNet"), genotype_family_of("GDAS_V1")
('darts_large', 'darts5', 'darts')
"""

from __future__ import annotations

import difflib
from types import MappingProxyType
from typing import Mapping

__all__ = ["GENOTYPES", "ALIASES", "genotype_steps", "genotype_family", "genotype_family_of", "find_genotype",
           "closest_genotype", "op_family"]


def _genotype(normal: str, normal_concat: str, reduce: str, reduce_concat: str) -> str:
    return (f"Genotype(normal=[{normal}], normal_concat={normal_concat}, reduce=[{reduce}], "
            f"reduce_concat={reduce_concat})")


#: name -> genotype string, as published (the module docstring names the papers and the code each is from)
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
    # from the authors' code: P-DARTS (chenxin061/pdarts), PC-DARTS's ImageNet cell (yuhuixu1993/PC-DARTS),
    # DrNAS (xiangning-chen/DrNAS, DARTS-space), GDAS, SETN and PNASNet (D-X-Y/AutoDL-Projects, xautodl)
    "PDARTS": _genotype(
        "('skip_connect', 0), ('dil_conv_3x3', 1), ('skip_connect', 0), ('sep_conv_3x3', 1), "
        "('sep_conv_3x3', 1), ('sep_conv_3x3', 3), ('sep_conv_3x3', 0), ('dil_conv_5x5', 4)", "[2, 3, 4, 5]",
        "('avg_pool_3x3', 0), ('sep_conv_5x5', 1), ('sep_conv_3x3', 0), ('dil_conv_5x5', 2), "
        "('max_pool_3x3', 0), ('dil_conv_3x3', 1), ('dil_conv_3x3', 1), ('dil_conv_5x5', 3)", "[2, 3, 4, 5]"),
    "PC_DARTS_image": _genotype(
        "('skip_connect', 1), ('sep_conv_3x3', 0), ('sep_conv_3x3', 0), ('skip_connect', 1), "
        "('sep_conv_3x3', 1), ('sep_conv_3x3', 3), ('sep_conv_3x3', 1), ('dil_conv_5x5', 4)", "[2, 3, 4, 5]",
        "('sep_conv_3x3', 0), ('skip_connect', 1), ('dil_conv_5x5', 2), ('max_pool_3x3', 1), "
        "('sep_conv_3x3', 2), ('sep_conv_3x3', 1), ('sep_conv_5x5', 0), ('sep_conv_3x3', 3)", "[2, 3, 4, 5]"),
    "DrNAS_cifar10": _genotype(
        "('sep_conv_3x3', 0), ('sep_conv_5x5', 1), ('sep_conv_3x3', 1), ('sep_conv_3x3', 2), "
        "('skip_connect', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 2), ('dil_conv_5x5', 3)", "[2, 3, 4, 5]",
        "('max_pool_3x3', 0), ('sep_conv_5x5', 1), ('dil_conv_5x5', 2), ('sep_conv_5x5', 1), "
        "('sep_conv_5x5', 1), ('dil_conv_5x5', 3), ('skip_connect', 4), ('sep_conv_5x5', 1)", "[2, 3, 4, 5]"),
    "DrNAS_imagenet": _genotype(
        "('sep_conv_3x3', 1), ('sep_conv_3x3', 0), ('sep_conv_3x3', 0), ('sep_conv_3x3', 1), "
        "('sep_conv_3x3', 0), ('dil_conv_3x3', 3), ('skip_connect', 0), ('sep_conv_3x3', 1)", "[2, 3, 4, 5]",
        "('max_pool_3x3', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0), ('skip_connect', 2), "
        "('sep_conv_3x3', 0), ('sep_conv_3x3', 2), ('sep_conv_3x3', 3), ('sep_conv_3x3', 1)", "[2, 3, 4, 5]"),
    "GDAS_V1": _genotype(
        "('skip_connect', 0), ('skip_connect', 1), ('skip_connect', 0), ('sep_conv_5x5', 2), "
        "('sep_conv_3x3', 3), ('skip_connect', 0), ('sep_conv_5x5', 4), ('sep_conv_3x3', 3)", "[2, 3, 4, 5]",
        "('sep_conv_5x5', 0), ('sep_conv_3x3', 1), ('sep_conv_5x5', 2), ('sep_conv_5x5', 1), "
        "('dil_conv_5x5', 2), ('sep_conv_3x3', 1), ('sep_conv_5x5', 0), ('sep_conv_5x5', 1)", "[2, 3, 4, 5]"),
    "SETN": _genotype(
        "('skip_connect', 0), ('sep_conv_5x5', 1), ('sep_conv_5x5', 0), ('sep_conv_3x3', 1), "
        "('sep_conv_5x5', 1), ('sep_conv_5x5', 3), ('max_pool_3x3', 1), ('conv_3x1_1x3', 4)", "[2, 3, 4, 5]",
        "('sep_conv_3x3', 0), ('sep_conv_5x5', 1), ('avg_pool_3x3', 0), ('sep_conv_5x5', 1), "
        "('avg_pool_3x3', 0), ('sep_conv_5x5', 1), ('avg_pool_3x3', 0), ('skip_connect', 1)", "[2, 3, 4, 5]"),
    "PNASNet": _genotype(
        "('sep_conv_5x5', 0), ('max_pool_3x3', 0), ('sep_conv_7x7', 1), ('max_pool_3x3', 1), "
        "('sep_conv_5x5', 1), ('sep_conv_3x3', 1), ('sep_conv_3x3', 4), ('max_pool_3x3', 1), "
        "('sep_conv_3x3', 0), ('skip_connect', 1)", "[2, 3, 4, 5, 6]",
        "('sep_conv_5x5', 0), ('max_pool_3x3', 0), ('sep_conv_7x7', 1), ('max_pool_3x3', 1), "
        "('sep_conv_5x5', 1), ('sep_conv_3x3', 1), ('sep_conv_3x3', 4), ('max_pool_3x3', 1), "
        "('sep_conv_3x3', 0), ('skip_connect', 1)", "[2, 3, 4, 5, 6]"),
})


def genotype_steps(name: str) -> int:
    """Intermediate nodes per cell of the named genotype."""
    return GENOTYPES[name].split("normal_concat")[0].count("(") // 2


def genotype_family(steps: int) -> str:
    """The shipped family whose cells have ``steps`` intermediate nodes (``darts`` or ``darts5``)."""
    return "darts" if steps == 4 else f"darts{steps}"


#: alias -> name, as the published code defines them (DARTS's and xautodl's ``DARTS = DARTS_V2``;
#: PC-DARTS's ``PCDARTS = PC_DARTS_cifar``, the name its code gives the CIFAR-10 cell)
ALIASES: Mapping[str, str] = MappingProxyType({"DARTS": "DARTS_V2", "PCDARTS": "PC_DARTS", "PC_DARTS_cifar": "PC_DARTS"})

#: ops beyond DARTS's primitives -> the shipped family that holds them
_OP_FAMILY = {"conv_3x1_1x3": "darts_large", "sep_conv_7x7": "darts5", "conv_7x1_1x7": "darts5"}


def _key(text: str) -> str:
    """``text`` as names are compared: any case, separators (``-``, ``_``, spaces) dropped."""
    return "".join(ch for ch in text.casefold() if ch not in "-_ ")


_BY_KEY = {_key(name): name for name in GENOTYPES} | {_key(alias): name for alias, name in ALIASES.items()}


def find_genotype(text: str) -> str | None:
    """The published genotype that ``text`` names (any case, with or without ``-``/``_``, or an alias), else None."""
    return _BY_KEY.get(_key(text))


def closest_genotype(text: str) -> str | None:
    """The published name (or alias) closest to ``text``, for a "did you mean" (difflib), else None."""
    key = _key(text)
    prefixed = sorted(k for k in _BY_KEY if k.startswith(key)) if len(key) >= 4 else []
    matches = prefixed or difflib.get_close_matches(key, list(_BY_KEY), n=1, cutoff=0.6)
    return _BY_KEY[matches[0]] if matches else None


def genotype_family_of(name: str) -> str:
    """The shipped family that builds the named genotype: its step count's, unless an op needs another."""
    text = GENOTYPES[name]
    return next((family for op, family in _OP_FAMILY.items() if f"'{op}'" in text and family == "darts_large"),
                genotype_family(genotype_steps(name)))


def op_family(op: str) -> str | None:
    """The shipped DARTS-style family that holds ``op``, where ``darts`` does not (else None)."""
    return _OP_FAMILY.get(op)
