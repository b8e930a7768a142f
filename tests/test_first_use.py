"""What a new user hits first (issue 14): family_file alone, strict NB201 strings, messages
that name what the user typed, runs refused before anything is stored."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nasrescale.space.encodings import format_arch, parse_arch
from nasrescale.errors import ArchError, ConfigError
from nasrescale.pipeline.spec import load_pipeline

from pipeline_helpers import TINY

ROOT = Path(__file__).resolve().parents[1]
CONV5 = "|nor_conv_5x5~0|+|none~0|skip_connect~1|+|none~0|none~1|skip_connect~2|"


def conv5_pipeline(tmp_path: Path, family_line: str = "") -> Path:
    """The tiny pipeline on the example family nb201_conv5 (a copy beside the pipeline file)."""
    shutil.copy(ROOT / "examples" / "cells" / "nb201_conv5.toml", tmp_path / "nb5.toml")
    text = TINY.replace('name = "tiny"', f'name = "tiny"\nfamily_file = "nb5.toml"\n{family_line}')
    text = text.replace('names = ["|none~0|+|none~0|none~1|+|none~0|none~1|none~2|", "3_11_111"]',
                        f'names = ["{CONV5}"]')
    path = tmp_path / "conv5.toml"
    path.write_text(text)
    return path


def test_family_file_alone_defines_the_family(tmp_path):
    p = load_pipeline(conv5_pipeline(tmp_path))
    assert p.family().name == "nb201_conv5"
    assert p.arch_list() == [CONV5]
    assert {j.family.name for j in p.jobs()} == {"nb201_conv5"}
    assert p.resolved(p.arch_list())["pipeline"]["family"] == "nb201_conv5"


def test_family_and_family_file_that_disagree_name_both(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_pipeline(conv5_pipeline(tmp_path, 'family = "nb201"')).arch_list()
    assert "pipeline.family = 'nb201'" in str(err.value)
    assert "'nb201_conv5'" in str(err.value)
    agreeing = load_pipeline(conv5_pipeline(tmp_path, 'family = "nb201_conv5"'))
    assert agreeing.family().name == "nb201_conv5"


def test_pipeline_without_family_keeps_nb201_and_its_identity():
    p = load_pipeline("quickstart")
    assert p.family().name == "nb201"
    assert p.identity(p.arch_list())["pipeline"]["family"] == "nb201"


SHORT = "|nor_conv_3x3~0|+|skip_connect~0|none~1|+|skip_connect~0|none~1|"


def test_short_nb201_group_is_refused_naming_the_missing_source(nb201):
    with pytest.raises(ArchError) as err:
        parse_arch(SHORT, nb201)
    assert "node 3" in str(err.value)
    assert "here add none~2" in str(err.value)
    assert "complete=True" not in str(err.value)  # a Python option; the CLI's user is told what to write


def test_short_nb201_group_completes_only_when_asked(nb201):
    full = SHORT[:-1] + "|none~2|"
    assert format_arch(parse_arch(SHORT, nb201, complete=True), nb201) == full
    assert format_arch(parse_arch(full, nb201), nb201) == full


def test_short_nb201_string_is_refused_by_the_cli(capsys):
    from nasrescale.cli.main import main

    assert main(["analyze", SHORT]) == 2
    assert "lacks source(s) 2" in capsys.readouterr().err


@pytest.mark.parametrize(("override", "named"), [
    ("protocols.rescaled.base_lr=-1", "protocols.rescaled.base_lr: value -1"),
    ("protocols.default.lr=-1", "protocols.default.lr: value -1"),
    ("protocols.default.momentum=2", "protocols.default.momentum: value 2"),
    ("budget.batch_size=0", "budget.batch_size"),
])
def test_bad_protocol_value_names_the_key_typed(tmp_path, override, named):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    with pytest.raises(ConfigError) as err:
        load_pipeline(path, [override])
    assert str(err.value).startswith(named)


def test_analyze_help_cites_nothing_missing_from_the_repository(capsys):
    from nasrescale.cli.main import main

    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    assert "DESIGN" + ".md" not in capsys.readouterr().out  # split: no file in the repo names it


def cli(capsys, *argv: str) -> tuple[int, str]:
    from nasrescale.cli.main import main

    code = main(list(argv))
    return code, capsys.readouterr().err


@pytest.fixture()
def tiny(tmp_path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


@pytest.mark.parametrize(("argv", "fragments"), [
    (["--set", "data.name=cifar10", "--set", "data.path=NOWHERE"], ["CIFAR-10 not found", "data.path = PATH"]),
    (["--set", "budget.train_subset=999999"], ["budget.train_subset = 999999", "it has 5000"]),
    (["--set", "budget.test_subset=999999"], ["budget.test_subset = 999999"]),
    (["--set", "data.name=imagefolder", "--set", "data.path=NOWHERE"], ["image folder", "data.path = PATH"]),
])
def test_run_with_bad_data_exits_2_before_storing_anything(capsys, tiny, tmp_path, argv, fragments):
    argv = [a.replace("NOWHERE", str(tmp_path / "nowhere")) for a in argv]
    code, err = cli(capsys, "run", str(tiny), "--results", str(tmp_path / "res"), "--quiet", *argv)
    assert code == 2, err
    for fragment in fragments:
        assert fragment in err, err
    assert "pass --download" not in err
    assert "--data-path PATH" not in err  # `run` has neither option
    assert not (tmp_path / "res").exists()  # nothing written, not even the run folder


def test_run_on_a_missing_device_or_package_exits_2_before_storing(capsys, tiny, tmp_path, monkeypatch):
    import torch

    import nasrescale.pipeline.preflight as preflight

    if not torch.cuda.is_available():
        code, err = cli(capsys, "run", str(tiny), "--results", str(tmp_path / "res"), "--set", "executor.device=cuda")
        assert code == 2
        assert "executor.device = 'cuda'" in err
        assert not (tmp_path / "res").exists()
    real = preflight.importlib.util.find_spec
    monkeypatch.setattr(preflight.importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))
    code, err = cli(capsys, "run", str(tiny), "--results", str(tmp_path / "res"), "--set", "executor.kind=ray")
    assert code == 2
    assert "pip install 'nasrescale[ray]'" in err
    assert not (tmp_path / "res").exists()


def test_lr_search_with_bad_data_exits_2_before_storing_anything(capsys, tmp_path):
    res = tmp_path / "res"
    code, err = cli(capsys, "lr-search", "--dataset", "cifar10", "--data-path", str(tmp_path / "nowhere"),
                    "--results", str(res), "--quiet")
    assert code == 2, err
    assert "--data-path PATH" in err, err
    assert "pass --download" not in err, err
    assert not res.exists(), err
    code, err = cli(capsys, "lr-search", "--train-subset", "999999", "--results", str(res), "--quiet")
    assert code == 2, err
    assert "--train-subset 999999" in err, err
    assert not res.exists(), err


def test_a_store_that_ran_nothing_takes_corrected_settings(tmp_path):
    from nasrescale.store.sqlite_store import Store

    store = Store(tmp_path / "store.sqlite")
    try:
        store.bind_pipeline("p", {"a": 1}, {"a": 1})
        store.add_jobs([{"key": "k1", "arch": "x", "protocol": "d", "seed": 0, "job_json": "{}"}])
        store.bind_pipeline("p", {"a": 2}, {"a": 2})  # only pending jobs: rebound, pending dropped
        assert store.rows() == []
        assert store.get_meta("identity") == '{"a": 2}'
        store.add_jobs([{"key": "k2", "arch": "x", "protocol": "d", "seed": 0, "job_json": "{}"}])
        store.finish("k2", "failed", None, "boom", 1)
        with pytest.raises(ConfigError, match=r"differs in: a.*\(--name NAME\)"):
            store.bind_pipeline("p", {"a": 3}, {"a": 3}, rename_hint="--name NAME")
    finally:
        store.close()


def test_refused_second_lr_search_suggests_the_name_option(capsys, tmp_path):
    from nasrescale.store.sqlite_store import Store

    res = tmp_path / "res"
    store = Store(res / "lr-search-nb201-rescaled" / "store.sqlite")
    store.bind_pipeline("lr-search-nb201-rescaled", {"other": 1}, {"other": 1})
    store.add_jobs([{"key": "k", "arch": "x", "protocol": "d", "seed": 0, "job_json": "{}"}])
    store.finish("k", "failed", None, "boom", 1)
    store.close()
    code, err = cli(capsys, "lr-search", "--results", str(res), "--quiet", "--train-subset", "100")
    assert code == 2, err
    assert "(--name NAME)" in err, err
    assert "pipeline.name" not in err, err


def test_readme_command_summary_is_the_parsers_usage():
    from nasrescale.cli.main import command_summary

    text = (ROOT / "docs" / "cli.md").read_text()
    head = "## Command line\n\n```text\n"
    block = text[text.index(head) + len(head):text.index("```", text.index(head) + len(head))]
    assert block == command_summary(), "docs/cli.md's command summary drifted: run python tools/readme_cli.py"
    for option in ("--train-subset", "--test-subset", "--family-file", "--name", "--results"):  # once omitted
        assert option in block
