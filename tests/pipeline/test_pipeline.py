"""Pipeline files, architecture selection, and the run/status/export commands' input checks."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from nasrescale.errors import ConfigError
from nasrescale.pipeline.spec import load_pipeline, pipeline_names
from nasrescale.space.selection import select_archs
from nasrescale.space.topology import is_degenerate
from nasrescale.space.encodings import parse_arch

from pipeline_helpers import DEGENERATE, TINY


def write(tmp_path: Path, text: str = TINY, name: str = "tiny.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_shipped_pipelines_load_and_quickstart_has_a_degenerate_cell(nb201):
    assert {"quickstart", "nb201_cifar10", "nb201_cifar100", "nb201_imagenet16", "nb201_cifar10_12ep"} <= set(pipeline_names())
    q = load_pipeline("quickstart")
    archs = q.arch_list()
    assert len(archs) == 12
    assert any(is_degenerate(parse_arch(a, nb201), nb201) for a in archs)
    assert [e.label for e in q.protocols] == ["default", "rescaled"]
    assert len(q.pipeline.seeds) == 2
    for name in ("nb201_cifar10", "nb201_cifar100", "nb201_imagenet16"):
        p = load_pipeline(name)
        assert p.budget.epochs == 200
        assert p.budget.width == 16
        assert p.budget.cells == 5
        assert len(p.arch_list()) >= 100
        assert len(p.pipeline.seeds) == 3
        assert p.budget.train_subset is None


def test_overrides_and_protocol_resolution(tmp_path):
    p = load_pipeline(write(tmp_path), ["budget.epochs=3", "protocols.rescaled.base_lr=0.7", "executor.kind=ray"])
    rescaled = {e.label: e.protocol for e in p.protocols}["rescaled"]
    assert rescaled.lr == 0.7
    assert rescaled.epochs == 3
    assert rescaled.init == "in_degree"
    assert p.executor.kind == "ray"
    assert len(p.jobs()) == 2 * 2 * 1
    assert p.identity(p.arch_list()) == load_pipeline(write(tmp_path), ["budget.epochs=3", "protocols.rescaled.base_lr=0.7"]).identity(p.arch_list())


@pytest.mark.parametrize(("overrides", "fragment"), [
    (["budget.epochz=3"], "budget.epochz: unknown key; allowed keys: epochs"),
    (["executor.kind=slurm"], "executor.kind: expected one of 'local', 'ray'"),
    (["data.test_split=half"], "data.test_split: expected one of 'full', 'x-test', 'x-valid'"),
    (["archs.select=random"], "archs.select: expected one of 'uniform'"),
    (["protocols.rescaled.momentun=0.5"], "protocols.rescaled.momentun: unknown key"),
    (["protocols.default.protocol=fancy"], "protocols.default.protocol: unknown protocol 'fancy'"),
    (["pipeline.seeds=[0, 0]"], "pipeline.seeds: expected distinct integers"),
    (["budget.width=0"], "budget.width: must be a positive integer"),
    (["archs.names=['3_99_333']"], "archs.names[0]"),
    (["runner.x=1"], "unknown table 'runner'"),
])
def test_bad_values_name_the_key_path(tmp_path, overrides, fragment):
    with pytest.raises(ConfigError) as err:
        p = load_pipeline(write(tmp_path), overrides)
        p.jobs()
    assert fragment in str(err.value)


def test_rescaled_without_base_lr_and_duplicate_protocols(tmp_path):
    with pytest.raises(ConfigError, match="protocols.r.base_lr"):
        load_pipeline(write(tmp_path, TINY.replace("[protocols.rescaled]", "[protocols.r]").replace("base_lr = 0.3", "")))
    with pytest.raises(ConfigError, match="same protocol as protocols.default"):
        load_pipeline(write(tmp_path, TINY + '\n[protocols.again]\nprotocol = "nb201"\n'))


def test_a_tuned_copy_of_a_protocol_needs_a_name_of_its_own(tmp_path):
    tuned = '\n[protocols.tuned]\nprotocol = "nb201"\nbase_lr = 0.1\ntune = true\n'
    with pytest.raises(ConfigError, match=r'same protocol as protocols.default; .*protocols.tuned is tuned from '
                                          r'the other\'s protocol: give it a name of its own \(name = "nb201_tuned"\)'):
        load_pipeline(write(tmp_path, TINY + tuned))
    named = load_pipeline(write(tmp_path, TINY + tuned.replace("tune = true", 'tune = true\nname = "nb201_tuned"')))
    default, mine = (next(e for e in named.protocols if e.label == label) for label in ("default", "tuned"))
    assert mine.tune and mine.protocol.name == "nb201_tuned"
    assert dataclasses.replace(mine.protocol, name="nb201") == default.protocol  # the recipe is default's


def test_uniform_selection_is_seeded_and_distinct(nb201):
    settings = load_pipeline("quickstart").archs
    a, b = select_archs(settings, nb201), select_archs(settings, nb201)
    assert a == b
    assert a[0] == DEGENERATE
    assert len(set(a)) == 12
    other = select_archs(type(settings)(count=12, seed=1), nb201)
    assert other != a[1:]
    assert len(other) == 12


def test_file_selection_relative_to_the_pipeline(tmp_path):
    (tmp_path / "cells.txt").write_text("# two cells\n2_22_222\n\n|skip_connect~0|+|none~0|skip_connect~1|+|none~0|none~1|skip_connect~2|\n")
    text = TINY.replace('select = "list"', 'select = "file"\nfile = "cells.txt"')
    archs = load_pipeline(write(tmp_path, text)).arch_list()
    assert archs == ["|nor_conv_1x1~0|+|nor_conv_1x1~0|nor_conv_1x1~1|+|nor_conv_1x1~0|nor_conv_1x1~1|nor_conv_1x1~2|",
                     "|skip_connect~0|+|none~0|skip_connect~1|+|none~0|none~1|skip_connect~2|"]


def test_the_protocols_workbench_pipeline_plans_without_writing(nb201, tmp_path, monkeypatch):
    """pipelines/nb201_protocols_cpu.toml: the CPU budget of nb201_cifar10_cpu, 12 stratified
    non-degenerate cells, the five protocols, one seed; it plans (every job made) and writes nothing."""
    from nasrescale.pipeline.runner import plan_pipeline

    p, cpu = load_pipeline("nb201_protocols_cpu"), load_pipeline("nb201_cifar10_cpu")
    assert [e.label for e in p.protocols] == ["default", "rescaled", "mup", "spectral", "elr_warmup"]
    assert [e.protocol.name for e in p.protocols] == ["nb201", "rescaled", "mup", "spectral", "elr_warmup"]
    assert p.budget == cpu.budget and p.data_spec() == cpu.data_spec() and list(p.pipeline.seeds) == [0]
    assert (p.archs.select, p.archs.stratify_by, p.archs.sample_degenerate) == ("stratified", "cifar10", False)
    monkeypatch.chdir(tmp_path)  # the default results folder is relative: planning must not create it
    plan = plan_pipeline(p, data=False)
    assert len(plan.archs) >= 12 and not any(is_degenerate(parse_arch(a, nb201), nb201) for a in plan.archs)
    assert len(plan.jobs) == 5 * len(plan.archs)
    assert {j.protocol.epochs for j in plan.jobs} == {6}
    assert list(tmp_path.iterdir()) == []
