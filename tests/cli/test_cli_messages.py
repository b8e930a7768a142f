"""Messages that name the real cause: the results folder, not the pipeline; a store that is a
folder; the allowed range of a value and the option it came from; a checkpoint that is not one;
the family an architecture belongs to; jobs a killed driver left running."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from filelock import FileLock

from nasrescale.pipeline.lock import LOCK_FILE

from pipeline_helpers import cli, private_cache  # noqa: F401  (fixtures, used by name)
from rank_store_builder import build_store

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--width", "4", "--cells", "1", "--train-subset", "100", "--test-subset", "100", "--batch-size", "50",
        "--epochs", "1", "--quiet"]



def test_status_names_the_missing_results_folder_not_the_pipeline(capsys, tmp_path):
    code, _, err = cli(capsys, "status", "toy", "--results", str(tmp_path / "nonexistent"))
    assert code == 2
    assert f"'{tmp_path / 'nonexistent'}': no such folder" in err
    assert "pipeline file" not in err
    code, _, err = cli(capsys, "status", "toy", "--results", str(tmp_path))  # the folder is there, the run is not
    assert code == 2
    assert f"'toy' is neither a run in '{tmp_path}'" in err


def test_a_store_that_is_a_folder_is_called_one(capsys, tmp_path):
    (tmp_path / "toy" / "store.sqlite").mkdir(parents=True)
    code, _, err = cli(capsys, "status", "toy", "--results", str(tmp_path))
    assert code == 2
    assert "store.sqlite' is a folder, not a results store" in err
    assert "run the pipeline first" not in err


@pytest.mark.parametrize(("argv", "fragment"), [
    (["train", "3_33_333", "--epochs", "-1"], "argument --epochs: must be an integer >= 1, got '-1'"),
    (["train", "3_33_333", "--base-lr", "-0.5"], "argument --base-lr: must be a number > 0, got '-0.5'"),
    (["train", "3_33_333", "--width", "0"], "argument --width: must be an integer >= 1, got '0'"),
    (["lr-search", "--points", "0"], "argument --points: must be an integer >= 1, got '0'"),
    (["train", "3_33_333", "--set", "epochs=-1"], "protocol.epochs: value -1 is out of range; it must be an integer >= 1"),
    (["train", "3_33_333", "--set", "momentum=1.5"], "protocol.momentum: value 1.5 is out of range; it must be in [0, 1)"),
])
def test_out_of_range_values_name_the_option_and_the_range(capsys, argv, fragment):
    code, _, err = cli(capsys, *argv)
    assert code == 2
    assert fragment in err
    assert "protocol.lr" not in err


def test_a_garbage_checkpoint_is_not_advised_to_be_unpickled(capsys, tmp_path):
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"garbage bytes here")  # torch: "re-run with weights_only=False"
    code, _, err = cli(capsys, "train", "3_33_333", "--checkpoint", str(garbage), *TINY)
    assert code == 2
    assert f"checkpoint '{garbage}' is unreadable" in err
    assert "weights_only" not in err


def test_an_arch_of_another_family_suggests_that_family(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a family in ./cells/, as a user adds one
    (tmp_path / "cells").mkdir()
    shipped = (ROOT / "cells" / "mlp_dag.toml").read_text()
    (tmp_path / "cells" / "my5.toml").write_text(shipped.replace('name = "mlp_dag"', 'name = "my5"'))
    code, _, err = cli(capsys, "analyze", "2_02_002_0002")
    assert code == 2
    assert "cells have 4 nodes" in err
    assert "my5" in err
    assert "pass --family" in err
    code, out, _ = cli(capsys, "analyze", "2_02_002_0002", "--family", "my5")
    assert code == 0, out


def test_status_shows_jobs_a_killed_driver_left_running_as_interrupted(capsys, tmp_path):
    run_dir = tmp_path / "syn"
    build_store(run_dir, n_archs=8)  # one job is stored as running
    with sqlite3.connect(run_dir / "store.sqlite") as db:
        assert db.execute("SELECT count(*) FROM jobs WHERE status = 'running'").fetchone()[0] == 1
    code, out, _ = cli(capsys, "status", "syn", "--results", str(tmp_path))  # no driver holds the folder
    assert code == 0
    assert "interrupted 1" in out
    assert "running 1" not in out
    with FileLock(str(run_dir / LOCK_FILE)):  # a driver holds it: the job is running
        code, out, _ = cli(capsys, "status", "syn", "--results", str(tmp_path))
    assert "running 1" in out
    assert "interrupted" not in out


@pytest.mark.parametrize("argv", [
    ["train", "3_33_333", "--base-lr", "nan"],
    ["rank", "--results"],
    ["summary", "--width", "x", "3_33_333"],
    ["no-such-command"],
])
def test_option_errors_are_one_line_pointing_at_help(capsys, argv):
    code, _, err = cli(capsys, *argv)
    assert code == 2
    assert "usage:" not in err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("nasrescale") and ": error: " in err and "--help)" in err


def test_rank_names_its_bootstrap_seed_and_keeps_seed_with_a_notice(capsys):
    code, out, err = cli(capsys, "rank", "nb201:cifar10", "nb201:cifar100", "--bootstrap", "20", "--bootstrap-seed", "3")
    assert code == 0 and err == ""
    code, old_out, err = cli(capsys, "rank", "nb201:cifar10", "nb201:cifar100", "--bootstrap", "20", "--seed", "3")
    assert code == 0 and old_out == out
    assert err.strip() == "nasrescale: note: nasrescale rank: --seed is deprecated, use --bootstrap-seed (same meaning)"


def test_a_darts_network_without_a_normal_cell_is_refused_before_any_output(capsys):
    code, out, err = cli(capsys, "summary", "--family", "darts", "--width", "36", "--cells", "2", "PC_DARTS")
    assert code == 2 and out == ""
    assert "--cells 2: a DARTS network of 2 cells has only reduction cells" in err
    assert "must be at least 3" in err
    code, help_text, _ = cli(capsys, "summary", "--help")
    words = " ".join(help_text.split())
    assert code == 0
    assert "nb201 cells per stage (5); darts, darts5 all cells" in words and "nb101 cells per stack (3)" in words


def test_every_command_has_a_help_description():
    import argparse

    from nasrescale.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = [name for name, parser in sub.choices.items() if not (parser.description or "").strip()]
    assert missing == []
