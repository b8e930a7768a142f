"""One name, one meaning: every command's parser spells each concept the same way.

The checks walk every subcommand's parser, so a new command or option is held to them without
being listed here; the tables name the concepts that were once spelled two ways.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict

import pytest

from nasrescale.cli.main import build_parser

#: concept (the parsed attribute) -> its one spelling, in every command that has it
CANONICAL = {
    "family": ("--family", "-f"),
    "family_files": ("--family-file",),
    "width": ("--width",),
    "cells": ("--cells",),
    "dataset": ("--dataset",),
    "data_path": ("--data-path",),
    "train_subset": ("--train-subset",),
    "test_subset": ("--test-subset",),
    "seeds": ("--seeds",),
    "batch_size": ("--batch-size",),
    "base_lr": ("--base-lr",),
    "device": ("--device",),
    "results": ("--results",),
}

#: a former spelling -> (a command that still takes it, hidden, and the attribute it sets)
FORMER = {
    "--data": ("train", "data_path"),
    "--subset": ("train", "train_subset"),
    "--batch": ("diagnose", "batch_size"),
    "--lr": ("diagnose", "base_lr"),
    "--rules": ("diagnose", "inits"),
    "--arch": ("lr-search", "arch"),
}


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def shown(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options a command lists in its help (positionals and --help aside)."""
    return [a for a in parser._actions if a.option_strings and a.help is not argparse.SUPPRESS
            and not isinstance(a, argparse._HelpAction)]


def test_every_concept_has_one_spelling_and_one_form():
    spellings: dict[str, set] = defaultdict(set)
    forms: dict[str, set] = defaultdict(set)
    for name, parser in commands().items():
        for action in shown(parser):
            spellings[action.dest].add((tuple(action.option_strings), name))
            forms[action.dest].add((type(action).__name__, action.nargs))
    for dest, seen in spellings.items():
        assert len({s for s, _ in seen}) == 1, f"{dest} is spelled {sorted(seen)}"
        assert len(forms[dest]) == 1, f"{dest} takes different values: {sorted(map(str, forms[dest]))}"
    for dest, flags in CANONICAL.items():
        assert {s for s, _ in spellings[dest]} == {flags}, dest


def test_every_option_name_means_one_thing():
    meanings: dict[str, set] = defaultdict(set)
    for name, parser in commands().items():
        for action in parser._actions:  # hidden ones too: a former spelling must not mean two things
            for flag in action.option_strings:
                meanings[flag].add(action.dest)
    twofold = {flag: dests for flag, dests in meanings.items() if len(dests - {argparse.SUPPRESS}) > 1}
    assert twofold == {}


@pytest.mark.parametrize("former", sorted(FORMER))
def test_a_former_spelling_is_hidden_and_does_the_same(former):
    command, dest = FORMER[former]
    parser = commands()[command]
    hidden = [a for a in parser._actions if former in a.option_strings]
    assert len(hidden) == 1 and hidden[0].help is argparse.SUPPRESS
    assert hidden[0].dest == dest
    assert re.search(rf"{re.escape(former)}(?![\w-])", parser.format_usage()) is None


def test_seeds_take_spaces_or_commas_alike():
    from nasrescale.cli.shared_options import seeds_from_args

    for command in ("train", "lr-search"):
        parser = commands()[command]
        head = ["3_33_333"] if command == "train" else []
        spaced = parser.parse_args([*head, "--seeds", "0", "1", "2"]).seeds
        commas = parser.parse_args([*head, "--seeds", "0,1,2"]).seeds
        assert seeds_from_args(spaced) == seeds_from_args(commas) == [0, 1, 2]


def test_cells_path_points_to_family_file(capsys):
    for command in ("cells", "analyze"):
        with pytest.raises(SystemExit):
            commands()[command].parse_args(["--cells", "my.toml"])
        assert "the option is now --family-file my.toml" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["train", "lr-search"])
def test_device_takes_one_gpu_and_refuses_garbage(capsys, command):
    parser = commands()[command]
    head = ["3_33_333"] if command == "train" else []
    assert parser.parse_args([*head, "--device", "cuda:1"]).device == "cuda:1"
    with pytest.raises(SystemExit):
        parser.parse_args([*head, "--device", "gpu1"])
    assert "expected auto" in capsys.readouterr().err
