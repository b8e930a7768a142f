"""``nasrescale train ARCH --seeds .. --protocols .. --fuse``: one JSON line per run, equal to single runs."""

from __future__ import annotations

import functools
import json
import math

import pytest

import nasrescale.data
from nasrescale.cli.main import main

TINY = ["--width", "4", "--cells", "1", "--train-subset", "300", "--test-subset", "100", "--batch-size", "100",
        "--epochs", "2", "--quiet", "--no-checkpoint", "--history"]


_load_once = functools.lru_cache(maxsize=2)(nasrescale.data.load_dataset)  # decode the shipped subset once


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NASRESCALE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(nasrescale.data, "load_dataset", _load_once)  # the CLI imports it at call time


def run(capsys, *argv: str) -> tuple[int, list[dict], str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines() if line.strip()], err


def test_fused_runs_equal_single_runs(capsys, float64):
    """In float64 (the ``float64`` fixture): equal to single runs to ``float64`` (1e-9) on any CPU."""
    code, fused, err = run(capsys, "train", "3_31_013", "--seeds", "0", "--protocols", "nb201,rescaled",
                           "--base-lr", "0.5", "--fuse", *TINY)
    assert code == 0, err
    assert [(r["protocol"], r["seed"], r["fused"]) for r in fused] == [("nb201", 0, 2), ("rescaled", 0, 2)]
    assert fused[0]["lr"] == 0.1
    assert fused[1]["base_lr"] == 0.5  # --base-lr went to rescaled only
    for rec, protocol in zip(fused, (["--protocol", "nb201"], ["--protocol", "rescaled", "--base-lr", "0.5"])):
        code, (single,), err = run(capsys, "train", "3_31_013", "--seed", "0", *protocol, *TINY)
        assert code == 0, err
        assert (rec["lr"], rec["init"], rec["params"]) == (single["lr"], single["init"], single["params"])
        assert rec["run_key"] == single["run_key"] == rec["key"]  # keyed as the single run's TrainJob
        assert set(rec) == set(single) | {"fused"}  # the fields of `train`, plus the group size
        for a, b in zip(rec["history"], single["history"], strict=True):
            assert math.isclose(a["train_loss"], b["train_loss"], rel_tol=float64), (a, b)
        assert math.isclose(rec["test_loss"], single["test_loss"], rel_tol=float64)
        assert rec["test_accuracy"] == single["test_accuracy"]


def test_unfused_runs_one_after_another_and_degenerate_cells(capsys):
    code, recs, err = run(capsys, "train", "3_31_013", "--seeds", "0,1", *TINY)
    assert code == 0, err
    assert [(r["seed"], r["fused"], r["epochs_run"]) for r in recs] == [(0, 1, 2), (1, 1, 2)]
    assert recs[0]["run_key"] != recs[1]["run_key"]
    code, recs, err = run(capsys, "train", "0_00_000", "--seeds", "0,1", "--fuse", *TINY)
    assert code == 0
    assert len(recs) == 2
    for r in recs:  # degenerate: evaluated at chance, never trained, so never fused
        assert r["degenerate"], r
        assert r["epochs_run"] == 0, r
        assert r["fused"] == 0, r
        assert r["test_accuracy"] == 10.0, r


@pytest.mark.parametrize("argv, message", [
    (["--seeds", "0,x"], "expected integers separated by spaces or commas"),
    (["--seeds", "1,1"], "give each seed once"),
    (["--seeds", "1", "0,1"], "give each seed once"),
    (["--protocols", "nb201,nope"], "unknown protocol"),
    (["--protocols", "rescaled"], "needs a base learning rate"),
])
def test_bad_fused_arguments_exit_2(capsys, argv, message):
    code, _, err = run(capsys, "train", "3_31_013", *argv, *TINY)
    assert code == 2
    assert message in err
