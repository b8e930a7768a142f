"""What fuzzing found, pinned: each input once led to a traceback, a hang or a run that could
only fail, and is now refused up front with one line (exit 2)."""

from __future__ import annotations

import pytest

from fuzz_helpers import settle
from pipeline_helpers import tiny_pipeline


@pytest.mark.parametrize("argv, words", [
    (["rank", "nb201:cifar10", "nb201:cifar100", "--bootstrap", "2", "--seed", "-5"], "from 0 to 2**63 - 1"),
    (["train", "3_11_111", "--seed", str(2**64)], "from 0 to 2**63 - 1"),
    (["diagnose", "3_11_111", "--seed", "-1"], "from 0 to 2**63 - 1"),
])
def test_fuzz_found_seeds_out_of_range_on_the_command_line(argv, words):
    code, _, err = settle(*argv)
    assert code == 2 and words in err


@pytest.mark.parametrize("setting, words", [
    (f"pipeline.seeds=[{2**64}]", "pipeline.seeds: expected distinct integers from 0 to 2**63 - 1"),
    ("archs.seed=-1", "archs.seed: expected distinct integers from 0 to 2**63 - 1"),
    ("lr_search.seeds=[-3]", "lr_search.seeds"),
    ("lr_search.points=1000000000000", "lr_search.points: at most 1000"),  # once a hang: a grid of 10^12 LRs
    ("protocols.rescaled.base_lr=inf", "protocols.rescaled.base_lr: value inf is out of range; it must be a finite"),
    ("protocols.default.weight_decay=inf", "weight_decay: value inf is out of range"),
])
def test_fuzz_found_pipeline_values_refused_before_anything_runs(tmp_path, setting, words):
    (tmp_path / "p.toml").write_text(tiny_pipeline("p"))
    code, _, err = settle("run", str(tmp_path / "p.toml"), "--results", str(tmp_path / "res"), "--dry-run",
                          "--set", setting)
    assert code == 2 and words in err, err
