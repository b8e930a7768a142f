"""Published genotypes by name: any case, with or without separators, the aliases their code defines, and a
closest-match suggestion in the refusal of a name that is not one."""

from __future__ import annotations

import pytest

from nasrescale.errors import ArchError
from nasrescale.space.encodings import parse_arch
from nasrescale.space.genotypes import ALIASES, GENOTYPES, find_genotype, genotype_family_of
from nasrescale.space.family_loader import get_family

from pipeline_helpers import cli  # noqa: F401  (used by name)


def edges(arch: str, family: str = "darts") -> list:
    return sorted(parse_arch(arch, get_family(family)).edges(data="op"))


@pytest.mark.parametrize("spelling,name", [("darts_v2", "DARTS_V2"), ("Darts-V1", "DARTS_V1"), ("pc-darts", "PC_DARTS"),
                                           ("gdas_v1", "GDAS_V1"), ("DRNAS_CIFAR10", "DrNAS_cifar10"),
                                           ("pnasnet", "PNASNet"), ("setn", "SETN"),
                                           ("P-DARTS", "PDARTS"), ("DARTSV2", "DARTS_V2")])
def test_names_are_read_in_any_case(spelling, name):
    assert find_genotype(spelling) == name
    family = genotype_family_of(name)
    assert edges(spelling, family) == edges(GENOTYPES[name], family)


def test_the_aliases_are_those_the_published_code_defines():
    # DARTS's cnn/genotypes.py and xautodl's: DARTS = DARTS_V2; PC-DARTS's: PCDARTS = PC_DARTS_cifar
    assert dict(ALIASES) == {"DARTS": "DARTS_V2", "PCDARTS": "PC_DARTS", "PC_DARTS_cifar": "PC_DARTS"}
    assert edges("DARTS") == edges("darts") == edges(GENOTYPES["DARTS_V2"])
    assert edges("PCDARTS") == edges(GENOTYPES["PC_DARTS"])


@pytest.mark.parametrize("typed,suggested", [("DARTS_V3", "DARTS_V2"), ("gdas", "GDAS_V1"), ("P-DART", "PDARTS"),
                                             ("drnas", "DrNAS_cifar10")])
def test_a_near_miss_gets_the_closest_name(typed, suggested):
    with pytest.raises(ArchError, match=f"did you mean {suggested}\\?"):
        parse_arch(typed, get_family("darts"))


def test_the_cli_refusal_suggests_the_closest_name_in_one_line(capsys):
    code, out, err = cli(capsys, "analyze", "--family", "darts", "DARTS_V3")
    assert (code, out, err.count("\n")) == (2, "", 1)
    assert "'DARTS_V3' is not a published genotype's name; did you mean DARTS_V2?" in err


def test_a_name_far_from_any_gets_the_written_form():
    with pytest.raises(ArchError, match="is not a DARTS genotype; write Genotype"):
        parse_arch("vgg16", get_family("darts"))


def test_a_genotype_with_another_familys_op_names_that_family():
    with pytest.raises(ArchError, match="conv_3x1_1x3 is an op of family darts_large: use --family darts_large"):
        parse_arch("SETN", get_family("darts"))
