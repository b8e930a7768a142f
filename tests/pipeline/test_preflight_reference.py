"""A pipeline whose reference has none of its architectures is refused before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from nasrescale.cli.main import main
from nasrescale.errors import ConfigError
from nasrescale.pipeline.preflight import check_reference
from nasrescale.pipeline.spec import load_pipeline

from pipeline_helpers import tiny_pipeline

ROOT = Path(__file__).resolve().parents[2]


def _five_node_pipeline(tmp_path: Path, reference: str | None) -> Path:
    family = (ROOT / "cells" / "nb201.toml").read_text()
    family = family.replace('name = "nb201"', 'name = "nb201_five"').replace("nodes = 4", "nodes = 5")
    family = family.replace('base = "|skip_connect~0|+|none~0|skip_connect~1|+|none~0|none~1|skip_connect~2|"',
                            'base = "4_04_004_0004"')
    (tmp_path / "five.toml").write_text(family)
    text = tiny_pipeline("five", archs=["3_33_333_3333", "1_31_131_1311"])
    text = text.replace('name = "five"', 'name = "five"\nfamily_file = "five.toml"'
                        + (f'\nreference = "{reference}"' if reference else ""))
    path = tmp_path / "five_pipeline.toml"
    path.write_text(text)
    return path


def test_a_custom_family_against_the_default_benchmark_is_refused_before_anything_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = _five_node_pipeline(tmp_path, "nb201:cifar10")
    assert main(["run", str(path), "--results", str(tmp_path / "results"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "pipeline.reference = 'nb201:cifar10' has an accuracy for none of the pipeline's 2 architectures" in err
    assert "(family 'nb201_five')" in err
    assert 'set pipeline.reference = "none"' in err
    assert not (tmp_path / "results").exists()  # nothing stored, not even the run folder


def test_reference_none_or_a_matching_reference_passes(tmp_path):
    pipeline = load_pipeline(_five_node_pipeline(tmp_path, "none"))
    check_reference(pipeline, pipeline.arch_list())
    nb201 = tmp_path / "nb201.toml"
    nb201.write_text(tiny_pipeline("plain"))  # no reference: the NB201 column of its dataset
    plain = load_pipeline(nb201)
    check_reference(plain, plain.arch_list())
    bad = tmp_path / "bad.toml"
    bad.write_text(tiny_pipeline("bad").replace('name = "bad"', 'name = "bad"\nreference = "missing.csv"'))
    with pytest.raises(ConfigError, match="pipeline.reference = 'missing.csv': .*reference = \"none\""):
        check_reference(load_pipeline(bad), load_pipeline(bad).arch_list())
